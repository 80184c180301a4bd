"""Prompt rendering: every event with tool, time, cwd, parameters and outcome; elision of big
fields; the mode's own prompt sections (a child mode overrides its parent's)."""

from __future__ import annotations

import json
import time

from kenning.observer.llm import batch
from kenning.observer.modes import load_mode
from kenning.observer.prompts import FIELD_LIMIT, batch_turn, elide, render_event, system_prompt
from kenning.records import Event, SessionInfo


def ev(kind: str, payload: dict, *, tool: str | None = None, eid: int = 1, at: float = 1_767_000_000.0) -> Event:
    return Event(id=eid, kind=kind, occurred_at=at, payload=payload, tool_name=tool, prompt_number=1,
                 size_chars=len(json.dumps(payload)))


def test_short_fields_are_untouched_and_long_ones_keep_head_and_tail() -> None:
    assert elide("x" * FIELD_LIMIT) == "x" * FIELD_LIMIT
    text = "".join(chr(65 + i % 26) for i in range(1_000_000))
    out = elide(text)
    assert out.startswith(text[:9600]) and out.endswith(text[-4800:])
    assert '<elided chars="985600" of="1000000"/>' in out
    assert len(out) < FIELD_LIMIT


def test_a_tool_event_shows_tool_time_cwd_parameters_and_outcome() -> None:
    at = time.mktime((2026, 11, 30, 10, 42, 5, 0, 0, -1))
    e = ev("PostToolUse", {"cwd": "/p", "tool_input": {"command": "pytest -q", "description": "run tests"},
                           "tool_response": {"stdout": "3 passed", "stderr": "", "interrupted": False}},
           tool="Bash", at=at)
    out = render_event(e)
    assert out.startswith('<tool_use tool="Bash" at="2026-11-30 10:42:05" cwd="/p">')
    assert "<command>pytest -q</command>" in out and "<stdout>3 passed</stdout>" in out
    assert "stderr" not in out and "interrupted" not in out  # empty and false values cost tokens, say nothing


def test_failures_prompts_and_turn_ends_render_too() -> None:
    fail = render_event(ev("PostToolUseFailure", {"cwd": "/p", "tool_input": {"command": "make"},
                                                  "error": "Exit code 2\nno rule"}, tool="Bash"))
    assert '<outcome failed="true">' in fail and "no rule" in fail
    assert "<user_prompt" in render_event(ev("UserPromptSubmit", {"prompt": "Fix it"}))
    stop = render_event(ev("Stop", {"last_assistant_message": "All green."}))
    assert "<turn_end" in stop and "All green." in stop


def test_edit_responses_do_not_resend_the_whole_file_nor_repeat_the_input() -> None:
    content = "print('hello world, this is a long enough line')\n" * 50
    w = render_event(ev("PostToolUse", {"cwd": "/p", "tool_input": {"file_path": "/p/a.py", "content": content},
                                        "tool_response": {"type": "create", "filePath": "/p/a.py",
                                                          "content": content, "originalFile": "OLD" * 999,
                                                          "structuredPatch": [{"lines": ["-a", "+b"]}]}},
                        tool="Write"))
    assert w.count("hello world") == 50 and "OLDOLD" not in w and "structuredPatch" not in w


def test_nested_fields_are_each_elided() -> None:
    big = "y" * 100_000
    out = render_event(ev("PostToolUse", {"cwd": "/p", "tool_input": {"file_path": "/p/big.log"},
                                          "tool_response": {"file": {"filePath": "/p/big.log", "content": big}}},
                          tool="Read"))
    assert '<file.content>' in out and 'of="100000"' in out and len(out) < 2 * FIELD_LIMIT


def test_system_prompt_is_built_from_the_mode_sections() -> None:
    mode = load_mode("code")
    session = SessionInfo(id=1, agent_session_id="s", project="invoice-api", project_root="/w/invoice-api")
    text = system_prompt(mode, session)
    for section in ("role", "record", "skip", "style", "reply"):
        first_line = mode["prompts"][section][0] if isinstance(mode["prompts"][section], list) else \
            mode["prompts"][section]
        assert first_line in text, section
    for type_id in ("bugfix", "feature", "decision", "security_alert"):
        assert f"- {type_id}:" in text
    assert "how-it-works" in text and "invoice-api" in text and "<files_modified>" in text


def test_the_llm_observer_is_told_what_is_no_finding() -> None:
    """The definitions the offline observer follows, said to the LLM observers too (DESIGN.md §9): an offer, a user
    story, a plan's step reported and a test's description are no findings."""
    session = SessionInfo(id=1, agent_session_id="s", project="p", project_root="/p")
    text = " ".join(system_prompt(load_mode("code"), session).split())
    for said in ('offer ("if you want, I can sketch …")', 'A user story ("As a developer, I want …, so that …")',
                 'a step of a plan reported ("Step 2 — … added")', 'what a test checks under its name'):
        assert said in text, said


