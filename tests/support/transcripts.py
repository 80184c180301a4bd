"""Small Claude Code transcripts, Codex rollouts and Copilot CLI logs written by the tests, for
``kenning import-history``.

The lines have the shape the agents write (the keys, nesting and line types of Claude Code 2.1.8x
``projects/<slug>/<session>.jsonl`` and Codex 0.14x ``rollout-*.jsonl``, as in
tests/fixtures/history/); every word in them is the test's own.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def _stamp(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _uuid7(t: datetime) -> str:
    """An id as Codex makes its threads' and turns' (UUIDv7: the millisecond it was made, then random bits)."""
    rand = uuid.uuid4().hex
    hexed = f"{int(t.timestamp() * 1000):012x}7{rand[:3]}{'89ab'[int(rand[3], 16) % 4]}{rand[4:19]}"
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


class ClaudeSession:
    """One Claude Code session in one folder: prompts, answers and tool calls, seconds apart."""

    def __init__(self, cwd: str, start: str, *, branch: str = "main", sid: str | None = None) -> None:
        self.cwd = cwd
        self.sid = sid or str(uuid.uuid4())
        self.branch = branch
        self.t = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.lines: list[dict[str, Any]] = []
        self._parent: str | None = None

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        self.t += timedelta(seconds=5)
        uid = str(uuid.uuid4())
        self.lines.append({"parentUuid": self._parent, "isSidechain": False, "uuid": uid, "timestamp": _stamp(self.t),
                           "userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.sid,
                           "version": "2.1.86", "gitBranch": self.branch, "type": kind, "message": message,
                           **extra})
        self._parent = uid
        return uid

    def prompt(self, text: str) -> ClaudeSession:
        self._line("user", {"role": "user", "content": text}, promptId=str(uuid.uuid4()))
        return self

    def command(self, name: str, args: str = "", *, output: str = "", expands_to: str = "") -> ClaudeSession:
        """A slash command as Claude Code records it: its line, then what it printed or the prompt it expands to."""
        self._line("user", {"role": "user", "content": f"<command-name>/{name}</command-name>\n            "
                                                       f"<command-message>{name}</command-message>\n            "
                                                       f"<command-args>{args}</command-args>"})
        if output:
            self._line("user", {"role": "user", "content": f"<local-command-stdout>{output}</local-command-stdout>"})
        if expands_to:
            self._line("user", {"role": "user", "content": [{"type": "text", "text": expands_to}]}, isMeta=True)
        return self

    def say(self, text: str) -> ClaudeSession:
        self._line("assistant", {"model": "claude-opus-4-6", "id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message",
                                 "role": "assistant", "content": [{"type": "text", "text": text}],
                                 "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 20}})
        return self

    def tool(self, name: str, tool_input: dict[str, Any], result: str, structured: Any = None) -> ClaudeSession:
        tid = f"toolu_{uuid.uuid4().hex[:20]}"
        self._line("assistant", {"model": "claude-opus-4-6", "id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message",
                                 "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name,
                                                                    "input": tool_input}],
                                 "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 20}})
        self._line("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                          "content": result}]},
                   toolUseResult=structured if structured is not None else result)
        return self

    def read(self, rel: str, text: str = "…") -> ClaudeSession:
        path = self.path(rel)
        return self.tool("Read", {"file_path": path}, text,
                         {"type": "text", "file": {"filePath": path, "content": text, "numLines": 1,
                                                   "startLine": 1, "totalLines": 1}})

    def edit(self, rel: str, old: str, new: str) -> ClaudeSession:
        path = self.path(rel)
        return self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
                         f"The file {path} has been updated successfully.",
                         {"filePath": path, "oldString": old, "newString": new, "originalFile": old,
                          "structuredPatch": [], "userModified": False, "replaceAll": False})

    def bash(self, command: str, stdout: str = "") -> ClaudeSession:
        return self.tool("Bash", {"command": command, "description": command[:40]}, stdout,
                         {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False})

    def path(self, rel: str) -> str:
        """A file of the session's folder as the agent names it (backslashes on Windows)."""
        if re.match(r"^[A-Za-z]:[\\/]", self.cwd) or self.cwd.startswith("\\"):
            return self.cwd.rstrip("\\") + "\\" + rel.replace("/", "\\")
        return self.cwd.rstrip("/") + "/" + rel

    def write(self, claude_dir: Path) -> Path:
        """The transcript where Claude Code keeps it, its mtime at its last line (a finished session)."""
        slug = re.sub(r"[^A-Za-z0-9]", "-", self.cwd)
        dest = claude_dir / "projects" / slug / f"{self.sid}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        os.utime(dest, (self.t.timestamp(), self.t.timestamp()))
        return dest


