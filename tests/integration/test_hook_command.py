"""The hook command `kenning install` registers, run as Claude Code runs it: exec form, no shell,
no ``site``; from this checkout (the editable install scripts/test.sh makes), from a copy laid
out like a wheel's site-packages, and from a stale path (it falls back to ``site``)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kenning
from kenning.integrations import claude_code as cc
from kenning.integrations import launch

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude-code"
# Imports no hook needs: each costs a hook process milliseconds (enum alone ~2 ms, urllib.parse with
# ipaddress ~3 ms, typing ~5 ms), so the hook's module level imports none of them.
UNNEEDED = ("site", "signal", "urllib", "urllib.parse", "ipaddress", "subprocess", "typing", "socket",
            "json", "sqlite3", "datetime", "argparse", "http.client", "threading")


def payload(event: str, cwd: Path) -> dict[str, Any]:
    name = {"PostToolUse": "PostToolUse.Bash", "SessionStart": "SessionStart", "PreToolUse": "PreToolUse.Read",
            "UserPromptSubmit": "UserPromptSubmit"}[event]
    data = json.loads((FIXTURES / "print-mode" / "events" / f"{name}.json").read_text())["stdin"]
    return {**data, "cwd": str(cwd)}


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    data, claude, project = tmp_path / "data", tmp_path / "claude", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("KENNING_DATA_DIR", str(data))
    return {"data": data, "claude": claude, "project": project}


def run(argv: list[str], stdin: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "KENNING_DATA_DIR"}  # the command must carry it
    env["KENNING_PORT"] = "1"  # never reach a real worker
    return subprocess.run(argv, input=json.dumps(stdin).encode(), capture_output=True, cwd=cwd, env=env,
                          timeout=30)


def spooled(data: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((data / "spool").glob("*.json"))]


def registered(event: str) -> dict[str, Any]:
    settings = json.loads((Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    return next(h for g in settings["hooks"][event] for h in g["hooks"] if cc.is_ours(h))


def test_the_registered_exec_form_captures_without_site(dirs: dict[str, Path]) -> None:
    from kenning.paths import Paths

    cc.install(Paths(), mcp=False)
    handler = registered("PostToolUse")
    argv = [handler["command"], *handler["args"]]
    r = run(argv, payload("PostToolUse", dirs["project"]), dirs["project"])
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", r.stderr
    (rec,) = spooled(dirs["data"])
    assert rec["event"] == "PostToolUse" and rec["payload"]["tool_input"]["command"] == "echo hi"

    # The same command, stopped before the hook runs, shows what was imported and from where.
    probe = launch.import_check(argv, fallback=False)
    assert probe is not None
    probe[-1] = probe[-1].removesuffix("pass") + "import sys,kenning;print(kenning.__file__, 'site' in sys.modules)"
    out = subprocess.run(probe, capture_output=True, text=True, timeout=30).stdout.split()
    assert out == [kenning.__file__, "False"]


def test_a_wheel_layout_and_a_stale_path_both_work(dirs: dict[str, Path], tmp_path: Path) -> None:
    site_packages = tmp_path / "venv" / "lib" / "site-packages"
    shutil.copytree(Path(kenning.__file__).parent, site_packages / "kenning",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = launch.hook_code(str(site_packages), str(dirs["data"]))
    probe = [sys.executable, "-I", "-S", "-c", code.removesuffix("cli()") + "import kenning;print(kenning.__file__)"]
    where = subprocess.run(probe, capture_output=True, text=True, timeout=30, cwd=dirs["project"]).stdout.strip()
    assert where == str(site_packages / "kenning" / "__init__.py")
    r = run([sys.executable, "-I", "-S", "-c", code, "claude-code", "PostToolUse"],
            payload("PostToolUse", dirs["project"]), dirs["project"])
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert len(spooled(dirs["data"])) == 1

    # The package moved away after install: the hook falls back to site (slower, still captured).
    stale = launch.hook_code(str(tmp_path / "gone"), str(dirs["data"]))
    r = run([sys.executable, "-I", "-S", "-c", stale, "claude-code", "PostToolUse"],
            payload("PostToolUse", dirs["project"]), dirs["project"])
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert len(spooled(dirs["data"])) == 2


@pytest.mark.parametrize("event", ["PostToolUse", "SessionStart", "PreToolUse", "UserPromptSubmit"])
def test_a_hook_imports_nothing_it_does_not_use(home: Any, event: str) -> None:
    home.start_worker()  # SessionStart's usual case: the worker answers (no start-up to import for)
    # main() instead of cli(), so the module table can be printed (to stderr) once the hook is done.
    code = launch.hook_code(launch.package_parent(), str(home.data)).removesuffix("cli()").replace(
        "import cli", "import main")
    code += "main(sys.argv[1:]);sys.stderr.write(' '.join(sorted(sys.modules)))"
    stdin = payload(event, home.project)
    stdin["permission_mode"] = "default"  # the redactor's anchors are not what this test is about
    if event == "PreToolUse":  # a Read of a file large enough to get its history
        big = home.project / "big.py"
        big.write_text("x = 1\n" * 2000)
        stdin["tool_input"] = {"file_path": str(big)}
    if event == "UserPromptSubmit":
        stdin["prompt"] = "how did we fix the flaky parser test last week"
    r = subprocess.run([sys.executable, "-I", "-S", "-c", code, "claude-code", event], input=json.dumps(stdin).encode(),
                       capture_output=True, cwd=home.project, env=home.env, timeout=30)
    assert r.returncode == 0
    loaded = set(r.stderr.decode().split())
    assert "kenning.hook.main" in loaded
    assert not loaded & set(UNNEEDED), sorted(loaded & set(UNNEEDED))
    if event == "SessionStart":
        assert b"<kenning-context>" in r.stdout and "kenning.daemon" not in loaded
    if event == "PostToolUse":  # the worker's pipe wakes it: no socket module, no pid file to read; posix, not os
        unneeded = {"_socket", "kenning.hook.client", "os", "_collections_abc"}
        assert not loaded & unneeded, sorted(loaded & unneeded)


@pytest.mark.parametrize("agent", ["codex", "gemini", "cursor", "copilot"])
def test_agents_that_take_a_shell_string_get_the_same_command(dirs: dict[str, Path], agent: str) -> None:
    from kenning.integrations import files

    command = files.hook_command(agent, "PostToolUse")
    assert shlex.split(command) == launch.hook_argv(agent, "PostToolUse", data_dir=str(dirs["data"]))
    assert files.is_our_command(command, agent) and not files.is_our_command(command, "someone-else")
    # Through a real shell, as those agents run it: the package from its directory, no site.
    probe = command.replace("import cli;cli()'", "import cli;print(\"site\" in sys.modules, cli.__module__)'")
    out = subprocess.run(["/bin/sh", "-c", probe], capture_output=True, text=True, timeout=30, cwd=dirs["project"])
    assert out.returncode == 0 and out.stdout.split() == ["False", "kenning.hook.main"], out.stderr


def test_doctor_says_when_the_registered_command_falls_back_to_site(dirs: dict[str, Path]) -> None:
    from kenning.paths import Paths

    cc.install(Paths(), mcp=False)
    settings_file = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    env = {**os.environ, "KENNING_PORT": "1"}

    def doctor() -> str:
        r = subprocess.run([sys.executable, "-m", "kenning", "doctor"], capture_output=True, text=True, env=env,
                           timeout=120, cwd=dirs["project"])
        return next(line for line in r.stdout.splitlines() if "hook interpreter" in line)

    assert doctor().lstrip().startswith("✓")
    here = json.dumps(launch.package_parent())[1:-1]  # as it appears in the JSON of the settings file
    # Every literal of the program that names the package's directory (not the interpreter's path).
    moved = settings_file.read_text().replace(f'\\"{here}', '\\"/gone/site-packages')
    assert moved != settings_file.read_text()
    settings_file.write_text(moved)
    line = doctor()
    assert "package moved" in line and "kenning install" in line, line
