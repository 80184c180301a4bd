"""``kenning install`` / ``uninstall`` through the real CLI in a scratch HOME that already holds each
agent's own config files.

* ``--agent X`` acts on exactly X: its files change, no other agent's do, and ``uninstall --agent X``
  gives X's files back byte for byte (for each of the six agents, alone or among the others).
* Plain ``install`` sets up the agents found (command on PATH or config folder), Cursor and Copilot
  only when named, as its help says.
* An agent that is not on this machine is said up front; on a terminal install asks (no: nothing is
  written), without one it goes on, says so, and never claims the next session "will be remembered".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.integrations.agents import ALL, COMMANDS
from tests.conftest import free_port

CLAUDE_SETTINGS = ('{\n    "model": "opus",\n    "hooks": {\n        "Stop": [\n            {"hooks": [{"type": '
                   '"command", "command": "notify-send done"}]}\n        ]\n    }\n}')  # 4 spaces, no newline
CLAUDE_JSON = '{\n  "numStartups": 12,\n  "mcpServers": {\n    "notes": {\n      "type": "stdio",\n' \
              '      "command": "notes-mcp"\n    }\n  },\n  "theme": "dark"\n}'  # as Claude Code writes it
CODEX_CONFIG = ('# mine\nmodel = "gpt-5.5"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\n'
                'command = "/usr/local/bin/ding"\n')
GEMINI_SETTINGS = '{\n\t"security": {"auth": {"selectedType": "gemini-api-key"}},\n\t"hooks": {}\n}\n'
OPENCODE_JSON = '{"$schema": "https://opencode.ai/config.json", "model": "local/qwen"}\n'
CURSOR_HOOKS = '{"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}}'
COPILOT_OTHER = '{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}}\n'


class Machine:
    """A scratch user: HOME with every agent's config, a git repository, Kenning's data dir and port."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.repo = tmp / "repo"
        self.data = tmp / "kenning-data"
        self.bin = tmp / "bin"
        for d in (self.home, self.repo, self.bin):
            d.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=True)
        # PATH without any agent's command, so that only what a test puts in self.bin is found.
        commands = {c for names in COMMANDS.values() for c in names}
        kept = [d for d in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                if d and not any(os.path.exists(os.path.join(d, c)) for c in commands)]
        self.env = {**os.environ, "HOME": str(self.home), "KENNING_DATA_DIR": str(self.data),
                    "KENNING_PORT": str(free_port()), "PATH": os.pathsep.join([str(self.bin), *kept])}
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "KENNING_INTERNAL"):
            self.env.pop(var, None)

    def write_configs(self) -> None:
        files = {".claude/settings.json": CLAUDE_SETTINGS, ".claude.json": CLAUDE_JSON,
                 ".codex/config.toml": CODEX_CONFIG, ".gemini/settings.json": GEMINI_SETTINGS,
                 ".config/opencode/opencode.json": OPENCODE_JSON, ".cursor/hooks.json": CURSOR_HOOKS}
        for rel, text in files.items():
            path = self.home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.repo / ".github" / "hooks").mkdir(parents=True)
        (self.repo / ".github" / "hooks" / "other.json").write_text(COPILOT_OTHER)
        (self.home / ".copilot").mkdir()

    def own_files(self, agent: str) -> set[Path]:
        """The files install writes for ``agent``."""
        h = self.home
        return {"claude-code": {h / ".claude" / "settings.json", h / ".claude.json"},
                "codex": {h / ".codex" / "config.toml"}, "gemini": {h / ".gemini" / "settings.json"},
                "opencode": {h / ".config" / "opencode" / "plugin" / "kenning.js"},
                "cursor": {h / ".cursor" / "hooks.json"},
                "copilot": {self.repo / ".github" / "hooks" / "kenning.json"}}[agent]

    def snapshot(self) -> dict[Path, bytes | None]:
        """Every file (its bytes) and folder (None) of HOME and the repository, backups left out."""
        out: dict[Path, bytes | None] = {}
        for root in (self.home, self.repo):
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                out[Path(dirpath)] = None
                for name in filenames:
                    if ".kenning-backup-" not in name:
                        out[Path(dirpath) / name] = (Path(dirpath) / name).read_bytes()
        return out

    def kenning(self, *args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kenning", *args], env=self.env, cwd=self.repo, stdin=stdin,
                              capture_output=True, text=True, timeout=120)

    def on_a_terminal(self, *args: str, answer: str) -> tuple[int, str, str]:
        """``kenning <args>`` with a terminal as its stdin, answering ``answer`` to what it asks."""
        master, slave = os.openpty()
        try:
            proc = subprocess.Popen([sys.executable, "-m", "kenning", *args], env=self.env, cwd=self.repo,
                                    stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            os.close(slave)
            os.write(master, answer.encode() + b"\n")
            out, err = proc.communicate(timeout=120)
        finally:
            os.close(master)
        return proc.returncode, out, err

    def fake_command(self, name: str) -> None:
        path = self.bin / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def changed(before: dict[Path, bytes | None], after: dict[Path, bytes | None]) -> set[Path]:
    return {p for p in before.keys() | after.keys() if before.get(p, b"<none>") != after.get(p, b"<none>")}


@pytest.mark.parametrize("agent", ALL)
def test_install_and_uninstall_agent_x_touch_exactly_x_and_give_its_files_back(machine: Machine,
                                                                                agent: str) -> None:
    machine.write_configs()
    before = machine.snapshot()
    r = machine.kenning("install", "--no-start", "--agent", agent)
    assert r.returncode == 0, r.stdout + r.stderr
    after = machine.snapshot()
    files = machine.own_files(agent)
    touched = {p for p in changed(before, after) if after.get(p) is not None or p in before}
    assert touched == files, (agent, touched)  # every file of X written, none of another agent's
    r = machine.kenning("uninstall", "--agent", agent)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "left as they are" in r.stdout
    assert machine.snapshot() == before  # byte for byte, no file or folder left behind


def test_uninstall_agent_x_among_all_installed_removes_only_x(machine: Machine) -> None:
    machine.write_configs()
    before = machine.snapshot()
    r = machine.kenning("install", "--no-start", "--agent", "all")
    assert r.returncode == 0, r.stdout + r.stderr
    current = machine.snapshot()
    for agent in ALL:
        r = machine.kenning("uninstall", "--agent", agent)
        assert r.returncode == 0, r.stdout + r.stderr
        now = machine.snapshot()
        # Only X's files changed, each back to its bytes from before any install (or gone).
        assert {p for p in changed(current, now) if p.is_file() or p in before or p not in now} \
            <= machine.own_files(agent) | {p.parent for p in machine.own_files(agent)}, agent
        for path in machine.own_files(agent):
            assert now.get(path) == before.get(path), path
        current = now
    assert machine.snapshot() == before


def test_plain_install_sets_up_the_agents_found_and_names_cursor_and_copilot(machine: Machine) -> None:
    machine.fake_command("claude")  # Claude Code's command on PATH, no ~/.claude yet
    (machine.home / ".codex").mkdir()  # Codex has been used here
    (machine.home / ".cursor").mkdir()  # so has Cursor: set up only with --agent cursor
    machine.fake_command("copilot")
    r = machine.kenning("install", "--no-start")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (machine.home / ".claude" / "settings.json").exists()
    assert (machine.home / ".claude.json").exists()
    assert (machine.home / ".codex" / "config.toml").exists()
    assert not (machine.home / ".gemini").exists() and not (machine.home / ".config" / "opencode").exists()
    assert not (machine.home / ".cursor" / "hooks.json").exists()
    assert not (machine.repo / ".github").exists()
    assert "not on this machine" not in r.stderr
    assert "`kenning install --agent cursor`" in r.stdout and "`kenning install --agent copilot`" in r.stdout


def test_without_any_agent_and_no_terminal_it_goes_on_and_says_so(machine: Machine) -> None:
    r = machine.kenning("install")
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        first = r.stderr.splitlines()[0]
        assert first == ("kenning: Claude Code is not on this machine (no `claude` command on PATH and no "
                         "~/.claude folder)."), r.stderr
        assert "setting it up anyway" in r.stderr and "nothing is captured until Claude Code is installed" \
            in r.stderr
        assert "Worker running" in r.stdout
        assert "will be remembered" not in r.stdout.replace("remembered once it is installed", "")
        assert "Claude Code: not on this machine yet" in r.stdout
        assert json.loads((machine.home / ".claude" / "settings.json").read_text())["hooks"]
    finally:
        machine.kenning("worker", "stop")


def test_on_a_terminal_install_asks_and_no_writes_nothing(machine: Machine) -> None:
    rc, out, err = machine.on_a_terminal("install", "--no-start", "--agent", "gemini", answer="n")
    assert rc == 1, out + err
    assert "Gemini CLI is not on this machine (no `gemini` command on PATH and no ~/.gemini folder)" in err
    assert "Set Kenning up for Gemini CLI anyway" in out and "Nothing was set up." in out
    assert machine.snapshot() == {machine.home: None, machine.repo: None}
    assert not machine.data.exists()


def test_on_a_terminal_yes_sets_it_up_and_yes_flag_does_not_ask(machine: Machine) -> None:
    rc, out, err = machine.on_a_terminal("install", "--no-start", "--agent", "gemini", answer="y")
    assert rc == 0, out + err
    assert (machine.home / ".gemini" / "settings.json").exists()
    rc, out, err = machine.on_a_terminal("install", "--no-start", "--agent", "opencode", "--yes", answer="n")
    assert rc == 0 and "anyway?" not in out, out + err
    assert (machine.home / ".config" / "opencode" / "plugin" / "kenning.js").exists()


def test_doctor_judges_claude_code_by_what_was_set_up(machine: Machine) -> None:
    def claude_check() -> dict[str, str]:
        r = machine.kenning("doctor", "--json")
        return next(c for c in json.loads(r.stdout) if c["check"] == "Claude Code hooks")

    assert machine.kenning("install", "--no-start", "--yes", "--agent", "codex").returncode == 0
    check = claude_check()
    assert check["status"] == "ok" and "`kenning install --agent claude-code`" in check["detail"], check
    settings = machine.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"enabledPlugins": {"kenning@kenning": true}}\n')
    check = claude_check()
    assert check["status"] == "ok" and "Kenning plugin (kenning@kenning)" in check["detail"], check
    r = machine.kenning("install", "--no-start")  # Claude Code is found, and set up by the plugin
    assert "Claude Code: set up by the Kenning plugin (kenning@kenning)" in r.stdout, r.stdout
    assert json.loads(settings.read_text()) == {"enabledPlugins": {"kenning@kenning": True}}
    assert not (machine.home / ".claude.json").exists()
    r = machine.kenning("install", "--no-start", "--agent", "claude-code")
    assert "The Kenning plugin (kenning@kenning) is enabled too: its hooks stand aside" in r.stdout, r.stdout
    assert machine.kenning("uninstall", "--agent", "codex").returncode == 0
    r = machine.kenning("uninstall", "--agent", "claude-code")
    assert "`claude plugin uninstall kenning@kenning` removes it" in r.stdout, r.stdout
    settings.write_text("{}\n")
    machine.kenning("uninstall", "--agent", "claude-code")
    assert claude_check()["status"] == "fail"  # nothing set up anywhere: `kenning install`
