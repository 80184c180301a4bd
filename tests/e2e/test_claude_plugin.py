"""Kenning as a Claude Code plugin, through the real CLI, offline against the fake Messages API.

The repository is a plugin marketplace: ``claude plugin validate --strict`` accepts it and the plugin;
``claude plugin marketplace add <checkout>`` + ``claude plugin install kenning@kenning`` set it up in a
scratch HOME (nothing else is installed: no ``kenning install``); its MCP server connects; a
``claude -p`` session's prompt and tool calls reach memory through the plugin's hooks, and the next
session is told what the first did. The ``kenning`` the hooks call is this checkout's wheel, on PATH.
Without ``kenning`` on PATH (the plugin installed in one step, ``claude plugin install kenning
--marketplace <checkout>``) the session still succeeds, and nothing is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_install_routes import checkout_copy
from tests.support.claude_cli import claude_env, run_claude, scratch_env
from tests.support.fake_anthropic import FakeAnthropic, script_by_prompt, text, tool_use

pytestmark = pytest.mark.e2e


def plugin_cli(claude_bin: str, home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = claude_env(home, "http://127.0.0.1:9", {"PATH": path} if path else None)
    return subprocess.run([claude_bin, "plugin", *args], env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=home)


@pytest.fixture
def marketplace(tmp_path: Path) -> Path:
    return checkout_copy(tmp_path / "kenning-checkout")


def test_the_repository_validates_as_a_marketplace_and_a_plugin(claude_bin: str, tmp_path: Path,
                                                                 marketplace: Path) -> None:
    (tmp_path / "h").mkdir()
    for target in (marketplace, marketplace / "claude-plugin"):
        r = plugin_cli(claude_bin, tmp_path / "h", "validate", "--strict", str(target))
        assert r.returncode == 0 and "Validation passed" in r.stdout, r.stdout + r.stderr


def test_installed_plugin_captures_a_session_and_tells_the_next(claude_bin: str, kenning_wheel: Path,
                                                                tmp_path: Path, marketplace: Path) -> None:
    home, project, data, port, _env = scratch_env(tmp_path, "calc-project")
    # The user's PATH holds an installed kenning (here: this checkout's wheel in a venv).
    path = os.pathsep.join([str(kenning_wheel.parent), os.environ.get("PATH", "/usr/bin:/bin")])
    r = plugin_cli(claude_bin, home, "marketplace", "add", str(marketplace), path=path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = plugin_cli(claude_bin, home, "install", "kenning@kenning", path=path)
    assert r.returncode == 0 and "Successfully installed" in r.stdout, r.stdout + r.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {"kenning@kenning": True} and "hooks" not in settings
    listed = plugin_cli(claude_bin, home, "list", path=path).stdout
    assert "kenning@kenning" in listed and "enabled" in listed.split("kenning@kenning", 1)[1].split("❯")[0], listed

    hook_env = {"PATH": path, "KENNING_DATA_DIR": str(data), "KENNING_PORT": port, "KENNING_PROVIDER": "rules"}
    mcp = subprocess.run([claude_bin, "mcp", "list"], env=claude_env(home, "http://127.0.0.1:9", hook_env),
                         cwd=project, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert "plugin:kenning:kenning" in mcp.stdout and "Connected" in mcp.stdout, mcp.stdout + mcp.stderr

    calc = project / "calc.py"
    session1 = [[tool_use("Write", {"file_path": str(calc), "content": "def add(a, b):\n    return a + b\n"})],
                [tool_use("Bash", {"command": "python3 -B -c 'import calc; assert calc.add(2, 2) == 4'",
                                   "description": "Check add"})],
                [text("calc.py adds two numbers; the check passes.")]]
    script = script_by_prompt({"calc.py": session1, "last time": [[text("Noted.")]]})
    try:
        with FakeAnthropic(script=script) as fake:
            first = run_claude("Create calc.py with an add function and check it.", cwd=project, home=home,
                               base_url=fake.base_url, extra_env=hook_env, timeout=180, claude_bin=claude_bin)
            assert first["rc"] == 0, first["stderr"] or first["stdout"]
            n_first = len(fake.requests_of("main"))
            second = run_claude("What did we do last time?", cwd=project, home=home, base_url=fake.base_url,
                                extra_env=hook_env, timeout=180, claude_bin=claude_bin)
            assert second["rc"] == 0, second["stderr"] or second["stdout"]
            main = fake.requests_of("main")
        conn = sqlite3.connect(data / "kenning.db")
        try:
            prompts = [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts")]
            tools = {r[0] for r in conn.execute("SELECT tool_name FROM events WHERE tool_name IS NOT NULL")}
            titles = [r[0] for r in conn.execute("SELECT title FROM observations")]
        finally:
            conn.close()
        assert "Create calc.py with an add function and check it." in prompts, prompts
        assert {"Write", "Bash"} <= tools, tools
        assert titles, "the observer made no memory of session 1"
        told = json.dumps(main[n_first]["body"]["messages"][0])
        assert "kenning-context" in told and "calc.py" in told, told[:2000]
        doctor = subprocess.run([str(kenning_wheel.parent / "kenning"), "doctor", "--json"], capture_output=True,
                                text=True, timeout=120, env={**claude_env(home, "http://127.0.0.1:9", hook_env)})
        check = next(c for c in json.loads(doctor.stdout) if c["check"] == "Claude Code hooks")
        assert check["ok"] and "Kenning plugin (kenning@kenning)" in check["detail"], check
    finally:
        subprocess.run([str(kenning_wheel.parent / "kenning"), "worker", "stop"], capture_output=True, timeout=60,
                       env={**os.environ, "KENNING_DATA_DIR": str(data), "KENNING_PORT": port})


def test_without_kenning_the_session_still_succeeds(claude_bin: str, tmp_path: Path, marketplace: Path) -> None:
    home, project, data, port, _env = scratch_env(tmp_path, "calc-project")
    path = os.pathsep.join(d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "kenning")))
    # The one-step form: the marketplace is added on the way.
    r = plugin_cli(claude_bin, home, "install", "kenning", "--marketplace", str(marketplace), path=path)
    assert r.returncode == 0 and "Successfully installed plugin: kenning@kenning" in r.stdout, r.stdout + r.stderr
    hook_env = {"PATH": path, "KENNING_DATA_DIR": str(data), "KENNING_PORT": port}
    with FakeAnthropic(script=script_by_prompt({"hello": [[text("Hello.")]]})) as fake:
        r = run_claude("Say hello.", cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env,
                       timeout=180, claude_bin=claude_bin)
    assert r["rc"] == 0 and r["json"] and not r["json"].get("is_error"), r["stderr"] or r["stdout"]
    assert not data.exists()
