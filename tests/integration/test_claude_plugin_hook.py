"""The Claude Code plugin (claude-plugin/): its manifest agrees with ``kenning install``'s hooks, and
its hook script, run as a real ``sh`` process fed a real payload, hands the event to the installed
``kenning`` or, without one, tells the user at SessionStart, and always exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kenning.integrations import claude_code as cc
from tests.conftest import REPO, Home

PLUGIN = REPO / "claude-plugin"
SCRIPT = PLUGIN / "hooks" / "kenning-hook.sh"


def test_the_plugin_installs_the_hooks_kenning_install_does() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(cc.EVENTS)
    for event, (matcher, timeout) in cc.EVENTS.items():
        [group] = hooks[event]
        assert group.get("matcher") == (cc.tool_matcher() if matcher == "*" else matcher), event
        [handler] = group["hooks"]
        assert handler == {"type": "command", "command": "sh", "timeout": timeout,
                           "args": ["${CLAUDE_PLUGIN_ROOT}/hooks/kenning-hook.sh", event]}
    [(name, mcp)] = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"].items()
    assert name == cc.MCP_SERVER_NAME and mcp["command"] == "sh" and mcp["args"][-1].endswith('exec "$k" mcp')
    # Claude Code updates an installed plugin only when its version changes: it is Kenning's.
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())["version"] == version
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    [entry] = market["plugins"]
    assert entry["name"] == "kenning" and (REPO / entry["source"] / ".claude-plugin" / "plugin.json").exists()


def run(event: str, payload: dict[str, str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(SCRIPT), event], input=json.dumps(payload), env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def user(home: Home, tmp_path: Path) -> dict[str, str]:
    """The environment Claude Code gives a hook: a HOME of the user's and a PATH without kenning."""
    (tmp_path / "user").mkdir()
    (tmp_path / "bin").mkdir()
    path = [d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "kenning"))]
    env = {**home.env, "HOME": str(tmp_path / "user"), "PATH": os.pathsep.join([str(tmp_path / "bin"), *path])}
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


def fake_kenning(env: dict[str, str], body: str) -> Path:
    path = Path(env["PATH"].split(os.pathsep)[0]) / "kenning"
    path.write_text(body)
    path.chmod(0o755)
    return path


def test_without_kenning_session_start_tells_the_user_and_nothing_fails(user: dict[str, str], home: Home) -> None:
    r = run("SessionStart", {"session_id": "s1", "cwd": str(home.project), "source": "startup"}, user)
    assert r.returncode == 0 and r.stderr == ""
    message = json.loads(r.stdout)["systemMessage"]
    assert "kenning command is not installed" in message and "not remembered" in message
    r = run("PostToolUse", {"session_id": "s1", "cwd": str(home.project), "tool_name": "Bash"}, user)
    assert (r.returncode, r.stdout) == (0, "")
    assert not home.data.exists()


def test_the_installed_kenning_gets_the_event(user: dict[str, str], home: Home) -> None:
    # A console script as pip or uv writes it: its interpreter on the first line.
    fake_kenning(user, f"#!{sys.executable}\nimport sys\nfrom kenning.__main__ import main\nsys.exit(main())\n")
    prompt = {"session_id": "s1", "cwd": str(home.project), "hook_event_name": "UserPromptSubmit",
              "prompt": "Round VAT per line."}
    r = run("UserPromptSubmit", prompt, user)
    assert r.returncode == 0, r.stderr
    assert home.spool_depth() == 1  # captured by the real hook, durable in the spool
    # Any other kind of command: run as `kenning hook claude-code EVENT`.
    fake_kenning(user, f"#!/bin/sh\nexec {sys.executable} -m kenning \"$@\"\n")
    r = run("UserPromptSubmit", {**prompt, "prompt": "And per invoice."}, user)
    assert r.returncode == 0, r.stderr
    assert home.spool_depth() == 2


def test_the_mcp_server_is_the_installed_kenning_s(user: dict[str, str], home: Home) -> None:
    """The plugin's MCP command, run as Claude Code runs it, answers the MCP handshake: from PATH, and
    from ~/.local/bin when PATH lacks it (where uv, pipx and scripts/install.sh put the command)."""
    mcp = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["kenning"]
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}) + "\n"
    script = f"#!{sys.executable}\nimport sys\nfrom kenning.__main__ import main\nsys.exit(main())\n"
    local = Path(user["HOME"]) / ".local" / "bin" / "kenning"
    for where in ("PATH", "~/.local/bin"):
        if where == "PATH":
            fake_kenning(user, script)
        else:
            Path(user["PATH"].split(os.pathsep)[0], "kenning").unlink()
            local.parent.mkdir(parents=True)
            local.write_text(script)
            local.chmod(0o755)
        r = subprocess.run([mcp["command"], *mcp["args"]], input=hello, env=user, capture_output=True, text=True,
                           timeout=60)
        answer = json.loads(r.stdout.splitlines()[0])
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "kenning", (where, r.stdout, r.stderr)


def test_a_broken_kenning_never_fails_the_session(user: dict[str, str], home: Home) -> None:
    fake_kenning(user, "#!/bin/sh\necho boom >&2\nexit 1\n")
    assert run("Stop", {"session_id": "s1", "cwd": str(home.project)}, user).returncode == 0
    fake_kenning(user, f"#!{sys.executable}\nraise SystemExit(3)\n")
    user["PYTHONPATH"] = "/nonexistent"  # -I ignores it either way; kenning is not importable by that path
    assert run("Stop", {"session_id": "s1", "cwd": str(home.project)}, user).returncode == 0


def test_the_plugin_stands_aside_when_kenning_install_hooks_are_in_settings(user: dict[str, str],
                                                                             home: Home) -> None:
    marker = Path(user["HOME"]) / "ran"
    fake_kenning(user, f"#!/bin/sh\ntouch {marker}\n")
    settings = Path(user["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [cc.hook_handler("Stop", 10)]}]}}))
    assert run("Stop", {"session_id": "s1", "cwd": str(home.project)}, user).returncode == 0
    assert not marker.exists()  # one capture per event: the settings hooks make it
    settings.write_text("{}")
    assert run("Stop", {"session_id": "s1", "cwd": str(home.project)}, user).returncode == 0
    assert marker.exists()
