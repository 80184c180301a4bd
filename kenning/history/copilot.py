"""GitHub Copilot CLI's session logs read back into events.

Copilot CLI writes each session as an event stream, ``~/.copilot/session-state/<session id>/events.jsonl``
(``$COPILOT_HOME`` moves ``~/.copilot``; older builds wrote ``session-state/<session id>.jsonl``): one JSON
object a line, ``{"type", "data", "id", "timestamp", "parentId"}``. What is read:

* ``session.start``: the session's id, folder, branch and HEAD (``data.context``); ``session.context_changed``
  follows the folder and branch.
* ``user.message``: a prompt when the user typed it (no ``source``: the harness's reminders and discovered
  instructions carry one); ``delivery: "steering"`` is a message typed while the agent worked (``queued``).
* ``assistant.message``: what the agent said (``content``); a message that also requests tools is said along
  the way, one without requests after which nothing ran is the turn's conclusion.
* ``tool.execution_start`` / ``tool.execution_complete``: a tool call and its result, given the shape Copilot's
  own ``postToolUse`` hook gives live (kenning/integrations/copilot.py): the same names, exit code and failure.
* A user turn ends at the next typed prompt, at ``abort`` (interrupted) or where the log ends once it has gone
  quiet; ``session.shutdown`` ends the session.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from kenning.history import Event, SessionFile, finished, session_end, session_start, source, turn_texts
from kenning.history.source import Problems
from kenning.observer.transcript import PAYLOAD_KEY

NAME = "copilot"
QUIET_S = 15 * 60


def copilot_home() -> str:
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def discover(root: str | None = None, skipped: Problems | None = None) -> list[SessionFile]:
    """Every session log under ``session-state`` (a folder's ``events.jsonl``, or an older flat ``<id>.jsonl``);
    what is no regular file goes to ``skipped``."""
    base = root or os.path.join(copilot_home(), "session-state")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith("."):
            continue
        path = os.path.join(base, name)
        if os.path.isdir(path):
            path = os.path.join(path, "events.jsonl")
            if not os.path.lexists(path):
                continue
        elif not name.endswith(".jsonl"):
            continue
        fst, why = source.check(path)
        if fst is None:
            if skipped is not None:
                skipped.file(path, why)
            continue
        out.append(SessionFile(NAME, path, fst.st_size, fst.st_mtime))
    return out


def session_id_of(path: str) -> str:
    """The session id a log's place names (``<id>/events.jsonl`` or ``<id>.jsonl``)."""
    name = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if name == "events.jsonl" else name[:-len(".jsonl")]


class _Turn:
    """The user turn being read: what the agent said, and whether its last word closed it."""

    def __init__(self) -> None:
        self.close()

    def close(self) -> None:
        self.open = False
        self.key = ""  # the key of the prompt that opened it: its Stop's, however the turn ends in the log
        self.said: list[str] = []
        self.concluded = False  # the latest item is the agent's message that requested no tool
        self.last_at = 0.0  # when the agent last said or ran something in it


def events(f: SessionFile, *, quiet_s: float = QUIET_S, now: float | None = None) -> Iterator[Event]:
    import time

    from kenning.integrations.copilot import HOOK

    now = time.time() if now is None else now
    sid = session_id_of(f.path)
    cwd = ""
    git: dict[str, str] = {}
    calls: dict[str, tuple[str, Any]] = {}  # toolCallId -> (tool name, arguments)
    turn = _Turn()
    last_at = 0.0
    started = ended = False
    for n, rec, at in source.records(f.path, f.problems, "data"):
        kind, d = rec.get("type"), rec["data"]
        key = str(rec.get("id") or n)
        if kind in ("session.start", "session.context_changed"):
            ctx = d.get("context") if kind == "session.start" else d
            ctx = ctx if isinstance(ctx, dict) else {}
            sid = str(d.get("sessionId") or sid) if kind == "session.start" else sid
            cwd = str(ctx.get("cwd") or ctx.get("gitRoot") or cwd)
            for ours, theirs in (("git_branch", "branch"), ("git_commit", "headCommit")):
                if isinstance(ctx.get(theirs), str) and ctx[theirs]:
                    git[ours] = ctx[theirs]
        base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
        if not started:
            started = True
            yield session_start(base, at, **git)
        last_at = at
        if kind == "user.message":
            prompt = d.get("content")
            if d.get("source") or not isinstance(prompt, str) or not prompt.strip():
                continue  # the harness's words (reminders, discovered instructions): nobody typed them
            queued = d.get("delivery") == "steering" and turn.open
            if turn.open and not queued:
                yield _stop(turn, at, base)
            if not queued:
                turn.open, turn.key = True, key
            yield Event("UserPromptSubmit", at, f"prompt:{key}", {
                **base, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                "prompt_origin": "queued" if queued else "typed"})
        elif kind == "assistant.message" and not d.get("parentToolCallId"):
            text = d.get("content")
            if isinstance(text, str) and text.strip():
                turn.said.append(text)
            requests = d.get("toolRequests")
            turn.concluded = isinstance(text, str) and bool(text.strip()) and not requests
            turn.last_at = at
        elif kind == "tool.execution_start" and isinstance(d.get("toolCallId"), str):
            calls[d["toolCallId"]] = (str(d.get("toolName") or ""), d.get("arguments"))
            turn.concluded, turn.last_at = False, at
        elif kind == "tool.execution_complete" and isinstance(d.get("toolCallId"), str):
            call = calls.pop(d["toolCallId"], None)
            if call is not None:
                found = HOOK.translate("postToolUse", _as_hook(call, d, base))
                if found is not None:
                    ours, payload = found
                    payload.update(hook_event_name=ours, tool_use_id=d["toolCallId"])
                    yield Event(ours, at, f"{ours}:{d['toolCallId']}", payload)
        elif kind == "abort" and turn.open:
            yield _stop(turn, at, base, interrupted=True)
        elif kind == "session.shutdown":
            if turn.open:
                yield _stop(turn, at, base)
            ended = True
            yield session_end(base, at)
    if started and not ended and finished(f.mtime, now, quiet_s):
        base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
        if turn.open:  # the log ends inside a turn that has gone quiet
            yield _stop(turn, last_at, base)
        yield session_end(base, last_at)


def _stop(turn: _Turn, at: float, base: dict[str, Any], *, interrupted: bool = False) -> Event:
    """The Stop that closes the open turn: its conclusion (the agent's last message, when nothing ran after it
    and the turn was not interrupted) and what it said along the way, at the agent's last step (``at`` when it
    took none); the turn is then closed. Keyed by the turn's prompt: a log read again after it grew gives the
    turn the same Stop, however it ends there."""
    last = turn.said[-1] if turn.said and turn.concluded and not interrupted else ""
    payload = {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": last,
               PAYLOAD_KEY: turn_texts(turn.said, last)}
    if interrupted:
        payload["interrupted"] = True
    when, key = (turn.last_at or at) if not interrupted else at, turn.key
    turn.close()
    return Event("Stop", when, f"stop:{key}", payload)


def _as_hook(call: tuple[str, Any], done: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A finished call in the shape of Copilot's ``postToolUse`` hook (``toolName``, ``toolArgs``, ``toolResult``)."""
    name, args = call
    raw_result, raw_error = done.get("result"), done.get("error")
    result: dict[str, Any] = raw_result if isinstance(raw_result, dict) else {}
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    text = result.get("content") if isinstance(result.get("content"), str) else ""
    kind = "success" if done.get("success") else "failure"
    if not done.get("success"):
        text = str(error.get("message") or text or "")
        if str(error.get("code") or "") in ("denied", "rejected"):
            kind = "denied"  # the user refused the call: nothing ran
    if name == "apply_patch" and isinstance(args, str):
        args = {"command": args}  # (the patch, where evidence reads a patch)
    return {"sessionId": base["session_id"], "cwd": base["cwd"], "transcript_path": base["transcript_path"],
            "toolName": name, "toolArgs": args, "toolResult": {"resultType": kind, "textResultForLlm": text}}


TAIL_BYTES = 2 * 1024 * 1024
_SAID_KINDS = (b"user.message", b"assistant.message", b"hook.start")


def turn_said(path: str, stamp: Any = None) -> tuple[list[str], list[dict[str, str]]]:
    """(what the agent said, the user's words typed meanwhile) in the turn a live ``agentStop`` closed: the log's
    lines from the turn's typed prompt to that hook's ``hook.start`` (its input's ``timestamp`` is ``stamp``; the
    log's end when it is not found). Read from the file's tail, a regular file only."""
    if not path.endswith(".jsonl"):
        return [], []
    data = source.tail(path, TAIL_BYTES)
    if data is None:
        return [], []
    lines: list[dict[str, Any]] = []
    for raw in data.split(b"\n"):
        head = raw[:60].replace(b" ", b"")
        if not head.startswith(b'{"type":"') or not head[9:].startswith(_SAID_KINDS):
            continue  # (tool results can be megabytes: never parsed)
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        source.cap_depth(rec)
        if isinstance(rec, dict) and isinstance(rec.get("data"), dict):
            lines.append(rec)
    end = next((i for i in range(len(lines) - 1, -1, -1) if _stops_at(lines[i], stamp)), len(lines))
    start = next((i for i in range(end - 1, -1, -1) if _typed(lines[i]["data"]) == "typed"
                  and lines[i]["type"] == "user.message"), -1)
    texts: list[str] = []
    words: list[dict[str, str]] = []
    for rec in lines[start + 1:end]:
        d = rec["data"]
        if rec["type"] == "assistant.message" and not d.get("parentToolCallId") and isinstance(d.get("content"), str) \
                and d["content"].strip():
            texts.append(d["content"])
        elif rec["type"] == "user.message" and _typed(d) == "queued":
            words.append({"origin": "queued", "text": str(d["content"])})
    return texts, words


def _stops_at(rec: dict[str, Any], stamp: Any) -> bool:
    d = rec["data"]
    given = d.get("input")
    return rec["type"] == "hook.start" and d.get("hookType") == "agentStop" and stamp is not None \
        and isinstance(given, dict) and given.get("timestamp") == stamp


def _typed(d: dict[str, Any]) -> str:
    """'typed' or 'queued' (a steering message) for what the user typed, '' for the harness's messages."""
    content = d.get("content")
    if d.get("source") or not isinstance(content, str) or not content.strip():
        return ""
    return "queued" if d.get("delivery") == "steering" else "typed"