def test_the_chill_mode_overrides_only_what_to_record() -> None:
    code, chill = load_mode("code"), load_mode("code-chill")
    assert chill["prompts"]["record"] != code["prompts"]["record"]
    assert chill["prompts"]["role"] == code["prompts"]["role"]
    session = SessionInfo(id=1, agent_session_id="s", project="p", project_root="/p")
    assert "Most batches deserve no note" in system_prompt(chill, session)


def test_a_turn_asks_for_a_summary_only_when_told() -> None:
    mode = load_mode("code")
    events = [ev("UserPromptSubmit", {"prompt": "Go"}), ev("Stop", {"last_assistant_message": "Done"}, eid=2)]
    assert "<summary>" not in batch_turn(mode, events[:1], summary=False)
    with_summary = batch_turn(mode, events, summary=True)
    assert "<summary>" in with_summary and "<next_steps>" in with_summary


def test_the_plan_waits_on_a_lone_prompt_and_stops_at_a_turn_boundary() -> None:
    prompt = ev("UserPromptSubmit", {"prompt": "Go"}, eid=1, at=100.0)
    assert batch.plan([prompt], now=110.0, prompt_wait_s=600).send == []
    assert batch.plan([prompt], now=800.0, prompt_wait_s=600).send == [prompt]  # the turn went quiet
    read = ev("PostToolUse", {"tool_input": {"file_path": "/p/a.py"},
                              "tool_response": {"file": {"content": "x = 1\n" * 50}}}, tool="Read", eid=2)
    stop = ev("Stop", {}, eid=3)
    after = ev("PostToolUse", {"tool_input": {"command": "pytest"}, "tool_response": {"stdout": "ok"}},
               tool="Bash", eid=4)
    p = batch.plan([prompt, read, stop, after], now=110.0, prompt_wait_s=600)
    assert [e.id for e in p.send] == [1, 2, 3] and p.closes_turn and not p.read_only
    p = batch.plan([prompt, read], now=110.0, prompt_wait_s=600)
    assert p.read_only and not p.closes_turn


def test_a_prompt_says_who_wrote_it() -> None:
    assert 'origin="typed"' in render_event(ev("UserPromptSubmit", {"prompt": "Always use pnpm."}))
    plan = render_event(ev("UserPromptSubmit", {"prompt": "Implement the following plan:\n\n# Plan: x"}))
    assert 'origin="plan"' in plan  # Claude Code's hand-over of an accepted plan: the agent's words
    for declared in ("queued", "rejection", "headless"):
        text = render_event(ev("UserPromptSubmit", {"prompt": "Use uv.", "prompt_origin": declared}))
        assert f'origin="{declared}"' in text
    note = render_event(ev("UserPromptSubmit", {"prompt": "<task-notification>done</task-notification>"}))
    assert 'origin="notification"' in note


def test_the_prompt_defines_what_a_memory_is_and_asks_for_kind_scope_tentative_and_why() -> None:
    session = SessionInfo(id=1, agent_session_id="s", project="p", project_root="/p")
    for mode in (load_mode("code"), load_mode("code-chill")):
        text = system_prompt(mode, session)
        for tag in ("<kind>", "<scope>", "<tentative>", "<why>"):
            assert tag in text
        for kind in ("rule", "decision", "rootcause", "fix", "change", "gotcha", "todo", "status", "fact", "note",
                     "answer", "explored"):
            assert f"  - {kind}: " in text, kind
        for section in ("memory", "rules", "why", "languages"):
            assert load_mode("code")["prompts"][section][0] in text, section
        assert "Implement the following plan:" in text and "origin" in text
        assert "never by position" in text
        # the same definitions the offline observer's gates follow (kenning/observer/gates.py)
        for said in ("words the user quotes from", "a yes to go on with the work at hand",
                     "a ban on a thing it only points at",
                     "what a named document is to say", "its findings are not facts the user states",
                     "what the agent\nweighs", "a fix it says is still needed is a todo",
                     "ended before a conclusion: a cause or fix it voiced on the way",
                     "is reasoning in general terms, not a memory of this project",
                     "a stack trace or log the user pastes is the program's output",
                     "is its author's word, not a finding of the agent's",
                     "are what might be, not findings", "a document or a reviewer (a person or a bot) says"):
            assert said.replace("\n", " ") in " ".join(text.split()), said
