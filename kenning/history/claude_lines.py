"""What a Claude Code transcript line says, and who wrote it.

Every imported prompt carries ``payload["prompt_origin"]``:

* ``typed``: the user typed it and submitted it as a new turn;
* ``queued``: the user typed it while the agent was working. Claude Code records such a message
  only as a ``queue-operation`` line (``operation: "enqueue"``, ``content``); no ``user`` line
  holds it. Its fate is a later line without content: ``dequeue`` when it is submitted as the next
  turn (a ``user`` line with the same text follows at once), ``remove`` when it leaves the queue
  otherwise: handed to the model mid-turn after a tool result (the agent's next words react to it;
  newer versions add an ``attachment`` ``queued_command``), or taken back by the user to edit and
  send it with the next prompt. Which one cannot be told by ``remove`` alone, so the rule is by
  text: a queued message the next submitted prompt contains (same words, whitespace aside) is
  that prompt and is not imported again; any other is imported at its own time;
* ``plan``: a plan the agent wrote and the user accepted (``Implement the following plan:``, with
  ``planContent``; the heading alone is enough): the agent's words, not the user's;
* ``rejection``: what the user typed when refusing a tool call (``... the user said:\\n<text>``);
* ``headless``: the scripted prompt of a headless run (``entrypoint`` ``sdk-cli`` and the SDKs).

A slash command the user ran with words of their own ("/goal simplify this repo …", "/review the auth changes")
is recorded only as ``<command-name>`` and ``<command-args>``: those words are typed, the prompt is the command
with them, as the live hook sees it (:func:`command_request`). The text a command expands to is the command
file's, not the user's (a meta line); a command that only sets up the session ("/model opus") says no request.

Text Claude Code wrote itself is no prompt: compaction summaries, slash commands and their
output, task notifications, agent-team messages, interruptions, shell commands the user ran
with ``!`` (imported as the user's own Bash calls), sidechain and meta lines.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

SYNTHETIC_PREFIXES = ("<command-name>", "<command-message>", "<command-args>", "<local-command",
                      "<task-notification>", "<system-reminder>", "[Request interrupted", "Caveat:",
                      "<bash-input>", "<bash-stdout>", "<bash-stderr>",
                      "This session is being continued from a previous", "Another Claude session sent a message:",
                      "<teammate-message", "<agent-message")
INTERRUPTED = "[Request interrupted by user"
PLAN_PREFIX = "Implement the following plan:"
REJECTED = "The user doesn't want to proceed with this tool use"
USER_SAID = "the user said:"
# What Claude Code answers when its auto mode's classifier refuses a call: the call never ran
DENIED = "Permission for this action was denied"
_SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")  # /model, /plan do x, /plugin:skill (not /Users/x)


def blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []


def user_text(rec: dict[str, Any]) -> str:
    """The text of a ``user`` line ('' for one holding tool results)."""
    parts = blocks(rec.get("message"))
    if any(b.get("type") == "tool_result" for b in parts):
        return ""
    return "\n".join(str(b.get("text") or "") for b in parts if b.get("type") == "text").strip()


def is_synthetic(text: str) -> bool:
    return text.startswith(SYNTHETIC_PREFIXES)


def written_by_the_cli(rec: dict[str, Any]) -> bool:
    """An ``assistant`` line Claude Code wrote itself: an API error or a usage limit reached ("You've hit your limit
    · resets 8pm", "API Error: 400 …"), marked ``isApiErrorMessage`` and the model ``<synthetic>``."""
    msg = rec.get("message")
    return bool(rec.get("isApiErrorMessage")) or (isinstance(msg, dict) and msg.get("model") == "<synthetic>")


def is_slash_command(text: str) -> bool:
    return _SLASH_COMMAND.match(text) is not None


def prompt_origin(rec: dict[str, Any], text: str) -> str | None:
    """Where the text of a ``user`` line came from; None when it is no prompt."""
    if not text or rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isSidechain"):
        return None
    if is_synthetic(text) or (is_slash_command(text) and len(text.split()) == 1):
        return None
    plan = rec.get("planContent")
    if (isinstance(plan, str) and plan.strip()) or text.startswith(PLAN_PREFIX):
        return "plan"
    if str(rec.get("entrypoint") or "").startswith("sdk"):
        return "headless"
    return "typed"


# Built-in commands that set up the session (its model, effort, plugins, name …): their words are settings.
_SETTING_COMMANDS = frozenset((
    "model", "effort", "config", "settings", "plugin", "plugins", "mcp", "permissions", "theme", "add-dir",
    "output-style", "statusline", "rename", "resume", "export", "login", "logout", "fast", "vim", "terminal-setup",
    "compact", "clear", "cost", "doctor", "help", "hooks", "agents", "memory", "status", "ide", "usage", "context",
    "upgrade", "exit", "sandbox", "privacy-settings", "install-github-app", "release-notes", "bashes", "todos",
    "quit", "bug", "feedback", "rewind", "keybindings", "permissions", "allowed-tools", "tasks", "copy", "stickers",
    "migrate-installer", "output-style:new", "login-method", "remote-env", "extra-usage", "upgrade-plan"))
_SETS_UP = _SETTING_COMMANDS | {"setup", "set-up", "install", "uninstall", "configure", "update", "version"}
_COMMAND_NAME = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


def command_request(text: str) -> tuple[str, str] | None:
    """(the prompt, the user's words) of a slash command that asks the agent for work: one run with words of the
    user's own, or a command or skill of the project's run without any ("/bmad-code-review", "/lore-commit": the
    request is the command, and what follows are answers to it); None for any other text and for a command that
    sets up the session (or, without words, toggles plan mode)."""
    if not text.startswith(("<command-name>", "<command-message>")):
        return None
    name, args = _COMMAND_NAME.search(text), _COMMAND_ARGS.search(text)
    words = args.group(1).strip() if args is not None else ""
    if name is None or name.group(1).lower() in _SETTING_COMMANDS:
        return None
    # without words: plan mode toggled, or a plugin's own set-up ("/codex:setup", "/foo:login")
    if not words and (name.group(1).lower() == "plan" or name.group(1).lower().rsplit(":", 1)[-1] in _SETS_UP):
        return None
    return (f"/{name.group(1)} {words}" if words else f"/{name.group(1)}"), words


def rejection(result: str) -> str | None:
    """For a tool result: None when the user did not refuse the call, else what they said ('' for nothing)."""
    text = result.strip()
    if text.startswith("Error: "):
        text = text[len("Error: "):]
    if not text.startswith(REJECTED):
        return None
    i = text.find(USER_SAID)
    return text[i + len(USER_SAID):].strip() if i >= 0 else ""


def denied(result: str) -> bool:
    """Whether a tool result says the agent's harness refused the call (auto mode's classifier): nothing ran."""
    text = result.strip()
    return text.removeprefix("Error: ").startswith(DENIED)


def shell_output(text: str) -> tuple[str, str] | None:
    """(stdout, stderr) of a ``<bash-stdout>`` line; None for any other text."""
    if not text.startswith(("<bash-stdout>", "<bash-stderr>")):
        return None
    return _between(text, "bash-stdout"), _between(text, "bash-stderr")


def _between(text: str, tag: str) -> str:
    head, tail = f"<{tag}>", f"</{tag}>"
    i = text.find(head)
    if i < 0:
        return ""
    j = text.find(tail, i)
    return text[i + len(head):j if j >= 0 else len(text)]


def queued_text(rec: dict[str, Any]) -> str | None:
    """The text of a ``queue-operation`` line that queued a message the user typed; None otherwise
    (other operations, background-task records, notifications, agent messages, slash commands)."""
    if rec.get("operation") != "enqueue":
        return None
    content = rec.get("content")
    if not isinstance(content, str):
        return None
    text = content.strip()
    if not text or is_synthetic(text) or is_slash_command(text):
        return None
    if text.startswith("{"):
        try:
            if isinstance(json.loads(text), dict):
                return None  # {"task_id": ...}: a background task's record
        except (ValueError, RecursionError):
            pass
    return text


def queued_key(rec: dict[str, Any], text: str) -> str:
    """The same for the same queued message in every file that holds it (a resumed copy too)."""
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]
    return f"queued:{rec.get('timestamp')}:{digest}"


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Scan:
    """What the whole file says before it is read turn by turn."""

    queued: set[str] = field(default_factory=set)  # keys of the queued messages to import
    pr_links: list[tuple[Any, Any]] = field(default_factory=list)  # (prUrl, prRepository)
    branch: str = ""


