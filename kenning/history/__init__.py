"""Past sessions as events: Claude Code transcripts, Codex rollouts and Copilot CLI logs read back into the event model.

Each reader streams one session file line by line (never the whole file in memory) and yields
``Event`` tuples in the shape the hooks capture live (Claude Code's event and field names, the
original timestamp), each with a key that is the same every time the file is read, so a second
import finds every event already stored and a file that grew adds only what is new.

What the payloads add to the live shapes, for the observer:

* ``UserPromptSubmit``: ``prompt_origin``, where the text came from: ``typed`` (the user submitted
  it), ``queued`` (typed while the agent worked, read mid-turn), ``plan`` (a plan the agent wrote
  and the user accepted: the agent's words), ``rejection`` (what the user said when refusing a tool
  call; ``rejected_tool`` names the call), ``headless`` (the scripted prompt of ``claude -p`` / the
  SDKs / ``codex exec``), ``agent`` (what an agent told a sub-agent it spawned: a Codex sub-agent's
  thread). Text nobody typed is no prompt (kenning/history/claude_lines.py).
* ``Stop``: ``interrupted: True`` when the user stopped the turn (Claude Code's ``[Request
  interrupted by user...]``, Codex's ``turn_aborted``), with ``rejected_tool`` when a refused call
  (without words) led to it. A queued or rejection prompt does not close the turn before it.
* ``PostToolUse`` with ``actor: "user"``: a shell command the user ran themselves (Claude Code's
  ``!``), as a ``Bash`` call (``tool_use_id`` ``user-shell:<uuid>``); a refused call is no
  ``PostToolUseFailure``.
* ``SessionStart``: ``repository`` (the remote the transcript names, normalised as
  ``kenning.project.normalize_remote`` spells it), ``git_branch`` and ``git_commit`` (Codex: the
  checkout's HEAD) when known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kenning.history.source import Problems


@dataclass
class Event:
    kind: str  # SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop, SessionEnd
    at: float
    key: str  # stable across reads of the same file
    payload: dict[str, Any] = field(default_factory=dict)


def session_start(base: dict[str, Any], at: float, **checkout: Any) -> Event:
    """A past session's SessionStart, as the hook gives it: ``base`` (session id, cwd, transcript) and what the
    record says of the checkout (branch, commit, repository). Its key is the session's, stable across reads."""
    return Event("SessionStart", at, f"start:{base['session_id']}",
                 {**base, "hook_event_name": "SessionStart", "source": "startup", **checkout})


def session_end(base: dict[str, Any], at: float) -> Event:
    """A past session's SessionEnd (the record ended; how, it does not say)."""
    return Event("SessionEnd", at, f"end:{base['session_id']}", {**base, "hook_event_name": "SessionEnd",
                                                                  "reason": "other"})


@dataclass
class SessionFile:
    """One past session: its main file and, for Claude Code, the subagents' transcripts."""

    agent: str
    path: str
    size: int
    mtime: float
    extra: list[str] = field(default_factory=list)
    problems: Problems = field(default_factory=lambda: _problems())  # what could not be read, and why


def _problems() -> Problems:
    from kenning.history.source import Problems  # not on the live transcript reader's path

    return Problems()


def finished(mtime: float, now: float, quiet_s: float) -> bool:
    """Whether a transcript last written at ``mtime`` is a finished session: untouched for ``quiet_s``,
    or dated in the future (a clock that ran fast: its date says nothing about being written now)."""
    from kenning.memory.order import cutoff

    return now - mtime >= quiet_s or mtime > cutoff(now)


def timestamp(value: Any) -> float | None:
    """Epoch seconds of an ISO-8601 timestamp (``2026-11-30T05:39:31.615Z``), None when unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


TURN_TEXT_CHARS = 12_000  # of a turn's texts kept with its Stop, imported or live (the end: where conclusions are)


def turn_texts(said: list[str], last: str) -> list[str]:
    """What the agent said along the way in a turn, for its Stop (``kenning_turn_text``, as the worker
    reads it from a live session's transcript): every text but the last message, the newest kept
    when they run long."""
    texts = [t for t in said if t.strip()]
    if texts and last and texts[-1].strip() == last.strip():
        texts.pop()
    return newest_texts(texts)


def newest_texts(texts: list[str]) -> list[str]:
    """The newest of a turn's texts within ``TURN_TEXT_CHARS``, in order (one text alone, its end)."""
    out: list[str] = []
    total = 0
    for t in reversed(texts):
        if total + len(t) > TURN_TEXT_CHARS and out:
            break
        out.append(t[-TURN_TEXT_CHARS:])
        total += len(t)
    return list(reversed(out))
