"""Claude Code transcripts (``~/.claude/projects/<slug>/<session>.jsonl``) as events.

A transcript holds one JSON object per line: ``user`` lines (a typed prompt, or the results of
tool calls with the structured ``toolUseResult``), ``assistant`` lines (text and ``tool_use``
blocks, one block per line while streaming) and bookkeeping lines (attachments, queue operations,
request copies) that are skipped without being parsed. Subagents write their own transcripts
under ``<session>/subagents/agent-<id>.jsonl``: their tool calls belong to the same session,
marked with the subagent's id, as the hooks mark them live. A turn's Stop is the last assistant
text before the next prompt (or the end of a file that has been quiet for a while).
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from typing import Any

from kenning.history import Event, SessionFile, timestamp

NAME = "claude-code"
# Texts Claude Code puts in user turns itself: not prompts anyone typed.
SYNTHETIC_PREFIXES = ("<command-name>", "<command-message>", "<local-command", "<task-notification>",
                      "<system-reminder>", "[Request interrupted", "Caveat:", "<bash-input>", "<bash-stdout>",
                      "This session is being continued from a previous")
QUIET_S = 15 * 60  # a file untouched this long is a finished session: its last turn closes
# Only these lines are parsed (compact JSON as Claude Code writes it, or re-serialized with spaces).
_TYPE_MARKS = ('"type":"user"', '"type":"assistant"', '"type": "user"', '"type": "assistant"')


def projects_dir() -> str:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(os.path.expanduser(base), "projects")


def discover(root: str | None = None) -> list[SessionFile]:
    """Every main transcript with its subagents' files."""
    base = root or projects_dir()
    out = []
    for path in sorted(glob.glob(os.path.join(glob.escape(base), "*", "*.jsonl"))):
        try:
            st = os.stat(path)
        except OSError:
            continue
        stem = path[:-len(".jsonl")]
        subs = sorted(glob.glob(os.path.join(glob.escape(stem), "subagents", "agent-*.jsonl")))
        size, mtime = st.st_size, st.st_mtime
        for s in subs:
            try:
                sst = os.stat(s)
            except OSError:
                continue
            size += sst.st_size
            mtime = max(mtime, sst.st_mtime)
        out.append(SessionFile(NAME, path, size, mtime, subs))
    return out


def _lines(path: str) -> Iterator[dict[str, Any]]:
    """The user and assistant lines of a transcript, parsed one at a time."""
    try:
        fh = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 (a missing file yields nothing)
    except OSError:
        return
    with fh:
        for line in fh:
            # Cheap prefilter: most lines are bookkeeping (some hold whole request bodies).
            if not any(m in line for m in _TYPE_MARKS):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash: the rest of the file still counts
            if isinstance(rec, dict) and rec.get("type") in ("user", "assistant"):
                yield rec


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []


def _prompt(rec: dict[str, Any]) -> str | None:
    if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isSidechain"):
        return None
    blocks = _blocks(rec.get("message"))
    if any(b.get("type") == "tool_result" for b in blocks):
        return None
    text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text").strip()
    if not text or text.startswith(SYNTHETIC_PREFIXES):
        return None
    return text


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text") or "") for c in content if isinstance(c, dict))
    return ""


def events(f: SessionFile, *, quiet_s: float = QUIET_S, now: float | None = None) -> Iterator[Event]:
    """The session's events in time order: the main transcript and its subagents' merged as they
    stream (each file is in time order), so memory stays bounded whatever the files' sizes."""
    import heapq
    import time

    now = time.time() if now is None else now
    finished = now - f.mtime >= quiet_s
    streams = [_session_events(f.path, None, None, close_last=finished)]
    for sub in f.extra:
        agent_id = os.path.basename(sub)[len("agent-"):-len(".jsonl")]
        streams.append(e for e in _session_events(sub, agent_id, _agent_type(sub), close_last=False)
                       if e.kind.startswith("PostToolUse"))
    merged = heapq.merge(*streams, key=lambda e: e.at)
    first = next(merged, None)
    if first is None:
        return
    sid = str(first.payload.get("session_id") or os.path.basename(f.path)[:-len(".jsonl")])
    cwd = first.payload.get("cwd") or ""
    base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
    yield Event("SessionStart", first.at, f"start:{sid}", {**base, "hook_event_name": "SessionStart",
                                                            "source": "startup"})
    last_at = first.at
    for e in _chain(first, merged):
        e.payload = {**base, **{k: v for k, v in e.payload.items() if v is not None}}
        last_at = e.at
        yield e
    if finished:
        yield Event("SessionEnd", last_at, f"end:{sid}", {**base, "hook_event_name": "SessionEnd",
                                                          "reason": "other"})


def _chain(first: Event, rest: Iterator[Event]) -> Iterator[Event]:
    yield first
    yield from rest


def _agent_type(sub: str) -> str:
    try:
        with open(sub[:-len(".jsonl")] + ".meta.json", encoding="utf-8") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return "subagent"
    value = meta.get("agentType") or meta.get("agent_type") if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else "subagent"


def _session_events(path: str, agent_id: str | None, agent_type: str | None, *,
                    close_last: bool) -> Iterator[Event]:
    """Prompts, tool results and turn ends of one transcript file."""
    tools: dict[str, tuple[str, Any]] = {}  # tool_use id -> (name, input)
    last_text: tuple[float, str, str] | None = None  # (time, uuid, text) of the turn's last answer
    for rec in _lines(path):
        at = timestamp(rec.get("timestamp"))
        if at is None:
            continue
        common = {"session_id": rec.get("sessionId"), "cwd": rec.get("cwd"), "agent_id": agent_id,
                  "agent_type": agent_type}
        uuid = str(rec.get("uuid") or "")
        if rec["type"] == "assistant":
            for b in _blocks(rec.get("message")):
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    tools[b["id"]] = (str(b.get("name") or ""), b.get("input"))
                elif b.get("type") == "text" and str(b.get("text") or "").strip():
                    last_text = (at, uuid, str(b["text"]))
            continue
        prompt = _prompt(rec) if agent_id is None else None
        if prompt is not None:
            if last_text is not None:
                yield _stop(last_text, common)
                last_text = None
            yield Event("UserPromptSubmit", at, f"prompt:{uuid}", {**common, "hook_event_name": "UserPromptSubmit",
                                                                   "prompt": prompt})
            continue
        structured = rec.get("toolUseResult")
        for b in _blocks(rec.get("message")):
            if b.get("type") != "tool_result" or not isinstance(b.get("tool_use_id"), str):
                continue
            tid = b["tool_use_id"]
            name, tool_input = tools.pop(tid, ("", None))
            if not name:
                continue
            payload = {**common, "tool_name": name, "tool_input": tool_input if isinstance(tool_input, dict) else {},
                       "tool_use_id": tid}
            if b.get("is_error"):
                payload["hook_event_name"] = "PostToolUseFailure"
                payload["error"] = _result_text(b)
                yield Event("PostToolUseFailure", at, f"PostToolUseFailure:{tid}", payload)
            else:
                payload["hook_event_name"] = "PostToolUse"
                payload["tool_response"] = structured if structured is not None else _result_text(b)
                yield Event("PostToolUse", at, f"PostToolUse:{tid}", payload)
    if last_text is not None and agent_id is None and close_last:
        yield _stop(last_text, {})


def _stop(last: tuple[float, str, str], common: dict[str, Any]) -> Event:
    at, uuid, text = last
    return Event("Stop", at, f"stop:{uuid}", {**common, "hook_event_name": "Stop", "stop_hook_active": False,
                                             "last_assistant_message": text})
