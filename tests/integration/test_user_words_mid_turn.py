"""The user's words that reach the agent in the middle of a turn, live (no hook reports them).

Through the real hook processes and worker (offline observer): while the agent works, the user
types a rule (Claude Code queues it and the agent takes it in: queue-operation lines in the
transcript) and refuses a tool call with a sentence (its tool_result). Both are the user's words:
rules with where they came from; the refused call is no failed command. The transcript lines have
the shapes of real ones (../shared/reference/claude-code-protocol.md, section 5); the words are ours.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Home
from tests.security import base_payload, bash, hook_json, prompt, session_end, session_start, stop

QUEUED = "From now on, never push straight to main; always open a pull request."
REFUSED = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file " \
          "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
SAID = "No. Never delete the fixtures folder, we keep it under version control on purpose."


def transcript(path: Path, sid: str) -> None:
    def rec(kind: str, content: object, **extra: object) -> dict[str, object]:
        return {"parentUuid": None, "isSidechain": False, "type": kind, "sessionId": sid,
                "message": {"role": kind, "content": content}, **extra}

    lines = [
        rec("user", "Tidy up the test data and speed up the export.", promptId="p-1", uuid="u1"),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-12-04T10:00:01.000Z",
         "sessionId": sid, "content": QUEUED},
        rec("assistant", [{"type": "text", "text": "Looking at the export first."}], uuid="u2"),
        {"type": "queue-operation", "operation": "remove", "timestamp": "2026-12-04T10:00:05.000Z",
         "sessionId": sid},
        rec("user", [{"type": "tool_result", "content": REFUSED + SAID, "is_error": True, "tool_use_id": "toolu_rm"}],
            promptId="p-1", uuid="u3", toolUseResult="Error: " + REFUSED + SAID),
        rec("assistant", [{"type": "text", "text": "Understood: the fixtures stay."}], uuid="u4"),
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_words_typed_while_the_agent_worked_and_said_refusing_a_tool_are_kept_as_the_users(
        home: Home, tmp_path: Path) -> None:
    home.start_worker()
    try:
        proj, sid = str(home.project), "mid-turn-1"
        path = tmp_path / f"{sid}.jsonl"
        transcript(path, sid)
        hook_json(home.hook("SessionStart", session_start(proj, sid)))
        hook_json(home.hook("UserPromptSubmit", prompt(proj, sid, "Tidy up the test data and speed up the export.")))
        hook_json(home.hook("PostToolUse", bash(proj, sid, "toolu_1", "python -m jobs.export --profile",
                                                "exported 10 rows")))
        # The refused call, as a failure hook would report it: nothing ran, nothing failed.
        hook_json(home.hook("PostToolUseFailure", base_payload(
            proj, sid, "PostToolUseFailure", tool_name="Bash", tool_use_id="toolu_rm",
            tool_input={"command": "rm -rf tests/fixtures", "description": "remove old fixtures"},
            error=REFUSED + SAID, is_interrupt=False)))
        end = stop(proj, sid, "Understood: the fixtures stay.")
        end["transcript_path"] = str(path)
        hook_json(home.hook("Stop", end))
        hook_json(home.hook("SessionEnd", session_end(proj, sid)))
        home.flush()

        rows = [dict(r) for r in home.db().execute(
            "SELECT title, kind, why FROM observations WHERE status = 'active'")]
        rules = {r["title"]: json.loads(r["why"]) for r in rows if r["kind"] == "rule"}
        queued = next(w for t, w in rules.items() if "push straight to main" in t)
        assert (queued["by"], queued["origin"]) == ("user", "queued"), rules
        refused = next(w for t, w in rules.items() if "fixtures folder" in t)
        assert (refused["by"], refused["origin"]) == ("user", "rejection"), rules
        said = " ".join(r["title"] for r in rows)
        assert "rm -rf" not in said, rows  # a refused call is no failure, no gotcha

        start = hook_json(home.hook("SessionStart", session_start(proj, "mid-turn-2")))
        assert start is not None
        context = str(start["hookSpecificOutput"]["additionalContext"])
        assert "push straight to main" in context.split("## Key")[0], context
    finally:
        home.stop_worker()
