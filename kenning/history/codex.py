"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as events.

A rollout line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (the session id and
cwd), ``response_item`` (the conversation as the model saw it: user messages, ``function_call``
/ ``function_call_output`` for shell commands, ``custom_tool_call`` / ``custom_tool_call_output``
for apply_patch) and ``event_msg`` (``task_complete`` with the turn's last answer, ``turn_aborted``
when the user interrupted the turn: its Stop says ``interrupted``). Tool events get the names
Codex's hooks report live (``Bash``, ``apply_patch``); a command's exit code comes from its output
(``Process exited with code N`` / ``Exit code: N``).

A typed prompt is written twice (a ``response_item`` with role ``user`` and an ``event_msg``
``user_message``): only the first is read, with ``prompt_origin`` ``typed`` (``headless`` in a
``codex exec`` run). User-role items Codex writes itself, all in tags or
headed (``<environment_context>``, ``# AGENTS.md instructions``, ``<turn_aborted>``, automation
heartbeats), are no prompts. The repository, branch and commit of ``session_meta.payload.git`` go
on the SessionStart, so that sessions of throw-away worktrees join their repository's project
(kenning/history/identity.py, kenning/store/checkouts.py).

A forked thread (``forked_from_id``: a sub-agent the agent spawned, ``source: {"subagent": …}``, or a
conversation forked) writes its parent's ``session_meta`` after its own and replays the parent's
conversation before its first turn: the rollout is the thread's own (its first ``session_meta``), and
what it replays, turns made before the thread was (their UUIDv7 ids carry the time), is read from the
parent's rollout only. A sub-agent's prompts are what the agent that spawned it said: origin ``agent``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from kenning.history import Event, SessionFile, finished, session_end, session_start, source, timestamp, turn_texts
from kenning.history.source import Problems
from kenning.observer.transcript import PAYLOAD_KEY

NAME = "codex"
SHELL_TOOLS = ("exec_command", "shell", "container.exec", "local_shell", "shell_command")
QUIET_S = 15 * 60


def sessions_dir() -> str:
    from kenning.integrations.codex import codex_home

    return os.path.join(codex_home(), "sessions")


def discover(root: str | None = None, skipped: Problems | None = None) -> list[SessionFile]:
    """Every rollout under the sessions folder (symlinked folders followed, each folder once: a loop
    ends); what is no regular file goes to ``skipped``."""
    base = root or sessions_dir()
    out = []
    seen: set[tuple[int, int]] = set()
    for folder, dirs, names in os.walk(base, followlinks=True):
        try:
            st = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []  # reached again through a symlink
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # as glob's ``**`` skips hidden folders
        for name in sorted(names):
            if not (name.startswith("rollout-") and name.endswith(".jsonl")):
                continue
            path = os.path.join(folder, name)
            fst, why = source.check(path)
            if fst is None:
                if skipped is not None:
                    skipped.file(path, why)
                continue
            out.append(SessionFile(NAME, path, fst.st_size, fst.st_mtime))
    out.sort(key=lambda f: f.path)
    return out


def _exit_code(output: str) -> int | None:
    for marker in ("Process exited with code ", "Exit code: "):
        i = output.find(marker)
        if i >= 0:
            digits = output[i + len(marker):].split("\n", 1)[0].strip()
            if digits.lstrip("-").isdigit():
                return int(digits)
    return None


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        try:  # older rollouts: {"output": "...", "metadata": {"exit_code": N}}
            decoded = source.loads(output)
        except ValueError:
            return output
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            meta = decoded.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            return decoded["output"] + (f"\nProcess exited with code {code}" if isinstance(code, int) else "")
        return output
    if isinstance(output, dict):
        return str(output.get("content") or output.get("output") or "")
    if isinstance(output, list):  # content items: [{"type": "input_text", "text": ...}]
        return "\n".join(str(c.get("text") or "") for c in output if isinstance(c, dict))
    return ""


