"""Shell completion scripts for bash, zsh and fish, generated from the ``kenning`` argparse parser.

Generated, not written by hand, so a new command or option completes the day it is added. Each
script holds the parser's shape as data (command paths, their sub-commands, options, which options
take a value and that value's choices) and a small engine that finds where on the command line the
cursor is: words after ``kenning`` that name a sub-command move down the tree; an option that takes
a value makes the next word its value. No dependency: standard library only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish")
PATH_DESTS = {"cwd", "file", "output", "path"}  # values that are file names: the shell completes them


@dataclass
class Option:
    flags: list[str]
    help: str
    takes_value: bool
    choices: list[str]
    files: bool


@dataclass
class Command:
    path: str  # "" for kenning itself, "extras list" for a nested one
    commands: list[tuple[str, str]] = field(default_factory=list)  # (name, help) of its sub-commands
    options: list[Option] = field(default_factory=list)
    words: list[str] = field(default_factory=list)  # choices of its positional arguments (worker's actions)
    files: bool = False  # a positional argument is a file name (import FILE)


def _help(text: str | None) -> str:
    return " ".join((text or "").split()).replace("%%", "%")


def spec(parser: argparse.ArgumentParser, path: str = "") -> list[Command]:
    """Every command of ``parser`` (itself first), with what can follow it."""
    cmd = Command(path)
    found = [cmd]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: _help(a.help) for a in action._choices_actions}
            for name, child in action.choices.items():
                cmd.commands.append((name, helps.get(name, "")))
                found += spec(child, f"{path} {name}".strip())
        elif action.option_strings:
            takes = action.nargs != 0
            cmd.options.append(Option(list(action.option_strings), _help(action.help), takes,
                                      [str(c) for c in action.choices or ()], takes and action.dest in PATH_DESTS))
        elif action.choices:
            cmd.words += [str(c) for c in action.choices]
        elif action.dest in PATH_DESTS:
            cmd.files = True
    return found


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    if shell not in SHELLS:
        raise ValueError(f"no completion for {shell!r}: choose {', '.join(SHELLS)}")
    cmds = spec(parser)
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](cmds)


# ----------------------------------------------------------------------------- shared shell code

def _sq(text: str) -> str:
    """``text`` as one single-quoted word of sh, bash and zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def _case(name: str, rows: list[tuple[str, str]]) -> list[str]:
    """A function printing the value of its first argument's row (sh ``case``: bash and zsh alike)."""
    out = [f"{name}() {{", '    case "$1" in']
    out += [f"        {_sq(key)}) printf '%s\\n' {_sq(value)} ;;" for key, value in rows if value]
    out += ["    esac", "}"]
    return out


def _tables(cmds: list[Command], prefix: str) -> list[str]:
    """sh functions over the parser's shape, shared by the bash and zsh scripts."""
    lines: list[str] = []
    lines += _case(f"{prefix}_commands", [(c.path, " ".join(n for n, _ in c.commands)) for c in cmds])
    lines += _case(f"{prefix}_options", [(c.path, " ".join(f for o in c.options for f in o.flags)) for c in cmds])
    lines += _case(f"{prefix}_words", [(c.path, " ".join(c.words)) for c in cmds])
    valued = [(f"{c.path}|{f}", "value") for c in cmds for o in c.options if o.takes_value and not o.files
              and not o.choices for f in o.flags]
    valued += [(f"{c.path}|{f}", "file") for c in cmds for o in c.options if o.files for f in o.flags]
    valued += [(f"{c.path}|{f}", "choice " + " ".join(o.choices)) for c in cmds for o in c.options if o.choices
               for f in o.flags]
    lines += _case(f"{prefix}_value", valued)
    # The command path of words 1..n-1 (the words before the cursor), and whether the cursor is on an option's value.
    lines += [
        f"{prefix}_where() {{",
        '    local path="" word kind next skip=0',
        '    for word in "$@"; do',
        '        if [ "$skip" = 1 ]; then skip=0; continue; fi',
        '        case "$word" in',
        '            -*=*) continue ;;',
        f'            -*) [ -n "$({prefix}_value "$path|$word")" ] && skip=1; continue ;;',
        "        esac",
        f'        for next in $({prefix}_commands "$path"); do',
        '            if [ "$next" = "$word" ]; then path="${path:+$path }$word"; break; fi',
        "        done",
        "    done",
        '    printf \'%s\\n\' "$path|$skip"',
        "}",
    ]
    return lines


# ------------------------------------------------------------------------------------------ bash

