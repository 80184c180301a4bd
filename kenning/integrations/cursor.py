"""Cursor: it runs Claude Code's hooks from ``.claude/settings*.json`` (its "third-party hooks"),
so ``kenning install`` for Claude Code already captures Cursor's agent; those payloads carry
``cursor_version`` / ``workspace_roots`` and their sessions are attributed to Cursor
(``kenning.integrations.Native.agent_of``).

Where Claude's hooks are not read, ``kenning install --agent cursor`` writes Cursor's own
``~/.cursor/hooks.json`` (``{"version": 1, "hooks": {"<event>": [{"command": …}]}}``). Its events map
onto the event model: sessionStart → SessionStart, beforeSubmitPrompt (``prompt``) →
UserPromptSubmit, postToolUse / postToolUseFailure (``tool_name``, ``tool_input``, ``tool_output``)
→ PostToolUse / PostToolUseFailure, afterAgentResponse (``text``) is remembered as the last answer,
stop → Stop, sessionEnd → SessionEnd; the session is ``conversation_id`` (or ``session_id``), the
directory the first of ``workspace_roots``. Context returns from sessionStart as
``additional_context``. Verified at the level of payload fixtures built from Cursor's published hook
documentation (tests/integration/test_agent_fixtures.py): no Cursor build runs here.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.integrations.files import Check, Report
    from kenning.paths import Paths

NAME = "cursor"
_EVENTS = {"sessionStart": "SessionStart", "beforeSubmitPrompt": "UserPromptSubmit", "postToolUse": "PostToolUse",
           "postToolUseFailure": "PostToolUseFailure", "stop": "Stop", "sessionEnd": "SessionEnd",
           "afterAgentResponse": "Stop"}
TOOLS = {"Shell": "Bash", "run_terminal_cmd": "Bash", "edit_file": "Edit", "search_replace": "Edit",
         "write": "Write", "read_file": "Read", "Read": "Read", "Write": "Write", "Grep": "Grep",
         "grep_search": "Grep", "file_search": "Glob", "list_dir": "LS"}


class CursorHook:
    name = NAME
    events = tuple(_EVENTS)

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        out = {k: v for k, v in payload.items() if k != "user_email"}  # not ours to keep
        sid = payload.get("conversation_id") or payload.get("session_id")
        out["session_id"] = sid if isinstance(sid, str) else ""
        roots = payload.get("workspace_roots")
        if not isinstance(out.get("cwd"), str) and isinstance(roots, list) and roots and isinstance(roots[0], str):
            out["cwd"] = roots[0]
        ours = _EVENTS[event]
        if event == "afterAgentResponse":
            text = payload.get("text")
            out["last_assistant_message"] = text if isinstance(text, str) else ""
            out["stop_hook_active"] = False
        elif event == "stop":
            return None if payload.get("status") == "aborted" else (ours, out)
        elif ours in ("PostToolUse", "PostToolUseFailure"):
            host = payload.get("tool_name")
            out["tool_name"] = TOOLS.get(host, host) if isinstance(host, str) else host
            out["host_tool"] = host
            result = payload.get("tool_output", payload.get("tool_response"))
            if isinstance(result, str):
                try:
                    import json

                    decoded = json.loads(result)
                    result = decoded if isinstance(decoded, dict) else result
                except ValueError:
                    pass
            out.pop("tool_output", None)
            if ours == "PostToolUseFailure":
                message = payload.get("error_message") or payload.get("error") or result
                out["error"] = message if isinstance(message, str) else str(message)
            else:
                out["tool_response"] = result
            tid = payload.get("tool_use_id") or payload.get("tool_call_id")
            if isinstance(tid, str):
                out["tool_use_id"] = tid
        return ours, out

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if host_event == "sessionStart":
            return {"additional_context": context}
        return None


HOOK = CursorHook()

# ----------------------------------------------------------------------------------- installer

EVENTS = ("sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure", "afterAgentResponse",
          "sessionEnd")


def cursor_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".cursor")


def hooks_path() -> str:
    return os.path.join(cursor_dir(), "hooks.json")


def detected() -> bool:
    return False  # Cursor reads Claude Code's hooks already: its own file only on request (--agent cursor)


def _load(path: str) -> tuple[dict[str, Any], bytes | None]:
    import json

    from kenning.integrations.files import read_bytes

    raw = read_bytes(path)
    if raw is None or not raw.strip():
        return {}, raw
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data, raw


def _ours(entry: Any) -> bool:
    from kenning.integrations.files import is_our_command

    return isinstance(entry, dict) and is_our_command(entry.get("command"), NAME)


def _without_ours(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    import json

    out = json.loads(json.dumps(data))
    hooks = out.get("hooks")
    removed = []
    if isinstance(hooks, dict):
        for event in list(hooks):
            entries = hooks[event]
            if isinstance(entries, list) and any(_ours(e) for e in entries):
                removed.append(event)
                kept = [e for e in entries if not _ours(e)]
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
    return out, removed


def install(paths: Paths, *, python: str | None = None) -> Report:
    import json

    from kenning.integrations.files import Original, Report, backup, hook_command, write_bytes

    path = hooks_path()
    report = Report(agent=NAME, path=path, events=list(EVENTS))
    current, raw = _load(path)
    new, _removed = _without_ours(current)
    new.setdefault("version", 1)
    hooks = new.setdefault("hooks", {})
    for event in EVENTS:
        hooks.setdefault(event, []).append({"command": hook_command(NAME, event, python)})
    if new == current:
        return report
    Original(paths, NAME, path).remember(raw)
    if raw is not None:
        report.backup = backup(path, raw)
    write_bytes(path, (json.dumps(new, indent=2) + "\n").encode())
    report.changed = True
    report.notes.append("if Cursor also runs Claude Code's hooks, keep only one of the two installs")
    return report


def uninstall(paths: Paths) -> Report:
    import json

    from kenning.integrations.files import Original, Report, backup

    path = hooks_path()
    report = Report(agent=NAME, path=path)
    original = Original(paths, NAME, path)
    try:
        current, raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        report.problems.append(f"cannot read {path}: {e}")
        return report
    new, report.events = _without_ours(current)
    if raw is None or not report.events:
        original.forget()
        return report
    old = original.original_bytes()
    empty = set(new) <= {"version", "hooks"} and not new.get("hooks")
    if not original.ours_alone(empty):
        report.backup = backup(path, raw)
    original.write_back(old, old is not None and _same(old, new), empty,
                        (json.dumps(new, indent=2) + "\n").encode())
    report.changed = True
    return report


def _same(old: bytes, new: dict[str, Any]) -> bool:
    import json

    try:
        return json.loads(old.decode("utf-8") or "{}") == new
    except (ValueError, UnicodeDecodeError):
        return False


def installed() -> dict[str, list[str]]:
    try:
        current, _raw = _load(hooks_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return {}
    hooks = current.get("hooks")
    out: dict[str, list[str]] = {}
    for event, entries in hooks.items() if isinstance(hooks, dict) else ():
        for e in entries if isinstance(entries, list) else []:
            if _ours(e):
                out.setdefault(event, []).append(e["command"])
    return out


def checks() -> list[Check]:
    found = installed()
    missing = [e for e in EVENTS if e not in found]
    if missing:
        return [("warn", "Cursor hooks", f"missing in {hooks_path()} for {', '.join(missing)}: "
                 "run `kenning install --agent cursor`")]
    return [("ok", "Cursor hooks", f"{len(found)} events in {hooks_path()}")]
