"""A corrected rule through the real Claude Code CLI, offline against the fake Messages API.

``kenning install`` writes its hooks into a scratch ``~/.claude/settings.json``. Session 1 states
a rule, session 2 corrects it, and session 3's very first request to the model must carry the new
rule (from SessionStart) and nothing of the old one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.claude_cli import kenning_cli, run_claude, scratch_env
from tests.support.fake_anthropic import FakeAnthropic, script_by_prompt, text

pytestmark = pytest.mark.e2e

RULE = "Run the tests with `make test` before every commit."
CORRECTION = "`make test` is gone; from now on run `just test` before every commit."
QUESTION = "What do I have to run before I commit?"


def test_the_third_session_is_told_the_corrected_rule_only(claude_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "shop")
    assert kenning_cli(env, "install", "--no-start").returncode == 0
    script = script_by_prompt({"make test` before": [[text("Noted: `make test` before every commit.")]],
                               "is gone": [[text("Understood: `just test` from now on.")]],
                               QUESTION: [[text("Run `just test`.")]]})
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}  # the offline observer, explicitly
    try:
        with FakeAnthropic(script=script) as fake:
            for prompt in (RULE, CORRECTION):
                res = run_claude(prompt, cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env,
                                 timeout=120, claude_bin=claude_bin)
                assert res["rc"] == 0, res["stderr"] or res["stdout"]
            before = len(fake.requests_of("main"))
            res = run_claude(QUESTION, cwd=project, home=home, base_url=fake.base_url, extra_env=hook_env,
                             timeout=120, claude_bin=claude_bin)
            assert res["rc"] == 0, res["stderr"] or res["stdout"]
            first = fake.requests_of("main")[before]

        conn = __import__("sqlite3").connect(data / "kenning.db")
        rules = conn.execute("SELECT title, status FROM observations WHERE type = 'decision' ORDER BY id").fetchall()
        assert rules == [("Run the tests with `make test` before every commit", "superseded"),
                         ("`make test` is gone; from now on run `just test` before every commit", "active")], rules
        message = json.dumps(first["body"]["messages"][0], ensure_ascii=False)
        assert "SessionStart hook additional context" in message and "kenning-context" in message
        assert "from now on run `just test` before every commit" in message
        assert "Run the tests with `make test`" not in message
    finally:
        kenning_cli(env, "worker", "stop")
        kenning_cli(env, "uninstall", "--keep-worker")
