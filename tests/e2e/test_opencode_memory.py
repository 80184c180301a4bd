"""End to end through the real OpenCode CLI (npm ``opencode-ai`` 1.18.33), offline: ``opencode run`` on a
provider whose ``baseURL`` is the fake Chat Completions API, with Kenning's plugin from ``kenning install
--agent opencode``.

``opencode run`` turns its message words into the prompt by wrapping each word that holds a space in
double quotes (its own ``"`` escaped as ``\\"``): the prompt is stored as the user typed it, and the next
session's context tells it (and the standing rule it states) that way, not as a quoted sentence.
Uninstall deletes the plugin file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.agent_clis import ensure_opencode, run_opencode, stored_prompts, write_opencode_config
from tests.support.claude_cli import kenning_cli, scratch_env
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.e2e

# A standing rule too ("always …"): the rules observer keeps the whole prompt as one, told to every agent.
PROMPT = 'Rename the "total" helper in billing.py to "grand_total" and always run the billing tests after editing it'


@pytest.fixture(scope="module")
def opencode_bin() -> str:
    path = ensure_opencode()
    if path is None:
        pytest.skip("OpenCode unavailable (KENNING_TEST_OPENCODE=0, or no OPENCODE_BIN and no npm or a failed install)")
    return path


def test_opencode_run_prompt_is_stored_without_the_cli_quoting(opencode_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "billing-project",
                                                 unset=("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"))
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}
    try:
        with FakeOpenAI(script=lambda body: "Renamed." if body.get("tools") else "billing") as fake:
            config = write_opencode_config(home, fake.base_url)
            before = config.read_bytes()
            installed = kenning_cli(env, "install", "--no-start", "--agent", "opencode")
            assert installed.returncode == 0, installed.stderr
            assert (config.parent / "plugin" / "kenning.js").exists()
            first = run_opencode([PROMPT], opencode_bin=opencode_bin, cwd=project, home=home, extra_env=hook_env)
            assert first["rc"] == 0, first["stderr"][-3000:]
            # What OpenCode itself made of the message: the quoted form, in the model's request.
            asked = [m for r in fake.requests if r["body"].get("tools") for m in r["body"]["messages"]]
            quoted = '"' + PROMPT.replace('"', '\\"') + '"'
            assert quoted in [m.get("content") for m in asked if m.get("role") == "user"], asked
            # Several words, one with a space: only that word was quoted by the CLI.
            second = run_opencode(["now", "check the tests"], opencode_bin=opencode_bin, cwd=project, home=home,
                                  extra_env=hook_env)
            assert second["rc"] == 0, second["stderr"][-3000:]
            n = len(fake.requests)
            third = run_opencode(["What did we do last time?"], opencode_bin=opencode_bin, cwd=project, home=home,
                                 extra_env=hook_env)
            assert third["rc"] == 0, third["stderr"][-3000:]
            request = next(r["body"] for r in fake.requests[n:] if r["body"].get("tools"))
            told = "\n".join(str(m.get("content")) for m in request["messages"])

        assert stored_prompts(data, 3) == [PROMPT, "now check the tests", "What did we do last time?"]
        conn = sqlite3.connect(data / "kenning.db")
        try:  # the process's arguments served to undo the quoting; they are not kept
            assert conn.execute("SELECT count(*) FROM events WHERE payload LIKE '%cli_args%'").fetchone() == (0,)
        finally:
            conn.close()
        # Session 3 is told the sessions as they were asked, not as the CLI's quoted sentence.
        fenced = told[told.index("<kenning-context>"):told.index("</kenning-context>")]
        assert "Memory of billing-project" in fenced
        rules = [ln for ln in fenced.splitlines() if ln.startswith("#") and "\u2696" in ln]  # the rule rows
        assert len(rules) == 1 and rules[0].endswith(f" {PROMPT}"), fenced
        assert quoted not in fenced and '\\"' not in fenced, fenced
        assert "Worked on: Now check the tests\n" in fenced, fenced  # (the latest session: where we left off)
    finally:
        kenning_cli(env, "worker", "stop")
        removed = kenning_cli(env, "uninstall", "--keep-worker")
    assert removed.returncode == 0, removed.stderr
    assert not (config.parent / "plugin" / "kenning.js").exists()
    assert config.read_bytes() == before
