"""A decision record the agent wrote (an ADR) is a key decision, in the record's words (kenning/observer/
decision_records.py). The shape is that of a real session (an ADR written in English while the agent spoke Korean);
the words are our own."""

from __future__ import annotations

from kenning.observer.decision_records import drafts, read_record
from kenning.records import Event
from tests.support.memory_story import Story, Turn, event

ROOT = "/work/shop"
ADR = """# 0007. Keep Invoices in Integer Cents

**Status:** accepted
**Date:** 2026-08-20

## Context

Float totals drifted by a cent on large invoices.

## Decision

Store every amount as integer cents and convert only at the edges (API, PDF).

## Rationale

1. **No rounding drift.** Sums of integers are exact.
"""


def _write(path: str, content: str, i: int = 1) -> Event:
    return event({"hook_event_name": "PostToolUse", "tool_name": "Write",
                  "tool_input": {"file_path": path, "content": content},
                  "tool_response": {"type": "create", "filePath": path}}, i)


def test_a_record_gives_its_title_and_its_decision() -> None:
    assert read_record(ADR) == ("ADR 0007: Keep Invoices in Integer Cents",
                                "Store every amount as integer cents and convert only at the edges (API, PDF).",
                                "accepted")
    madr = "# Use Postgres advisory locks\n\nStatus: proposed\n\n## Decision Outcome\n\nChosen: advisory locks, " \
           "because the job runner already holds a connection.\n"
    assert read_record(madr) == ("Use Postgres advisory locks", "Chosen: advisory locks, because the job runner "
                                 "already holds a connection.", "proposed")


def test_no_decision_of_now_no_memory() -> None:
    assert read_record(ADR.replace("accepted", "superseded")) is None
    assert read_record("# Notes on invoices\n\n## Context\n\nSome text.\n") is None  # no Decision section
    assert drafts([_write(f"{ROOT}/docs/notes/invoices.md", ADR)], ROOT, 1.0) == []  # not a record's folder


def test_the_record_written_is_a_key_decision_proposed_is_tentative() -> None:
    found = drafts([_write(f"{ROOT}/docs/adr/0007-integer-cents.md", ADR)], ROOT, 1.0)
    assert [(d.kind, d.title, d.tentative, d.files_modified) for d in found] == [
        ("decision", "ADR 0007: Keep Invoices in Integer Cents — Store every amount as integer cents and convert "
         "only at the edges (API, PDF).", False, ["docs/adr/0007-integer-cents.md"])]
    patch = "*** Begin Patch\n*** Add File: docs/decisions/0008-locks.md\n" + "".join(
        f"+{ln}\n" for ln in ADR.replace("accepted", "proposed").splitlines()) + "*** End Patch"
    ev = event({"hook_event_name": "PostToolUse", "tool_name": "apply_patch", "tool_input": {"patch": patch}}, 2)
    assert [d.tentative for d in drafts([ev], ROOT, 2.0)] == [True]


def test_the_record_is_a_key_memory_of_the_turn_unless_the_agent_said_it(story: Story) -> None:
    root = story.root("shop")
    story.session("shop", Turn("플로트 합계가 틀려요. 어떻게 저장할지 결정하고 ADR로 남겨 주세요.",
                               [_write(f"{root}/docs/adr/0007-integer-cents.md", ADR).payload],
                               last="ADR을 작성했습니다."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert any(t.startswith("ADR 0007: Keep Invoices in Integer Cents") for t in keys), keys


def test_a_record_the_agents_own_decision_names_is_said_once() -> None:
    from kenning.observer.decision_records import told_by
    from kenning.records import ObservationDraft

    record = drafts([_write(f"{ROOT}/docs/adr/0007-integer-cents.md", ADR)], ROOT, 1.0)[0]

    def decided(title: str) -> ObservationDraft:
        return ObservationDraft(type="decision", title=title, created_at=1.0, kind="decision")

    assert told_by(record, [decided("금액 저장 방식 결정 — ADR 0007로 기록 (`a1b2c3d`)"), record])
    assert not told_by(record, [decided("ADR 0070 keeps the PDF renderer"), decided("Retry the export twice")])
