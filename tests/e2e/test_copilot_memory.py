"""End to end through the real GitHub Copilot CLI (npm ``@github/copilot`` 1.0.102), offline: ``copilot -p``
on a BYOK provider (``COPILOT_OFFLINE=true``, ``COPILOT_PROVIDER_BASE_URL`` = the fake Chat Completions API).

``kenning install --agent copilot`` writes ``.github/hooks/kenning.json`` in a repository Copilot does not
trust: install and doctor warn, and a session there indeed runs none of the hooks. Once the folder is
trusted (``trustedFolders`` in ``~/.copilot/config.json``), session 1 writes calc.py, runs a check that
fails (Copilot reports it as a ``success`` result whose text ends in ``<shellId: 0 completed with exit
code 1>``), fixes it and runs it again: the failure is recorded as a failure, and the final answer (not in
agentStop's payload: read from the transcript) is kept. Session 2 gets that memory in its first request.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_clis import ensure_copilot, run_copilot, stored_bugfix, stored_prompts, trust_copilot_folder
from tests.support.claude_cli import kenning_cli, scratch_env
from tests.support.fake_openai import FakeOpenAI, tool_call

pytestmark = pytest.mark.e2e

CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""
ANSWER = "Fixed: add() now adds, and the check passes."


@pytest.fixture(scope="module")
def copilot_bin() -> str:
    path = ensure_copilot()
    if path is None:
        pytest.skip("Copilot CLI unavailable (KENNING_TEST_COPILOT=0, or no COPILOT_BIN, no npm or a failed install)")
    return path


def _session1(calc: Path) -> list[dict[str, Any]]:
    draft = "def add(a, b):\n    return a - b\n"
    return [{"tool_calls": [tool_call("create", {"path": str(calc), "file_text": draft})]},
            {"tool_calls": [tool_call("bash", {"command": CHECK, "description": "Check add"})]},
            {"tool_calls": [tool_call("edit", {"path": str(calc), "old_str": "return a - b",
                                               "new_str": "return a + b"})]},
            {"tool_calls": [tool_call("bash", {"command": CHECK, "description": "Check add again"})]},
            {"content": ANSWER}]


def _script(calc: Path) -> Any:
    """Session 1's steps by the number of tool results in the request; other sessions get a short answer."""
    steps = _session1(calc)

    def pick(body: dict[str, Any]) -> Any:
        messages = body.get("messages") or []
        if not body.get("tools"):
            return "calc"  # a side request (a title), not the agent's turn
        if not any("Create calc.py" in json.dumps(m.get("content")) for m in messages if m.get("role") == "user"):
            return "Noted."
        done = sum(1 for m in messages if m.get("role") == "tool")
        return steps[min(done, len(steps) - 1)]

    return pick


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def test_copilot_untrusted_folder_is_told_and_trusted_one_remembers(copilot_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "calc-project", unset=("COPILOT_HOME", "COPILOT_ALLOW_ALL"))
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}
    calc = project / "calc.py"
    installed = subprocess.run([sys.executable, "-m", "kenning", "install", "--no-start", "--agent", "copilot"],
                               cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    assert (project / ".github" / "hooks" / "kenning.json").exists()
    assert f"does not trust {project}" in installed.stdout and "trustedFolders" in installed.stdout, installed.stdout
    doctor = kenning_cli(env, "doctor")
    trust_lines = [ln for ln in doctor.stdout.splitlines() if "Copilot CLI trust" in ln]
    assert trust_lines and f"does not trust {project}" in trust_lines[0], doctor.stdout
    try:
        with FakeOpenAI(script=_script(calc)) as fake:
            # Untrusted: Copilot runs the session but none of the repository's hooks (what doctor warned of).
            untrusted = run_copilot("What is in this folder?", copilot_bin=copilot_bin, cwd=project, home=home,
                                    base_url=fake.base_url, extra_env=hook_env)
            assert untrusted["rc"] == 0, untrusted["stderr"][-3000:]
            assert fake.requests and "kenning-context" not in json.dumps(fake.requests[0]["body"])
            assert _rows(data / "kenning.db", "SELECT id FROM sessions") == []

            trust_copilot_folder(home, project)
            doctor = kenning_cli(env, "doctor")
            assert "Copilot CLI trust" not in doctor.stdout, doctor.stdout
            first = run_copilot("Create calc.py with an add function and make sure it works.", copilot_bin=copilot_bin,
                                cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env)
            assert first["rc"] == 0, first["stderr"][-3000:]
            assert calc.read_text() == "def add(a, b):\n    return a + b\n"
            # The failing check reached Copilot's hook as a success: the text's exit line is what says 1.
            assert "completed with exit code 1>" in json.dumps(fake.requests[-1]["body"]["messages"])
            n_first = len(fake.requests)
            second = run_copilot("What did we do last time?", copilot_bin=copilot_bin, cwd=project, home=home,
                                 base_url=fake.base_url, extra_env=hook_env)
            assert second["rc"] == 0, second["stderr"][-3000:]
            second_requests = [r["body"] for r in fake.requests[n_first:] if r["body"].get("tools")]

        stored_bugfix(data, "copilot")  # the failure recorded as PostToolUseFailure, then a bugfix
        assert stored_prompts(data, 2) == ["Create calc.py with an add function and make sure it works.",
                                               "What did we do last time?"]
        stops = _rows(data / "kenning.db", "SELECT payload FROM events WHERE kind = 'Stop' ORDER BY id")
        assert stops and json.loads(stops[0][0])["last_assistant_message"] == ANSWER, stops
        # Session 2: the session-start context is a user message of Copilot's first request.
        told = json.dumps(second_requests[0]["messages"])
        assert "Memory of calc-project" in told and "Create calc.py with an add function" in told, told
    finally:
        kenning_cli(env, "worker", "stop")
        removed = kenning_cli(env, "uninstall", "--keep-worker")
    assert removed.returncode == 0, removed.stderr
    assert not (project / ".github").exists()