# Code mode (Codex 0.144): one ``exec`` call runs a script that calls the tools, e.g.
# ``await tools.exec_command({cmd:"git status", ...})`` or ``tools.apply_patch(patch)`` with the
# patch in a string literal; the script prints what it likes (often ``{"exit_code": N, ...}``).
_JS_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_CMD = re.compile(r'["\']?\bcmd["\']?\s*:\s*' + _JS_STRING)
_PATCH = re.compile(r'"(\*\*\* Begin Patch(?:[^"\\]|\\.)*)"|`(\*\*\* Begin Patch[^`]*)`')
_SCRIPT_EXIT = re.compile(r'"exit_code"\s*:\s*(-?\d+)|^exit:(-?\d+)$', re.MULTILINE)


# A command still running when its call returned (its output comes with later ``write_stdin`` polls of its
# session): "Process running with session ID 77100" (a function call), "SESSION_ID=77100" (what a code-mode
# script printed of ``r.session_id``).
_RUNNING = re.compile(r"Process running with session ID (\d+)|^SESSION_ID=(\d+)\s*$", re.MULTILINE)
_POLL = re.compile(r"tools\.write_stdin\(\s*\{[^}]*?\bsession_id\s*:\s*(\d+)")
POLL = "poll"  # a call that reads more of a running command's output (its "command" is the session id)


def _running(text: str) -> str:
    """The session id of a command its output says is still running, '' when it is done."""
    m = _RUNNING.search(text)
    return (m.group(1) or m.group(2)) if m else ""


def _code_mode(script: str) -> tuple[str, str] | None:
    """(tool, command or patch) of a code-mode script that runs commands or applies a patch, or polls one."""
    if "tools.apply_patch" in script:
        m = _PATCH.search(script)
        if m:
            return "apply_patch", _js_string(m.group(1)) if m.group(1) is not None else m.group(2)
    if "tools.exec_command" in script:
        cmds = [_js_string(m.group(1)) for m in _CMD.finditer(script)]
        if cmds:
            return "Bash", "\n".join(cmds)
    poll = _POLL.search(script)
    if poll:
        return POLL, poll.group(1)
    return None  # listing tools, connectors: no tool call of its own


def _js_string(raw: str) -> str:
    try:
        return str(json.loads('"' + raw.replace("\\'", "'") + '"'))
    except ValueError:
        return raw


def _printed(body: str) -> str:
    """What the commands of a code-mode script printed: a line that is the result object the script printed
    (``{"chunk_id": …, "exit_code": 127, "output": "zsh:1: command not found: hk\\n"}``) is its ``output``."""
    if '"output"' not in body:
        return body
    out: list[str] = []
    for line in body.strip("\n").splitlines():
        bare = line.strip()
        if bare.startswith("{") and bare.endswith("}"):
            try:
                value = source.loads(bare)
            except ValueError:
                value = None
            if isinstance(value, dict) and isinstance(value.get("output"), str):
                out.append(value["output"].rstrip("\n"))
                continue
        out.append(line)
    return "\n".join(out)


def _script_exit(output: str) -> int | None:
    """The first non-zero exit code a code-mode script printed (0 when all succeeded, None: not said)."""
    codes = [int(a or b) for a, b in _SCRIPT_EXIT.findall(output)]
    return next((c for c in codes if c), 0) if codes else None


def _command(name: str, arguments: Any) -> str:
    try:
        args = source.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return str(arguments)
    if not isinstance(args, dict):
        return ""
    cmd = args.get("cmd") or args.get("command")
    if isinstance(cmd, list):
        if len(cmd) >= 3 and cmd[0].endswith("sh") and cmd[1] in ("-lc", "-c"):
            return str(cmd[2])
        return " ".join(str(c) for c in cmd)
    return str(cmd or "")


def _user_text(payload: dict[str, Any]) -> str | None:
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    texts = [str(c.get("text") or "") for c in payload.get("content") or [] if isinstance(c, dict)]
    text = "\n".join(texts).strip()
    # Codex sends its environment, AGENTS.md and instructions as user messages in tags.
    if not text or text.startswith("<") or text.startswith("# AGENTS.md"):
        return None
    return text


def _spawned(meta: dict[str, Any]) -> bool:
    """A sub-agent's thread, spawned by another agent (``source: {"subagent": {"thread_spawn": …}}``)."""
    src = meta.get("source")
    return isinstance(src, dict) and "subagent" in src


