"""Gemini CLI (npm ``@google/gemini-cli``): hooks in ``~/.gemini/settings.json``.

Hook half (stdlib only). Gemini's events map onto the event model: SessionStart → SessionStart,
BeforeAgent (``prompt``) → UserPromptSubmit, AfterTool → PostToolUse or PostToolUseFailure,
AfterAgent (``prompt_response``) → Stop, SessionEnd → SessionEnd. Its tools get Claude Code's
names (``write_file`` → Write, ``replace`` → Edit, ``read_file`` → Read, ``run_shell_command`` →
Bash, …) and their responses Claude Code's shape, so observers and evidence read them the same;
the original name stays in ``host_tool``. Context comes back through
``hookSpecificOutput.additionalContext`` on SessionStart and BeforeAgent: Gemini puts it in the
user turn inside ``<hook_context>…</hook_context>``, which is why a BeforeAgent prompt arrives
with the SessionStart context in front of it and is stripped of it here.

Installer half. Gemini CLI rewrites settings.json itself (it migrates key names), so uninstall
removes our handlers by content (our command) instead of restoring bytes; when nothing else
changed, the original bytes come back all the same. Verified against Gemini CLI 0.61.0
(tests/e2e/test_gemini_memory.py).
"""

from __future__ import annotations

import os

from kenning.integrations import additional_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.integrations.files import Check, Report
    from kenning.paths import Paths

NAME = "gemini"
_EVENTS = {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit", "AfterTool": "PostToolUse",
           "AfterAgent": "Stop", "SessionEnd": "SessionEnd"}
TOOLS = {"write_file": "Write", "replace": "Edit", "edit": "Edit", "read_file": "Read", "read_many_files": "Read",
         "run_shell_command": "Bash", "glob": "Glob", "search_file_content": "Grep", "grep_search": "Grep",
         "list_directory": "LS", "web_fetch": "WebFetch", "google_web_search": "WebSearch"}


class GeminiHook:
    name = NAME
    events = tuple(_EVENTS)

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        ours = _EVENTS[event]
        if ours == "UserPromptSubmit":
            prompt = payload.get("prompt")
            if isinstance(prompt, str):
                payload = {**payload, "prompt": strip_hook_context(prompt)}
        elif ours == "Stop":
            answer = payload.get("prompt_response")
            payload = {**payload, "last_assistant_message": answer if isinstance(answer, str) else ""}
            payload.pop("prompt_response", None)
            payload.pop("prompt", None)  # captured at BeforeAgent already
        elif ours == "PostToolUse":
            return _tool(payload)
        return ours, payload

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if host_event not in ("SessionStart", "BeforeAgent"):
            return None
        return additional_context(host_event, context)


HOOK = GeminiHook()


def strip_hook_context(prompt: str) -> str:
    """The prompt without the ``<hook_context>`` blocks Gemini CLI put in front of it (our own context)."""
    while prompt.startswith("<hook_context>"):
        end = prompt.find("</hook_context>")
        if end < 0:
            break
        prompt = prompt[end + len("</hook_context>"):].lstrip("\n")
    return prompt


def _tool(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    host = payload.get("tool_name")
    name = TOOLS.get(host, host) if isinstance(host, str) else host
    tool_input = payload.get("tool_input")
    inp = dict(tool_input) if isinstance(tool_input, dict) else {}
    if name == "Read" and "file_path" not in inp and isinstance(inp.get("absolute_path"), str):
        inp["file_path"] = inp["absolute_path"]
    response = payload.get("tool_response")
    resp = response if isinstance(response, dict) else {}
    content = resp.get("llmContent")
    text = content if isinstance(content, str) else ""
    display = resp.get("returnDisplay")
    out = {k: v for k, v in payload.items() if k not in ("tool_response", "tool_input", "tool_name")}
    out.update(tool_name=name, tool_input=inp, host_tool=host)
    error = resp.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        out["error"] = str(message or text or "the tool failed")
        return "PostToolUseFailure", out
    if name == "Bash":
        code, output = shell_result(text)
        if code:
            out["error"] = f"Exit code {code}\n{output}".rstrip("\n")
            return "PostToolUseFailure", out
        out["tool_response"] = {"stdout": output, "stderr": "", "interrupted": False}
    elif name in ("Write", "Edit"):
        path = inp.get("file_path") or (display.get("filePath") if isinstance(display, dict) else None)
        new = isinstance(display, dict) and display.get("isNewFile") is True
        out["tool_response"] = {"type": "create" if new else "update", "filePath": path}
    elif name == "Read":
        out["tool_response"] = {"type": "text", "file": {"filePath": inp.get("file_path"), "content": text}}
    else:
        out["tool_response"] = text if text else response
    return "PostToolUse", out


def shell_result(text: str) -> tuple[int, str]:
    """(exit code, output) from run_shell_command's llmContent (``Output: …`` / ``Exit Code: N`` lines)."""
    body = text
    for tag in ("<untrusted_context>", "</untrusted_context>"):
        body = body.replace(tag, "")
    code = 0
    kept: list[str] = []
    in_output = False
    for line in body.strip("\n").split("\n"):
        if line.startswith("Exit Code: "):
            digits = line[len("Exit Code: "):].strip()
            code = int(digits) if digits.lstrip("-").isdigit() else 1
            in_output = False
        elif line.startswith(("Process Group PGID:", "Background PIDs:", "Signal:", "Error: (none)")):
            in_output = False
        elif line.startswith("Output: "):
            rest = line[len("Output: "):]
            kept.append("" if rest == "(empty)" else rest)
            in_output = True
        elif line.startswith("Error: "):
            kept.append(line)
            in_output = False
            code = code or 1
        elif in_output:
            kept.append(line)
    return code, "\n".join(kept).strip("\n")


# ----------------------------------------------------------------------------------- installer

# event -> (matcher or None, timeout in milliseconds, as Gemini CLI counts them)
EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 10_000),
    "BeforeAgent": (None, 10_000),
    "AfterTool": ("*", 10_000),
    "AfterAgent": (None, 10_000),
    "SessionEnd": (None, 5_000),
}
HANDLER_NAME = "kenning"


