"""Versions a package manager says it changed ("go: upgraded golang.org/x/crypto v0.52.0 => v0.54.0",
cargo's "Updating serde v1.0.1 -> v1.0.2", poetry's "Updating httpx (0.27.0 -> 0.28.1)", uv's
"Updated httpx v0.27.0 -> v0.28.1"): what the commands prove changed, whatever was said. A memory
stating the old version of the same package stops being true (kenning/memory/supersession.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.observer.evidence import Command

_LINE = re.compile(
    r"^\W*(?:go:\s+)?(?:upgraded|downgraded|updating|updated|upgrading|downgrading|bump(?:ed|ing)?)\s+"
    r"(?P<pkg>[A-Za-z@][\w@./+-]*)\s+\(?v?(?P<old>\d[\w.+-]*)\s*(?:=>|->|→)\s*v?(?P<new>\d[\w.+-]*)\)?",
    re.IGNORECASE | re.MULTILINE)
MAX_SHOWN = 3


@dataclass(frozen=True)
class Upgrade:
    package: str
    old: str
    new: str


def upgrades(commands: list[Command]) -> list[Upgrade]:
    """Every version change the turn's successful commands printed, the latest per package."""
    found: dict[str, Upgrade] = {}
    for c in commands:
        if not c.ok:
            continue
        for m in _LINE.finditer(c.output or ""):
            pkg, old, new = m.group("pkg"), m.group("old"), m.group("new")
            if old != new:
                first = found.get(pkg)
                found[pkg] = Upgrade(pkg, first.old if first else old, new)
    return [u for u in found.values() if u.old != u.new]


def title(ups: list[Upgrade], mentioned: str) -> str:
    """One line: the packages the turn's words name first ("from v0.52.0 to v0.54.0", so that a memory of
    the old version is superseded), then how many others moved along."""
    named = sorted(ups, key=lambda u: u.package.rsplit("/", 1)[-1].lower() not in mentioned.lower())
    shown = named[:MAX_SHOWN]
    text = "; ".join(f"{u.package} from v{u.old.lstrip('v')} to v{u.new.lstrip('v')}" for u in shown)
    more = len(ups) - len(shown)
    return "Version changed: " + text + (f" (and {more} more)" if more > 0 else "")
