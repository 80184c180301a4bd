"""The MCP server through the real Claude Code CLI, offline against the fake Messages API.

``kenning install`` puts the hooks in a scratch ``~/.claude/settings.json`` and registers the
MCP server in ``~/.claude.json`` (user scope). Session 1 creates, breaks and fixes ``calc.py``
(the hooks and the worker turn that into observations). In session 2 the fake model looks the
tool up with ToolSearch (as a real model must: MCP schemas are deferred), calls
``mcp__kenning__search_memory`` and then ``get_observations``; the tool results it receives in
its next requests must hold session 1's bugfix, found by Claude Code's own MCP client.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import claude_env, kenning_cli, run_claude, scratch_env
from tests.support.fake_anthropic import (
    FakeAnthropic,
    first_prompt_text,
    request_kind,
    script_by_prompt,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""
SEARCH = "mcp__kenning__search_memory"
GET = "mcp__kenning__get_observations"


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """tool_use_id -> the text of its tool_result, from a request's messages."""
    out: dict[str, str] = {}
    for msg in body.get("messages") or []:
        content = msg.get("content")
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "\n".join(str(b.get("text", json.dumps(b))) if isinstance(b, dict) else str(b)
                                      for b in inner)
                out[str(block.get("tool_use_id"))] = str(inner)
    return out


def tool_uses(body: dict[str, Any]) -> dict[str, str]:
    """tool_use_id -> tool name, from the assistant turns of a request."""
    out: dict[str, str] = {}
    for msg in body.get("messages") or []:
        if msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    out[str(block.get("id"))] = str(block.get("name"))
    return out


def results_of(body: dict[str, Any], tool: str) -> list[str]:
    uses = tool_uses(body)
    return [res for tid, res in tool_results(body).items() if uses.get(tid) == tool]


def wait_for_bugfix(db: Path, timeout: float = 60) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            conn = sqlite3.connect(db, timeout=10)
            try:
                row = conn.execute("SELECT id, title FROM observations WHERE type = 'bugfix' ORDER BY id").fetchone()
            except sqlite3.Error:
                row = None
            finally:
                conn.close()
            if row:
                return int(row[0]), str(row[1])
        time.sleep(0.25)
    raise AssertionError("session 1 left no bugfix observation")