def bash(cmds: list[Command]) -> str:
    lines = ["# bash completion for kenning (generated by `kenning completion bash`).",
             "# Load it now:  source <(kenning completion bash)",
             "# Keep it:      kenning completion bash > ~/.local/share/bash-completion/completions/kenning", ""]
    lines += _tables(cmds, "_kenning")
    lines += [
        "_kenning() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" where path value',
        '    where="$(_kenning_where "${COMP_WORDS[@]:1:COMP_CWORD-1}")"',
        '    path="${where%|*}"',
        '    COMPREPLY=()',
        '    if [ "${where##*|}" = 1 ]; then',
        '        value="$(_kenning_value "$path|$prev")"',
        '        case "$value" in',
        '            choice\\ *) COMPREPLY=($(compgen -W "${value#choice }" -- "$cur")) ;;',
        '            file) COMPREPLY=($(compgen -f -- "$cur")) ;;',
        "        esac",
        "        return 0",
        "    fi",
        '    if [[ "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$(_kenning_options "$path")" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -W "$(_kenning_commands "$path") $(_kenning_words "$path")" -- "$cur"))',
        "    fi",
        "}",
        "complete -o default -F _kenning kenning",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- zsh

def _zq(name: str, text: str) -> str:
    """One ``name:description`` item of ``_describe`` (a colon in the name escaped)."""
    return _sq(name.replace(":", "\\:") + ":" + text)


def zsh(cmds: list[Command]) -> str:
    lines = ["#compdef kenning",
             "# zsh completion for kenning (generated by `kenning completion zsh`).",
             "# Load it now:  source <(kenning completion zsh)",
             "# Keep it:      kenning completion zsh > ~/.zfunc/_kenning  (with fpath+=~/.zfunc before compinit)", ""]
    lines += _tables(cmds, "_kenning")
    lines += ["_kenning_describe() {", '    case "$1" in']
    for c in cmds:
        if c.commands:
            items = " ".join(_zq(n, h) for n, h in c.commands)
            lines.append(f"        {_sq(c.path)}) reply=({items}) ;;")
    lines += ["        *) reply=() ;;", "    esac", "}"]
    lines += ["_kenning_option_help() {", '    case "$1" in']
    for c in cmds:
        items = " ".join(_zq(f, o.help) for o in c.options for f in o.flags)
        if items:
            lines.append(f"        {_sq(c.path)}) reply=({items}) ;;")
    lines += ["        *) reply=() ;;", "    esac", "}"]
    lines += [
        "_kenning() {",
        "    local where path value cur=${words[CURRENT]} prev=${words[CURRENT-1]}",
        "    local -a reply",
        '    where="$(_kenning_where "${(@)words[2,CURRENT-1]}")"',
        '    path="${where%|*}"',
        '    if [[ "${where##*|}" == 1 ]]; then',
        '        value="$(_kenning_value "$path|$prev")"',
        '        case "$value" in',
        '            choice\\ *) compadd -- ${=value#choice } ;;',
        "            file) _files ;;",
        "        esac",
        "        return",
        "    fi",
        '    if [[ "$cur" == -* ]]; then',
        '        _kenning_option_help "$path"',
        "        _describe -t options option reply",
        "        return",
        "    fi",
        '    _kenning_describe "$path"',
        '    (( ${#reply} )) && _describe -t commands command reply',
        '    value="$(_kenning_words "$path")"',
        '    [[ -n "$value" ]] && compadd -- ${=value}',
        '    (( ${#reply} )) || [[ -n "$value" ]] || _files',
        "}",
        "# Autoloaded from fpath (#compdef): complete now; sourced: register.",
        'if [[ "$funcstack[1]" == _kenning ]]; then _kenning "$@"; else compdef _kenning kenning; fi',
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ fish

def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(cmds: list[Command]) -> str:
    lines = ["# fish completion for kenning (generated by `kenning completion fish`).",
             "# Load it now:  kenning completion fish | source",
             "# Keep it:      kenning completion fish > ~/.config/fish/completions/kenning.fish", "",
             "function __kenning_commands", "    switch $argv[1]"]
    for c in cmds:
        if c.commands:
            lines += [f"        case {_fq(c.path)}", f"            echo {' '.join(_fq(n) for n, _ in c.commands)}"]
    lines += ["    end", "end", "", "function __kenning_valued", "    switch $argv[1]"]
    valued = [f"{c.path}|{f}" for c in cmds for o in c.options if o.takes_value for f in o.flags]
    if valued:
        lines += [f"        case {' '.join(_fq(v) for v in valued)}", "            return 0"]
    lines += [
        "    end", "    return 1", "end", "",
        "# The command path of the words before the cursor (\"\", \"extras\", \"extras list\" …).",
        "function __kenning_path",
        "    set -l path ''",
        "    set -l skip 0",
        "    set -l words (commandline -opc)",
        "    set -e words[1]",
        "    for word in $words",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $word",
        "            case '-*=*'",
        "                continue",
        "            case '-*'",
        '                __kenning_valued "$path|$word"; and set skip 1',
        "                continue",
        "        end",
        '        if contains -- $word (string split " " -- (__kenning_commands "$path"))',
        "            set path (string trim -- \"$path $word\")",
        "        end",
        "    end",
        '    echo "$path"',
        "end", "",
        "function __kenning_at",
        '    test (__kenning_path) = "$argv[1]"',
        "end", "",
        "complete -c kenning -f",
    ]
    for c in cmds:
        at = f"-n {_fq('__kenning_at ' + _fq(c.path))}"
        for name, text in c.commands:
            lines.append(f"complete -c kenning {at} -a {_fq(name)} -d {_fq(text)}")
        for w in c.words:
            lines.append(f"complete -c kenning {at} -a {_fq(w)}")
        if c.files:
            lines.append(f"complete -c kenning {at} -F")
        for o in c.options:
            flags = " ".join(f"-l {_fq(f[2:])}" if f.startswith("--") else f"-s {_fq(f[1:])}" for f in o.flags)
            value = ""
            if o.choices:
                value = f" -x -a {_fq(' '.join(o.choices))}"
            elif o.files:
                value = " -r -F"
            elif o.takes_value:
                value = " -x"
            lines.append(f"complete -c kenning {at} {flags}{value} -d {_fq(o.help)}")
    lines.append("")
    return "\n".join(lines)