class CodexSession:
    """One Codex rollout: its ``session_meta`` (folder, repository, branch, HEAD), prompts and commands."""

    def __init__(self, cwd: str, start: str, *, repository: str = "", branch: str = "", commit: str = "") -> None:
        self.sid = str(uuid.uuid4())
        self.cwd = cwd
        self.t = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.start = self.t
        git = {k: v for k, v in (("commit_hash", commit), ("branch", branch), ("repository_url", repository)) if v}
        self.lines: list[dict[str, Any]] = [{"timestamp": _stamp(self.t), "type": "session_meta", "payload": {
            "session_id": self.sid, "id": self.sid, "timestamp": _stamp(self.t), "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": "0.144.2", "source": "cli", "model_provider": "openai",
            "git": git}}]
        self.turn = 0
        self.turn_ids: list[str] = []

    def _add(self, kind: str, payload: dict[str, Any]) -> None:
        self.t += timedelta(seconds=5)
        self.lines.append({"timestamp": _stamp(self.t), "type": kind, "payload": payload})

    def spawn(self, message: str, *, role: str = "explorer", after_s: float = 5.0) -> CodexSession:
        """A sub-agent this session's agent spawns now, as Codex writes its thread: its own ``session_meta``
        (``forked_from_id``, ``source.subagent.thread_spawn``), the parent's, the parent's conversation replayed,
        then its own first turn, whose prompt is ``message``."""
        at = self.t + timedelta(seconds=after_s)
        child = CodexSession(self.cwd, _stamp(at))
        child.sid = _uuid7(at)
        child.lines = [{"timestamp": _stamp(at), "type": "session_meta", "payload": {
            "id": child.sid, "forked_from_id": self.sid, "timestamp": _stamp(at), "cwd": self.cwd,
            "originator": "codex-tui", "cli_version": "0.118.0", "agent_role": role, "source": {"subagent": {
                "thread_spawn": {"parent_thread_id": self.sid, "depth": 1, "agent_role": role}}}}},
            *({**line, "timestamp": _stamp(at)} for line in self.lines)]
        child.turn_ids = list(self.turn_ids)
        return child.prompt(message)

    def prompt(self, text: str) -> CodexSession:
        self.turn += 1
        self.turn_ids.append(_uuid7(self.t + timedelta(seconds=5)))
        self._add("event_msg", {"type": "task_started", "turn_id": self.turn_ids[-1]})
        self._add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                                     "text": text}]})
        self._add("event_msg", {"type": "user_message", "message": text})
        return self

    def run(self, command: str, output: str = "", *, code: int = 0, outside: bool = False,
            refused: str = "") -> CodexSession:
        """A command and how it ended; ``outside``: run outside the sandbox, as Codex asks the user to allow;
        ``refused``: what Codex wrote instead of running it (the user's or the approval policy's no)."""
        call = f"call_{uuid.uuid4().hex[:16]}"
        args: dict[str, Any] = {"cmd": command}
        if outside:
            args.update(sandbox_permissions="require_escalated", justification="Allow it to bind localhost?")
        self._add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                    "arguments": json.dumps(args)})
        self._add("response_item", {"type": "function_call_output", "call_id": call, "output": refused or
                                    f"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\n"
                                    f"Output:\n{output}"})
        return self

    def script(self, command: str, output: str = "", *, code: int = 0) -> CodexSession:
        """A command run by a code-mode ``exec`` script that prints the result object, as Codex 0.14x writes it: the
        script's header, then ``{"chunk_id", "wall_time_seconds", "exit_code", "original_token_count", "output"}``."""
        call = f"call_{uuid.uuid4().hex[:16]}"
        body = f"const r = await tools.exec_command({{cmd: {json.dumps(command)}}});\ntext(JSON.stringify(r));"
        self._add("response_item", {"type": "custom_tool_call", "name": "exec", "call_id": call, "input": body,
                                    "status": "completed"})
        printed = json.dumps({"chunk_id": "a61b30", "wall_time_seconds": 0.01, "exit_code": code,
                              "original_token_count": 8, "output": output})
        self._add("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": [
            {"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
            {"type": "input_text", "text": printed}]})
        return self

    def patch(self, path: str, *, applies: bool = True, refused: str = "") -> CodexSession:
        """An apply_patch of ``path``: applied (Codex's report with its exit code), or not because its context
        is not in the file (Codex's words, and no exit code: the patch never ran), or ``refused`` by the user."""
        call = f"call_{uuid.uuid4().hex[:16]}"
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-old line\n+new line\n*** End Patch\n"
        self._add("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": call, "input": body,
                                    "status": "completed"})
        applied = f"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM {path}\n"
        misfit = f"apply_patch verification failed: Failed to find expected lines in {self.cwd}/{path}:\nold line"
        output = refused or (applied if applies else misfit)
        self._add("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": output})
        return self

    def say(self, text: str) -> CodexSession:
        """The agent's message, as Codex writes it (the event and the response item), the turn still open."""
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]})
        return self

    def answer(self, text: str) -> CodexSession:
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add("event_msg", {"type": "task_complete", "turn_id": self.turn_ids[-1], "last_agent_message": text})
        return self

    def write(self, codex_home: Path) -> Path:
        day = self.start.strftime("%Y/%m/%d")
        dest = codex_home / "sessions" / day / f"rollout-{self.start.strftime('%Y-%m-%dT%H-%M-%S')}-{self.sid}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        os.utime(dest, (self.t.timestamp(), self.t.timestamp()))
        return dest


