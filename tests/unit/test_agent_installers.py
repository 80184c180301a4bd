"""Installing into each agent's config and removing exactly what was added.

Per agent: idempotent install, the user's own entries kept, and uninstall giving the file back byte
for byte where the agent does not rewrite it itself (Codex's config.toml, Cursor's hooks.json,
OpenCode's and Copilot's files of ours), or with exactly our entries removed where it does
(Gemini CLI's settings.json: after Gemini has rewritten it, its version stays, minus ours).
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from kenning.integrations import codex, copilot, cursor, gemini, opencode
from kenning.paths import Paths

CODEX_CONFIG = """# my Codex settings
model = "gpt-5.5"
approval_policy = "on-request"

[[hooks.PostToolUse]]
matcher = "Bash"
[[hooks.PostToolUse.hooks]]
type = "command"
command = "/usr/local/bin/audit"

[projects."/home/me/work"]
trust_level = "trusted"
"""


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KENNING_DATA_DIR", str(tmp_path / "data"))
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    return Paths()


# -------------------------------------------------------------------------------------- Codex

def test_codex_install_trusts_each_hook_and_uninstall_restores_bytes(paths: Paths) -> None:
    cfg = Path(codex.config_path())
    cfg.parent.mkdir(parents=True)
    cfg.write_text(CODEX_CONFIG)
    report = codex.install(paths)
    assert report.changed and report.backup and Path(report.backup).read_text() == CODEX_CONFIG
    data = tomllib.loads(cfg.read_text())
    assert data["model"] == "gpt-5.5" and data["projects"]["/home/me/work"]["trust_level"] == "trusted"
    assert data["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == "/usr/local/bin/audit"
    ours = data["hooks"]["PostToolUse"][1]["hooks"][0]
    assert " codex PostToolUse" in ours["command"]
    # Trusted as Codex computes it: the key names the group's position after the user's own.
    state = data["hooks"]["state"]
    key = f"{cfg}:post_tool_use:1:0"
    assert state[key]["trusted_hash"] == codex.trust_hash("PostToolUse", None, ours["command"], ours["timeout"])
    assert set(state) == {f"{cfg}:session_start:0:0", f"{cfg}:user_prompt_submit:0:0", key, f"{cfg}:stop:0:0"}
    assert codex.checks() == [("ok", "Codex hooks", f"4 events in {cfg}, trusted")]
    assert not codex.install(paths).changed  # idempotent
    assert codex.uninstall(paths).changed
    assert cfg.read_text() == CODEX_CONFIG


def test_codex_uninstall_after_the_user_edited_keeps_their_edit_and_drops_only_ours(paths: Paths) -> None:
    cfg = Path(codex.config_path())
    cfg.parent.mkdir(parents=True)
    cfg.write_text(CODEX_CONFIG)
    codex.install(paths)
    cfg.write_text(cfg.read_text().replace('approval_policy = "on-request"', 'approval_policy = "never"'))
    codex.uninstall(paths)
    assert cfg.read_text() == CODEX_CONFIG.replace('approval_policy = "on-request"', 'approval_policy = "never"')


def test_codex_without_a_config_gets_one_and_uninstall_removes_it(paths: Paths) -> None:
    codex.install(paths)
    assert Path(codex.config_path()).exists()
    codex.uninstall(paths)
    assert not Path(codex.config_path()).exists()


def test_codex_inline_hook_arrays_are_merged_structurally(paths: Paths) -> None:
    cfg = Path(codex.config_path())
    cfg.parent.mkdir(parents=True)
    original = '[hooks]\nStop = [{ hooks = [{ type = "command", command = "/other" }] }]\n'
    cfg.write_text(original)
    codex.install(paths)
    data = tomllib.loads(cfg.read_text())
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "/other"
    assert f"{cfg}:stop:1:0" in data["hooks"]["state"]
    codex.uninstall(paths)
    assert cfg.read_text() == original


def test_codex_doctor_says_when_codex_would_skip_the_hooks(paths: Paths) -> None:
    codex.install(paths)
    cfg = Path(codex.config_path())
    # The user moved a group in front of ours: the trust keys no longer name our hooks.
    text = cfg.read_text().replace("[[hooks.Stop]]", '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\n'
                                                   'command = "/mine"\n[[hooks.Stop]]', 1)
    cfg.write_text(text)
    levels = {(c[0], c[1]) for c in codex.checks()}
    assert ("FAIL", "Codex hook trust") in levels
    detail = next(c[2] for c in codex.checks() if c[1] == "Codex hook trust")
    assert "Stop (no trust entry)" in detail and "skip these hooks silently" in detail
    cfg.write_text(cfg.read_text().replace("timeout = 10", "timeout = 11", 1))
    assert "changed since it was trusted" in next(c[2] for c in codex.checks() if c[1] == "Codex hook trust")


def test_codex_refuses_a_config_it_cannot_parse(paths: Paths) -> None:
    cfg = Path(codex.config_path())
    cfg.parent.mkdir(parents=True)
    cfg.write_text("model = = broken\n")
    with pytest.raises(ValueError):
        codex.install(paths)
    assert cfg.read_text() == "model = = broken\n"


# --------------------------------------------------------------------------------- Gemini CLI

GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "hooks": {"AfterTool": [{"matcher": "write_file",
                                            "hooks": [{"type": "command", "command": "lint"}]}]}}


def test_gemini_install_merges_and_uninstall_restores_bytes(paths: Paths) -> None:
    path = Path(gemini.settings_path())
    path.parent.mkdir(parents=True)
    text = json.dumps(GEMINI_SETTINGS, indent=4) + "\n"
    path.write_text(text)
    assert gemini.install(paths).changed
    data = json.loads(path.read_text())
    assert data["hooks"]["AfterTool"][0]["hooks"][0]["command"] == "lint"
    assert set(gemini.installed()) == set(gemini.EVENTS)
    assert not gemini.install(paths).changed
    gemini.uninstall(paths)
    assert path.read_text() == text


def test_gemini_rewrote_its_settings_uninstall_removes_exactly_ours(paths: Paths) -> None:
    path = Path(gemini.settings_path())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(GEMINI_SETTINGS) + "\n")
    gemini.install(paths)
    data = json.loads(path.read_text())
    data["ui"] = {"theme": "Dracula"}  # Gemini rewrites the file (migrations, /settings)
    data["hooks"]["AfterTool"].insert(0, {"matcher": "*", "hooks": [{"type": "command", "command": "new-hook"}]})
    path.write_text(json.dumps(data, indent=2) + "\n")
    gemini.uninstall(paths)
    after = json.loads(path.read_text())
    assert after["ui"] == {"theme": "Dracula"}
    assert [h["hooks"][0]["command"] for h in after["hooks"]["AfterTool"]] == ["new-hook", "lint"]
    assert set(after["hooks"]) == {"AfterTool"}
    assert not gemini.installed()


# ------------------------------------------------------------------------------ OpenCode, Cursor

def test_opencode_plugin_file_is_ours_alone(paths: Paths) -> None:
    cfg_dir = Path(opencode.config_dir())
    cfg_dir.mkdir(parents=True)
    (cfg_dir / "opencode.json").write_text('{"$schema": "https://opencode.ai/config.json"}\n')
    before = {p: p.read_bytes() for p in cfg_dir.rglob("*") if p.is_file()}
    report = opencode.install(paths)
    assert report.changed and Path(opencode.plugin_path()).read_text().startswith(opencode.MARKER)
    assert json.dumps(os.sys.executable) in Path(opencode.plugin_path()).read_text()  # type: ignore[attr-defined]
    assert not opencode.install(paths).changed
    assert opencode.checks()[0][0] == "ok"
    opencode.uninstall(paths)
    assert {p: p.read_bytes() for p in cfg_dir.rglob("*") if p.is_file()} == before
    assert not (cfg_dir / "plugin").exists()


def test_opencode_never_overwrites_a_foreign_plugin(paths: Paths) -> None:
    path = Path(opencode.plugin_path())
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({})\n")
    report = opencode.install(paths)
    assert report.problems and path.read_text().startswith("export const Mine")
    assert not opencode.uninstall(paths).changed and path.exists()


def test_cursor_hooks_json_round_trip(paths: Paths) -> None:
    path = Path(cursor.hooks_path())
    path.parent.mkdir(parents=True)
    original = '{\n  "version": 1,\n  "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}\n}\n'
    path.write_text(original)
    assert cursor.install(paths).changed
    data = json.loads(path.read_text())
    assert data["hooks"]["afterFileEdit"][0] == {"command": "./format.sh"}
    assert set(cursor.installed()) == set(cursor.EVENTS)
    cursor.uninstall(paths)
    assert path.read_text() == original


def test_copilot_hook_file_per_repository(paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "workflows.yml").write_text("on: push\n")
    monkeypatch.chdir(repo)
    report = copilot.install(paths)
    hook_file = repo / ".github" / "hooks" / "kenning.json"
    assert report.changed and report.path == str(hook_file)
    data = json.loads(hook_file.read_text())
    assert data["version"] == 1 and set(data["hooks"]) == set(copilot.EVENTS)
    assert " copilot postToolUse" in data["hooks"]["postToolUse"][0]["bash"]
    assert copilot.checks()[0][0] == "ok"
    copilot.uninstall(paths)
    assert not hook_file.exists() and not (repo / ".github" / "hooks").exists()
    assert (repo / ".github" / "workflows.yml").read_text() == "on: push\n"


# ------------------------------------------------------------------- which agents, Claude Code's MCP

def test_wanted_names_exactly_and_auto_detects_only_what_is_found(paths: Paths, monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    from kenning.integrations import agents

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert agents.wanted(None) == []
    assert agents.wanted(["codex", "codex", "cursor"]) == ["codex", "cursor"]
    assert agents.wanted(["all"]) == list(agents.ALL)
    (tmp_path / "home" / ".codex").mkdir()
    (tmp_path / "home" / ".cursor").mkdir()  # found, but only set up when named
    bin_dir = tmp_path / "empty-bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\n")
    (bin_dir / "claude").chmod(0o755)
    assert agents.wanted(None) == ["claude-code", "codex"]
    assert agents.found("cursor") and not agents.found("gemini")
    assert agents.where_looked("gemini") == "no `gemini` command on PATH and no ~/.gemini folder"


def test_claude_code_mcp_entry_removed_gives_claude_json_back_byte_for_byte(paths: Paths) -> None:
    from kenning.integrations import claude_code

    path = Path(claude_code.claude_json_path())
    text = '{\n  "numStartups": 3,\n  "mcpServers": {}\n}'  # Claude Code's formatting: no newline at the end
    path.write_text(text)
    assert claude_code.install_mcp(paths).changed
    assert json.loads(path.read_text())["mcpServers"]["kenning"]["args"][-2:] == ["kenning", "mcp"]
    assert claude_code.uninstall_mcp(paths).changed
    assert path.read_text() == text
    # Claude Code rewrote it meanwhile: its version stays, minus our entry.
    claude_code.install_mcp(paths)
    data = json.loads(path.read_text())
    data["numStartups"] = 4
    path.write_text(json.dumps(data))
    claude_code.uninstall_mcp(paths)
    assert json.loads(path.read_text()) == {"numStartups": 4, "mcpServers": {}}


# ------------------------------------------------------------- a config file that was all ours

@pytest.mark.parametrize("agent", ["claude-code", "codex", "cursor", "gemini"])
def test_uninstalling_a_file_that_was_all_ours_leaves_neither_it_nor_a_backup(paths: Paths, agent: str) -> None:
    from kenning.integrations import claude_code

    module = {"claude-code": claude_code, "codex": codex, "cursor": cursor, "gemini": gemini}[agent]
    home = Path(os.environ["HOME"])
    before = {p for p in home.rglob("*")}
    report = module.install(paths)
    assert report.changed
    created = {p for p in home.rglob("*") if p.is_file()} - before
    assert created, "install wrote no config file"
    gone = module.uninstall(paths)
    assert gone.changed and not gone.backup, gone.backup
    left = {p for p in home.rglob("*") if p.is_file()} - before
    assert not left, sorted(map(str, left))  # no config of ours, no backup of our own bytes