def gemini_dir() -> str:
    """``$GEMINI_CLI_HOME/.gemini`` (Gemini CLI's own override of the home directory) or ``~/.gemini``."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini")


def settings_path() -> str:
    return os.path.join(gemini_dir(), "settings.json")


def detected() -> bool:
    return os.path.isdir(gemini_dir())


def _load(path: str) -> tuple[dict[str, Any], bytes | None]:
    import json

    from kenning.integrations.files import read_bytes

    raw = read_bytes(path)
    if raw is None or not raw.strip():
        return {}, raw
    data = json.loads(raw.decode("utf-8"))  # invalid JSON raises: never overwrite what we cannot read
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data, raw


def _ours(handler: Any) -> bool:
    from kenning.integrations.files import is_our_command

    return isinstance(handler, dict) and is_our_command(handler.get("command"), NAME)


def _without_ours(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy without our handlers (nor the groups and event lists this empties), and their events."""
    import json

    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    removed: list[str] = []
    if not isinstance(hooks, dict):
        return out, removed
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not _ours(h)]
                if len(handlers) != len(g["hooks"]):
                    removed.append(event)
                    if not handlers:
                        continue
                    g = {**g, "hooks": handlers}
            kept.append(g)
        if kept:
            hooks[event] = kept
        elif event in removed:
            del hooks[event]
    if not hooks and removed:
        del out["hooks"]
    return out, removed


def _dump(data: dict[str, Any]) -> bytes:
    import json

    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def install(paths: Paths, *, python: str | None = None) -> Report:
    from kenning.integrations.files import Original, Report, backup, hook_command, write_bytes

    path = settings_path()
    report = Report(agent=NAME, path=path, events=list(EVENTS))
    current, raw = _load(path)
    new, _removed = _without_ours(current)
    hooks = new.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: 'hooks' is not an object; fix it by hand first")
    for event, (matcher, timeout) in EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ValueError(f"{path}: hooks.{event} is not a list; fix it by hand first")
        group: dict[str, Any] = {"hooks": [{"type": "command", "name": HANDLER_NAME,
                                            "command": hook_command(NAME, event, python), "timeout": timeout}]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        groups.append(group)
    if new == current:
        return report
    Original(paths, NAME, path).remember(raw)
    if raw is not None:
        report.backup = backup(path, raw)
    write_bytes(path, _dump(new))
    report.changed = True
    return report


def uninstall(paths: Paths) -> Report:
    import json

    from kenning.integrations.files import Original, Report, backup

    path = settings_path()
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
    if not original.ours_alone(not new):
        report.backup = backup(path, raw)
    same = False
    if old is not None:
        try:
            before = json.loads(old.decode("utf-8") or "{}")
        except (ValueError, UnicodeDecodeError):
            before = None
        if isinstance(before, dict) and before.get("hooks") == {} and "hooks" not in new:
            new["hooks"] = {}  # the user had an empty hooks object: it stays
        same = before == new
    original.write_back(old, same, not new, _dump(new))
    report.changed = True
    return report


def installed() -> dict[str, list[str]]:
    try:
        current, _raw = _load(settings_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return {}
    out: dict[str, list[str]] = {}
    hooks = current.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g in groups if isinstance(groups, list) else []:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                if _ours(h):
                    out.setdefault(event, []).append(h["command"])
    return out


def checks() -> list[Check]:
    path = settings_path()
    try:
        current, _raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        return [("FAIL", "Gemini CLI hooks", f"cannot read {path}: {e}")]
    found = installed()
    if not found:
        return [("warn", "Gemini CLI hooks", f"none in {path}: run `kenning install --agent gemini`")]
    out: list[Check] = []
    missing = [e for e in EVENTS if e not in found]
    if missing:
        out.append(("FAIL", "Gemini CLI hooks",
                    f"missing for {', '.join(missing)}: run `kenning install --agent gemini`"))
    cfg = current.get("hooksConfig")
    if isinstance(cfg, dict) and cfg.get("enabled") is False:
        out.append(("FAIL", "Gemini CLI hooks", f"hooksConfig.enabled is false in {path}: Gemini runs no hook"))
    disabled = cfg.get("disabled") if isinstance(cfg, dict) else None
    if isinstance(disabled, list) and HANDLER_NAME in disabled:
        out.append(("FAIL", "Gemini CLI hooks", f"'{HANDLER_NAME}' is in hooksConfig.disabled in {path}"))
    if not out:
        out.append(("ok", "Gemini CLI hooks", f"{len(found)} events in {path}"))
    return out
