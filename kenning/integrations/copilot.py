"""GitHub Copilot CLI (npm ``@github/copilot``): hooks in the repository's ``.github/hooks/*.json``.

Hook half (stdlib only). Copilot's camelCase events and fields map onto the event model:
sessionStart → SessionStart, userPromptSubmitted (``prompt``) → UserPromptSubmit, postToolUse
(``toolName``, ``toolArgs`` — a JSON string or an object —, ``toolResult.resultType`` /
``textResultForLlm``) → PostToolUse, or PostToolUseFailure when the result type is ``failure``,
agentStop → Stop, sessionEnd (``reason``) → SessionEnd. The session is ``sessionId`` when the
payload has one; older builds send none, so a session id is then kept per directory from one
sessionStart to the next. Context: sessionStart and userPromptSubmitted answer
``{"additionalContext": …}`` (the SDK's output field); whether the CLI's file hooks pass it to the
model depends on its version, so the README also points Copilot at the MCP server. Verified with
payload fixtures built from GitHub's CLI hooks reference (tests/integration/test_agent_fixtures.py).

Installer half: ``kenning install --agent copilot`` run inside a repository writes
``.github/hooks/kenning.json`` there (a file of ours alone; the repositories are remembered in the
data dir) and ``kenning uninstall`` deletes those files.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.integrations.files import Check, Report
    from kenning.paths import Paths

NAME = "copilot"
_EVENTS = {"sessionStart": "SessionStart", "userPromptSubmitted": "UserPromptSubmit", "postToolUse": "PostToolUse",
           "agentStop": "Stop", "sessionEnd": "SessionEnd"}
TOOLS = {"bash": "Bash", "shell": "Bash", "view": "Read", "read": "Read", "create": "Write", "write": "Write",
         "edit": "Edit", "str_replace": "Edit", "glob": "Glob", "grep": "Grep"}


class CopilotHook:
    name = NAME
    events = tuple(_EVENTS)

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        ours = _EVENTS[event]
        out = {k: v for k, v in payload.items() if k not in ("toolName", "toolArgs", "toolResult")}
        out["session_id"] = _session_id(payload, event)
        if ours == "PostToolUse":
            host = payload.get("toolName")
            out["tool_name"] = TOOLS.get(host, host) if isinstance(host, str) else host
            out["host_tool"] = host
            args = payload.get("toolArgs")
            if isinstance(args, str):
                from kenning import fastjson

                try:
                    args = fastjson.loads(args)
                except ValueError:
                    args = {"arguments": args}
            out["tool_input"] = _paths(args if isinstance(args, dict) else {})
            result = payload.get("toolResult")
            res = result if isinstance(result, dict) else {}
            text = res.get("textResultForLlm")
            text = text if isinstance(text, str) else ""
            if res.get("resultType") in ("failure", "error"):
                out["error"] = text or "the tool failed"
                return "PostToolUseFailure", out
            if res.get("resultType") == "denied":
                return None
            out["tool_response"] = {"stdout": text, "stderr": ""} if out["tool_name"] == "Bash" else text
        elif ours == "Stop":
            text = payload.get("lastAssistantMessage") or payload.get("response")
            out["last_assistant_message"] = text if isinstance(text, str) else ""
        return ours, out

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if event in ("SessionStart", "UserPromptSubmit"):
            return {"additionalContext": context}
        return None


HOOK = CopilotHook()


def _paths(args: dict[str, Any]) -> dict[str, Any]:
    """Copilot's ``path`` argument under Claude Code's name, so evidence finds the file."""
    if "file_path" not in args and isinstance(args.get("path"), str):
        return {**args, "file_path": args["path"]}
    return args


def _session_id(payload: dict[str, Any], event: str) -> str:
    sid = payload.get("sessionId") or payload.get("session_id")
    if isinstance(sid, str) and sid:
        return sid
    # No id in the payload: one per directory, new at each sessionStart (a marker in the data dir).
    import hashlib

    from kenning.paths import Paths

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    paths = Paths()
    marker = os.path.join(paths.root, "copilot-sessions", hashlib.sha256(str(cwd).encode()).hexdigest()[:24])
    if event != "sessionStart":
        try:
            with open(marker, encoding="utf-8") as fh:
                found = fh.read().strip()
            if found:
                return found
        except OSError:
            pass
    new = f"copilot-{int(payload.get('timestamp') or 0) or os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write(new)
    except OSError:
        pass
    return new


# ----------------------------------------------------------------------------------- installer

EVENTS = tuple(_EVENTS)
HOOK_FILE = "kenning.json"


def repo_root(cwd: str | None = None) -> str:
    from kenning.project import find_root

    return find_root(cwd or os.getcwd())[1]


def hooks_file(root: str) -> str:
    return os.path.join(root, ".github", "hooks", HOOK_FILE)


def detected() -> bool:
    return False  # repository-level hooks: only on request (--agent copilot, inside the repository)


def _state(paths: Paths) -> str:
    return os.path.join(paths.root, "copilot-repos.json")


def _repos(paths: Paths) -> list[str]:
    import json

    try:
        with open(_state(paths), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    return [r for r in data if isinstance(r, str)] if isinstance(data, list) else []


def _save_repos(paths: Paths, repos: list[str]) -> None:
    import json

    from kenning.paths import write_private

    paths.ensure()
    write_private(_state(paths), json.dumps(sorted(set(repos))).encode())


def _content(python: str | None) -> bytes:
    import json

    from kenning.integrations.files import hook_command

    hooks = {e: [{"type": "command", "bash": hook_command(NAME, e, python), "timeoutSec": 10}] for e in EVENTS}
    return (json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n").encode()


def _ours(path: str) -> bool:
    import json

    from kenning.integrations.files import is_our_command, read_bytes

    raw = read_bytes(path)
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        return False
    hooks = data.get("hooks") if isinstance(data, dict) else None
    return isinstance(hooks, dict) and all(
        isinstance(v, list) and all(isinstance(h, dict) and is_our_command(h.get("bash"), NAME) for h in v)
        for v in hooks.values()) and bool(hooks)


def install(paths: Paths, *, python: str | None = None) -> Report:
    from kenning.integrations.files import Report, read_bytes, write_bytes

    root = repo_root()
    path = hooks_file(root)
    report = Report(agent=NAME, path=path, events=list(EVENTS))
    existing = read_bytes(path)
    if existing is not None and not _ours(path):
        report.problems.append(f"Copilot CLI not set up: {path} exists and is not Kenning's")
        return report
    content = _content(python)
    if existing != content:
        write_bytes(path, content)
        report.changed = True
    report.notes.append(f"hooks are per repository: run `kenning install --agent copilot` in each one "
                        f"(commit {os.path.relpath(path, root)} or add it to .git/info/exclude)")
    _save_repos(paths, [*_repos(paths), root])
    return report


def uninstall(paths: Paths) -> Report:
    from kenning.integrations.files import Report

    repos = _repos(paths)
    report = Report(agent=NAME, path=", ".join(hooks_file(r) for r in repos))
    for root in repos:
        path = hooks_file(root)
        if os.path.exists(path) and _ours(path):
            os.unlink(path)
            report.changed = True
            report.files.append(path)
            for d in (os.path.dirname(path), os.path.dirname(os.path.dirname(path))):
                try:
                    os.rmdir(d)  # only the folders we left empty
                except OSError:
                    break
    if repos:
        try:
            os.unlink(_state(paths))
        except OSError:
            pass
    report.events = list(EVENTS) if report.changed else []
    return report


def installed() -> dict[str, list[str]]:
    import json

    from kenning.integrations.files import read_bytes
    from kenning.paths import Paths

    out: dict[str, list[str]] = {}
    for root in _repos(Paths()):
        path = hooks_file(root)
        if not _ours(path):
            continue
        data = json.loads(read_bytes(path) or b"{}")
        for event, entries in data["hooks"].items():
            out.setdefault(event, []).extend(h["bash"] for h in entries)
    return out


def checks() -> list[Check]:
    from kenning.paths import Paths

    repos = _repos(Paths())
    gone = [r for r in repos if not _ours(hooks_file(r))]
    if gone:
        return [("warn", "Copilot CLI hooks",
                 f"missing in {', '.join(gone)}: run `kenning install --agent copilot` there")]
    return [("ok", "Copilot CLI hooks", f"in {len(repos)} repositor{'y' if len(repos) == 1 else 'ies'}")]
