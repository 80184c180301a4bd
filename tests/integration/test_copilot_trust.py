"""Copilot CLI runs a repository's hooks only in a folder it trusts: ``kenning install --agent copilot``,
``kenning doctor`` and the first context of a session (hooks that ran on trust given for that session
only) say so, with how to trust it. Real CLI and hook processes, a scratch HOME and ``COPILOT_HOME``;
the real Copilot CLI's side of it is in tests/e2e/test_copilot_memory.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import Home


def _env(home: Home) -> dict[str, str]:
    scratch = home.root / "home"
    scratch.mkdir(exist_ok=True)
    env = {**home.env, "HOME": str(scratch), "COPILOT_HOME": str(home.root / "copilot-home"),
           "KENNING_PROVIDER": "rules"}
    for var in ("CLAUDE_CONFIG_DIR", "COPILOT_ALLOW_ALL", "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS"):
        env.pop(var, None)
    return env


def _trust(home: Home, folder: Path) -> None:
    config = home.root / "copilot-home" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("// User settings belong in settings.json.\n// This file is managed automatically.\n"
                      + json.dumps({"trustedFolders": [str(folder)]}, indent=2) + "\n")


def _session_start(home: Home, env: dict[str, str]) -> str:
    payload = {"sessionId": "0b6a2c1e-3f4d-4e5f-8a9b-1c2d3e4f5a6b", "timestamp": 1796100000000,
               "cwd": str(home.project), "source": "new", "initialPrompt": "What did we do last time?"}
    r = subprocess.run([sys.executable, "-I", "-m", "kenning", "hook", "copilot", "sessionStart"],
                       input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=60,
                       cwd=str(home.project))
    assert r.returncode == 0 and r.stdout, r.stderr
    return str(json.loads(r.stdout)["additionalContext"])


def test_untrusted_folder_is_said_by_install_doctor_and_the_first_context(home: Home) -> None:
    env = _env(home)
    installed = subprocess.run([sys.executable, "-m", "kenning", "install", "--no-start", "--agent", "copilot"],
                               env=env, cwd=home.project, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    warning = f"does not trust {home.project}"
    assert warning in installed.stdout and str(home.root / "copilot-home" / "config.json") in installed.stdout
    doctor = subprocess.run([sys.executable, "-m", "kenning", "doctor"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert any("Copilot CLI trust" in ln and warning in ln for ln in doctor.stdout.splitlines()), doctor.stdout

    first = _session_start(home, env)  # the hooks ran all the same: trust given for this session only
    assert first.startswith(f"Kenning, for the user: GitHub Copilot CLI trusts {home.project} for this session "
                            "only"), first[:300]
    assert "trustedFolders" in first.split("\n", 1)[0]
    assert "<kenning-context>" in first
    assert "Kenning, for the user" not in _session_start(home, {**env, "COPILOT_ALLOW_ALL": "true"})

    _trust(home, home.project.parent)  # a trusted parent covers the repository
    assert "Kenning, for the user" not in _session_start(home, env)
    doctor = subprocess.run([sys.executable, "-m", "kenning", "doctor"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert "Copilot CLI trust" not in doctor.stdout and "Copilot CLI hooks" in doctor.stdout, doctor.stdout
    again = subprocess.run([sys.executable, "-m", "kenning", "install", "--no-start", "--agent", "copilot"],
                           env=env, cwd=home.project, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "does not trust" not in again.stdout, again.stdout
