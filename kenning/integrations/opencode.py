"""OpenCode (npm ``opencode-ai``): no command hooks, so a small plugin (``opencode_plugin.js``,
committed source, no build step) runs ``kenning hook opencode <event>`` with JSON on stdin.

Hook half (stdlib only). The plugin sends Claude Code's field names already (``session_id``,
``cwd``, ``prompt``, ``tool_name``, ``tool_input``, ``tool_response``, ``tool_use_id``,
``last_assistant_message``) plus ``exit`` (the shell's exit code from ``output.metadata.exit``);
this maps OpenCode's tool names (``bash``, ``write``, ``edit``, ``read``…) to Claude Code's and a
non-zero exit to PostToolUseFailure. ``opencode run "…"`` quotes every word of its message that
holds a space; the plugin sends the process's arguments (``cli_args``) with the prompt and
:func:`run_prompt` undoes exactly that quoting (``cli_args`` itself is never stored). Context comes
back as ``hookSpecificOutput.additionalContext``:
the plugin adds SessionStart's to every request's system prompt
(``experimental.chat.system.transform``) and the prompt's as a text part of the user message.

Installer half: the plugin file in ``$XDG_CONFIG_HOME/opencode/plugin/`` (OpenCode loads every
module there); ``opencode.json`` is never touched, so uninstall (deleting our file) leaves the
config byte-identical. Verified with the real CLI, 1.18.33, offline (tests/e2e/test_opencode_memory.py),
and by running the plugin module under node with OpenCode's plugin call shapes
(tests/integration/test_opencode_plugin.py).
"""

from __future__ import annotations

import os

from kenning.integrations import additional_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.integrations.files import Check, Report
    from kenning.paths import Paths

NAME = "opencode"
TOOLS = {"bash": "Bash", "write": "Write", "edit": "Edit", "multiedit": "MultiEdit", "read": "Read",
         "glob": "Glob", "grep": "Grep", "list": "LS", "patch": "apply_patch", "webfetch": "WebFetch"}


class OpenCodeHook:
    name = NAME
    events = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if event == "UserPromptSubmit" and "cli_args" in payload:
            prompt, args = payload.get("prompt"), payload_args(payload)
            payload = {k: v for k, v in payload.items() if k != "cli_args"}  # the arguments are not stored
            if isinstance(prompt, str) and args:
                payload["prompt"] = run_prompt(prompt, args)
        if event != "PostToolUse":
            return event, payload
        host = payload.get("tool_name")
        out = {k: v for k, v in payload.items() if k != "exit"}
        out["tool_name"] = TOOLS.get(host, host) if isinstance(host, str) else host
        out["host_tool"] = host
        code = payload.get("exit")
        response = payload.get("tool_response")
        text = response if isinstance(response, str) else ""
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            out.pop("tool_response", None)
            out["error"] = f"Exit code {code}\n{text}".rstrip("\n")
            return "PostToolUseFailure", out
        if out["tool_name"] == "Bash":
            out["tool_response"] = {"stdout": text, "stderr": "", "interrupted": False}
        return "PostToolUse", out

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if event not in ("SessionStart", "UserPromptSubmit"):
            return None
        return additional_context(host_event, context)


HOOK = OpenCodeHook()


def payload_args(payload: dict[str, Any]) -> list[str]:
    args = payload.get("cli_args")
    return [a for a in args if isinstance(a, str)] if isinstance(args, list) else []


def _as_run_quotes(word: str) -> str:
    """One word of ``opencode run``'s message as the CLI puts it in the prompt (1.18.33, ``run``
    command): a word holding a space is wrapped in double quotes with its own ``"`` escaped as ``\\"``;
    any other word is kept as is; the words are joined by one space."""
    return '"' + word.replace('"', '\\"') + '"' if " " in word else word


