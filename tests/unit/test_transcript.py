"""The agent's text of a turn, read from Claude Code's transcript (real fixture and written ones)."""

from __future__ import annotations

import json
from pathlib import Path

from kenning.observer.transcript import PAYLOAD_KEY, TurnReader, cleaner, turn_texts
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
