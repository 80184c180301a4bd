"""Agent adapters, one module per agent.

Claude Code's hook protocol is the event model the pipeline takes: ``SessionStart``,
``UserPromptSubmit``, ``PreToolUse``, ``PostToolUse`` / ``PostToolUseFailure`` (a tool use with
its id), ``Stop`` (with the last message) and ``SessionEnd``, with Claude Code's field and tool
names. An adapter maps its host's hook payloads onto that model (``translate``), says how the
host takes context back (``respond``), and installs, removes and checks its config files.

This module and each adapter's hook half run in every hook process: standard library only,
nothing heavier than ``os`` at import. Installers import what they need inside their functions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from types import ModuleType
    from typing import Any

# name -> module. Claude Code's module is only its installer: its payloads need no mapping.
AGENTS = {
    "claude-code": "kenning.integrations.claude_code",
    "codex": "kenning.integrations.codex",
    "gemini": "kenning.integrations.gemini",
    "opencode": "kenning.integrations.opencode",
    "cursor": "kenning.integrations.cursor",
    "copilot": "kenning.integrations.copilot",
}
LABELS = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI", "opencode": "OpenCode",
          "cursor": "Cursor", "copilot": "GitHub Copilot CLI"}


class Native:
    """The adapter of a host that speaks the event model itself (Claude Code).

    Cursor runs Claude Code's hooks from ``.claude/settings*.json``: its payloads carry
    ``cursor_version`` (and ``workspace_roots``), so its sessions are attributed to Cursor. The
    environment is not asked: Claude Code run in Cursor's terminal inherits Cursor's variables.
    """

    name = "claude-code"
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
              "SessionEnd")

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        return event, payload

    def agent_of(self, payload: dict[str, Any]) -> str:
        if "cursor_version" in payload:
            return "cursor"
        return self.name

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        return additional_context(host_event, context)


def additional_context(host_event: str, context: str) -> dict[str, Any]:
    """``hookSpecificOutput.additionalContext``: Claude Code's answer, which Codex and Gemini CLI read too."""
    return {"hookSpecificOutput": {"hookEventName": host_event, "additionalContext": context}}


def hook_adapter(agent: str) -> Any:
    """The adapter object for ``kenning hook <agent> …``, or None for an agent we do not know."""
    if agent == "claude-code":
        return Native()
    module = AGENTS.get(agent)
    if module is None:
        return None
    return _import(module).HOOK


def module(agent: str) -> ModuleType:
    """The adapter module of ``agent`` (its installer, doctor checks and hook half)."""
    return _import(AGENTS[agent])


def _import(name: str) -> ModuleType:
    # importlib costs ~3 ms at import; __import__ + sys.modules is what `import x.y` does.
    import sys

    __import__(name)
    return sys.modules[name]
