"""The agent's text of a turn, read from Claude Code's transcript (real fixture and written ones)."""

from __future__ import annotations

import json
from pathlib import Path

from kenning.observer.transcript import PAYLOAD_KEY, WORDS_KEY, TurnReader, cleaner, read_turn, turn_texts, words_of
from kenning.settings import Settings
from tests.conftest import FIXTURES

REAL = FIXTURES / "transcripts" / "session-fc3ba2f5-df72-4ca7-a1b4-049024f31ca2.jsonl"
FIRST_PROMPT = "9bbf1103-cbe5-4509-a358-a72359e22ce7"


def test_the_turn_of_a_real_transcript_by_its_prompt_id() -> None:
    assert turn_texts(str(REAL), prompt_id=FIRST_PROMPT) == ["Let me run a command.", "All done. FINAL-ANSWER-MARKER"]
    assert turn_texts(str(REAL), prompt_id="872736e5-8030-46d0-9379-727a1559caf6") == \
        ["All done. FINAL-ANSWER-MARKER"]
    assert turn_texts(str(REAL), prompt_id="no-such-prompt") == []


def line(kind: str, content: object, **extra: object) -> str:
    return json.dumps({"type": kind, "isSidechain": False, "message": {"role": kind, "content": content}, **extra})


def test_tool_results_sidechains_and_other_lines_are_skipped(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join([
        json.dumps({"type": "queue-operation"}),
        line("user", "Why do uploads crash?", promptId="p1"),
        line("assistant", [{"type": "text", "text": "Let me check nginx."}]),
        line("assistant", [{"type": "tool_use", "name": "Bash", "input": {"command": "cat nginx.conf"}}]),
        line("user", [{"type": "tool_result", "tool_use_id": "t", "content": "client_max_body_size 1m;" * 1000}],
             promptId="p1"),
        json.dumps({"type": "assistant", "isSidechain": True,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "subagent noise"}]}}),
        line("assistant", [{"type": "text", "text": "The crash was client_max_body_size 1m."}]),
        "not json at all",
        line("user", "Thanks, now something else", promptId="p2"),
        line("assistant", [{"type": "text", "text": "Sure."}]),
    ]) + "\n")
    assert turn_texts(str(p), prompt_id="p1") == ["Let me check nginx.", "The crash was client_max_body_size 1m."]
    assert turn_texts(str(p), prompt_id="p2") == ["Sure."]
    assert turn_texts(str(tmp_path / "missing.jsonl"), prompt_id="p1") == []
    assert turn_texts(str(tmp_path), prompt_id="p1") == []  # not a file


def test_the_reader_cleans_text_and_leaves_the_last_message_to_the_payload(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    key = "sk-ant-api03-" + "A" * 40
    p.write_text("\n".join([
        line("user", "Deploy it", promptId="p1"),
        line("assistant", [{"type": "text", "text": f"The key {key} was wrong. <private>my notes</private>ok"}]),
        line("assistant", [{"type": "text", "text": "Done."}]),
    ]) + "\n")
    reader = TurnReader(cleaner(Settings()))
    out = reader.enrich({"transcript_path": str(p), "prompt_id": "p1", "last_assistant_message": "Done."})
    texts = out[PAYLOAD_KEY]
    assert len(texts) == 1 and key not in texts[0] and "my notes" not in texts[0] and "REDACTED" in texts[0]
    assert reader.enrich(out) is out  # enriched once


def queue(operation: str, content: str | None = None) -> str:
    rec = {"type": "queue-operation", "operation": operation, "timestamp": "2026-12-04T10:00:00.000Z",
           "sessionId": "s1"}
    return json.dumps(rec if content is None else {**rec, "content": content})


def refusal(words: str) -> str:
    said = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file " \
           "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
    return json.dumps({"parentUuid": "a", "isSidechain": False, "promptId": "p1", "type": "user",
                       "message": {"role": "user", "content": [{"type": "tool_result", "content": said + words,
                                                                "is_error": True, "tool_use_id": "toolu_9"}]},
                       "uuid": "u9", "toolUseResult": "Error: " + said + words})


def test_the_users_words_in_the_middle_of_a_turn(tmp_path: Path) -> None:
    """Typed while the agent worked and taken in by it (enqueue, then remove), or said refusing a tool
    call: the user's own words, which no hook reports. A message handed over as the next prompt
    (dequeue) is that prompt's; notifications, slash commands and task records are nobody's words."""
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join([
        line("user", "Speed up the nightly export.", promptId="p1"),
        queue("enqueue", "From now on never push straight to main; open a pull request."),
        line("assistant", [{"type": "text", "text": "Profiling the export."}]),
        queue("remove"),
        queue("enqueue", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"),
        queue("remove"),
        queue("enqueue", "/model"),
        queue("remove", "/model"),
        queue("enqueue", '{"task_id": "b2", "description": "run tests"}'),
        queue("remove"),
        refusal("No, keep one file per customer."),
        line("assistant", [{"type": "text", "text": "Kept one file per customer."}]),
        queue("enqueue", "And then add a progress bar."),  # handed over as the next prompt
        queue("dequeue"),
        line("user", "And then add a progress bar.", promptId="p2"),
        line("assistant", [{"type": "text", "text": "Added."}]),
    ]) + "\n")
    texts, words = read_turn(str(p), prompt_id="p1")
    assert texts == ["Profiling the export.", "Kept one file per customer."]
    assert words == [{"origin": "queued", "text": "From now on never push straight to main; open a pull request."},
                     {"origin": "rejection", "text": "No, keep one file per customer."}]
    assert read_turn(str(p), prompt_id="p2") == (["Added."], [])

    key = "ghp_" + "B" * 36
    out = TurnReader(cleaner(Settings())).enrich({"transcript_path": str(p), "prompt_id": "p1",
                                                  "last_assistant_message": "Kept one file per customer."})
    assert words_of(out) == [("queued", "From now on never push straight to main; open a pull request."),
                             ("rejection", "No, keep one file per customer.")]
    p.write_text(line("user", "Go", promptId="p3") + "\n" + queue("enqueue", f"use token {key} <private>x</private>")
                 + "\n" + queue("remove") + "\n")
    [(origin, text)] = words_of(TurnReader(cleaner(Settings())).enrich({"transcript_path": str(p)}))
    assert origin == "queued" and key not in text and "<private>" not in text, text
    assert words_of({WORDS_KEY: [{"origin": "typed", "text": "x"}, {"origin": "queued", "text": 3}, "junk"]}) == []
