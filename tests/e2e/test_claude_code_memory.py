"""End to end through the real Claude Code CLI, offline against the fake Messages API.

``kenning install`` writes its hooks into a scratch ``~/.claude/settings.json``; session 1
writes a file, runs a failing check, fixes the file and runs the check again; session 2's
first request to the model must carry Kenning's context listing what session 1 did.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agent_clis import session_line
from tests.support.claude_cli import kenning_cli, run_claude, scratch_env
from tests.support.fake_anthropic import FakeAnthropic, script_by_prompt, text, tool_use

pytestmark = pytest.mark.e2e

# -B: with no .pyc, a same-second, same-size edit cannot be masked by a stale bytecode cache.
CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""


def test_second_session_is_told_what_the_first_did(claude_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "calc-project")
    installed = kenning_cli(env, "install", "--no-start")
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"}

    calc = project / "calc.py"
    session1 = [
        [text("Creating the module."), tool_use("Write", {"file_path": str(calc),
                                                          "content": "def add(a, b):\n    return a - b\n"})],
        [tool_use("Bash", {"command": CHECK, "description": "Check add"})],
        [tool_use("Read", {"file_path": str(calc)})],
        [tool_use("Edit", {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b"})],
        [tool_use("Bash", {"command": CHECK, "description": "Check add again"})],
        [text("Fixed: add() now adds. Next step: add a test file for calc.")],
    ]
    session2 = [[text("Noted.")]]
    script = script_by_prompt({"calc.py": session1, "last time": session2})
    # The hooks see only the CLI's (clean) environment: give them the scratch port.
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}  # the offline observer, explicitly

    with FakeAnthropic(script=script) as fake:
        first = run_claude("Create calc.py with an add function and make sure it works.", cwd=project,
                           home=home, base_url=fake.base_url, extra_env=hook_env, timeout=120,
                           claude_bin=claude_bin)
        assert first["rc"] == 0, first["stderr"] or first["stdout"]
        assert calc.read_text() == "def add(a, b):\n    return a + b\n"
        n_first = len(fake.requests_of("main"))
        second = run_claude("What did we do last time?", cwd=project, home=home, base_url=fake.base_url,
                            extra_env=hook_env, timeout=120, claude_bin=claude_bin)
        assert second["rc"] == 0, second["stderr"] or second["stdout"]
        main = fake.requests_of("main")

    try:
        # Session 1 produced the memory a developer would want.
        conn = __import__("sqlite3").connect(data / "kenning.db")
        rows = conn.execute("SELECT type, title, files_modified FROM observations ORDER BY id").fetchall()
        types = {r[0] for r in rows}
        events = conn.execute("SELECT id, kind, tool_name, prompt_number, occurred_at, status, processed_at "
                              "FROM events ORDER BY id").fetchall()
        assert "bugfix" in types, "\n".join(map(str, [*rows, *events]))
        assert {"feature", "change"} & types, rows
        bugfix = next(r for r in rows if r[0] == "bugfix")
        assert "add is broken" in bugfix[1] or "AssertionError" in bugfix[1]
        assert json.loads(bugfix[2]) == ["calc.py"]
        summary = conn.execute("SELECT request, completed FROM session_summaries").fetchone()
        assert summary is not None and "calc.py" in summary[0]

        # Session 2's very first request carries the context with those rows.
        first_of_session2 = main[n_first]
        first_message = json.dumps(first_of_session2["body"]["messages"][0])
        assert "SessionStart hook additional context" in first_message
        assert "kenning-context" in first_message
        said = first_of_session2["body"]["messages"][0]["content"]
        told = said if isinstance(said, str) else "\n".join(str(b.get("text", "")) for b in said)
        assert session_line(told, "Create calc.py with an add function"), told
        assert "Memory of calc-project" in first_message
    finally:
        kenning_cli(env, "worker", "stop")
        kenning_cli(env, "uninstall", "--keep-worker")
    # There was no settings file before install: uninstall leaves none.
    assert not (home / ".claude" / "settings.json").exists()
