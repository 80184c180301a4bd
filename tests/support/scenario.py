"""Multi-session scenarios through the real hooks, then a probe session whose injected context is checked.

A scenario is a few coding sessions in one or more repositories, written as data: each turn is
a prompt, the tool calls the agent made (with their real payload shapes: Bash, Edit, Write, Read,
failures), what the agent said along the way (written to a real transcript JSONL at
``transcript_path``, as Claude Code does) and its last message (the Stop payload). Every event
goes through a real ``kenning hook claude-code <event>`` process into one real worker per
scenario. Then a probe session starts in a chosen checkout: its SessionStart context, the
context next to its probe prompt (UserPromptSubmit) and next to a Read of a chosen file
(PreToolUse) are collected, and what must and must not appear is checked in all of them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import Home

HISTORY_ENV = {"KENNING_PROMPT_CONTEXT": "false"}  # the probe's prompt is the one that asks for memories
PROBE_ENV = {"KENNING_PROMPT_CONTEXT_TIMEOUT_MS": "1500", "KENNING_CONTEXT_TIMEOUT_MS": "1500",
             "KENNING_FILE_CONTEXT_TIMEOUT_MS": "1500"}


# ------------------------------------------------------------------------------ tool calls

@dataclass
class Tool:
    name: str
    input: dict[str, Any]
    response: Any = None
    error: str | None = None  # set: PostToolUseFailure


def bash(command: str, stdout: str = "", *, fails: str | None = None) -> Tool:
    if fails is not None:
        return Tool("Bash", {"command": command}, error=f"Exit code 1\n{fails}")
    return Tool("Bash", {"command": command}, {"stdout": stdout, "stderr": "", "interrupted": False,
                                               "isImage": False})


def edit(path: str, old: str, new: str) -> Tool:
    return Tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                {"filePath": path, "oldString": old, "newString": new, "structuredPatch": [], "userModified": False})


def write(path: str, content: str) -> Tool:
    return Tool("Write", {"file_path": path, "content": content},
                {"type": "create", "filePath": path, "content": content, "structuredPatch": []})


def read(path: str) -> Tool:
    return Tool("Read", {"file_path": path}, {"type": "text", "file": {"filePath": path, "content": ""}})


@dataclass
class Turn:
    prompt: str
    tools: list[Tool] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # the agent's text along the way (transcript)
    last: str = "Done."                             # the agent's last message (Stop payload)


@dataclass
class Session:
    turns: list[Turn]
    repo: str = "main"  # which checkout of the scenario (a key of Scenario.repos)


@dataclass
class Probe:
    repo: str = "main"
    prompt: str = ""
    read: str = ""  # a path relative to the checkout, read by the probe session


@dataclass
class Scenario:
    name: str
    sessions: list[Session]
    probe: Probe
    must: list[str] = field(default_factory=list)      # substrings of the probe's injected context
    must_not: list[str] = field(default_factory=list)  # substrings, or /regex/ between slashes
    repos: dict[str, str] = field(default_factory=lambda: {"main": "project"})  # key -> path under the root
    files: dict[str, str] = field(default_factory=dict)  # "repo:path" -> content created before the sessions
    worktree: dict[str, str] = field(default_factory=dict)  # key -> key of the checkout it is a worktree of


@dataclass
class Injected:
    session_start: str
    prompt: str
    read: str

    @property
    def all(self) -> str:
        return "\n".join((self.session_start, self.prompt, self.read))


# ---------------------------------------------------------------------------------- runner

class Runner:
    """Plays a scenario through real hook processes and one real worker."""

    def __init__(self, home: Home, scenario: Scenario) -> None:
        self.home = home
        self.sc = scenario
        self.root = home.root / "repos"
        self.transcripts = home.root / "transcripts"
        self.transcripts.mkdir(parents=True, exist_ok=True)
        self.dirs: dict[str, Path] = {}

    def checkouts(self) -> None:
        for key, rel in self.sc.repos.items():
            d = self.root / rel
            if key in self.sc.worktree:
                main = self.dirs[self.sc.worktree[key]]
                _git(main, "worktree", "add", "-q", "-b", f"wt-{key}", str(d))
            else:
                d.mkdir(parents=True, exist_ok=True)
                _git(d, "init", "-q")
                (d / "README.md").write_text(f"# {rel}\n")
                _git(d, "add", "README.md")
                _git(d, "commit", "-q", "-m", "init")
            self.dirs[key] = d
        for where, content in self.sc.files.items():
            key, _, rel = where.partition(":")
            path = self.dirs[key] / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)

    def hook(self, event: str, payload: dict[str, Any], cwd: Path, env: dict[str, str]) -> dict[str, Any] | None:
        r = subprocess.run([sys.executable, "-I", "-m", "kenning", "hook", "claude-code", event],
                           input=json.dumps(payload).encode(), env={**self.home.env, **env}, capture_output=True,
                           timeout=60, cwd=str(cwd))
        assert r.returncode == 0, r.stderr[-2000:]
        out = r.stdout.decode().strip()
        return json.loads(out) if out else None

    def play(self) -> None:
        self.checkouts()
        self.home.start_worker()
        for session in self.sc.sessions:
            self._session(session)
        self.home.flush(timeout=60)

    def _session(self, session: Session) -> None:
        cwd = self.dirs[session.repo]
        sid = str(uuid.uuid4())
        transcript = self.transcripts / f"{sid}.jsonl"
        base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(cwd)}
        self.hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, cwd, HISTORY_ENV)
        for turn in session.turns:
            pid = str(uuid.uuid4())
            self._transcript(transcript, {"type": "user", "promptId": pid, "isSidechain": False,
                                          "message": {"role": "user", "content": turn.prompt}})
            self.hook("UserPromptSubmit", {**base, "prompt_id": pid, "hook_event_name": "UserPromptSubmit",
                                           "permission_mode": "bypassPermissions", "prompt": turn.prompt},
                      cwd, HISTORY_ENV)
            for i, text in enumerate(turn.said):
                self._assistant(transcript, text)
                if i < len(turn.tools):
                    self._tool(base, pid, turn.tools[i], cwd)
            for tool in turn.tools[len(turn.said):]:
                self._tool(base, pid, tool, cwd)
            self._assistant(transcript, turn.last)
            self.hook("Stop", {**base, "prompt_id": pid, "hook_event_name": "Stop", "stop_hook_active": False,
                               "last_assistant_message": turn.last}, cwd, HISTORY_ENV)
        self.hook("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}, cwd, HISTORY_ENV)

    def _tool(self, base: dict[str, Any], pid: str, tool: Tool, cwd: Path) -> None:
        inp = {k: (str(cwd / v) if k == "file_path" else v) for k, v in tool.input.items()}
        if tool.name in ("Edit", "Write") and "file_path" in tool.input:
            path = cwd / tool.input["file_path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            text = tool.input.get("content") or (path.read_text() if path.exists() else "")
            if tool.name == "Edit":
                text = text.replace(tool.input["old_string"], tool.input["new_string"]) if text else \
                    tool.input["new_string"]
            path.write_text(text)
        resp = tool.response
        if isinstance(resp, dict) and "filePath" in resp:
            resp = {**resp, "filePath": inp["file_path"]}
        if isinstance(resp, dict) and isinstance(resp.get("file"), dict):
            path = Path(inp["file_path"])
            resp = {**resp, "file": {**resp["file"], "filePath": str(path),
                                     "content": path.read_text() if path.exists() else "x" * 400}}
        payload = {**base, "prompt_id": pid, "tool_name": tool.name, "tool_input": inp,
                   "tool_use_id": f"toolu_{uuid.uuid4().hex[:20]}", "permission_mode": "bypassPermissions"}
        if tool.error is not None:
            self.hook("PostToolUseFailure", {**payload, "hook_event_name": "PostToolUseFailure",
                                             "error": tool.error, "is_interrupt": False}, cwd, HISTORY_ENV)
        else:
            self.hook("PostToolUse", {**payload, "hook_event_name": "PostToolUse", "tool_response": resp}, cwd,
                      HISTORY_ENV)

    def _assistant(self, transcript: Path, text: str) -> None:
        self._transcript(transcript, {"type": "assistant", "isSidechain": False, "message": {
            "id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}]}})

    @staticmethod
    def _transcript(path: Path, line: dict[str, Any]) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def probe(self) -> Injected:
        p = self.sc.probe
        cwd = self.dirs[p.repo]
        sid = str(uuid.uuid4())
        base = {"session_id": sid, "transcript_path": str(self.transcripts / f"{sid}.jsonl"), "cwd": str(cwd)}
        start = _context(self.hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"},
                                   cwd, PROBE_ENV), "SessionStart")
        self.home.flush(timeout=60)  # the probe's own SessionStart is ingested before its prompt
        prompt = ""
        if p.prompt:
            prompt = _context(self.hook("UserPromptSubmit", {**base, "prompt_id": str(uuid.uuid4()),
                                                             "hook_event_name": "UserPromptSubmit",
                                                             "prompt": p.prompt}, cwd, PROBE_ENV),
                              "UserPromptSubmit", optional=True)
        text = ""
        if p.read:
            path = cwd / p.read
            assert path.exists(), f"the probe reads {path}, which the scenario did not create"
            text = _context(self.hook("PreToolUse", {**base, "hook_event_name": "PreToolUse", "tool_name": "Read",
                                                     "tool_input": {"file_path": str(path)},
                                                     "tool_use_id": "toolu_probe"}, cwd, PROBE_ENV),
                            "PreToolUse", optional=True)
        return Injected(start, prompt, text)


def _context(out: dict[str, Any] | None, event: str, *, optional: bool = False) -> str:
    if out is None:
        assert optional, f"{event} printed nothing"
        return ""
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == event
    text = str(hso["additionalContext"])
    assert text.startswith("<kenning-context>") and text.endswith("</kenning-context>") and len(text) < 10_000
    return text


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})


def check(scenario: Scenario, got: Injected) -> list[str]:
    """What is wrong with the injected context (empty: the scenario passes)."""
    text = got.all
    problems = [f"missing: {m!r}" for m in scenario.must if m not in text]
    for bad in scenario.must_not:
        if bad.startswith("/") and bad.endswith("/") and len(bad) > 2:
            if re.search(bad[1:-1], text, re.M):
                problems.append(f"must not match: {bad}")
        elif bad in text:
            problems.append(f"must not appear: {bad!r}")
    return problems
