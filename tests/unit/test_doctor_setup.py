"""`kenning doctor`'s checks of the installation around the memory: the MCP registration and its
interpreter, the `claude` command, which `kenning` PATH runs, and free disk space."""

from __future__ import annotations

import json
import os
import sys
from collections import namedtuple
from pathlib import Path

import pytest

from kenning import doctor
from kenning.integrations import claude_code as cc
from kenning.integrations import command_link
from kenning.paths import Paths


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "claude"
    d.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(d))
    return d


def register(claude: Path, command: str) -> None:
    (claude / ".claude.json").write_text(json.dumps({"mcpServers": {"kenning": {
        "type": "stdio", "command": command, "args": ["-I", "-m", "kenning", "mcp"], "env": {}}}}))


def test_mcp_registration_pointing_at_this_interpreter_is_ok(claude: Path) -> None:
    register(claude, sys.executable)
    level, name, detail = doctor._mcp_check()
    assert (level, name) == ("ok", "MCP server") and sys.executable in detail


def test_mcp_registration_pointing_at_a_deleted_venv_fails(claude: Path, tmp_path: Path) -> None:
    gone = str(tmp_path / "old-venv" / "bin" / "python")
    register(claude, gone)
    level, _name, detail = doctor._mcp_check()
    assert level == "FAIL" and gone in detail and "kenning install" in detail


def test_mcp_registration_whose_interpreter_lacks_kenning_fails(claude: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    import venv

    venv.create(bare, with_pip=False)
    register(claude, str(bare / "bin" / "python"))
    level, _name, detail = doctor._mcp_check()
    assert level == "FAIL" and "cannot import Kenning's MCP server" in detail


def test_no_mcp_registration_is_a_warning_with_the_fix(claude: Path) -> None:
    level, _name, detail = doctor._mcp_check()
    assert level == "warn" and "kenning install" in detail and str(claude / ".claude.json") in detail
    assert cc.installed_mcp() is None


def fake_command(d: Path, name: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text("#!/bin/sh\nexit 0\n")
    p.chmod(0o755)
    return p


def test_claude_cli_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert doctor._claude_cli()[0] == "warn"
    claude = fake_command(tmp_path / "bin", "claude")
    monkeypatch.setenv("PATH", str(claude.parent))
    level, _name, detail = doctor._claude_cli()
    assert level == "ok" and str(claude) in detail


def test_which_kenning_path_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    venv_bin = tmp_path / "venv" / "bin"
    ours = fake_command(venv_bin, "kenning")
    monkeypatch.setattr(command_link, "own_command", lambda: str(ours))
    # Not linked, not on PATH.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    level, _n, detail = command_link.on_path()
    assert level == "warn" and "install.sh" in detail
    # Linked by the installer, but ~/.local/bin is not on PATH: the line to add.
    link = Path(command_link.link_path())
    link.parent.mkdir(parents=True)
    link.symlink_to(ours)
    level, _n, detail = command_link.on_path()
    assert level == "warn" and 'export PATH="$HOME/.local/bin:$PATH"' in detail
    # On PATH: this installation.
    monkeypatch.setenv("PATH", str(link.parent))
    assert command_link.on_path()[0] == "ok"
    # Another program named kenning comes first.
    other = fake_command(tmp_path / "usr-bin", "kenning")
    monkeypatch.setenv("PATH", f"{other.parent}{os.pathsep}{link.parent}")
    level, _n, detail = command_link.on_path()
    assert level == "warn" and str(other) in detail and "not this installation" in detail


def test_uninstall_removes_only_a_link_to_this_installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ours = fake_command(tmp_path / "venv" / "bin", "kenning")
    other = fake_command(tmp_path / "elsewhere", "kenning")
    monkeypatch.setattr(command_link, "own_command", lambda: str(ours))
    link = Path(command_link.link_path())
    link.parent.mkdir(parents=True)
    link.symlink_to(other)
    assert command_link.remove_link() is None and link.is_symlink()
    link.unlink()
    link.symlink_to(ours)
    assert command_link.remove_link() == str(link) and not link.exists()
    assert ours.exists()  # the command itself stays: only the link goes


Usage = namedtuple("Usage", "total used free")


@pytest.mark.parametrize("free, level", [(50 * 2**30, "ok"), (700 * 2**20, "warn"), (20 * 2**20, "FAIL")])
def test_free_disk_space_in_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free: int,
                                         level: str) -> None:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda p: Usage(100 * 2**30, 0, free))
    got, name, detail = doctor._disk(paths)
    assert (got, name) == (level, "disk space") and paths.root in detail
