"""GitHub Copilot CLI (npm ``@github/copilot``): hooks in the repository's ``.github/hooks/*.json``.

Hook half (stdlib only). Copilot's camelCase events and fields map onto the event model:
sessionStart → SessionStart, userPromptSubmitted (``prompt``) → UserPromptSubmit, postToolUse
(``toolName``, ``toolArgs`` — an object in 1.0.102, a JSON string in older builds —,
``toolResult.resultType`` / ``textResultForLlm``) → PostToolUse, or PostToolUseFailure when the result
type is ``failure`` or a shell command's text ends in a non-zero ``<shellId: N completed with exit
code C>`` (a failing command is a ``success`` result: the exit code is only in the text), agentStop →
Stop, sessionEnd (``reason``) → SessionEnd. agentStop carries no message, only ``transcriptPath``
(the session's ``events.jsonl``): the final answer is the last top-level ``assistant.message`` of the
turn, read from the file's tail once Copilot has written the turn's end there (:func:`final_answer`).
The session is ``sessionId`` (sent by 1.0.102); without one a session id is kept per directory
from one sessionStart to the next. Context: sessionStart and
userPromptSubmitted answer ``{"additionalContext": …}`` (1.0.102 gives the first as a user message,
the second as a ``<system_reminder>`` after the prompt). Copilot runs a repository's hooks only in a
trusted folder (copilot_trust): install, doctor and the first context say so when it is not.
Verified with the real CLI (tests/e2e/test_copilot_memory.py).

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
TRANSCRIPT_TAIL_BYTES = 1024 * 1024  # the turn's final answer is among the last lines written
TRANSCRIPT_WAIT = 2.0  # seconds agentStop waits at most for Copilot to write the turn's end to its transcript
TOOLS = {"bash": "Bash", "shell": "Bash", "view": "Read", "read": "Read", "create": "Write", "write": "Write",
         "edit": "Edit", "str_replace": "Edit", "glob": "Glob", "grep": "Grep"}


class CopilotHook:
    name = NAME
    events = tuple(_EVENTS)
    untrusted: str | None = None  # set at sessionStart when the folder is trusted for this session only

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
                code, output = shell_exit(text) if out["tool_name"] == "Bash" else (None, text)
                out["error"] = (f"Exit code {code}\n{output}".rstrip("\n") if code else output) or "the tool failed"
                return "PostToolUseFailure", out
            if res.get("resultType") == "denied":
                return None
            if out["tool_name"] == "Bash":
                code, text = shell_exit(text)
                if code:
                    out["error"] = f"Exit code {code}\n{text}".rstrip("\n")
                    return "PostToolUseFailure", out
                out["tool_response"] = {"stdout": text, "stderr": ""}
            else:
                out["tool_response"] = text
        elif ours == "Stop":
            text = payload.get("lastAssistantMessage") or payload.get("response")
            if not isinstance(text, str) or not text:
                text = final_answer(payload.get("transcriptPath") or payload.get("transcript_path"),
                                    payload.get("timestamp"))
            out["last_assistant_message"] = text
        elif ours == "SessionStart":
            self.untrusted = _untrusted_folder(payload)
        return ours, out

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if event == "SessionStart" and self.untrusted:
            from kenning.integrations.copilot_trust import session_only_warning

            # Said to the model, so that it tells the user: trust given for this session only ends with it.
            context = f"Kenning, for the user: {session_only_warning(self.untrusted)}\n\n{context}"
        if event in ("SessionStart", "UserPromptSubmit"):
            return {"additionalContext": context}
        return None


HOOK = CopilotHook()

# The line Copilot CLI ends a finished shell command's text with (as its own UI reads it, 1.0.102),
# or the older "<exited with exit code C>"; notes about its sandbox may follow it.
_EXIT_LINE = (r"^<(?:(?:detached command with )?shellId: [^\r\n]+ completed|exited) with exit code "
              r"(-?\d+)>[ \t]*$")
_SANDBOX_NOTES = ("<sandbox is active ", "<this failure may be caused by the active sandbox policy.",
                  "<This command was retried outside the Copilot sandbox with user approval and still failed.")


def shell_exit(text: str) -> tuple[int | None, str]:
    """(exit code, the output without Copilot's exit line) of a shell tool's text; (None, text) when
    the text has no exit line (a command still running, or moved to the background)."""
    lines = text.replace("\r\n", "\n").split("\n")
    i = len(lines) - 1
    while i >= 0 and (not lines[i] or lines[i].startswith(_SANDBOX_NOTES)):
        i -= 1
    import re  # here, not at import: only a shell command's result needs it

    m = re.match(_EXIT_LINE, lines[i]) if i >= 0 else None
    if m is None:
        return None, text
    return int(m.group(1)), "\n".join(lines[:i]).rstrip("\n")


def final_answer(path: Any, stamp: Any = None, *, wait: float = TRANSCRIPT_WAIT,
                 tail_bytes: int = TRANSCRIPT_TAIL_BYTES) -> str:
    """The turn's final answer from Copilot's ``events.jsonl``: the last top-level ``assistant.message``
    with text between the turn's ``user.message`` and the ``hook.start`` line of this agentStop (its
    input's ``timestamp`` is ``stamp``). Copilot writes that file in batches, a little after the
    events (observed: ~0.1 s behind when agentStop runs): the file's tail is read again until that
    line is in it, for at most ``wait`` seconds, reading only the last ``tail_bytes``. '' when it
    cannot tell (no such line in time, or a turn without an answer in words)."""
    if not isinstance(path, str) or not path.endswith(".jsonl"):
        return ""
    import time

    deadline = time.monotonic() + wait
    last_size = -1
    while True:
        try:
            size = os.stat(path).st_size
            if size != last_size:
                last_size = size
                found = _answer_before_stop(_tail_lines(path, size, tail_bytes), stamp)
                if found is not None:
                    return found
        except OSError:
            return ""
        if time.monotonic() >= deadline:
            return ""
        time.sleep(0.02)


def _tail_lines(path: str, size: int, tail_bytes: int) -> list[bytes]:
    with open(path, "rb") as fh:
        fh.seek(max(0, size - tail_bytes))
        tail = fh.read(tail_bytes)
    lines = tail.split(b"\n")
    return lines[1:] if size > tail_bytes else lines  # the first line read is cut


def _kind(line: bytes) -> bytes:
    head = line[:40].replace(b" ", b"")
    if not head.startswith(b'{"type":"'):
        return b""
    return head[9:].split(b'"', 1)[0]


def _answer_before_stop(lines: list[bytes], stamp: Any) -> str | None:
    """The answer (or '') when this agentStop's ``hook.start`` line is among ``lines``, else None."""
    from kenning import fastjson

    def data(line: bytes) -> dict[str, Any]:
        try:
            found = fastjson.loads(line.decode("utf-8", "replace")).get("data")
        except (ValueError, AttributeError):
            return {}
        return found if isinstance(found, dict) else {}

    stop = None
    for i in range(len(lines) - 1, -1, -1):
        kind = _kind(lines[i])
        if kind == b"user.message":
            return None  # a new turn began after any agentStop line: ours is not written yet
        if kind == b"hook.start" and b'"agentStop"' in lines[i]:
            d = data(lines[i])
            given = d.get("input")
            when = given.get("timestamp") if isinstance(given, dict) else None
            if d.get("hookType") == "agentStop" and (stamp is None or when == stamp):
                stop = i
                break
    if stop is None:
        return None
    for line in reversed(lines[:stop]):
        kind = _kind(line)
        if kind == b"user.message":
            return ""
        if kind == b"assistant.message":
            d = data(line)
            content = d.get("content")
            if not d.get("parentToolCallId") and isinstance(content, str) and content.strip():
                return content
    return ""


def _untrusted_folder(payload: dict[str, Any]) -> str | None:
    """The session's folder when Copilot CLI does not trust it for good (its hooks ran on trust given
    for this session, or on an environment switch that says so)."""
    if "true" in (os.environ.get("COPILOT_ALLOW_ALL"), os.environ.get("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS")):
        return None
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    from kenning.integrations.copilot_trust import is_trusted

    return None if is_trusted(cwd) else cwd


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
    from kenning.integrations.copilot_trust import is_trusted, untrusted_warning

    if not is_trusted(root):
        report.notes.append(f"WARNING: {untrusted_warning(root)}")
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
    from kenning.integrations.copilot_trust import is_trusted, untrusted_warning
    from kenning.paths import Paths

    repos = _repos(Paths())
    gone = [r for r in repos if not _ours(hooks_file(r))]
    if gone:
        return [("warn", "Copilot CLI hooks",
                 f"missing in {', '.join(gone)}: run `kenning install --agent copilot` there")]
    out: list[Check] = [("ok", "Copilot CLI hooks", f"in {len(repos)} repositor{'y' if len(repos) == 1 else 'ies'}")]
    # Hooks in place are not hooks that run: Copilot CLI skips them, silently, in a folder it does not trust.
    out.extend(("warn", "Copilot CLI trust", untrusted_warning(r)) for r in repos if not is_trusted(r))
    return out