def test_the_model_finds_past_work_through_the_mcp_search_tool(claude_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "calc-project", unset=("CLAUDE_PROJECT_DIR",),
                                                 KENNING_PROVIDER="rules")
    installed = kenning_cli(env, "install", "--no-start")
    assert installed.returncode == 0, installed.stderr
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["kenning"]
    assert entry["args"] == ["-I", "-m", "kenning", "mcp"] and entry["env"] == {"KENNING_DATA_DIR": str(data)}

    calc = project / "calc.py"
    session1 = [
        [tool_use("Write", {"file_path": str(calc), "content": "def add(a, b):\n    return a - b\n"})],
        [tool_use("Bash", {"command": CHECK, "description": "Check add"})],
        [tool_use("Edit", {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b"})],
        [tool_use("Bash", {"command": CHECK, "description": "Check add again"})],
        [text("Fixed: add() now adds.")],
    ]
    bug: dict[str, Any] = {}
    session2 = [
        # A real model must load deferred MCP schemas first; searching by plain words proves the
        # tool is findable by its name and description. The reply takes a moment, as a real model's
        # would (the server answers its handshake in ~50 ms; this leaves room on a loaded machine).
        {"content": [tool_use("ToolSearch", {"query": "search memory of past sessions", "max_results": 5})],
         "delay": 2},
        [tool_use(SEARCH, {"query": "add broken"})],
        [tool_use(GET, {"ids": ["filled in by script()"]})],
        [text("The add() bug was fixed last time.")],
    ]
    session1_script = script_by_prompt({"calc.py": session1})

    def script(body: dict[str, Any]) -> Any:
        if request_kind(body) != "main" or "add() bug" not in first_prompt_text(body):
            return session1_script(body)
        # After ToolSearch, Claude Code adds a plain "Tool loaded." user text, which the fake's
        # step_index takes for a new prompt: count this session's tool results instead.
        step = session2[min(len(tool_results(body)), len(session2) - 1)]
        if isinstance(step, list) and step[0].get("name") == GET:
            # The bugfix's id is known only once session 1 is stored: filled in at call time.
            return [tool_use(GET, {"ids": [bug["id"]]})]
        return step

    # The hooks (and the worker they start) see only the CLI's clean environment. The rules
    # observer is pinned: with the CLI's dummy ANTHROPIC_API_KEY, "auto" would pick an LLM
    # observer and send it to the fake API, which answers prose.
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}
    with FakeAnthropic(script=script) as fake:
        first = run_claude("Create calc.py with an add function and make sure it works.", cwd=project, home=home,
                           base_url=fake.base_url, extra_env=hook_env, timeout=180, claude_bin=claude_bin)
        assert first["rc"] == 0, first["stderr"] or first["stdout"]
        bug["id"], bug["title"] = wait_for_bugfix(data / "kenning.db")
        n_first = len(fake.requests_of("main"))
        second = run_claude("Remember the add() bug? What was it?", cwd=project, home=home,
                            base_url=fake.base_url, extra_env=hook_env, timeout=180, claude_bin=claude_bin)
        assert second["rc"] == 0, second["stderr"] or second["stdout"]
        main = [r["body"] for r in fake.requests_of("main")[n_first:]]
    (tmp_path / "session2-requests.json").write_text(json.dumps(main, indent=1, ensure_ascii=False))
    (tmp_path / "session2-result.json").write_text(second["stdout"] + "\n" + second["stderr"])

    try:
        last = main[-1]
        everything = json.dumps([r.get("messages") for r in main], ensure_ascii=False)
        # Plain words found the tool through Claude Code's own ToolSearch, ranked first.
        found = results_of(last, "ToolSearch")
        assert found and found[0].find(f'"tool_name": "{SEARCH}"') == found[0].find('"tool_name"') >= 0, found
        searched = results_of(last, SEARCH)
        assert len(searched) == 1, everything[-3000:]
        # What Claude Code handed back to the model from our server: the compact row of the bugfix.
        assert f"#{bug['id']} " in searched[0], searched[0]
        assert " bugfix " in searched[0]
        assert bug["title"][:60] in searched[0], (bug["title"], searched[0])
        assert "project calc-project" in searched[0]
        records = results_of(last, GET)
        assert len(records) == 1 and f"#{bug['id']} [bugfix]" in records[0], records
        assert "calc.py" in records[0]
        # The MCP calls are ours: the hooks must not have captured them as new observations.
        conn = sqlite3.connect(data / "kenning.db", timeout=10)
        captured = conn.execute("SELECT COUNT(*) FROM events WHERE tool_name LIKE 'mcp__kenning__%'").fetchone()[0]
        conn.close()
        assert captured == 0
        log = (data / "logs" / "mcp.log").read_text()
        assert "MCP server starting" in log and "Traceback" not in log
    finally:
        kenning_cli(env, "worker", "stop")
        removed = kenning_cli(env, "uninstall", "--keep-worker")
    assert "Removed Kenning's MCP server" in removed.stdout, removed.stdout + removed.stderr
    # Claude Code wrote its own state into ~/.claude.json meanwhile: only our entry is gone.
    left = json.loads((home / ".claude.json").read_text())
    assert "kenning" not in left.get("mcpServers", {}) and len(left) > 0


def test_claude_mcp_get_sees_the_registered_server(claude_bin: str, tmp_path: Path) -> None:
    """Claude Code's own `claude mcp get` reads the entry and connects to the server."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "KENNING_DATA_DIR": str(tmp_path / "data")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    assert kenning_cli(env, "install", "--no-start").returncode == 0
    r = subprocess.run([claude_bin, "mcp", "get", "kenning"], env=claude_env(home, "http://127.0.0.1:9"),
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "User config" in out or "user" in out.lower(), out
    assert "-m kenning mcp" in out or "kenning mcp" in out, out
    assert "Connected" in out or "✓" in out, out
    kenning_cli(env, "uninstall", "--keep-worker")
