"""The checks a session ran: its test, lint and type-check commands, and whether each last passed.

A next session should verify its work the way the project does (`bun run test`, `bun run lint`, `bun run
typecheck`; `cargo clippy`, `cargo test`), and the commands prove how that is: a summary keeps each check the
session ran with its last outcome (its "Checks:" line), and the index says which passed
(kenning/context/checks.py). A command is a check when it tests, lints, type-checks, or runs a formatter in check
mode, and is the whole command: not piped (``| tail`` would give tail's exit status, not the check's), not
chained with another, not aimed at one file or one test, not a fixer (``--fix``, a formatter that writes). Of a
chain joined by ``&&`` that passed, each part that is a check by itself passed (``checks_of``).
"""

from __future__ import annotations

import re

from kenning.context.checks import CHECKS, of, parse
from kenning.observer.evidence import CD_FIRST

MAX_KEPT = 8

_CHECK = re.compile(
    r"(?:^|\s)(?:test(?::[\w-]+)?|tests|lint(?::[\w-]+)?|check|typecheck|type-check|types|clippy|vet|pytest|mypy|pyright|"
    r"ruff\s+check|eslint|biome\s+(?:check|lint|ci)|tsc|golangci-lint|staticcheck|jest|vitest|bats|rspec|phpunit|"
    r"tox|nox|(?:fmt|format)\s+--check|prettier\s+--check)(?=\s|$)")
_FIXES = re.compile(r"(?:^|\s)(?:--fix|--write|-w|lint:fix|--autofix)(?=\s|$)")
# Aimed at one file or one test: a path with an extension, a test filter (cargo's: "cargo test structured_argv")
_ONE = re.compile(r"\S+\.(?:py|ts|tsx|js|jsx|mjs|go|rs|rb|java|kt|bats|sh|php|cs|swift)(?::\S*)?(?=\s|$)|"
                  r"(?:^|\s)(?:-run|-k|--testPathPattern|-t|--filter|--grep|-p|--test|--step|--only)(?:[\s=]|$)|"
                  r"^cargo\s+(?:test|nextest\s+run)\s+(?!-)\S")
# Not the project's check: a version or help query, a run of the program itself ("cargo run -- test …")
_NOT = re.compile(r"(?:^|\s)(?:--version|-V|version|--help|-h|help)(?=\s|$)|^(?:cargo|go|deno)\s+run\b")
_QUIET = re.compile(r"\s+2>&1\s*$")
_SHELL = re.compile(r"\||&&|;|\n|\$\(|`|>")


# Tools that read or search: a check word among their arguments is a path or a pattern ("rg -n x test docs")
_READS = frozenset(("rg", "grep", "ls", "cat", "find", "sed", "awk", "head", "tail", "less", "wc", "echo", "printf",
                    "git", "gh", "nl", "diff", "open", "code"))


def check_of(command: str) -> str:
    """The check a command runs, as run (without ``cd x &&`` and a trailing ``2>&1``), or ''."""
    c = _as_run(command)
    if not c or len(c) > 120 or _SHELL.search(c) or _FIXES.search(c) or _ONE.search(c) or _NOT.search(c):
        return ""
    return c if _checks(c) else ""


# What leaves a chain's exit status to its last part only, or to no part in particular
_NOT_AND = re.compile(r";|\|\||\n|\$\(|`|(?<![&>])&(?![&>])")


def checks_of(command: str, ok: bool) -> list[str]:
    """The checks a command ran whose outcome its exit status tells: the command itself, or each part of a chain
    that passed which is a check by itself (``cargo fmt --check && cargo clippy | tail -5 && cargo test``: `&&` goes
    on only after a part exited 0, so the chain's 0 says `cargo fmt --check` passed; the piped parts give tail's
    status). A chain that failed does not say which part failed."""
    whole = check_of(command)
    if whole or not ok or "&&" not in command or _NOT_AND.search(command):
        return [whole] if whole else []
    parts = [p.strip() for p in command.split("&&")]
    return [k for p in parts if p.count('"') % 2 == 0 and p.count("'") % 2 == 0 and (k := check_of(p))]


def runs_a_check(command: str) -> bool:
    """Whether a command runs a check (tests, lint, types), however it is aimed or piped."""
    return _checks(_as_run(command))


def _as_run(command: str) -> str:
    return _QUIET.sub("", CD_FIRST.sub("", command.strip()))


def _checks(command: str) -> bool:
    # the check is what the command runs (its first words), not an argument of it
    words = command.split()
    return bool(words) and words[0] not in _READS and bool(_CHECK.search(" ".join(words[:4])))


def merged(prior: str, runs: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The session's checks: those its summary so far named (``prior``, a "Checks:" line's text), then ``runs``
    in order, each with its last outcome; the latest run last, at most ``MAX_KEPT``."""
    out: dict[str, bool] = dict(parse(prior))
    for check, ok in runs:
        out.pop(check, None)
        out[check] = ok
    return list(out.items())[-MAX_KEPT:]


def line(checks: list[tuple[str, bool]]) -> str:
    return ", ".join(f"{c} ({'ok' if ok else 'failed'})" for c, ok in checks)


def summary_line(prior_notes: str, runs: list[tuple[str, bool]]) -> str:
    """The "Checks:" line of a session's summary after ``runs``, from its summary so far ('' when none ran)."""
    ran = merged(of(prior_notes), runs)
    return CHECKS + line(ran) if ran else ""