def run_prompt(prompt: str, cli_args: list[str]) -> str:
    """The prompt as the user wrote it when it is what ``opencode run <words>`` made of ``cli_args``
    (the process's arguments, ``run`` first; the message words are some of the arguments after it,
    in order: options and their values sit between them). The CLI quotes each word that holds a space
    and appends piped stdin after a newline; undone only when the prompt is exactly that, so a prompt
    typed with quotes of its own (in the TUI, or in a word without a space) is kept as is."""
    if "run" not in cli_args:
        return prompt
    words = cli_args[cli_args.index("run") + 1:][:256]
    encoded = [_as_run_quotes(w) for w in words]
    # Which words, in order, spell the prompt's head: pos -> the words used so far (first found wins).
    found: dict[int, list[int]] = {}
    frontier: list[tuple[int, int, list[int]]] = [(0, 0, [])]  # (position in prompt, next word, words used)
    seen: set[tuple[int, int]] = set()
    while frontier:
        pos, start, used = frontier.pop()
        for i in range(start, len(words)):
            piece = encoded[i] if not used else " " + encoded[i]
            if (pos, i) in seen or not prompt.startswith(piece, pos):
                continue
            seen.add((pos, i))
            end, now = pos + len(piece), [*used, i]
            found.setdefault(end, now)
            frontier.append((end, i + 1, now))
    for end in sorted(found, reverse=True):
        if end == len(prompt) or prompt.startswith("\n", end):  # the whole prompt, or it then has stdin
            return " ".join(words[i] for i in found[end]) + prompt[end:]
    return prompt

# ----------------------------------------------------------------------------------- installer

PLUGIN_FILE = "kenning.js"
MARKER = "// Kenning's memory for OpenCode"


def config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "opencode")


def plugin_path() -> str:
    return os.path.join(config_dir(), "plugin", PLUGIN_FILE)


def detected() -> bool:
    return os.path.isdir(config_dir())


def plugin_source(python: str | None = None) -> str:
    """The plugin with this interpreter (and a non-default data dir) written in."""
    import json
    import sys
    from importlib import resources

    from kenning.paths import data_dir

    text = resources.files("kenning.integrations").joinpath("opencode_plugin.js").read_text(encoding="utf-8")
    env = {"KENNING_DATA_DIR": data_dir()} if os.environ.get("KENNING_DATA_DIR") else {}
    return text.replace('"__KENNING_PYTHON__"', json.dumps(python or sys.executable)).replace(
        "__KENNING_ENV__", json.dumps(env))


def _ours(path: str) -> bool:
    from kenning.integrations.files import read_bytes

    raw = read_bytes(path)
    return raw is not None and raw.startswith(MARKER.encode())


def install(paths: Paths, *, python: str | None = None) -> Report:
    from kenning.integrations.files import Report, read_bytes, write_bytes

    path = plugin_path()
    report = Report(agent=NAME, path=path, events=list(HOOK.events))
    existing = read_bytes(path)
    if existing is not None and not _ours(path):
        report.problems.append(f"OpenCode not set up: {path} exists and is not Kenning's; move it away first")
        return report
    new = plugin_source(python).encode("utf-8")
    if existing == new:
        return report
    write_bytes(path, new)
    report.changed = True
    report.notes.append("restart OpenCode to load the plugin")
    return report


def uninstall(paths: Paths) -> Report:
    from kenning.integrations.files import Report

    path = plugin_path()
    report = Report(agent=NAME, path=path)
    if os.path.exists(path) and _ours(path):
        os.unlink(path)
        report.changed = True
        report.events = list(HOOK.events)
        try:
            os.rmdir(os.path.dirname(path))  # only if we left it empty
        except OSError:
            pass
    return report


def installed() -> dict[str, list[str]]:
    import json
    import shlex

    from kenning.integrations.files import HOOK_ENTRY, read_bytes

    path = plugin_path()
    raw = read_bytes(path)
    if raw is None or not _ours(path):
        return {}
    text = raw.decode("utf-8", "replace")
    start = text.find("const PYTHON = ")
    line = text[start:text.find("\n", start)] if start >= 0 else ""
    try:
        python = json.loads(line[len("const PYTHON = "):].rstrip(";"))
    except ValueError:
        python = ""
    return {e: [f"{shlex.quote(python)} -I -c {shlex.quote(HOOK_ENTRY)} opencode {e}"] for e in HOOK.events}


def checks() -> list[Check]:
    path = plugin_path()
    if not installed():
        return [("warn", "OpenCode plugin", f"not in {path}: run `kenning install --agent opencode`")]
    from kenning.integrations.files import interpreter_of, read_bytes

    current = read_bytes(path)
    python = interpreter_of(next(iter(installed().values()))[0])
    if current is not None and current.decode("utf-8", "replace") != plugin_source(python):
        return [("warn", "OpenCode plugin", f"{path} is from another Kenning version: run `kenning install`")]
    return [("ok", "OpenCode plugin", f"{path}")]
