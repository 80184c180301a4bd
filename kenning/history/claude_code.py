"""Claude Code transcripts (``~/.claude/projects/<slug>/<session>.jsonl``) as events.

A transcript holds one JSON object per line: ``user`` lines (a typed prompt, or the results of
tool calls with the structured ``toolUseResult``), ``assistant`` lines (text and ``tool_use``
blocks, one block per line while streaming) and bookkeeping lines, skipped without being parsed
except ``queue-operation`` (messages typed while the agent works) and ``pr-link``. Subagents write
their own transcripts under ``<session>/subagents/agent-<id>.jsonl``: their tool calls belong to
the same session, marked with the subagent's id, as the hooks mark them live.

Not everything in a ``user`` line was typed by the user. Every prompt event says where its text
came from in ``payload["prompt_origin"]`` (see :mod:`kenning.history.claude_lines`); text Claude Code
wrote itself (compaction summaries, slash-command output, task notifications, agent-team
messages, sidechains, meta lines) is no prompt at all. A turn's Stop comes at its last line,
before the next prompt (or at the end of a file that has been quiet for a while); a turn the user
interrupted ends with a Stop marked ``interrupted``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from typing import Any

from kenning.history import Event, SessionFile, finished, session_end, session_start, source, timestamp, turn_texts
from kenning.history.claude_lines import (
    INTERRUPTED,
    Scan,
    blocks,
    command_request,
    is_synthetic,
    prompt_origin,
    queued_key,
    queued_text,
    rejection,
    scan,
    shell_output,
    user_text,
    written_by_the_cli,
)
from kenning.history.source import Problems
from kenning.observer.transcript import PAYLOAD_KEY

NAME = "claude-code"
QUIET_S = 15 * 60  # a file untouched this long is a finished session: its last turn closes
# Only these lines are parsed (compact JSON as Claude Code writes it, or re-serialized with spaces).
_TYPE_MARKS = (b'"type":"user"', b'"type":"assistant"', b'"type": "user"', b'"type": "assistant"',
               b'"type":"queue-operation"', b'"type": "queue-operation"')


def projects_dir() -> str:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(os.path.expanduser(base), "projects")


def discover(root: str | None = None, skipped: Problems | None = None) -> list[SessionFile]:
    """Every main transcript with its subagents' files; what is no regular file goes to ``skipped``."""
    base = root or projects_dir()
    out = []
    for path in sorted(glob.glob(os.path.join(glob.escape(base), "*", "*.jsonl"))):
        st, why = source.check(path)
        if st is None:
            if skipped is not None:
                skipped.file(path, why)
            continue
        stem = path[:-len(".jsonl")]
        subs = []
        size, mtime = st.st_size, st.st_mtime
        for s in sorted(glob.glob(os.path.join(glob.escape(stem), "subagents", "agent-*.jsonl"))):
            sst, why = source.check(s)
            if sst is None:
                if skipped is not None:
                    skipped.file(s, why)
                continue
            subs.append(s)
            size += sst.st_size
            mtime = max(mtime, sst.st_mtime)
        out.append(SessionFile(NAME, path, size, mtime, subs))
    return out


def _lines(path: str, problems: Problems | None = None) -> Iterator[dict[str, Any]]:
    """The user, assistant and queue-operation lines of a transcript, parsed one at a time; what
    cannot be read (the file, or a line) is told to ``problems`` and skipped."""
    try:
        fh = source.open_regular(path)
    except source.Unreadable as e:
        if problems is not None:
            problems.file(path, str(e))
        return
    with fh:
        for line in source.lines(fh, problems):
            # Cheap prefilter: most lines are bookkeeping (some hold whole request bodies).
            if not any(m in line for m in _TYPE_MARKS):
                continue
            rec = source.parse(line, problems)  # None: a line cut by a crash, or absurd; the rest still counts
            if isinstance(rec, dict) and rec.get("type") in ("user", "assistant", "queue-operation"):
                yield rec


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

    from kenning.history.identity import checkout, remote_of_pr

    now = time.time() if now is None else now
    done = finished(f.mtime, now, quiet_s)
    found = scan(f.path)
    streams = [_session_events(f.path, None, None, close_last=done, found=found, problems=f.problems)]
    for sub in f.extra:
        agent_id = os.path.basename(sub)[len("agent-"):-len(".jsonl")]
        streams.append(e for e in _session_events(sub, agent_id, _agent_type(sub), close_last=False,
                                                  problems=f.problems)
                       if e.kind.startswith("PostToolUse"))
    merged = heapq.merge(*streams, key=lambda e: e.at)
    first = next(merged, None)
    if first is None:
        return
    # One file is one session: Claude Code names it after the session (a resumed session's copy of
    # earlier lines may still carry the earlier id inside).
    sid = os.path.basename(f.path)[:-len(".jsonl")] or str(first.payload.get("session_id") or "")
    cwd = first.payload.get("cwd") or ""
    base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
    start: dict[str, str] = {}
    if found.branch:
        start["git_branch"] = found.branch
    name = checkout(cwd)[0] if cwd else ""
    remote = next((r for r in (remote_of_pr(u, repo, name) for u, repo in found.pr_links) if r), "")
    if remote:
        start["repository"] = remote
    yield session_start(base, first.at, **start)
    last_at = first.at
    for e in _chain(first, merged):
        e.payload = {**base, **{k: v for k, v in e.payload.items() if v is not None and k != "session_id"}}
        last_at = max(last_at, e.at)
        yield e
    if done:
        yield session_end(base, last_at)


