"""End to end through the real Gemini CLI (offline, fake Gemini API) and then the real Claude Code CLI.

``kenning install --agent gemini`` adds its hooks to a scratch ``~/.gemini/settings.json``.
Session 1 in Gemini writes a file, runs a check that fails, fixes the file with ``replace`` and
runs the check again; session 2 in Gemini gets that memory in its first model request (inside
Gemini's ``<hook_context>``); session 3 in Claude Code on the same project gets it too, marked as
Gemini's. Uninstall removes exactly our entries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support import fake_gemini
from tests.support.agent_clis import (
    claude_code_is_told,
    ensure_gemini,
    run_gemini,
    stored_bugfix,
    stored_prompts,
    write_gemini_settings,
)
from tests.support.claude_cli import kenning_cli, scratch_env
from tests.support.fake_gemini import FakeGemini, call, script_by_prompt, text

pytestmark = pytest.mark.e2e

CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""


@pytest.fixture(scope="module")
def gemini_bin() -> str:
    path = ensure_gemini()
    if path is None:
        pytest.skip("Gemini CLI unavailable (no GEMINI_BIN, npm missing or install failed)")
    return path


def test_gemini_sessions_remember_and_claude_code_is_told(gemini_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "calc-project", unset=("GEMINI_CLI_HOME",))
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}
    calc = project / "calc.py"
    settings = write_gemini_settings(home)
    before = json.loads(settings.read_text())
    installed = kenning_cli(env, "install", "--no-start", "--agent", "gemini", "--agent", "claude-code")
    assert installed.returncode == 0, installed.stderr
    assert "Gemini CLI: hooks for" in installed.stdout

    session1 = [[text("Creating the module."), call("write_file", {"file_path": str(calc),
                                                                   "content": "def add(a, b):\n    return a - b\n"})],
                [call("run_shell_command", {"command": CHECK, "description": "Check add"})],
                [call("replace", {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b",
                                  "instruction": "fix the sign"})],
                [call("run_shell_command", {"command": CHECK, "description": "Check add again"})],
                [text("Fixed: add() now adds. Next step: add a test file for calc.")]]
    script = script_by_prompt({"calc.py": session1, "last time": [[text("Noted.")]]})
    try:
        with FakeGemini(script=script) as fake:
            first = run_gemini("Create calc.py with an add function and make sure it works.", gemini_bin=gemini_bin,
                               cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env)
            assert first["rc"] == 0, first["stderr"][-3000:]
            assert calc.read_text() == "def add(a, b):\n    return a + b\n"
            n_first = len(fake.model_requests())
            second = run_gemini("What did we do last time?", gemini_bin=gemini_bin, cwd=project, home=home,
                                base_url=fake.base_url, extra_env=hook_env)
            assert second["rc"] == 0, second["stderr"][-3000:]
            first_of_session2 = fake.model_requests()[n_first]["body"]

        rows, bugfix = stored_bugfix(data, "gemini")
        prompts = stored_prompts(data, 2)
        # Gemini put our SessionStart context in front of the prompt: it is not stored as the prompt.
        assert prompts == ["Create calc.py with an add function and make sure it works.", "What did we do last time?"]

        # Session 2: Gemini's first request has the context in the user turn.
        user_text = json.dumps(first_of_session2["contents"][0])
        assert "<hook_context>" in user_text and "kenning-context" in user_text, fake_gemini.all_text(first_of_session2)
        assert "Memory of calc-project" in user_text
        assert rows and bugfix
        assert re.search(r"\bS1\b", user_text) and "Create calc.py with an add function" in user_text, user_text

        # Session 3: Claude Code on the same project is told what Gemini did, attributed to Gemini.
        claude_code_is_told(project, home, hook_env, "Gemini CLI", "Create calc.py with an add function")
    finally:
        kenning_cli(env, "worker", "stop")
        removed = kenning_cli(env, "uninstall", "--keep-worker")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings.read_text()) == before
