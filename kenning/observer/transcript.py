"""What was said during a turn that no hook reports, read from Claude Code's transcript at ``transcript_path``
(Copilot CLI's session log at ``transcriptPath``: kenning/history/copilot.py ``turn_said``).

The Stop payload carries only the agent's last message; its explanations along the way ("the
crash was X", "raising Y fixed it") are ``text`` blocks of ``assistant`` lines in the session's
JSONL transcript (see the protocol reference, section 5). Two kinds of the user's own words reach
the agent mid-turn without a ``UserPromptSubmit`` either: a message typed while the agent worked
(a ``queue-operation`` line that enqueues it, then one that removes it from the queue when the
agent takes it in; one the queue hands over as the next prompt is dequeued instead, and that
prompt has its own hook), and what they said refusing a tool call (the call's ``tool_result``).

The turn is found by its ``prompt_id`` (the typed ``user`` line carries it as ``promptId``), else by
the prompt's text; only the file's tail is read, lines that are none of these are skipped before
parsing, and subagent (sidechain) lines are left out. What is returned is cleaned like captured
text (``<private>`` removed, secrets redacted) before anything keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kenning.history import newest_texts
from kenning.history.claude_lines import REJECTED, rejection, written_by_the_cli

TAIL_BYTES = 2 * 1024 * 1024
PAYLOAD_KEY = "kenning_turn_text"
WORDS_KEY = "kenning_turn_words"  # [{"origin": "queued" | "rejection", "text": ...}], in order
# A refused call's result names the refusal near its start (the head of a line is all _kind reads).
_REFUSED_HEAD = REJECTED.replace(" ", "").encode()


def turn_texts(path: str, *, prompt_id: str = "", prompt: str = "") -> list[str]:
    """The assistant's text blocks of one turn, in order ([] when the transcript cannot be read)."""
    return read_turn(path, prompt_id=prompt_id, prompt=prompt)[0]


def read_turn(path: str, *, prompt_id: str = "", prompt: str = "") -> tuple[list[str], list[dict[str, str]]]:
    """(the assistant's text blocks, the user's words said mid-turn) of one turn, in order."""
    if not path or not path.endswith(".jsonl"):
        return [], []
    from kenning.history import source

    data = source.tail(path, TAIL_BYTES)
    if data is None:
        return [], []
    turns: list[_Turn] = []
    current: _Turn | None = None
    current_id: object = None
    matched: _Turn | None = None
    for raw in data.split(b"\n"):
        kind = _kind(raw)
        if kind is None:
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):  # a line cut short, or nested beyond any real one
            continue
        source.cap_depth(line)  # what is read next (str() of a value, cleaning) never recurses without bound
        if not isinstance(line, dict) or line.get("isSidechain"):
            continue
        if kind == "queue":
            if line.get("type") == "queue-operation":
                if current is None:
                    current = _Turn()
                    turns.append(current)
                current.queue(line)
            continue
        if line.get("type") != ("assistant" if kind == "assistant" else "user"):
            continue
        msg: dict[str, Any] = line["message"] if isinstance(line.get("message"), dict) else {}
        if kind == "user":
            # A turn starts at the typed prompt; its tool results and reminders carry the same id or none.
            pid = line.get("promptId")
            typed = _typed_prompt(msg)
            if not pid or pid == current_id or typed is None:
                continue
            current, current_id = _Turn(), pid
            turns.append(current)
            if (prompt_id and pid == prompt_id) or (not prompt_id and prompt and typed.strip() == prompt.strip()):
                matched = current
            continue
        if kind == "assistant" and written_by_the_cli(line):
            continue  # Claude Code's own line ("You've hit your limit …", "API Error: …"): no words of the agent
        if current is None:  # the tail starts inside a turn
            current = _Turn()
            turns.append(current)
        if kind == "refused":
            said = _refusal(msg)
            if said:
                current.words.append({"origin": "rejection", "text": said})
            continue
        for block in msg.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"].strip()
                if text:
                    current.texts.append(text)
    found = matched if matched is not None else (turns[-1] if turns and not prompt_id else None)
    if found is None:
        return [], []
    return newest_texts(found.texts), found.said()


class _Turn:
    """What one turn's lines hold: the agent's texts and the user's words in it."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.words: list[dict[str, str]] = []
        self.waiting: list[str] = []  # queued, not yet taken in or handed over ('' for no typed words)

    def queue(self, line: dict[str, Any]) -> None:
        """Queued words count once the agent took them in ("remove"); "dequeue" hands them over as
        the next prompt, which its own hook reports (and a Stop cannot know yet which will come)."""
        op, content = line.get("operation"), line.get("content")
        if op == "enqueue":
            self.waiting.append(content.strip() if isinstance(content, str) and _typed_words(content) else "")
        elif op in ("remove", "dequeue") and self.waiting:
            text = self.waiting.pop(0)
            if op == "remove" and text:
                self.words.append({"origin": "queued", "text": text})

    def said(self) -> list[dict[str, str]]:
        return [dict(w) for w in self.words][-MAX_WORDS:]


MAX_WORDS = 20


def _typed_words(text: str) -> bool:
    """A message the user typed (not a slash command, a notification, a task record, an agent's message)."""
    t = text.strip()
    return bool(t) and not t.startswith(("<", "{", "/", "Another Claude session"))


def _refusal(msg: dict[str, Any]) -> str:
    """What the user said refusing a tool call ('' for a refusal without words, or no refusal)."""
    for block in msg.get("content") or []:
        if not (isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")):
            continue
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
        said = rejection(str(content or ""))
        if said is not None:
            return said
    return ""


def _kind(raw: bytes) -> str | None:
    """'user' / 'assistant' / 'refused' / 'queue' for lines worth parsing, None for everything else.

    Decided from the line's head without parsing it: tool results and tool calls (file contents,
    command output) can be megabytes, and they carry no explanation.
    """
    head = raw[:1500].replace(b" ", b"")
    if b'"role":"assistant"' in head:
        return "assistant" if b'{"type":"text"' in head else None
    if b'"role":"user"' in head:
        if b'"tool_result"' not in head:
            return "user"
        return "refused" if _REFUSED_HEAD in head else None
    if b'"type":"queue-operation"' in head[:200]:
        return "queue"
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
            return payload  # an imported turn: its texts, and its words as prompts of their own
        path = payload.get("transcript_path")
        pid = payload.get("prompt_id")
        copilot_log = payload.get("transcriptPath")  # Copilot CLI's agentStop: its session's events.jsonl
        if isinstance(copilot_log, str):
            from kenning.history.copilot import turn_said

            texts, words = turn_said(copilot_log, payload.get("timestamp"))
        else:
            texts, words = read_turn(path if isinstance(path, str) else "",
                                     prompt_id=pid if isinstance(pid, str) else "")
        last = payload.get("last_assistant_message")
        cleaned = [c for c in (self.clean(t) for t in texts) if c.strip()]
        if isinstance(last, str) and cleaned and cleaned[-1].strip() == self.clean(last).strip():
            cleaned.pop()  # the last message is in the payload already
        said = [{"origin": w["origin"], "text": c} for w in words if (c := self.clean(w["text"])).strip()]
        return {**payload, PAYLOAD_KEY: cleaned, WORDS_KEY: said}


def words_of(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(origin, text) of the user's words a Stop carries (``WORDS_KEY``), checked."""
    raw = payload.get(WORDS_KEY)
    if not isinstance(raw, list):
        return []
    return [(str(w["origin"]), w["text"]) for w in raw if isinstance(w, dict) and w.get("origin") in
            ("queued", "rejection") and isinstance(w.get("text"), str) and w["text"].strip()]
