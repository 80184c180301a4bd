"""A command that fails inside the agent's sandbox and passes outside it: a gotcha the record proves.

Codex runs commands in a sandbox and, when one fails there, may run it again with ``sandbox_permissions:
require_escalated`` once the user approves; Claude Code's sandboxed Bash does the same with
``dangerouslyDisableSandbox``. ``corepack pnpm run test`` fails with "listen EPERM: operation not permitted
127.0.0.1" and passes when run outside; ``gh auth status`` fails to read the login and passes outside. The next
session should ask to run it outside at once. Only the same command, failed inside and then passed outside in the
same turn, proves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.memory.text import clip
from kenning.observer import proven
from kenning.observer.evidence import Command, error_headline
from kenning.records import ObservationDraft

MAX_COMMAND = 80
MAX_ERROR = 110


@dataclass
class Outside:
    command: str  # as run, both times
    error: str    # what it said inside the sandbox (its error headline)
    at: float


def found(commands: list[Command]) -> list[Outside]:
    """The commands of one turn that failed inside the sandbox and then passed outside it (one each)."""
    out: list[Outside] = []
    for i, c in enumerate(commands):
        if not (c.ok and c.finished and c.outside) or any(o.command == c.command for o in out):
            continue
        inside = next((d for d in reversed(commands[:i]) if d.command == c.command and not d.outside), None)
        if inside is not None and not inside.ok and inside.finished:
            out.append(Outside(c.command, error_headline(inside.output), c.at))
    return out


def title(o: Outside) -> str:
    said = f" ({clip(o.error, MAX_ERROR)})" if o.error else ""
    return f"`{clip(o.command, MAX_COMMAND)}` fails inside the sandbox{said} and passes when run outside it"


def drafts(commands: list[Command], gist: str) -> list[ObservationDraft]:
    """One gotcha per command the sandbox kept from passing (at most two of a turn)."""
    out: list[ObservationDraft] = []
    for o in found(commands)[:2]:
        out.append(proven.gotcha(
            title(o), proved_by="the commands",
            facts=[f"inside the sandbox: {o.error or 'failed'}", "outside it: passed"],
            narrative=f"`{o.command}` failed inside the agent's sandbox and passed when the agent ran it outside.",
            at=o.at, how="the same command failed inside the sandbox and passed outside it", gist=gist))
    return out
