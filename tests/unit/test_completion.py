"""`kenning completion bash|zsh|fish`: scripts generated from the real parser, loaded in the real shells.

bash runs everywhere: the script is sourced in a `bash` subprocess and its completion function called
as readline would (COMP_WORDS, COMP_CWORD), COMPREPLY checked. zsh and fish are syntax-checked (`-n`)
and driven when installed (fish: `complete -C`; zsh: the completion function with the completion
system's builtins stubbed to print what they are given), and skipped cleanly otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli import build_parser
from kenning.completion import SHELLS, script, spec

# (the words on the command line, the cursor on the last) -> what must be offered
CASES = [
    (["kenning", "se"], {"search", "settings"}),
    (["kenning", "search", "--pro"], {"--project"}),
    (["kenning", "worker", ""], {"start", "stop", "restart", "status", "logs", "run"}),
    (["kenning", "extras", ""], {"list", "add"}),
    (["kenning", "extras", "list", "--"], {"--json", "--help"}),
    (["kenning", "install", "--agent", ""], {"codex", "gemini", "all"}),
    # "extras" here is --project's value, not the extras command: search's own options follow
    (["kenning", "search", "--project", "extras", "--j"], {"--json"}),
    (["kenning", "completion", ""], {"bash", "zsh", "fish"}),
]


def generated(shell: str, tmp_path: Path) -> Path:
    """The script as the real CLI prints it."""
    r = subprocess.run([sys.executable, "-m", "kenning", "completion", shell], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "KENNING_DATA_DIR": str(tmp_path / "data")})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    path = tmp_path / f"kenning.{shell}"
    path.write_text(r.stdout)
    return path


@pytest.mark.parametrize("shell", SHELLS)
def test_each_script_is_generated_with_every_command(shell: str, tmp_path: Path) -> None:
    text = generated(shell, tmp_path).read_text()
    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in top.choices:
        assert name in text, f"{shell}: {name}"
    assert "include-sensitive" in text and "import-history" in text  # (fish: -l include-sensitive)


def test_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "kenning", "completion", "tcsh"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "invalid choice" in r.stderr and "bash" in r.stderr


def test_the_script_follows_the_parser() -> None:
    """A new command or option completes the day it is added: the scripts are read off the parser."""
    p = argparse.ArgumentParser(prog="kenning")
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("brand-new", help="a command added today")
    s.add_argument("--colour", choices=["red", "green"], help="its option")
    cmds = {c.path: c for c in spec(p)}
    assert cmds[""].commands == [("brand-new", "a command added today")]
    assert cmds["brand-new"].options[-1].choices == ["red", "green"]
    for shell in SHELLS:
        text = script(shell, p)
        assert "brand-new" in text and "colour" in text and "green" in text, shell


def test_bash_completes_commands_options_and_values(tmp_path: Path) -> None:
    path = generated("bash", tmp_path)
    calls = []
    for words, _want in CASES:
        quoted = " ".join(f"'{w}'" for w in words)
        calls.append(f'COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _kenning; echo "${{COMPREPLY[*]}}"')
    prog = f"source '{path}'\ncomplete -p kenning\n" + "\n".join(calls)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("complete ") and lines[0].endswith(" kenning") and "-F _kenning" in lines[0]
    for (words, want), line in zip(CASES, lines[1:], strict=True):
        offered = set(line.split())
        assert want <= offered, (words, offered)
        assert all(o.startswith(words[-1]) for o in offered), (words, offered)


def _shell(name: str) -> str:
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed")
    return found


def test_zsh_script_parses_and_completes(tmp_path: Path) -> None:
    zsh = _shell("zsh")
    path = generated("zsh", tmp_path)
    r = subprocess.run([zsh, "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # The completion system's builtins print what the function hands them (no terminal needed).
    stubs = ("compdef() { :; }\ncompadd() { [[ $1 == -- ]] && shift; print -l -- \"$@\"; }\n"
             "_describe() { local -a items; items=(\"${(@P)4}\"); print -l -- \"${items[@]%%:*}\"; }\n"
             "_files() { print -- '<files>'; }\n")
    calls = []
    for words, _want in CASES:
        quoted = " ".join(f"'{w}'" for w in words)
        calls.append(f"words=({quoted}); CURRENT={len(words)}; _kenning; print -- '<end>'")
    prog = stubs + f"source '{path}'\n" + "\n".join(calls)
    r = subprocess.run([zsh, "-f", "-c", prog], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    outputs = r.stdout.split("<end>\n")
    for (words, want), out in zip(CASES, outputs, strict=False):
        assert want <= set(out.split()), (words, out)


def test_fish_script_parses_and_completes(tmp_path: Path) -> None:
    fish = _shell("fish")
    path = generated("fish", tmp_path)
    r = subprocess.run([fish, "--no-config", "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for words, want in CASES:
        line = " ".join(words)
        r = subprocess.run([fish, "--no-config", "-c", f"source '{path}'; complete -C '{line}'"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        offered = {ln.split("\t", 1)[0] for ln in r.stdout.splitlines()}
        assert want <= offered, (words, offered)