def scan(path: str) -> Scan:
    """One cheap pass: only queue operations, ``pr-link`` lines, the first ``gitBranch`` and, while a
    queued message waits for its fate, the ``user`` lines after it are parsed.

    The quoted markers cannot occur inside a JSON string (its quotes are escaped there).
    """
    out = Scan()
    waiting: list[tuple[str, str]] = []  # (key, text) of queued messages not yet decided
    from kenning.history import source

    try:
        fh = source.open_regular(path)
    except source.Unreadable:
        return out  # the reading pass says why
    with fh:
        for raw in source.lines(fh):
            line = raw.decode("utf-8", "replace")
            if '"queue-operation"' in line:
                rec = _parse(line)
                text = queued_text(rec) if rec is not None else None
                if rec is not None and text is not None:
                    waiting.append((queued_key(rec, text), _norm(text)))
            elif '"pr-link"' in line:
                rec = _parse(line)
                if rec is not None and rec.get("type") == "pr-link":
                    out.pr_links.append((rec.get("prUrl"), rec.get("prRepository")))
            elif waiting and ('"type":"user"' in line or '"type": "user"' in line) and '"tool_result"' not in line:
                rec = _parse(line)
                text = user_text(rec) if rec is not None and rec.get("type") == "user" else ""
                if rec is None or not text or rec.get("isMeta") or rec.get("isCompactSummary") \
                        or text.startswith(INTERRUPTED):
                    continue
                # The next message submitted after a queued one: it holds the queued text when the
                # queue handed it over (dequeue) or the user took it back and sent it, edited or merged.
                said = _norm(text)
                out.queued.update(key for key, queued in waiting if queued not in said)
                waiting.clear()
            if not out.branch and '"gitBranch"' in line:
                rec = _parse(line)
                branch = rec.get("gitBranch") if rec is not None else None
                if isinstance(branch, str) and branch:
                    out.branch = branch
    out.queued.update(key for key, _ in waiting)
    return out


def _parse(line: str) -> dict[str, Any] | None:
    from kenning.history import source

    rec = source.parse(line)  # cut at source.MAX_DEPTH like every line read; the reading pass counts problems
    return rec if isinstance(rec, dict) else None
