"""The checks that pass in this project, as the index says them: "Checks that passed: `bun run test`, …".

Each session's summary names the checks it ran (tests, linters, type checkers) with their last outcome (its
"Checks:" line, kenning/observer/checks.py). Said: those of the latest session that ran any that passed there,
then those that passed in at least ``MIN_SESSIONS`` of the recent sessions (how the project is checked, not
what one session tried once), at most ``MAX_SHOWN``.

Standard library only (the SessionStart hook may build the index itself).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # (the hook path imports this module)
    from collections.abc import Iterable

# A summary's line, "Checks: cargo test (ok), cargo fmt --check (failed)": kenning/observer/checks.py writes it
# and reads it back with ``of`` and ``parse`` (defined here: the hook path does not import the observer)
CHECKS = "Checks: "
MIN_SESSIONS = 2
MAX_SHOWN = 4
_ENTRY = re.compile(r"(.+?) \((ok|failed)\)(?:, |$)")


def of(notes: str) -> str:
    """The text of a summary's "Checks:" line ('' when it has none)."""
    return next((ln[len(CHECKS):] for ln in notes.splitlines() if ln.startswith(CHECKS)), "")


def parse(text: str) -> list[tuple[str, bool]]:
    """(check, passed) of a "Checks:" line's text."""
    return [(m.group(1), m.group(2) == "ok") for m in _ENTRY.finditer(text)]


def _passed(notes: str) -> list[str]:
    return [c for c, ok in parse(of(notes)) if ok]


def key(check: str) -> str:
    """What a check is, whatever it was aimed at: its program (by name) and words up to its first argument
    ("go test ./pkg/x/..." and "go test ./..." are both "go test"; "./target/debug/hk check" is "hk check")."""
    words = check.split()
    out = [words[0].rsplit("/", 1)[-1]]
    for w in words[1:]:
        if w.startswith(("-", ".", "/")) or "/" in w or "=" in w:
            break
        out.append(w)
    return " ".join(out)


def _whole(check: str) -> tuple[int, int]:
    """How much of the project a check covers (more first): no paths, or ``./...``; then the shorter."""
    paths = [w for w in check.split()[1:] if not w.startswith("-") and ("/" in w or w in (".", "..."))]
    return (0 if all(p in ("./...", ".", "...", "./") for p in paths) else 1, len(check))


def passed(notes: Iterable[str]) -> list[str]:
    """The checks to name, from the recent sessions' summary notes (newest first): one per kind of check,
    the variant that covers the most of the project."""
    runs = [_passed(n) for n in notes]
    latest = next((r for r in runs if r), [])
    count: dict[str, int] = {}
    variants: dict[str, list[str]] = {}
    for r in runs:
        for c in dict.fromkeys(r):
            variants.setdefault(key(c), []).append(c)
        for k in dict.fromkeys(key(c) for c in r):
            count[k] = count.get(k, 0) + 1
    keys = list(dict.fromkeys([*(key(c) for c in latest),
                               *(key(c) for r in runs for c in r if count[key(c)] >= MIN_SESSIONS)]))
    return [min(variants[k], key=_whole) for k in keys][:MAX_SHOWN]


def line(notes: Iterable[str]) -> str:
    found = passed(notes)
    return "Checks that passed: " + ", ".join(f"`{c}`" for c in found) if found else ""
