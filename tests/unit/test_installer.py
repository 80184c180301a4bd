"""Installing into Claude Code's settings.json: merge, idempotence, exact uninstall."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from kenning.integrations import claude_code as cc
from kenning.integrations import launch
from kenning.paths import Paths

USER_HOOK = {"type": "command", "command": "/usr/local/bin/audit-log --tool", "timeout": 3}
OTHER_TOOL_HOOK = {"type": "command", "command": "node /opt/other-memory/session-start.js"}
ORIGINAL: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}],
        "SessionStart": [{"matcher": "startup", "hooks": [OTHER_TOOL_HOOK]}],
        "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "lint-guard"}]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Paths]:
    claude = tmp_path / "claude-config"
    data = tmp_path / "kenning-data"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("KENNING_DATA_DIR", str(data))
    paths = Paths()
    assert paths.root == str(data)
    return claude, paths


def settings_file(claude: Path) -> Path:
    return claude / "settings.json"


def read(claude: Path) -> dict[str, Any]:
    return json.loads(settings_file(claude).read_text())


def ours(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """event -> our handlers (with their group's matcher)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for g in groups:
            for h in g["hooks"]:
                if cc.is_ours(h):
                    out.setdefault(event, []).append({**h, "matcher": g.get("matcher")})
    return out


def backups(claude: Path) -> list[Path]:
    return sorted(claude.glob("settings.json.kenning-backup-*"))


def assert_installed_once(settings: dict[str, Any]) -> None:
    handlers = ours(settings)
    assert set(handlers) == set(cc.EVENTS)
    for event, hs in handlers.items():
        assert len(hs) == 1, (event, hs)
        h = hs[0]
        assert h["type"] == "command"
        assert h["timeout"] == cc.EVENTS[event][1]
        # Exec form: the interpreter, no shell, no site; the package's directory on the path.
        assert h["command"] == sys.executable and os.path.isabs(h["command"])
        args = h["args"]
        assert args[:3] == ["-I", "-S", "-c"] and args[4:] == ["claude-code", event]
        assert f"sys.path.append({json.dumps(launch.package_parent())})" in args[3]
        assert args[3].endswith(";cli()") and launch.ENTRY in args[3] and "\n" not in args[3]
        assert cc.interpreter_of(h["command"]) == sys.executable


def test_install_into_missing_file(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    report = cc.install(paths)
    assert report.changed
    assert report.backup is None  # nothing to back up
    assert sorted(report.events) == sorted(cc.EVENTS)
    settings = read(claude)
    assert set(settings) == {"hooks"}
    assert_installed_once(settings)
    assert ours(settings)["PostToolUse"][0]["matcher"] == cc.tool_matcher()
    assert ours(settings)["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert ours(settings)["Stop"][0]["matcher"] is None


def test_commands_carry_a_non_default_data_dir(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    cc.install(paths)
    for hs in ours(read(claude)).values():
        # No shell to set a variable in exec form: the -c program sets it first.
        assert hs[0]["args"][3].startswith(f'import posix,sys;d={json.dumps(paths.root)}.encode(')


def test_install_keeps_other_keys_and_hooks(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    original = json.dumps(ORIGINAL, indent=2).encode()
    settings_file(claude).write_bytes(original)
    report = cc.install(paths)
    assert report.changed
    settings = read(claude)
    for key in ("model", "permissions", "env", "statusLine"):
        assert settings[key] == ORIGINAL[key]
    assert {"matcher": "Bash", "hooks": [USER_HOOK]} in settings["hooks"]["PostToolUse"]
    assert {"matcher": "startup", "hooks": [OTHER_TOOL_HOOK]} in settings["hooks"]["SessionStart"]
    # The user's PreToolUse groups stay first and untouched; ours (file history on Read) follows.
    assert settings["hooks"]["PreToolUse"][:-1] == ORIGINAL["hooks"]["PreToolUse"]
    assert settings["hooks"]["PreToolUse"][-1]["matcher"] == "Read"
    assert_installed_once(settings)
    # The original was backed up byte for byte before it was changed.
    assert report.backup is not None and Path(report.backup).read_bytes() == original
    assert backups(claude) == [Path(report.backup)]


def test_install_twice_leaves_other_hooks_and_ours_once(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_text(json.dumps(ORIGINAL, indent=2))
    cc.install(paths)
    after_first = settings_file(claude).read_bytes()
    second = cc.install(paths)
    assert not second.changed
    assert second.backup is None
    assert settings_file(claude).read_bytes() == after_first
    settings = read(claude)
    assert_installed_once(settings)
    assert settings["hooks"]["PostToolUse"][0] == {"matcher": "Bash", "hooks": [USER_HOOK]}
    assert settings["hooks"]["SessionStart"][0] == {"matcher": "startup", "hooks": [OTHER_TOOL_HOOK]}
    assert len(settings["hooks"]["PostToolUse"]) == 2
    assert len(settings["hooks"]["SessionStart"]) == 2


def test_reinstall_with_another_interpreter_replaces_ours(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    cc.install(paths, python="/old/venv/bin/python")
    handlers = ours(read(claude)).values()
    assert all(cc.interpreter_of(h[0]["command"]) == "/old/venv/bin/python" for h in handlers)
    # Where the package sits is only known for this interpreter: another one keeps site.
    assert all(h[0]["args"][:2] == ["-I", "-c"] and h[0]["args"][2].endswith(cc.HOOK_ENTRY) for h in handlers)
    report = cc.install(paths)
    assert report.changed
    assert_installed_once(read(claude))


def test_user_handler_in_our_group_survives(env: tuple[Path, Paths]) -> None:
    # The user added their own handler next to ours: reinstall and uninstall keep it.
    claude, paths = env
    cc.install(paths)
    settings = read(claude)
    settings["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "notify-send done"})
    settings_file(claude).write_text(json.dumps(settings))
    cc.install(paths)
    stop_handlers = [h["command"] for g in read(claude)["hooks"]["Stop"] for h in g["hooks"]]
    assert "notify-send done" in stop_handlers
    assert_installed_once(read(claude))
    cc.uninstall(paths)
    assert read(claude)["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-send done"}]}]


@pytest.mark.parametrize("indent", [2, 4, "\t", None])
def test_uninstall_restores_original_bytes(env: tuple[Path, Paths], indent: int | str | None) -> None:
    claude, paths = env
    claude.mkdir()
    original = json.dumps(ORIGINAL, indent=indent).encode() + (b"" if indent == 4 else b"\n")
    settings_file(claude).write_bytes(original)
    cc.install(paths)
    cc.install(paths)
    assert settings_file(claude).read_bytes() != original
    report = cc.uninstall(paths)
    assert report.changed
    assert settings_file(claude).read_bytes() == original


@pytest.mark.parametrize("original", [b"", b"\n", b"{}", b'{"hooks": {}}\n'])
def test_uninstall_restores_an_empty_original_bytes(env: tuple[Path, Paths], original: bytes) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_bytes(original)
    cc.install(paths)
    assert settings_file(claude).read_bytes() != original
    assert cc.uninstall(paths).changed
    assert settings_file(claude).read_bytes() == original


def test_uninstall_restores_the_original_an_earlier_install_remembered(env: tuple[Path, Paths]) -> None:
    # The state file of a release before Original was shared: no "path" key, same name.
    claude, paths = env
    claude.mkdir()
    original = json.dumps(ORIGINAL, indent=4).encode()
    settings_file(claude).write_bytes(original)
    paths.ensure()
    state = Path(paths.root) / "claude-code-install.json"
    state.write_text(json.dumps({"original": original.decode(), "had_file": True, "had_hooks_key": True}))
    cc.install(paths)
    assert json.loads(state.read_text())["original"] == original.decode()  # not overwritten
    assert cc.uninstall(paths).changed
    assert settings_file(claude).read_bytes() == original
    assert not state.exists()


def test_uninstall_after_install_into_missing_file_removes_the_file(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    cc.install(paths)
    cc.uninstall(paths)
    assert not settings_file(claude).exists()


def test_uninstall_keeps_user_edits_made_after_install(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_text(json.dumps(ORIGINAL, indent=4))
    cc.install(paths)
    settings = read(claude)
    settings["theme"] = "dark"
    settings["hooks"]["PostToolUse"].append({"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]})
    settings_file(claude).write_text(json.dumps(settings, indent=2))
    report = cc.uninstall(paths)
    assert report.changed
    after = read(claude)
    assert ours(after) == {}
    assert after["theme"] == "dark"
    expected = json.loads(json.dumps(ORIGINAL))
    expected["theme"] = "dark"
    expected["hooks"]["PostToolUse"].append({"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]})
    assert after == expected


def test_uninstall_when_nothing_installed_is_a_noop(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    report = cc.uninstall(paths)  # no file at all
    assert not report.changed
    assert not claude.exists()
    claude.mkdir()
    original = json.dumps(ORIGINAL, indent=4).encode()
    settings_file(claude).write_bytes(original)
    report = cc.uninstall(paths)
    assert not report.changed
    assert report.backup is None
    assert settings_file(claude).read_bytes() == original
    assert os.listdir(claude) == ["settings.json"]


@pytest.mark.parametrize("content", [b'{"hooks": {', b"[1, 2]", b"\xff\xfe{}"])
def test_install_refuses_an_unreadable_settings_file(env: tuple[Path, Paths], content: bytes) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_bytes(content)
    with pytest.raises(ValueError):
        cc.install(paths)
    assert settings_file(claude).read_bytes() == content
    assert os.listdir(claude) == ["settings.json"]  # no backup, no temp file


def test_installed_handlers_lists_ours(env: tuple[Path, Paths]) -> None:
    _claude, paths = env
    assert cc.installed_handlers() == {}
    cc.install(paths)
    found = cc.installed_handlers()
    assert set(found) == set(cc.EVENTS)
    assert all(len(cmds) == 1 for cmds in found.values())


# --------------------------------------------------------------------------- tool matcher


@pytest.mark.parametrize("tool", ["TodoWrite", "TodoRead", "Skill", "AskUserQuestion", "mcp__kenning__search",
                                  "mcp__kenning__timeline", "mcp__plugin_kenning_mem__search"])
def test_tool_matcher_rejects_skipped_tools(tool: str) -> None:
    assert re.search(cc.tool_matcher(), tool) is None


@pytest.mark.parametrize("tool", ["Bash", "Write", "Read", "Edit", "mcp__other__x", "TodoWriteV2", "Skills",
                                  "mcp__kenningx__search"])
def test_tool_matcher_accepts_captured_tools(tool: str) -> None:
    assert re.search(cc.tool_matcher(), tool) is not None


def test_tool_matcher_is_a_regex_for_claude_code() -> None:
    m = cc.tool_matcher()
    # Only [A-Za-z0-9_\- ,|] would be read as a list of exact names, not as a regex.
    assert not re.fullmatch(r"[A-Za-z0-9_\- ,|]*", m)
    assert cc.tool_matcher(("Task",)) == "^(?!(?:Task)$).*"
    assert re.search(cc.tool_matcher(("Task",)), "Task") is None
    assert cc.tool_matcher(()) == "*"


# A pre-rename install of this project wrote the same command shapes under its former package name.
# Recognition is by shape, so the tests use a stand-in name for it.
FORMER = "memtool"


def _former_install(claude: Path, home: Path) -> Path:
    """settings.json and .claude.json as a pre-rename install left them, beside a user's own entries."""
    venv = home / ".local/share" / FORMER / "venv"
    pkg = venv / "lib/python3.11/site-packages" / FORMER / "hook"
    pkg.mkdir(parents=True)
    (pkg / "main.py").write_text("")
    (venv / "bin").mkdir()
    py = venv / "bin/python"
    py.write_text("")
    settings = json.loads(json.dumps(ORIGINAL))
    for event in ("SessionStart", "PostToolUse", "Stop"):
        command = f"{py} -I -c 'from {FORMER}.hook.main import cli; cli()' claude-code {event}"
        settings["hooks"].setdefault(event, []).append({"hooks": [{"type": "command", "command": command}]})
    settings["hooks"]["SessionEnd"] = [{"hooks": [{"type": "command",
                                                   "command": f"{venv}/bin/{FORMER} hook claude-code SessionEnd"}]}]
    claude.mkdir(parents=True, exist_ok=True)
    settings_file(claude).write_text(json.dumps(settings))
    servers = {FORMER: {"type": "stdio", "command": str(py), "args": ["-I", "-m", FORMER, "mcp"], "env": {}},
               "serena": {"type": "stdio", "command": "uvx", "args": ["-m", "serena", "mcp"]}}
    (claude / ".claude.json").write_text(json.dumps({"mcpServers": servers, "numStartups": 3}))
    return py


def test_install_removes_a_former_install_and_doctor_reports_it(env: tuple[Path, Paths], tmp_path: Path) -> None:
    claude, paths = env
    _former_install(claude, tmp_path / "home")
    legacy = cc.legacy_entries()
    assert len(legacy) == 5  # four hooks and one MCP server
    assert any(f"mcpServers.{FORMER}" in e for e in legacy)
    report = cc.install(paths, python="/opt/venv/bin/python")
    assert len(report.legacy_removed) == 4
    assert report.mcp is not None and report.mcp.legacy_removed == [f"mcpServers.{FORMER}"]
    after = read(claude)
    commands = [h["command"] for groups in after["hooks"].values() for g in groups for h in g["hooks"]]
    assert not [c for c in commands if FORMER in c]
    # the user's own handlers and the other tool's server stay as they were
    assert USER_HOOK in [h for g in after["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert OTHER_TOOL_HOOK in [h for g in after["hooks"]["SessionStart"] for h in g["hooks"]]
    servers = json.loads((claude / ".claude.json").read_text())["mcpServers"]
    assert set(servers) == {"serena", "kenning"}
    assert cc.legacy_entries() == []


def test_a_foreign_python_mcp_server_is_not_taken_for_a_former_install(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir(parents=True)
    foreign = {"type": "stdio", "command": "/usr/bin/python3", "args": ["-I", "-m", "notes", "mcp"]}
    (claude / ".claude.json").write_text(json.dumps({"mcpServers": {"notes": foreign}}))
    assert cc.legacy_entries() == []
    cc.install(paths, python="/opt/venv/bin/python")
    assert json.loads((claude / ".claude.json").read_text())["mcpServers"]["notes"] == foreign


@pytest.mark.parametrize("original_mode, backup_mode", [(0o644, 0o600), (0o600, 0o600), (0o640, 0o600),
                                                        (0o400, 0o400)])
def test_backups_keep_the_original_mode_but_never_wider_than_0600(env: tuple[Path, Paths], original_mode: int,
                                                                  backup_mode: int) -> None:
    """settings.json can hold tokens in `env`: a backup is never readable by more people than the file."""
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_text(json.dumps(ORIGINAL))
    os.chmod(settings_file(claude), original_mode)
    old = os.umask(0)  # the widest umask: the mode must come from us, not from it
    try:
        report = cc.install(paths, mcp=False)
    finally:
        os.umask(old)
    assert report.backup is not None
    assert stat.S_IMODE(os.stat(report.backup).st_mode) == backup_mode
    assert stat.S_IMODE(os.stat(settings_file(claude)).st_mode) == original_mode  # the user's file keeps its own


def test_at_most_three_backups_are_kept_the_newest(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_text(json.dumps(ORIGINAL))
    made = []
    for i in range(5):  # each install and uninstall changes the file, so each leaves a backup
        made.append(cc.install(paths, mcp=False).backup)
        data = read(claude)
        data["model"] = f"model-{i}"  # the user edits between runs
        settings_file(claude).write_text(json.dumps(data))
        made.append(cc.uninstall(paths).backup)
    assert all(made) and len(set(made)) == len(made)  # distinct names, even within one second
    kept = backups(claude)
    assert len(kept) == 3
    assert sorted(str(p) for p in kept) == sorted(str(p) for p in made[-3:])
    assert json.loads(Path(made[-1]).read_text())["model"] == "model-4"


def test_wide_backups_left_by_an_older_install_are_narrowed(env: tuple[Path, Paths]) -> None:
    claude, paths = env
    claude.mkdir()
    settings_file(claude).write_text(json.dumps(ORIGINAL))
    old = claude / "settings.json.kenning-backup-20250101-000000"
    old.write_text("{}")
    os.chmod(old, 0o644)
    cc.install(paths, mcp=False)
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o600