def _iso_ms(value: Any) -> float | None:
    at = timestamp(value)
    return at * 1000 if at else None


def _made_since(turn_id: Any, born_ms: float) -> bool:
    """Whether a turn began in this thread: its id, a UUIDv7, carries the millisecond it was made (a turn the fork
    replays was made before the thread). An id that carries no time is taken as the thread's own."""
    hexed = str(turn_id or "").replace("-", "")
    if len(hexed) != 32 or hexed[12] != "7" or any(c not in "0123456789abcdefABCDEF" for c in hexed):
        return True
    return int(hexed[:12], 16) >= born_ms - 1000  # (a second's grace: the clocks are the same machine's)


def events(f: SessionFile, *, quiet_s: float = QUIET_S, now: float | None = None) -> Iterator[Event]:
    import time

    from kenning.history.identity import remote_of_url

    now = time.time() if now is None else now
    calls: dict[str, tuple[str, str, bool]] = {}  # call_id -> (tool name, command or patch, code mode)
    running: dict[str, Running] = {}  # commands whose output comes with later polls, by their session id
    outside: set[str] = set()  # call_ids of commands the agent asked to run outside the sandbox
    sid = ""
    cwd = ""
    git: dict[str, str] = {}  # repository, git_branch, git_commit
    origin = "typed"  # prompt_origin of the session's prompts
    answer = ""  # the open turn's latest answer (for a turn the user aborted)
    said: list[str] = []  # what the agent said along the way in the open turn
    open_turn: str | None = None  # the turn started and not yet ended (its id; "" when the rollout gives none)
    concluded = False  # the open turn's latest item is the agent's message (no call after it)
    last_at = 0.0
    started = False
    born: float | None = None  # a forked thread's creation: what it replays from before then is its parent's
    for n, rec, at in source.records(f.path, f.problems, "payload"):
        p = rec["payload"]
        kind = rec.get("type")
        if kind == "session_meta" and sid and str(p.get("id") or p.get("session_id") or sid) != sid:
            continue  # a forked thread's parent's, replayed after its own: this rollout is the thread's
        if kind == "session_meta":
            sid = str(p.get("id") or p.get("session_id") or sid)
            if p.get("forked_from_id") or _spawned(p):
                born = _iso_ms(p.get("timestamp"))
            if _spawned(p):
                origin = "agent"  # a sub-agent's prompts are what the agent that spawned it said
            cwd = str(p.get("cwd") or cwd)
            if p.get("originator") == "codex_exec" or p.get("source") == "exec":
                origin = "headless"  # `codex exec`: one scripted prompt
            meta_git = p.get("git") if isinstance(p.get("git"), dict) else {}
            if not git.get("repository") and remote_of_url(meta_git.get("repository_url")):
                git["repository"] = remote_of_url(meta_git.get("repository_url"))
            if not git.get("git_branch") and isinstance(meta_git.get("branch"), str) and meta_git["branch"]:
                git["git_branch"] = meta_git["branch"]
            head = meta_git.get("commit_hash")
            if not git.get("git_commit") and isinstance(head, str) and head:
                git["git_commit"] = head  # the checkout's HEAD: evidence of which repository it is
            continue
        if not sid:
            continue
        if born is not None:
            if not (kind == "event_msg" and p.get("type") == "task_started" and _made_since(p.get("turn_id"), born)):
                continue  # the parent's conversation, replayed: the parent's rollout holds it
            born = None
        base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
        if not started:
            started = True
            yield session_start(base, at, **git)
        last_at = at
        if kind == "turn_context" and isinstance(p.get("cwd"), str):
            cwd = p["cwd"]
        elif kind == "event_msg" and p.get("type") == "task_started":
            answer = ""
            said = []
            open_turn = str(p.get("turn_id") or "")
            concluded = False
        elif kind == "event_msg" and p.get("type") == "agent_message" and isinstance(p.get("message"), str):
            answer = p["message"]
            said.append(answer)
        elif kind == "event_msg" and p.get("type") in ("task_complete", "turn_aborted"):
            text = p.get("last_agent_message") if p["type"] == "task_complete" else answer
            last = text if isinstance(text, str) else ""
            stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": last,
                    PAYLOAD_KEY: turn_texts(said, last)}
            if p["type"] == "turn_aborted":
                stop["interrupted"] = True  # the user stopped the turn (reason: "interrupted")
            answer = ""
            said = []
            open_turn = None
            yield from _flush(running, at, base, outside)  # a command is the turn's, whatever it printed since
            yield Event("Stop", at, f"stop:{p.get('turn_id') or n}", stop)
        elif kind == "response_item":
            if p.get("type") == "message" and p.get("role") == "assistant":
                concluded = True
            elif str(p.get("type") or "").endswith(("_call", "_call_output")):
                concluded = False
            yield from _item(p, at, n, base, calls, running, origin, outside)
    base = {"session_id": sid, "cwd": cwd, "transcript_path": f.path}
    if running:  # the file ends inside a turn: its commands, with what they printed
        yield from _flush(running, last_at, base, outside)
    done = started and finished(f.mtime, now, quiet_s)
    if done and open_turn is not None and said:
        # The record ends inside a turn that has gone quiet: what the agent said in it is the turn's. A copy taken
        # as the turn ended (before Codex wrote task_complete) ends on the agent's last message, its conclusion;
        # one cut while the agent was still at work (a call after its last words) has said no conclusion.
        last = answer if concluded else ""
        yield Event("Stop", last_at, f"stop:{open_turn or 'end'}", {
            **base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": last,
            PAYLOAD_KEY: turn_texts(said, last)})
    if done:
        yield session_end({"session_id": sid, "cwd": cwd, "transcript_path": f.path}, last_at)


