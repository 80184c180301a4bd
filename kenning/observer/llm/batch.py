"""Which pending events go to the model, together, and which model tier they deserve.

Trivial events (empty status checks, bare listings, searches that found nothing, tiny
reads) are settled before any model sees them. A batch is capped in events and characters
so a backlog after an outage becomes several turns, not one enormous request. A prompt
alone waits for what the agent does with it; a batch that only read code may go to the
cheaper model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kenning.observer import evidence
from kenning.records import Event

TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"}) | evidence.READ_TOOLS | evidence.SEARCH_TOOLS
BARE_COMMANDS = frozenset({"ls", "ll", "pwd", "cd", "echo", "clear", "true", "which", "whoami", "date"})
TINY_READ_CHARS = 120
MAX_BATCH_EVENTS = 60
MAX_BATCH_CHARS = 120_000


@dataclass
class Plan:
    """What to do with a session's available events this cycle."""

    settle: list[int] = field(default_factory=list)  # done without a model: trivial, SessionStart
    send: list[Event] = field(default_factory=list)  # the next user turn (may be empty: wait)
    read_only: bool = False
    closes_turn: bool = False  # ends with Stop / SessionEnd: ask for the summary
    ends_session: bool = False


def _response(ev: Event) -> Any:
    return ev.payload.get("tool_response")


def _empty_search(ev: Event) -> bool:
    r = _response(ev)
    if isinstance(r, dict):
        if "numFiles" in r and not r.get("numFiles") and not r.get("content"):
            return True
        return "content" in r and not str(r.get("content") or "").strip() and not r.get("filenames")
    return r is None or (isinstance(r, str | list) and not r)


def _read_size(ev: Event) -> int | None:
    r = _response(ev)
    if isinstance(r, dict):
        f = r.get("file")
        if isinstance(f, dict) and isinstance(f.get("content"), str):
            return len(f["content"])
        if isinstance(r.get("content"), str):
            return len(r["content"])
    if isinstance(r, str):
        return len(r)
    return None


def trivial(ev: Event) -> bool:
    """True for a successful tool call that teaches nothing on its own."""
    if ev.kind != "PostToolUse":
        return False
    cmd = evidence.command(ev)
    if cmd is not None:
        if not evidence.trivial(cmd):
            return False
        first = cmd.command.split()[0] if cmd.command.split() else ""
        return not cmd.output.strip() or first in BARE_COMMANDS
    tool = ev.tool_name or ""
    if tool in ("LS", "list_directory"):
        return True
    if tool in evidence.SEARCH_TOOLS:
        return _empty_search(ev)
    if tool in evidence.READ_TOOLS:
        size = _read_size(ev)
        return size is not None and size < TINY_READ_CHARS
    return False


def plan(events: list[Event], *, now: float, prompt_wait_s: float) -> Plan:
    """Split a session's available events (oldest first) into settled ones and the next turn."""
    out = Plan()
    candidates: list[Event] = []
    for ev in events:
        if ev.kind == "SessionStart" or trivial(ev):
            out.settle.append(ev.id)
        else:
            candidates.append(ev)
    chars = 0
    for ev in candidates:
        if out.send and (len(out.send) >= MAX_BATCH_EVENTS or chars + min(ev.size_chars, 40_000) > MAX_BATCH_CHARS):
            break
        out.send.append(ev)
        chars += min(ev.size_chars, 40_000)  # the rendering elides big fields: count what is sent
        if ev.kind in ("Stop", "SessionEnd"):
            break  # a turn boundary: the summary request goes with this batch, the rest waits
    if not out.send:
        return out
    kinds = {e.kind for e in out.send}
    if not kinds & {*TOOL_EVENTS, "Stop", "SessionEnd"} and now - out.send[-1].occurred_at < prompt_wait_s:
        out.send = []  # only a prompt so far: wait for what the agent does with it
        return out
    tools = [e for e in out.send if e.kind in TOOL_EVENTS]
    out.read_only = bool(tools) and all(e.kind == "PostToolUse" and e.tool_name in READ_ONLY_TOOLS for e in tools) \
        and not kinds & {"Stop", "SessionEnd"}
    out.closes_turn = out.send[-1].kind in ("Stop", "SessionEnd")
    out.ends_session = out.send[-1].kind == "SessionEnd"
    return out
