"""The `claude` provider's pure parts: failure classes, usage, credentials, env, options.

Runs without claude-agent-sdk except the options tests, which skip when it is absent. The
real CLI against the fake API is in tests/integration/test_claude_agent_provider_cli.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.observer.llm import claude_agent
from kenning.observer.llm.base import ProviderError
from kenning.observer.llm.claude_agent import (
    BUILTIN_TOOLS,
    ClaudeAgentProvider,
    classify_failure,
    credentials_present,
    usage_from,
)

HAS_SDK = importlib.util.find_spec("claude_agent_sdk") is not None
needs_sdk = pytest.mark.skipif(not HAS_SDK, reason="claude-agent-sdk not installed (extra 'claude')")


# ---- failure classes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status", "message", "kind"),
    [
        # What the bundled CLI 2.1.332 reports (observed against the fake API).
        ("authentication_failed", 401, "Invalid API key · Fix external API key", "auth"),
        ("authentication_failed", 403, "Failed to authenticate. API Error: 403 forbidden", "auth"),
        ("authentication_failed", None, "Not logged in · Please run /login", "auth"),
        ("rate_limit", 429, "API Error: Request rejected (429) · rate limited", "quota"),
        ("billing_error", None, "Credit balance is too low", "quota"),
        ("server_error", 500, "API Error: 500 fake: scripted 500.", "transient"),
        ("invalid_request", 400, "Prompt is too long", "fatal"),
        # No structured code: the text decides.
        (None, None, "Claude AI usage limit reached|1767225600", "quota"),
        (None, None, "You've hit your limit · resets 5pm", "quota"),
        (None, None, "OAuth token has expired. Please run /login", "auth"),
        (None, 529, "Overloaded", "transient"),
        (None, 413, "request_too_large", "fatal"),
        (None, None, "something odd happened", "transient"),
        ("unknown", None, "", "transient"),
    ],
)
def test_classify_failure(error: str | None, status: int | None, message: str, kind: str) -> None:
    assert classify_failure(error, status, message) == kind


def test_process_failures_are_transient_and_carry_stderr() -> None:
    class ProcessError(Exception):  # same name as the SDK's: mapping goes by name, no import
        pass

    tail = claude_agent.collections.deque(["boom: segfault"])
    err = claude_agent._as_provider_error(ProcessError("Command failed with exit code 1"), tail)
    assert err.kind == "transient"
    assert "exit code 1" in str(err) and "segfault" in str(err)

    class CLINotFoundError(Exception):
        pass

    assert claude_agent._as_provider_error(CLINotFoundError("nope")).kind == "fatal"


def test_usage_from_result_message() -> None:
    raw = {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 3,
        "server_tool_use": {"web_search_requests": 0},
    }
    u = usage_from(raw)
    assert (u.tokens_in, u.tokens_out, u.cache_read, u.cache_write) == (100, 20, 7, 3)
    assert usage_from(None).total == 0
    assert usage_from({"input_tokens": "x"}).tokens_in == 0


# ---- credentials ----------------------------------------------------------------------------


def test_credentials_from_env(tmp_path: Path) -> None:
    home = str(tmp_path)
    ok, why = credentials_present({"ANTHROPIC_API_KEY": "k", "HOME": home})
    assert ok and why == "credentials from $ANTHROPIC_API_KEY"
    assert credentials_present({"CLAUDE_CODE_OAUTH_TOKEN": "t", "HOME": home})[0]
    assert credentials_present({"CLAUDE_CODE_USE_BEDROCK": "1", "HOME": home})[0]
    ok, why = credentials_present({"ANTHROPIC_API_KEY": "", "HOME": home})
    assert not ok and "/login" in why


def test_credentials_from_login_file(tmp_path: Path) -> None:
    creds = tmp_path / ".claude" / ".credentials.json"
    creds.parent.mkdir()
    creds.write_text("{}")
    assert not credentials_present({"HOME": str(tmp_path)})[0]  # an empty store is no login
    creds.write_text('{"claudeAiOauth": {"accessToken": "SECRET"}}')
    ok, why = credentials_present({"HOME": str(tmp_path)})
    assert ok and str(creds) in why and "SECRET" not in why


def test_credentials_follow_claude_config_dir(tmp_path: Path) -> None:
    conf = tmp_path / "elsewhere"
    conf.mkdir()
    (conf / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    assert not credentials_present({"HOME": str(tmp_path)})[0]
    assert credentials_present({"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(conf)})[0]


def test_available_without_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(claude_agent.importlib.util, "find_spec", lambda name: None)
    ok, why = ClaudeAgentProvider(data_dir=str(tmp_path)).available()
    assert not ok and "claude-agent-sdk is not installed" in why and "kenning extras add claude" in why


def test_available_without_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_sdk = tmp_path / "sdk"
    (fake_sdk / "_bundled").mkdir(parents=True)
    cli = fake_sdk / "_bundled" / "claude"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    spec = importlib.util.spec_from_file_location("claude_agent_sdk", fake_sdk / "__init__.py")
    monkeypatch.setattr(claude_agent.importlib.util, "find_spec", lambda name: spec)
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    provider = ClaudeAgentProvider(data_dir=str(tmp_path / "data"), env={"HOME": str(tmp_path)})
    ok, why = provider.available()
    assert not ok and "no Claude Code login" in why
    env = {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
    provider = ClaudeAgentProvider(data_dir=str(tmp_path / "data"), env=env)
    ok, why = provider.available()
    assert ok and str(cli) in why and "$ANTHROPIC_API_KEY" in why


def test_send_without_sdk_is_fatal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    provider = ClaudeAgentProvider(data_dir=str(tmp_path))

    def no_sdk(*a: object, **k: object) -> None:
        raise ImportError("No module named 'claude_agent_sdk'")

    monkeypatch.setattr(provider, "options", no_sdk)
    conv = provider.open("system")
    with pytest.raises(ProviderError) as exc:
        conv.send("hi", model="m", max_tokens=10)
    assert exc.value.kind == "fatal"
    conv.close()
    conv.close()  # idempotent
    with pytest.raises(ProviderError):
        conv.send("hi", model="m", max_tokens=10)


# ---- environment of the CLI -----------------------------------------------------------------


def test_child_env_blanks_parent_session_and_keeps_user_config(monkeypatch: pytest.MonkeyPatch) -> None:
    # What a worker spawned by a Claude Code hook inherits.
    inherited = {
        "CLAUDECODE": "1",
        "CLAUDE_CODE_SESSION_ID": "parent-session",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_PID": "4242",
        "CLAUDE_PROJECT_DIR": "/work/proj",
        "CLAUDE_ENV_FILE": "/x/env.sh",
        "CLAUDE_PLUGIN_ROOT": "/plugins/kenning",
        "CLAUDE_CODE_SSE_PORT": "12345",
        "CLAUDE_AGENT_SDK_CLIENT_APP": "outer-app",
        # The user's own way of reaching the model: must survive.
        "CLAUDE_CODE_OAUTH_TOKEN": "tok",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "CLAUDE_CONFIG_DIR": "/home/u/.claude-work",
        "ANTHROPIC_API_KEY": "key",
    }
    for k, v in inherited.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("CLAUDE_CODE_MAX_RETRIES", raising=False)
    env = ClaudeAgentProvider(data_dir="/tmp/x", env={"HOME": "/scratch"}).child_env(max_tokens=777)

    for var in ("CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE",
                "CLAUDE_PLUGIN_ROOT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_AGENT_SDK_CLIENT_APP"):  # fmt: skip
        assert env[var] == "", var  # blanked: options.env is merged OVER os.environ
    # The SDK sets CLAUDE_CODE_ENTRYPOINT=sdk-py itself (a blank here would override it) and
    # drops CLAUDECODE from what the CLI inherits.
    assert "CLAUDE_CODE_ENTRYPOINT" not in env and "CLAUDECODE" not in env
    for var in ("CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"):
        assert var not in env, var  # not touched: inherited as is
    assert env["KENNING_INTERNAL"] == "1"
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "777"
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert env["HOME"] == "/scratch"  # explicit env wins

    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "5")  # the user's choice is kept
    env = ClaudeAgentProvider(data_dir="/tmp/x").child_env(max_tokens=1)
    assert "CLAUDE_CODE_MAX_RETRIES" not in env


@needs_sdk
@pytest.mark.slow  # importing claude-agent-sdk takes 3-5 s
def test_options_isolate_the_observer_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"
    provider = ClaudeAgentProvider(data_dir=str(data))
    opts = provider.options("SYSTEM PROMPT", model="claude-haiku-4-5", max_tokens=2000)
    assert opts.setting_sources == []  # the guard: none of the user's hooks fire
    assert json.loads(opts.settings) == {"disableAllHooks": True}  # the second guard
    assert opts.tools == [] and opts.allowed_tools == []
    assert set(BUILTIN_TOOLS) <= set(opts.disallowed_tools) and "Bash" in opts.disallowed_tools
    assert opts.permission_mode == "dontAsk"
    assert opts.strict_mcp_config and opts.mcp_servers == {}
    assert opts.verbatim_prompts
    assert opts.thinking == {"type": "disabled"}
    assert opts.extra_args == {"no-session-persistence": None}
    assert opts.system_prompt == "SYSTEM PROMPT" and opts.model == "claude-haiku-4-5"
    assert opts.env["KENNING_INTERNAL"] == "1"
    cwd = Path(opts.cwd)
    assert cwd == data.resolve() / "observer-sessions"
    assert stat.S_IMODE(cwd.stat().st_mode) == 0o700
    assert stat.S_IMODE(data.stat().st_mode) == 0o700


@needs_sdk
@pytest.mark.slow  # importing claude-agent-sdk takes 3-5 s
def test_options_match_the_cli_flags(tmp_path: Path) -> None:
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    from tests.support.claude_cli import flag_value

    opts = ClaudeAgentProvider(data_dir=str(tmp_path)).options("S", model="claude-haiku-4-5", max_tokens=10)
    transport = SubprocessCLITransport(prompt="", options=opts)
    transport._cli_path = "claude"
    cmd = transport._build_command()
    joined = " ".join(cmd)
    assert "--setting-sources=" in cmd
    assert flag_value(cmd, "--tools") == ""
    assert "--no-session-persistence" in cmd and "--strict-mcp-config" in cmd
    assert json.loads(flag_value(cmd, "--settings")) == {"disableAllHooks": True}
    assert flag_value(cmd, "--permission-mode") == "dontAsk"
    assert flag_value(cmd, "--thinking") == "disabled"
    assert "--allowedTools" not in joined


# ---- process helpers ------------------------------------------------------------------------


def test_is_live_child() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert claude_agent._is_live_child(proc.pid, None)
        assert not claude_agent._is_live_child(1, None)  # alive, but not ours
    finally:
        proc.kill()
        proc.wait()
    assert not claude_agent._is_live_child(proc.pid, None)


def test_ensure_private_dir_tightens_mode(tmp_path: Path) -> None:
    d = tmp_path / "data" / "observer-sessions"
    d.mkdir(parents=True, mode=0o755)
    os.chmod(d, 0o755)
    claude_agent.ensure_private_dir(str(d), str(tmp_path / "data"))
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