# What Codex writes instead of an output when a call is refused before it runs: the user declined it ("exec
# command rejected by user", "patch rejected by user", as Codex normalises a human's no), its guardian judged it
# too risky, or the approval policy allows no request to leave the sandbox ("approval policy is Never; reject
# command — …", seen on Codex CLI 0.171). A command that ran always has Codex's header (chunk id, wall time, exit
# code or its running session).
_REFUSAL = re.compile(r"^(?:(?:exec command|patch) rejected by user|This action was rejected due to unacceptable risk"
                      r"|approval policy is \w+; reject command)\b")
_RAN = re.compile(r"^(?:Chunk ID|Wall time|Exit code:|Process exited with code|Process running with session ID)",
                  re.MULTILINE)


def _refused(tool: str, text: str) -> bool:
    """Whether a shell command or a patch was refused before it ran (its output only says so)."""
    said = text.strip()
    if _REFUSAL.match(said):
        return True
    # a bare line where a command's output should be: the refusal's reason, in words this list lacks
    return tool == "Bash" and not _RAN.search(said) and "\n" not in said and 0 < len(said) <= 300


# How apply_patch reports a patch it applied
_APPLIED = re.compile(r"^Success\. Updated the following files", re.MULTILINE)
ESCALATED = "require_escalated"  # how a call asks to run outside the sandbox, as the rollout records it
# A command still running: (tool, command, code mode, its call id, what it printed so far), by its session id
Running = tuple[str, str, bool, str, str]


