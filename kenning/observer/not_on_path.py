"""A program that is not on the PATH here, and the way it did run: a gotcha the record proves.

``command -v zizmor`` prints nothing, and ``docker run … ghcr.io/zizmorcore/zizmor@sha256:… .`` passes; ``hk check``
fails with "zsh:1: command not found: hk", and ``target/debug/hk fix --all`` passes; ``command -v bats`` prints
nothing, and ``test/bats/bin/bats test/age.bats`` passes. The next session should not look for the program on the
PATH again. Only the shell's own words (or a lookup that found nothing) say a program is absent, and only a run of
that same program by another route that passed in the same turn says how it runs: a path to it (a build, a vendored
copy), a runner that fetches it (``npx``, ``uvx``, ``mise exec``), or a container of its image. A program that
later ran from the PATH after all (installed in between) proves nothing.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from kenning.memory.text import clip
from kenning.observer import proven
from kenning.observer.evidence import CD_FIRST, Command
from kenning.records import ObservationDraft

# The shell's own words for a program it could not find (zsh, bash, dash, PowerShell, cmd)
_NOT_FOUND = re.compile(
    r"command not found: (?P<zsh>[\w.+-]+)|"
    r"(?:^|\s)(?P<bash>[\w.+-]+): (?:command not found|not found)\s*$|"
    r"The term '(?P<pwsh>[\w.+-]+)' is not recognized|"
    r"'(?P<cmd>[\w.+-]+)' is not recognized as an internal or external command|"
    # env(1) running it: "env: golangci-lint: No such file or directory" (GNU quotes the name: ‘golangci-lint’)
    r"(?:^|\s)env: [‘'`]?(?P<env>[\w.+-]+)[’'`]?: No such file or directory", re.MULTILINE)
_LOOKUP = re.compile(r"^(?:command -v|command -V|which|type -p|type)\s+([\w.+-]+)\s*$")
_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_LEADING = frozenset(("env", "exec", "command", "time", "sudo", "do", "then", "else", "nohup"))
_MISSING = re.compile(r"not found|no \S+ in \(|not recognized", re.IGNORECASE)
# Runners that fetch or locate a program and run it: the program is the first word after them (and their options)
_RUNNERS = {("npx",), ("bunx",), ("pnpx",), ("uvx",), ("pnpm", "dlx"), ("pnpm", "exec"), ("yarn", "dlx"),
            ("yarn", "exec"), ("pipx", "run"), ("uv", "run"), ("poetry", "run"), ("mise", "exec"), ("mise", "x"),
            ("nix", "run"), ("bundle", "exec"), ("npm", "exec"), ("python", "-m"), ("python3", "-m")}
_CONTAINERS = {("docker", "run"), ("podman", "run")}
MAX_SAYS = 80


@dataclass
class Route:
    program: str   # what the shell could not find: "zizmor"
    absent: str    # how that showed: "zsh:1: command not found: hk", or "`command -v zizmor` found nothing"
    ran: str       # the run that passed by another route: "target/debug/hk fix --all -S pkl-format"
    how: str       # that route in short: "target/debug/hk", "docker run … ghcr.io/zizmorcore/zizmor"
    at: float


def routes(commands: list[Command]) -> list[Route]:
    """Programs of one turn's ``commands`` not on the PATH, each with the run that reached them another way."""
    out: list[Route] = []
    missing = [_absent(c) for c in commands]  # (read once: each program found is checked against every command)
    for i, found_missing in enumerate(missing):
        for program, absent in found_missing:
            if any(r.program == program for r in out) or any(
                    _ran_bare(d, program, gone) for d, gone in zip(commands, missing, strict=True)):
                continue  # (it ran from the PATH in this turn after all: installed in between, another shell)
            found = next(((d, how) for d in commands[i + 1:] if d.ok for how in [_route(d, program)] if how), None)
            if found is not None:
                out.append(Route(program, absent, found[0].command.strip(), found[1], found[0].at))
    return out


def drafts(commands: list[Command], gist: str) -> list[ObservationDraft]:
    """One gotcha per program not on the PATH that another route ran (at most two of a turn)."""
    out: list[ObservationDraft] = []
    for r in routes(commands)[:2]:
        out.append(proven.gotcha(
            title(r), proved_by="the commands", facts=[r.absent, f"`{clip(r.ran, 200)}` passed"],
            narrative=f"`{r.program}` was not on the PATH ({r.absent}); `{clip(r.ran, 200)}` ran it and passed.",
            at=r.at, how="the shell found no such program, and a run of it by another route passed", gist=gist))
    return out


def missing(c: Command) -> bool:
    """Whether ``c`` failed because a program it runs is not on the PATH: no change to a file can fix that."""
    return bool(_absent(c))