def _chain(first: Event, rest: Iterator[Event]) -> Iterator[Event]:
    yield first
    yield from rest


def _agent_type(sub: str) -> str:
    try:
        with source.open_regular(sub[:-len(".jsonl")] + ".meta.json") as fh:
            meta = source.loads(fh.read(64 * 1024).decode("utf-8"))
    except (source.Unreadable, OSError, ValueError):
        return "subagent"
    value = meta.get("agentType") or meta.get("agent_type") if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else "subagent"


class _Turn:
    """What the open turn of the main transcript has seen so far."""

    __slots__ = ("end", "open", "rejected", "said", "text")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.open = False  # a prompt started it and no Stop closed it yet
        self.text: tuple[float, str, str] | None = None  # (time, uuid, text) of its last answer
        self.end = 0.0  # time of its last line
        self.rejected = ""  # a tool call the user rejected without a word
        self.said: list[str] = []  # every text of the agent in the turn, in order

    def stop(self, common: dict[str, Any], *, at: float | None = None, key: str = "",
             interrupted: bool = False) -> Event | None:
        """The Stop that closes this turn (None when nothing is open), and a fresh turn."""
        if self.text is None and not (interrupted and self.open):
            self.reset()
            return None
        text_at, uuid, text = self.text or (0.0, "", "")
        payload = {**common, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": text,
                   PAYLOAD_KEY: turn_texts(self.said, text)}
        if interrupted:
            payload["interrupted"] = True
            if self.rejected:
                payload["rejected_tool"] = self.rejected
        when = at if at is not None else max(text_at, self.end)
        event = Event("Stop", when, key or f"stop:{uuid}", payload)
        self.reset()
        return event


def _prompt_event(at: float, key: str, common: dict[str, Any], text: str, origin: str,
                  **extra: Any) -> Event:
    return Event("UserPromptSubmit", at, key, {**common, "hook_event_name": "UserPromptSubmit", "prompt": text,
                                               "prompt_origin": origin, **extra})


Command = tuple[float, str, str, str, str, dict[str, Any]]  # (time, uuid, prompt, words, origin, common)


def _new_turn(turn: _Turn, at: float, uuid: str, common: dict[str, Any], prompt: str, origin: str) -> Iterator[Event]:
    """The turn a prompt opens: the open turn's Stop, then the prompt."""
    stopped = turn.stop(common)
    if stopped is not None:
        yield stopped
    turn.open, turn.end = True, at
    yield _prompt_event(at, f"prompt:{uuid}", common, prompt, origin)


def _command_turn(command: Command, turn: _Turn) -> Iterator[Event]:
    """The turn a slash command run with the user's words opens."""
    at, uuid, prompt, _, origin, common = command
    return _new_turn(turn, at, uuid, common, prompt, origin)