class CopilotSession:
    """One Copilot CLI session log (``session-state/<id>/events.jsonl``, the event types and fields of Copilot CLI
    1.0.6x-1.0.7x): typed prompts, the harness's own messages, the agent's messages and tool calls."""

    def __init__(self, cwd: str, start: str, *, branch: str = "main", commit: str = "") -> None:
        self.sid = str(uuid.uuid4())
        self.t = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.lines: list[dict[str, Any]] = []
        self.turn = 0
        context = {"cwd": cwd, "gitRoot": cwd, "branch": branch, **({"headCommit": commit} if commit else {})}
        self._add("session.start", {"sessionId": self.sid, "version": 1, "producer": "copilot-agent",
                                    "copilotVersion": "1.0.72", "startTime": _stamp(self.t), "context": context})

    def _add(self, kind: str, data: dict[str, Any]) -> None:
        self.t += timedelta(seconds=5)
        parent = self.lines[-1]["id"] if self.lines else None
        self.lines.append({"type": kind, "data": data, "id": str(uuid.uuid4()), "timestamp": _stamp(self.t),
                           "parentId": parent})

    def prompt(self, text: str, *, steering: bool = False) -> CopilotSession:
        self._add("user.message", {"content": text, "transformedContent": text, "attachments": [],
                                   "delivery": "steering" if steering else "idle"})
        return self

    def harness(self, text: str) -> CopilotSession:
        """A message the harness adds (a reminder): no prompt of the user's."""
        self._add("user.message", {"content": text, "source": "system", "delivery": "steering"})
        return self

    def say(self, text: str, *, tools: bool = False) -> CopilotSession:
        self.turn += 1
        self._add("assistant.turn_start", {"turnId": str(self.turn)})
        requests = [{"toolCallId": "pending", "name": "bash", "arguments": {}}] if tools else []
        self._add("assistant.message", {"messageId": str(uuid.uuid4()), "content": text, "toolRequests": requests})
        self._add("assistant.turn_end", {"turnId": str(self.turn)})
        return self

    def tool(self, name: str, arguments: Any, content: str, *, ok: bool = True, error: str = "") -> CopilotSession:
        call = f"call_{uuid.uuid4().hex[:16]}"
        self._add("tool.execution_start", {"toolCallId": call, "toolName": name, "arguments": arguments})
        done: dict[str, Any] = {"toolCallId": call, "success": ok}
        if ok:
            done["result"] = {"content": content, "detailedContent": content}
        else:
            done["error"] = {"message": error, "code": "failure"}
        self._add("tool.execution_complete", done)
        return self

    def bash(self, command: str, output: str = "", code: int = 0) -> CopilotSession:
        return self.tool("bash", {"command": command, "description": "run it"},
                         f"{output}\n<shellId: {self.turn} completed with exit code {code}>")

    def agent_stop(self, stamp: int) -> CopilotSession:
        """The ``hook.start`` line of an ``agentStop`` hook, whose input's ``timestamp`` (ms) is ``stamp``."""
        self._add("hook.start", {"hookInvocationId": str(uuid.uuid4()), "hookType": "agentStop",
                                 "input": {"sessionId": self.sid, "timestamp": stamp, "stopReason": "end_turn"}})
        return self

    def write(self, copilot_home: Path) -> Path:
        dest = copilot_home / "session-state" / self.sid / "events.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        os.utime(dest, (self.t.timestamp(), self.t.timestamp()))
        return dest