def title(r: Route) -> str:
    return f"`{r.program}` is not on the PATH here ({r.absent}); `{r.how}` runs it"


def _absent(c: Command) -> list[tuple[str, str]]:
    """The programs ``c`` showed are not on the PATH: in the shell's words, or by a lookup that found nothing."""
    if not c.finished:
        return []
    named = {w[0] for w in map(_words, _segments(c.command)) if w}
    found: list[tuple[str, str]] = []
    for m in _NOT_FOUND.finditer(c.output[:4000]):
        program = next(g for g in m.groups() if g)
        if program in named and all(p != program for p, _ in found):
            line = next((ln.strip() for ln in c.output.splitlines() if m.group(0).strip() in ln), m.group(0))
            found.append((program, clip(line, MAX_SAYS)))
    for s in _segments(c.command):
        looked = _LOOKUP.match(s)
        if looked is None or any(p == looked.group(1) for p, _ in found):
            continue
        program = looked.group(1)
        named_by = re.compile(rf"(?<![\w.+-]){re.escape(program)}(?![\w.+-])")
        # Any line naming it that is no refusal ("/usr/bin/zizmor", "zizmor 1.2.3") says it is there.
        if not any(named_by.search(ln) and not _MISSING.search(ln) for ln in c.output.splitlines()):
            found.append((program, f"`{s.strip()}` found nothing"))
    return found


def _ran_bare(c: Command, program: str, absent: list[tuple[str, str]]) -> bool:
    """Whether ``c`` ran ``program`` by its bare name (from the PATH) and passed, in a part its status speaks for
    (a shell that reports "command not found" and still exits 0 ran nothing; ``absent``: what ``c`` showed
    missing)."""
    return c.ok and any(w and w[0] == program for w in map(_words, _passed_segments(c))) \
        and all(p != program for p, _ in absent)


def _route(c: Command, program: str) -> str:
    """How ``c`` (which passed) ran ``program`` other than from the PATH, in short ('' when it did not)."""
    if re.search(rf"(?:command not found|not found|not recognized)\W+{re.escape(program)}\b|"
                 rf"\b{re.escape(program)}: (?:command )?not found", c.output[:4000]):
        return ""
    for s in _passed_segments(c):
        words = _words(s)
        if not words:
            continue
        first = words[0]
        if "/" in first and os.path.basename(first) == program:
            return first  # a build or a vendored copy: target/debug/hk, test/bats/bin/bats
        if re.fullmatch(rf"{re.escape(program)}-?\d+(?:\.\d+)*", first):
            return first  # the versioned name: python3 where python is not on the PATH
        head = tuple(words[:2])
        if head in _CONTAINERS:
            image = next((w for w in words[2:] if not w.startswith("-") and _is_image_of(w, program)), "")
            if image:
                return f"{' '.join(head)} … {re.split(r'[@]', image)[0]}"
            continue
        for runner in (head[:1], head):
            if runner in _RUNNERS:
                rest = [w for w in words[len(runner):] if not w.startswith("-") and not _ASSIGNMENT.match(w)
                        and w not in _LEADING]
                target = next(iter(rest), "")
                if "/" in target and os.path.basename(target) == program:
                    return target
                if target == program or target.split("@")[0] == program:
                    return f"{' '.join(runner)} {target}"
    return ""


def _is_image_of(word: str, program: str) -> bool:
    """Whether a container argument names an image of ``program`` (ghcr.io/zizmorcore/zizmor@sha256:…)."""
    name = re.split(r"[@:]", word.rsplit("/", 1)[-1])[0] if "/" in word else re.split(r"[@:]", word)[0]
    return name == program


def _segments(command: str) -> list[str]:
    return [s for s in _SEPARATORS.split(CD_FIRST.sub("", command.strip())) if s]


def _passed_segments(c: Command) -> list[str]:
    """The segments a passing command's status vouches for: its last chain of ``&&`` (after any ``;`` or line
    break), none when an ``||`` or a pipe leaves the status to another part."""
    text = CD_FIRST.sub("", c.command.strip())
    chain = re.split(r"\s*(?:;|\n)\s*", text.strip())[-1]
    if "||" in chain or re.search(r"(?<![|>&])\|(?!\|)", chain):
        return []
    return [s for s in re.split(r"\s*&&\s*", chain) if s]


def _words(segment: str) -> list[str]:
    """A segment's words after leading environment assignments and ``env``, tokenised like the shell would."""
    try:
        words = shlex.split(segment, comments=False)
    except ValueError:
        words = segment.split()
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _LEADING):
        words = words[1:]
    return words
