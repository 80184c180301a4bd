"""Registering the MCP server at user scope in Claude Code's ``.claude.json``: merge, backup,
idempotence, exact uninstall, never touching a foreign entry or an unreadable file."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from kenning.integrations import claude_code as cc
from kenning.paths import Paths

# A trimmed but realistic ~/.claude.json: Claude Code keeps account, project and UI state here.
ORIGINAL: dict[str, Any] = {
    "numStartups": 42,
    "firstStartTime": "2026-01-02T03:04:05.000Z",
    "userID": "0123abcd",
    "hasCompletedOnboarding": True,
    "customApiKeyResponses": {"approved": ["abc123"], "rejected": []},
    "projects": {"/home/me/app": {"allowedTools": [], "hasTrustDialogAccepted": True,
                                  "mcpServers": {"local-db": {"type": "stdio", "command": "db-mcp", "args": []}}}},
    "mcpServers": {"github": {"type": "http", "url": "https://example.invalid/mcp"}},
    "tipsHistory": {"new-user-warmup": 1},
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Paths]:
    claude = tmp_path / "claude-config"
    data = tmp_path / "kenning-data"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("KENNING_DATA_DIR", str(data))
    return claude, Paths()


def claude_json(claude: Path) -> Path:
    return claude / ".claude.json"


def write_original(claude: Path) -> bytes:
    claude.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(ORIGINAL, indent=2).encode()
    claude_json(claude).write_bytes(raw)
    return raw


def test_install_adds_exactly_our_server_and_keeps_every_other_key(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    raw = write_original(claude)
    report = cc.install(paths)
    assert report.mcp is not None and report.mcp.changed and not report.mcp.problems
    assert report.mcp.path == str(claude_json(claude))
    after = json.loads(claude_json(claude).read_text())
    entry = after["mcpServers"].pop("kenning")
    assert after == ORIGINAL  # everything else exactly as it was
    assert entry == {"type": "stdio", "command": sys.executable, "args": ["-I", "-m", "kenning", "mcp"],
                     "env": {"KENNING_DATA_DIR": paths.root}}
    assert os.path.isabs(entry["command"])
    # The previous file is backed up, privately: it holds account data.
    assert report.mcp.backup and Path(report.mcp.backup).read_bytes() == raw
    assert stat.S_IMODE(os.stat(report.mcp.backup).st_mode) == 0o600
    assert cc.installed_mcp() == entry


def test_install_is_idempotent(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    write_original(claude)
    cc.install(paths)
    first = claude_json(claude).read_bytes()
    backups = sorted(claude.glob(".claude.json.kenning-backup-*"))
    again = cc.install(paths)
    assert again.mcp is not None and not again.mcp.changed and again.mcp.backup is None
    assert claude_json(claude).read_bytes() == first
    assert sorted(claude.glob(".claude.json.kenning-backup-*")) == backups


def test_uninstall_removes_exactly_our_server(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    write_original(claude)
    cc.install(paths)
    # Claude Code keeps writing the file while we are installed.
    live = json.loads(claude_json(claude).read_text())
    live["numStartups"] = 43
    live["mcpServers"]["notes"] = {"type": "stdio", "command": "notes-mcp"}
    claude_json(claude).write_text(json.dumps(live, indent=2))
    report = cc.uninstall(paths)
    assert report.mcp is not None and report.mcp.changed
    after = json.loads(claude_json(claude).read_text())
    expected = json.loads(json.dumps(ORIGINAL))
    expected["numStartups"] = 43
    expected["mcpServers"]["notes"] = {"type": "stdio", "command": "notes-mcp"}
    assert after == expected
    assert cc.installed_mcp() is None
    again = cc.uninstall(paths)
    assert again.mcp is not None and not again.mcp.changed


def test_a_file_install_created_goes_away_and_a_key_it_added_too(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    cc.install(paths)
    assert set(json.loads(claude_json(claude).read_text())) == {"mcpServers"}
    cc.uninstall(paths)
    assert not claude_json(claude).exists()
    assert not list(claude.glob(".claude.json*"))
    # Installed into a missing file, then Claude Code filled it: only our key goes.
    cc.install(paths)
    live = json.loads(claude_json(claude).read_text())
    live.update(numStartups=1, userID="x")
    claude_json(claude).write_text(json.dumps(live))
    cc.uninstall(paths)
    assert json.loads(claude_json(claude).read_text()) == {"numStartups": 1, "userID": "x"}


def test_a_foreign_kenning_server_is_never_overwritten(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    foreign = {"mcpServers": {"kenning": {"type": "stdio", "command": "npx", "args": ["some-other-kenning"]}}}
    claude_json(claude).write_text(json.dumps(foreign))
    before = claude_json(claude).read_bytes()
    report = cc.install(paths)
    assert report.mcp is not None and not report.mcp.changed
    assert "already has a different 'kenning' server" in report.mcp.problems[0]
    assert report.events  # the hooks are installed all the same
    cc.uninstall(paths)
    assert claude_json(claude).read_bytes() == before


@pytest.mark.parametrize("content", [b'{"mcpServers": {', b"[1, 2]", b"\xff\xfe{}", b'{"mcpServers": []}'])
def test_an_unreadable_file_is_left_alone_and_reported(env: tuple[Path, Paths], content: bytes) -> None:
    claude, paths = env
    claude.mkdir()
    claude_json(claude).write_bytes(content)
    report = cc.install(paths)
    assert report.mcp is not None and report.mcp.problems and not report.mcp.changed
    assert report.changed  # settings.json got the hooks
    assert claude_json(claude).read_bytes() == content
    assert not list(claude.glob(".claude.json.*"))
    cc.uninstall(paths)
    assert claude_json(claude).read_bytes() == content


def test_default_locations_and_default_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("KENNING_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    # ~/.claude.json sits in HOME itself, not in ~/.claude/ (where settings.json lives).
    assert cc.claude_json_path() == str(tmp_path / ".claude.json")
    assert cc.mcp_entry()["env"] == {}  # the default data dir needs no variable
    report = cc.install(Paths())
    assert report.mcp is not None and report.mcp.changed
    assert json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["kenning"]["env"] == {}
    assert (tmp_path / ".claude" / "settings.json").exists()
    cc.uninstall(Paths())
    assert not (tmp_path / ".claude.json").exists()


def test_the_install_command_says_where_the_server_is_registered(tmp_path: Path) -> None:
    import subprocess

    env = {**os.environ, "HOME": str(tmp_path), "KENNING_DATA_DIR": str(tmp_path / "data")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    r = subprocess.run([sys.executable, "-m", "kenning", "install", "--no-start"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"MCP server 'kenning' (memory search tools) is registered in {tmp_path / '.claude.json'}" in r.stdout
    r = subprocess.run([sys.executable, "-m", "kenning", "uninstall", "--keep-worker"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert f"Removed Kenning's MCP server from {tmp_path / '.claude.json'}" in r.stdout
    assert not (tmp_path / ".claude.json").exists()


def test_claude_json_backups_stay_private_and_at_most_three(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    write_original(claude)
    os.chmod(claude_json(claude), 0o644)
    for i in range(4):
        cc.install(paths)
        data = json.loads(claude_json(claude).read_text())
        data["numStartups"] = i  # Claude Code rewrites this file all the time
        claude_json(claude).write_text(json.dumps(data))
        cc.uninstall(paths)
    kept = sorted(claude.glob(".claude.json.kenning-backup-*"))
    assert len(kept) == 3
    assert {stat.S_IMODE(os.stat(p).st_mode) for p in kept} == {0o600}
