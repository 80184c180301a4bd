"""``kenning install``'s "Found N past session(s) not in memory yet" counts only sessions that are not:
a session the hooks captured live (real hook processes, a real worker) is in memory already, whether
its file names its id (Claude Code ``<id>.jsonl``, Codex ``rollout-<time>-<id>.jsonl``) or only its
first line does (a rollout named otherwise)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

from tests.conftest import FIXTURES, Home

HISTORY = FIXTURES.parent / "history"
CC_LIVE = "3f0c2d1e-5b6a-4c7d-8e9f-a0b1c2d3e4f5"
CODEX_LIVE = "019e0a1b-2c3d-7e4f-8a9b-0c1d2e3f4a5b"  # named in its file's name
CODEX_LIVE_META = "01a233b8-f3e6-79b2-a8eb-ea4a2a86d1cd"  # named only in its session_meta line


def _hook(home: Home, agent: str, event: str, payload: dict[str, str]) -> None:
    r = subprocess.run([home.python, "-I", "-m", "kenning", "hook", agent, event],
                       input=json.dumps(payload).encode(), env=home.env, capture_output=True,
                       timeout=30, cwd=str(home.project))
    assert r.returncode == 0, r.stderr


def test_sessions_captured_live_are_not_offered_for_import(home: Home, tmp_path: Path) -> None:
    user = tmp_path / "user"
    shutil.copytree(HISTORY / "claude-code", user / ".claude" / "projects")
    sessions = user / ".codex" / "sessions" / "2026" / "06" / "01"
    shutil.copytree(HISTORY / "codex", sessions)
    shutil.copy(FIXTURES.parent / "codex" / "rollout-calc-session.jsonl", sessions)
    home.env.update(HOME=str(user), KENNING_PROVIDER="rules")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        home.env.pop(var, None)

    before = home.kenning("install", "--no-start")
    assert before.returncode == 0, before.stderr
    assert "Found 6 past session(s) not in memory yet (Claude Code 3, Codex CLI 3)" in before.stdout, before.stdout

    home.start_worker()
    cwd = str(home.project)
    _hook(home, "claude-code", "SessionStart", {"session_id": CC_LIVE, "cwd": cwd, "source": "startup",
                                                "hook_event_name": "SessionStart"})
    _hook(home, "claude-code", "UserPromptSubmit", {"session_id": CC_LIVE, "cwd": cwd, "prompt": "Add refunds.",
                                                    "hook_event_name": "UserPromptSubmit"})
    for sid in (CODEX_LIVE, CODEX_LIVE_META):
        _hook(home, "codex", "SessionStart", {"session_id": sid, "cwd": cwd, "source": "startup",
                                              "hook_event_name": "SessionStart"})
        _hook(home, "codex", "UserPromptSubmit", {"session_id": sid, "cwd": cwd, "prompt": "Fix the sum.",
                                                  "hook_event_name": "UserPromptSubmit"})
    deadline = time.monotonic() + 30
    while home.spool_depth() and time.monotonic() < deadline:  # ingested (the turns stay open: no flush)
        time.sleep(0.1)
    assert home.spool_depth() == 0

    after = home.kenning("install", "--no-start")
    assert after.returncode == 0, after.stderr
    assert "Found 3 past session(s) not in memory yet (Claude Code 2, Codex CLI 1)" in after.stdout, after.stdout