def _session_events(path: str, agent_id: str | None, agent_type: str | None, *,
                    close_last: bool, found: Scan | None = None, problems: Problems | None = None) -> Iterator[Event]:
    """Prompts, tool results and turn ends of one transcript file."""
    tools: dict[str, tuple[str, Any]] = {}  # tool_use id -> (name, input)
    turn = _Turn()
    shell: tuple[float, str, str] | None = None  # a command the user ran with ``!``: (time, uuid, command)
    # A slash command run with the user's words, not yet a prompt. Claude Code writes the words of some (/plan)
    # again, whole, as the next line, which is then the prompt.
    command: Command | None = None
    main = agent_id is None
    for rec in _lines(path, problems):
        at = timestamp(rec.get("timestamp"))
        if at is None:
            continue
        if command is not None and (rec["type"] == "assistant" or (rec["type"] == "user" and not rec.get("isMeta"))):
            said = user_text(rec) if rec["type"] == "user" else ""
            if said and command[3] and " ".join(said.split()).startswith(" ".join(command[3].split())):
                command = None  # the next prompt holds its words (/plan's are cut short in the command's line)
            elif not said or not is_synthetic(said) or command_request(said) is not None:
                yield from _command_turn(command, turn)
                command = None
        if rec["type"] == "queue-operation":
            text = queued_text(rec) if main and found is not None else None
            if text is not None and queued_key(rec, text) in found.queued:  # type: ignore[union-attr]
                # Typed while the agent worked and read by it mid-turn: the turn goes on.
                yield _prompt_event(at, queued_key(rec, text), {"cwd": rec.get("cwd")}, text, "queued")
            continue
        common = {"cwd": rec.get("cwd"), "agent_id": agent_id, "agent_type": agent_type}
        uuid = str(rec.get("uuid") or "")
        side = main and bool(rec.get("isSidechain"))
        if side:  # an older Claude Code kept a subagent's conversation in the main file
            common.update(agent_id=str(rec.get("agentId") or "sidechain"), agent_type="subagent")
        if rec["type"] == "assistant":
            if written_by_the_cli(rec):  # "You've hit your limit · resets 8pm", "API Error: 400 …": nobody's words
                turn.end = max(turn.end, at)
                continue
            for b in blocks(rec.get("message")):
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    tools[b["id"]] = (str(b.get("name") or ""), b.get("input"))
                elif b.get("type") == "text" and str(b.get("text") or "").strip() and not side:
                    turn.text = (at, uuid, str(b["text"]))
                    turn.said.append(str(b["text"]))
            turn.end = max(turn.end, at)
            continue
        if main and not side:
            text = user_text(rec)
            if shell is not None:
                out = shell_output(text)
                yield _shell_event(shell, at if out is not None else shell[0], common, out)
                shell = None
                if out is not None:
                    continue
            if text.startswith(INTERRUPTED) and not rec.get("isMeta"):
                stopped = turn.stop(common, at=at, key=f"stop:{uuid}", interrupted=True)
                if stopped is not None:
                    yield stopped
                continue
            if text.startswith("<bash-input>") and not rec.get("isMeta"):
                stopped = turn.stop(common)  # the user acts between turns
                if stopped is not None:
                    yield stopped
                shell = (at, uuid, text[len("<bash-input>"):].split("</bash-input>", 1)[0])
                continue
            asked = command_request(text) if not rec.get("isMeta") else None
            if asked is not None:  # (a headless run's is scripted)
                command = (at, uuid, *asked, prompt_origin(rec, asked[0]) or "typed", common)
                continue
            origin = prompt_origin(rec, text)
            if origin is not None:
                yield from _new_turn(turn, at, uuid, common, text, origin)
                continue
            if text:
                continue  # Claude Code's own words (a summary, a command's output, a notification)
        structured = rec.get("toolUseResult")
        for b in blocks(rec.get("message")):
            if b.get("type") != "tool_result" or not isinstance(b.get("tool_use_id"), str):
                continue
            tid = b["tool_use_id"]
            name, tool_input = tools.pop(tid, ("", None))
            if not name:
                continue
            if b.get("is_error") and (refused := rejection(_result_text(b))) is not None:
                # The user refused this call: not a failure of the tool. What they said instead
                # is theirs, typed, and redirects the work (the turn goes on).
                if refused and main and not side:
                    yield _prompt_event(at, f"rejection:{tid}", common, refused, "rejection", rejected_tool=name)
                elif not side:
                    turn.rejected = name
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
        turn.end = max(turn.end, at)
    if shell is not None:
        yield _shell_event(shell, shell[0], {}, None)
    if command is not None:  # (the file ends with it)
        yield from _command_turn(command, turn)
    if main and close_last:
        stopped = turn.stop({})
        if stopped is not None:
            yield stopped


def _shell_event(shell: tuple[float, str, str], at: float, common: dict[str, Any],
                 out: tuple[str, str] | None) -> Event:
    """A command the user ran themselves (``!`` in Claude Code): a Bash call of the user's."""
    import html

    _, uuid, command = shell
    stdout, stderr = out or ("", "")
    tid = f"user-shell:{uuid}"
    return Event("PostToolUse", at, f"PostToolUse:{tid}", {
        **common, "agent_id": None, "agent_type": None, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": html.unescape(command)}, "tool_use_id": tid, "actor": "user",
        "tool_response": {"stdout": html.unescape(stdout), "stderr": html.unescape(stderr)}})