def _item(p: dict[str, Any], at: float, n: int, base: dict[str, Any],
          calls: dict[str, tuple[str, str, bool]], running: dict[str, Running], origin: str,
          outside: set[str]) -> Iterator[Event]:
    t = p.get("type")
    prompt = _user_text(p)
    if prompt is not None:
        yield Event("UserPromptSubmit", at, f"prompt:{p.get('id') or n}",
                    {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "prompt_origin": origin})
    elif t == "function_call" and isinstance(p.get("call_id"), str):
        name = str(p.get("name") or "")
        if name in SHELL_TOOLS:
            calls[p["call_id"]] = ("Bash", _command(name, p.get("arguments")), False)
            if _escalated(p.get("arguments")):
                outside.add(p["call_id"])
        elif name == "write_stdin":
            polled = _session_of(p.get("arguments"))
            if polled:
                calls[p["call_id"]] = (POLL, polled, False)
    elif t == "custom_tool_call" and isinstance(p.get("call_id"), str) and p.get("name") == "apply_patch":
        calls[p["call_id"]] = ("apply_patch", str(p.get("input") or ""), False)
    elif t == "custom_tool_call" and isinstance(p.get("call_id"), str) and p.get("name") == "exec":
        ran = _code_mode(str(p.get("input") or ""))
        if ran is not None:
            calls[p["call_id"]] = (ran[0], ran[1], True)
    elif t in ("function_call_output", "custom_tool_call_output") and isinstance(p.get("call_id"), str):
        found = calls.pop(p["call_id"], None)
        if found is None:
            return
        tool, command, script = found
        text = _output_text(p.get("output"))
        if tool == POLL:  # more of a running command's output: its result once it is done
            began = running.pop(command, None)
            if began is None:
                return
            tool, command, script, call_id, so_far = began
            body = _body(text)  # (the poll's own header says how the command ended)
            text = text[:len(text) - len(body)] + "\n".join(x for x in (so_far, body) if x)
        else:
            call_id = p["call_id"]
        still = _running(text)
        if still and tool == "Bash":  # its output and exit code come with the polls of its session
            running[still] = (tool, command, script, call_id, _RUNNING.sub("", _body(text)).strip("\n"))
            return
        if not script and _refused(tool, text):
            return  # it never ran: no failure of it, no pass (as a tool call refused in Claude Code)
        yield _result(tool, command, script, call_id, text, at, base, outside=call_id in outside)


def _flush(running: dict[str, Running], at: float, base: dict[str, Any], outside: set[str]) -> Iterator[Event]:
    """The commands still running when their turn ended, with what they printed so far (no exit code said)."""
    for tool, command, script, call_id, so_far in running.values():
        yield _result(tool, command, script, call_id, so_far, at, base, unfinished=True, outside=call_id in outside)
    running.clear()


def _escalated(arguments: Any) -> bool:
    """Whether a shell call asked to run outside Codex's sandbox (``sandbox_permissions: require_escalated``)."""
    try:
        args = source.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return False
    return isinstance(args, dict) and args.get("sandbox_permissions") == ESCALATED


def _result(tool: str, command: str, script: bool, call_id: str, text: str, at: float,
            base: dict[str, Any], *, unfinished: bool = False, outside: bool = False) -> Event:
    raw = _body(text)
    code = _script_exit(raw) if script else _exit_code(text)
    body = _printed(raw) if script else raw
    tool_input = {"command": command, "sandbox_permissions": ESCALATED} if outside else {"command": command}
    payload = {**base, "tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id}
    if tool == "apply_patch" and not script and code is None and not _APPLIED.search(text):
        # Codex checks a patch against the files before it applies it; one that does not fit ("apply_patch
        # verification failed: Failed to find expected lines in …") changed nothing, and its output has no exit
        # code (nor does Codex run the PostToolUse hook for it)
        payload.update(hook_event_name="PostToolUseFailure", error=text.strip())
        return Event("PostToolUseFailure", at, f"PostToolUseFailure:{call_id}", payload)
    if code:
        payload.update(hook_event_name="PostToolUseFailure", error=f"Exit code {code}\n{body}".rstrip())
        return Event("PostToolUseFailure", at, f"PostToolUseFailure:{call_id}", payload)
    # A command whose end the rollout never shows did not pass either: it is said unfinished (neither a test
    # run that passed nor a commit that was made).
    response: Any = ({"stdout": body, "stderr": "", "unfinished": True} if unfinished else body) \
        if tool == "Bash" else text
    payload.update(hook_event_name="PostToolUse", tool_response=response)
    return Event("PostToolUse", at, f"PostToolUse:{call_id}", payload)


def _session_of(arguments: Any) -> str:
    """The session id a ``write_stdin`` call polls."""
    try:
        args = source.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return ""
    sid = args.get("session_id") if isinstance(args, dict) else None
    return str(sid) if isinstance(sid, (int, str)) and str(sid).isdigit() else ""


def _body(text: str) -> str:
    """A command's output without Codex's header lines (chunk id, wall time, exit code)."""
    i = text.find("\nOutput:\n")
    return text[i + len("\nOutput:\n"):] if i >= 0 else text
