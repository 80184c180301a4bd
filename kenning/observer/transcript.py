"""What the agent said during a turn, read from Claude Code's transcript at ``transcript_path``.

The Stop payload carries only the agent's last message; its explanations along the way ("the
crash was X", "raising Y fixed it") are ``text`` blocks of ``assistant`` lines in the session's
JSONL transcript (see the protocol reference, section 5). The turn is found by its
``prompt_id`` (the typed ``user`` line carries it as ``promptId``), else by the prompt's text;
only the file's tail is read, lines that are not assistant text are skipped before parsing,
and subagent (sidechain) lines are left out. What is returned is cleaned like captured text
(``<private>`` removed, secrets redacted) before anything keeps it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

TAIL_BYTES = 2 * 1024 * 1024
MAX_CHARS = 12_000  # of one turn's text kept (its end: where explanations and outcomes are)
PAYLOAD_KEY = "kenning_turn_text"


def turn_texts(path: str, *, prompt_id: str = "", prompt: str = "") -> list[str]:
    """The assistant's text blocks of one turn, in order ([] when the transcript cannot be read)."""
    if not path or not path.endswith(".jsonl"):
        return []
    try:
        st = os.stat(path)
        if (st.st_mode & 0o170000) != 0o100000:
            return []
        with open(path, "rb") as fh:
            if st.st_size > TAIL_BYTES:
                fh.seek(st.st_size - TAIL_BYTES)
                fh.readline()  # a partial line
            data = fh.read(TAIL_BYTES)
    except (OSError, ValueError):
        return []
    turns: list[list[str]] = []
    current: list[str] | None = None
    current_id: object = None
    matched: list[str] | None = None
    for raw in data.split(b"\n"):
        kind = _kind(raw)
        if kind is None:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or line.get("type") != kind or line.get("isSidechain"):
            continue
        msg: dict[str, Any] = line["message"] if isinstance(line.get("message"), dict) else {}
        if kind == "user":
            # A turn starts at the typed prompt; its tool results and reminders carry the same id or none.
            pid = line.get("promptId")
            typed = _typed_prompt(msg)
            if not pid or pid == current_id or typed is None:
                continue
            current, current_id = [], pid
            turns.append(current)
            if (prompt_id and pid == prompt_id) or (not prompt_id and prompt and typed.strip() == prompt.strip()):
                matched = current
            continue
        if current is None:  # the tail starts inside a turn
            current = []
            turns.append(current)
        for block in msg.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"].strip()
                if text:
                    current.append(text)
    found = matched if matched is not None else (turns[-1] if turns and not prompt_id else [])
    return _tail(found)


def _kind(raw: bytes) -> str | None:
    """'user' / 'assistant' for conversation lines worth parsing, None for everything else.

    Decided from the line's head without parsing it: tool results and tool calls (file contents,
    command output) can be megabytes, and they carry no explanation.
    """
    head = raw[:1500].replace(b" ", b"")
    if b'"role":"assistant"' in head:
        return "assistant" if b'{"type":"text"' in head else None
    if b'"role":"user"' in head and b'"tool_result"' not in head:
        return "user"
    return None


def _typed_prompt(msg: dict[str, Any]) -> str | None:
    content = msg.get("content")
    if isinstance(content, str):
        return None if content.lstrip().startswith("<") and "command-" in content[:40] else content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if texts and not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


def _tail(blocks: list[str]) -> list[str]:
    out: list[str] = []
    total = 0
    for b in reversed(blocks):
        if total + len(b) > MAX_CHARS and out:
            break
        out.append(b[-MAX_CHARS:])
        total += len(b)
    return list(reversed(out))


def cleaner(settings: Any) -> Callable[[str], str]:
    """Clean transcript text as the hooks clean what they capture (``kenning.privacy.ingress``)."""
    from kenning.privacy import ingress

    return ingress.cleaner(settings).text


class TurnReader:
    """Adds the turn's cleaned assistant text to Stop events (``payload[PAYLOAD_KEY]``)."""

    def __init__(self, clean: Callable[[str], str]) -> None:
        self.clean = clean

    def enrich(self, payload: dict[str, Any]) -> dict[str, Any]:
        if PAYLOAD_KEY in payload:
            return payload
        path = payload.get("transcript_path")
        pid = payload.get("prompt_id")
        texts = turn_texts(path if isinstance(path, str) else "", prompt_id=pid if isinstance(pid, str) else "")
        last = payload.get("last_assistant_message")
        cleaned = [c for c in (self.clean(t) for t in texts) if c.strip()]
        if isinstance(last, str) and cleaned and cleaned[-1].strip() == self.clean(last).strip():
            cleaned.pop()  # the last message is in the payload already
        return {**payload, PAYLOAD_KEY: cleaned}
