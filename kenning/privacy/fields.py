"""Which fields of an agent's hook payload can hold user content, and which name files.

Data, per agent, so that adding an agent is adding a row. Fields listed in ``METADATA`` are
written by the agent itself (ids, enum-like modes, its own transcript paths, counters): they
never hold a secret of the user's, so the redactor leaves them alone (``"permission_mode":
"bypassPermissions"`` must not be taken for a password, nor cost a scan). Only top-level
fields are exempt; everything else, at any depth, is scanned.

``PATH_FIELDS`` and ``COMMAND_FIELDS`` name the keys, at any depth of a tool's input, whose
value is a file path or a shell command: they decide the profile (see
:mod:`kenning.privacy.files`) applied to the contents the same payload carries.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Fields every agent that speaks Claude Code's hook protocol (Claude Code, Codex) writes itself.
COMMON_METADATA = frozenset((
    "session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode", "tool_name", "tool_use_id",
    "prompt_id", "agent_id", "agent_type", "agent_transcript_path", "source", "reason", "trigger", "model",
    "effort", "message_id", "turn_id", "notification_type", "load_reason", "memory_type", "stop_hook_active",
    "is_interrupt", "duration_ms", "timestamp", "index", "final", "context_tokens", "estimated_cache_write_usd",
    "prompt_cache_likely_expired", "seconds_since_last_response", "mcp_server",
))

METADATA: dict[str, frozenset[str]] = {
    "claude-code": COMMON_METADATA,
    "codex": COMMON_METADATA,
}

PATH_FIELDS = frozenset(("file_path", "filePath", "path", "notebook_path", "filename", "file", "absolute_path",
                         "target_file", "source_path", "dest_path", "destination"))
COMMAND_FIELDS = frozenset(("command", "cmd"))


def metadata(agent: str | None) -> frozenset[str]:
    """Top-level fields the agent writes itself (the common set for an agent not listed)."""
    if agent is None:
        return frozenset()
    return METADATA.get(agent, COMMON_METADATA)


def profile(payload: Any) -> frozenset[str]:
    """The union of the profiles (:mod:`kenning.privacy.files`) of the files and commands a payload
    names in its path and command fields, at any depth."""
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(payload, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > 6:
            continue
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, str) and (k in PATH_FIELDS or k in COMMAND_FIELDS):
                    from kenning.privacy import files  # (loaded once, for payloads that name a file)

                    found |= files.for_path(x) if k in PATH_FIELDS else files.for_command(x)
                elif isinstance(x, dict | list):
                    stack.append((x, depth + 1))
        elif isinstance(v, list):
            stack += [(x, depth + 1) for x in v[:200] if isinstance(x, dict | list)]
    return frozenset(found)
