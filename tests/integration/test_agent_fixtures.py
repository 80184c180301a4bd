"""Payload fixtures (tests/fixtures/agents/*.json) replayed through real hook processes and a real worker:
Cursor's own hooks.json events and Cursor running Claude Code's hooks (built from Cursor's published hook
schemas: Cursor cannot run offline here), GitHub Copilot CLI (the shapes of the real 1.0.102, which
tests/e2e/test_copilot_memory.py also runs). Plus the adapters' own mapping rules for Codex and Gemini
CLI (the real CLIs run in tests/e2e).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kenning.integrations import codex, gemini
from tests.conftest import FIXTURES, Home, load_fixture

AGENT_FIXTURES = FIXTURES.parent / "agents"
PLACEHOLDER = "/tmp/agent-fixture-project"


def _hook(home: Home, agent: str, event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    env = {**home.env, "KENNING_PROVIDER": "rules", "COPILOT_HOME": str(home.root / "copilot-home")}
    return subprocess.run([sys.executable, "-I", "-m", "kenning", "hook", agent, event],
                          input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=30,
                          cwd=str(home.project))


def _replay(home: Home, agent: str) -> dict[str, Any]:
    spec = json.loads((AGENT_FIXTURES / f"{agent}.json").read_text().replace(PLACEHOLDER, str(home.project)))
    if spec.get("transcript"):  # the session's transcript file, where the agent's stop event points
        stop = next(p for _e, p in spec["events"] if p.get("transcriptPath"))
        transcript = Path(stop["transcriptPath"])
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text((AGENT_FIXTURES / spec["transcript"]).read_text().replace(PLACEHOLDER,
                                                                                         str(home.project)))
    answers = {}
    for event, payload in spec["events"]:
        r = _hook(home, agent, event, payload)
        assert r.returncode == 0, r.stderr
        answers.setdefault(event, r.stdout)
    return answers


def _rows(home: Home, sql: str) -> list[tuple]:
    conn = sqlite3.connect(home.data / "kenning.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("agent", ["cursor", "copilot"])
def test_replayed_session_becomes_memory_attributed_to_its_agent(home: Home, agent: str) -> None:
    home.env["KENNING_PROVIDER"] = "rules"
    home.start_worker()
    try:
        answers = _replay(home, agent)
        home.flush()
        rows = _rows(home, "SELECT o.type, o.title, o.files_modified, s.platform FROM observations o "
                           "JOIN sessions s ON s.id = o.session_id")
        assert {r[3] for r in rows} == {agent}, rows
        bugfix = [r for r in rows if r[0] == "bugfix"]
        assert bugfix and "add is broken" in bugfix[0][1] and json.loads(bugfix[0][2]) == ["calc.py"], rows
        sessions = _rows(home, "SELECT platform, status FROM sessions")
        assert sessions == [(agent, "completed")], sessions
        failures = _rows(home, "SELECT tool_name FROM events WHERE kind = 'PostToolUseFailure'")
        assert failures == [("Bash",)], failures
        stops = _rows(home, "SELECT payload FROM events WHERE kind = 'Stop'")
        answers_kept = [json.loads(p)["last_assistant_message"] for (p,) in stops]
        assert len(answers_kept) == 1 and answers_kept[0].startswith("Fixed: add() now adds."), answers_kept
        # The session-start answer is in the host's own shape, and a second session is told.
        start = next(iter(json.loads(a) for e, a in answers.items() if e == "sessionStart"))
        key = "additional_context" if agent == "cursor" else "additionalContext"
        assert "<kenning-context>" in start[key]
        again = _replay_start(home, agent)
        # Told what the session did (its line); the agent fixing its own first draft is no lesson to repeat.
        assert "calc.py" in again[key] and "add is broken" not in again[key], again
    finally:
        home.stop_worker()


def _replay_start(home: Home, agent: str) -> dict[str, Any]:
    spec = json.loads((AGENT_FIXTURES / f"{agent}.json").read_text().replace(PLACEHOLDER, str(home.project)))
    event, payload = spec["events"][0]
    if "conversation_id" in payload:
        payload = {**payload, "conversation_id": "second-session", "session_id": "second-session"}
    r = _hook(home, agent, event, payload)
    assert r.returncode == 0 and r.stdout, r.stderr
    return json.loads(r.stdout)


def test_cursor_running_claude_code_hooks_is_attributed_to_cursor(home: Home) -> None:
    payload = load_fixture("print-mode/events/UserPromptSubmit.json", cwd=str(home.project))
    payload = {**payload, "cursor_version": "2.1.0", "workspace_roots": [str(home.project)]}
    r = _hook(home, "claude-code", "UserPromptSubmit", payload)
    assert r.returncode == 0, r.stderr
    home.start_worker()
    try:
        import time

        deadline = time.monotonic() + 20
        while home.spool_depth() and time.monotonic() < deadline:  # the open turn stays pending
            time.sleep(0.1)
        assert _rows(home, "SELECT platform FROM sessions") == [("cursor",)]
    finally:
        home.stop_worker()


def test_codex_failed_command_is_read_from_the_rollout(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-x.jsonl"
    done = {"timestamp": "2026-12-01T22:02:51.584Z", "type": "event_msg", "payload": {
        "type": "item_completed", "item": {"type": "CommandExecution", "id": "call_abc", "status": "failed",
                                           "aggregated_output": "AssertionError: add is broken\n", "exit_code": 1}}}
    rollout.write_text(json.dumps({"type": "session_meta", "payload": {"id": "s"}}) + "\n"
                       + json.dumps(done, separators=(",", ":")) + "\n")
    payload = {"session_id": "s", "transcript_path": str(rollout), "tool_name": "Bash",
               "tool_input": {"command": "pytest"}, "tool_response": "", "tool_use_id": "call_abc"}
    event, out = codex.HOOK.translate("PostToolUse", payload)
    assert event == "PostToolUseFailure" and out["error"] == "Exit code 1\nAssertionError: add is broken"
    assert "tool_response" not in out
    ok = {**payload, "tool_use_id": "call_other", "tool_response": "fine\n"}
    assert codex.HOOK.translate("PostToolUse", ok) == ("PostToolUse", ok)  # no completion found: as sent
    patch = {**payload, "tool_name": "apply_patch", "tool_response": "Exit code: 1\nWall time: 0 s\nOutput:\nbad hunk"}
    assert codex.HOOK.translate("PostToolUse", patch)[0] == "PostToolUseFailure"
    assert codex.HOOK.respond("Stop", "Stop", "x") is None


def test_gemini_mapping_of_tools_prompts_and_stops() -> None:
    fail = {"session_id": "g", "tool_name": "run_shell_command", "tool_input": {"command": "false"},
            "tool_response": {"llmContent": "<untrusted_context>\nOutput: (empty)\nExit Code: 1\n"
                                            "Process Group PGID: 2\n</untrusted_context>",
                              "returnDisplay": "Command exited with code: 1"}}
    event, out = gemini.HOOK.translate("AfterTool", fail)
    assert (event, out["tool_name"], out["host_tool"], out["error"]) == ("PostToolUseFailure", "Bash",
                                                                          "run_shell_command", "Exit code 1")
    write = {"session_id": "g", "tool_name": "write_file", "tool_input": {"file_path": "/p/a.py", "content": "x"},
             "tool_response": {"llmContent": "ok", "returnDisplay": {"filePath": "/p/a.py", "isNewFile": True}}}
    assert gemini.HOOK.translate("AfterTool", write)[1]["tool_response"] == {"type": "create", "filePath": "/p/a.py"}
    prompt = {"session_id": "g", "prompt": "<hook_context>our context</hook_context>\n\nWhat next?"}
    assert gemini.HOOK.translate("BeforeAgent", prompt) == ("UserPromptSubmit", {"session_id": "g",
                                                                                 "prompt": "What next?"})
    stop = gemini.HOOK.translate("AfterAgent", {"session_id": "g", "prompt": "p", "prompt_response": "Done."})
    assert stop == ("Stop", {"session_id": "g", "last_assistant_message": "Done."})
    assert gemini.shell_result("Output: hi\nthere\nExit Code: 0\n") == (0, "hi\nthere")
