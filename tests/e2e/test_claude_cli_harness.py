"""Proves the e2e support works: real CLI + fake API + user-settings hooks."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import run_claude, write_user_settings
from tests.support.fake_anthropic import FakeAnthropic, text, tool_use

pytestmark = pytest.mark.e2e

MARKER = "MARKER-XYZ"

# Appends each hook's stdin payload to $HOOK_LOG; on SessionStart also injects MARKER
# as additionalContext, which the CLI must forward to the model.
_HOOK_CODE = f"""
import json, os, sys
payload = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as fh:
    fh.write(json.dumps(payload) + "\\n")
if payload.get("hook_event_name") == "SessionStart":
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "SessionStart",
                                            "additionalContext": "{MARKER}"}}}}))
"""


def _hook_settings() -> dict[str, Any]:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(_HOOK_CODE)}"
    hook = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
    return {"hooks": {"SessionStart": [hook], "PostToolUse": [{"matcher": "*", **hook}]}}


def test_real_cli_runs_scripted_session_with_hooks(claude_bin: str, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    hook_log = tmp_path / "hooks.jsonl"
    write_user_settings(home, _hook_settings())
    target = project / "hello.txt"
    script = [
        [text("Running a command."), tool_use("Bash", {"command": "echo hi", "description": "Print hi"})],
        [tool_use("Write", {"file_path": str(target), "content": "hello from the fake model\n"})],
        [text("All done. FINAL-ANSWER")],
    ]

    with FakeAnthropic(script=script) as fake:
        res = run_claude(
            "Run echo hi, then write hello.txt.",
            cwd=project,
            home=home,
            base_url=fake.base_url,
            extra_env={"HOOK_LOG": str(hook_log)},
            timeout=60,
            claude_bin=claude_bin,
        )

    assert res["rc"] == 0, res["stderr"] or res["stdout"]
    assert res["json"] is not None and res["json"]["result"] == "All done. FINAL-ANSWER"
    assert target.read_text() == "hello from the fake model\n"

    main = [r for r in fake.requests if r["kind"] == "main"]
    assert [r["step"] for r in main] == [0, 1, 2]
    assert all(r["body"]["stream"] for r in main)
    assert MARKER in json.dumps(main[0]["body"]["messages"][0])

    events = [json.loads(line) for line in hook_log.read_text().splitlines()]
    assert any(e["hook_event_name"] == "SessionStart" for e in events)
    bash_posts = [e for e in events if e["hook_event_name"] == "PostToolUse" and e["tool_name"] == "Bash"]
    assert len(bash_posts) == 1
    assert bash_posts[0]["tool_response"]["stdout"] == "hi"
