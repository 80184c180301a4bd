"""``kenning doctor --json``: the same checks as the text, as data, with the same exit code."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import Home

MARKS = {"✓": "ok", "!": "warn", "✗": "fail"}


def _scratch(home: Home, tmp_path: Path) -> None:
    """Agents' config folders in a scratch HOME: doctor reads them, the user's must stay out of it."""
    (tmp_path / "home").mkdir()
    home.env["HOME"] = str(tmp_path / "home")
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"):
        home.env.pop(name, None)


def _both(home: Home) -> tuple[int, list[tuple[str, str]], int, list[dict[str, Any]]]:
    text = home.kenning("doctor", cwd=str(home.project))
    data = home.kenning("doctor", "--json", cwd=str(home.project))
    lines = [(MARKS[line[0]], line[2:].split(": ", 1)[0]) for line in text.stdout.splitlines()]
    return text.returncode, lines, data.returncode, json.loads(data.stdout)


def test_doctor_json_before_install_names_the_fix(home: Home, tmp_path: Path) -> None:
    _scratch(home, tmp_path)
    rc, lines, json_rc, checks = _both(home)
    assert rc == json_rc == 1
    assert checks == [{"check": "data dir", "status": "fail", "ok": False,
                       "detail": f"{home.data} does not exist: run `kenning install`", "fix": "kenning install"}]
    assert lines == [("fail", "data dir")]


def test_doctor_json_after_install_lists_the_same_checks(home: Home, tmp_path: Path) -> None:
    _scratch(home, tmp_path)
    assert home.kenning("install", "--no-start").returncode == 0
    home.start_worker()
    rc, lines, json_rc, checks = _both(home)
    assert [(c["status"], c["check"]) for c in checks] == lines  # the same checks, in the same order
    assert {"worker", "Claude Code hooks", "database", "observer"} <= {c["check"] for c in checks}
    assert all(set(c) == {"check", "status", "ok", "detail", "fix"} for c in checks)
    assert all(c["ok"] == (c["status"] == "ok") and (c["fix"] is None or c["status"] != "ok") for c in checks)
    assert rc == json_rc == (1 if any(c["status"] == "fail" for c in checks) else 0)

    home.stop_worker()  # a failing check: the exit code and the fix follow it
    rc, lines, json_rc, checks = _both(home)
    worker = next(c for c in checks if c["check"] == "worker")
    assert worker["status"] == "fail" and worker["fix"] == "kenning worker start", worker
    assert rc == json_rc == 1 and [(c["status"], c["check"]) for c in checks] == lines
    assert os.path.isdir(home.data)


def test_doctor_compares_the_workers_settings_with_the_shells(home: Home) -> None:
    """Asked of the running worker: a variable only in its environment, then settings.json edited after it
    started; the shell's values are named as what a new worker would use."""
    import subprocess

    home.env["KENNING_CONTEXT_MAX_CHARS"] = "5000"
    home.start_worker()
    shell = {k: v for k, v in home.env.items() if k != "KENNING_CONTEXT_MAX_CHARS"}

    def line() -> str:
        out = subprocess.run([*home._argv(), "doctor", "--json"], env=shell, capture_output=True, text=True,
                             timeout=60).stdout
        return next(f"{c['status']} {c['detail']}" for c in json.loads(out) if c["check"] == "worker settings")

    got = line()
    assert got.startswith("warn") and "context_max_chars=5000 (this shell: " in got, got
    assert "KENNING_CONTEXT_MAX_CHARS" in got and "kenning worker restart" in got, got
    # The same environment: nothing to say but that they agree.
    shell["KENNING_CONTEXT_MAX_CHARS"] = "5000"
    assert line().startswith("ok "), line()
    # settings.json edited while the worker runs: the file's new value is the shell's.
    Path(home.paths.settings).write_text(json.dumps({"archive_after_days": 3}))
    got = line()
    assert got.startswith("warn") and "archive_after_days=" in got and "(this shell: 3)" in got, got
    home.stop_worker()
