"""What a session summary says was done (kenning/observer/summary.py): outcomes that say something."""

from __future__ import annotations

import pytest

from kenning.observer.summary import Notes, summarize
from kenning.records import SessionInfo


def _session() -> SessionInfo:
    return SessionInfo(id=1, agent_session_id="s", project="shop", project_root="/work/shop",
                       prompts=["Rename parse_row to read_row in src/export.py."], ended=True)


@pytest.mark.parametrize("over", ["完了", "Done.", "완료했습니다", "All done!", "terminé."])
def test_a_word_that_only_says_the_work_is_over_is_no_outcome(over: str) -> None:
    s = summarize(_session(), [Notes(done=["Changed export.py: rename parse_row to read_row"], status=[over],
                                     modified=["src/export.py"], at=1.0)], [])
    assert s is not None
    assert s.completed == "Changed export.py: rename parse_row to read_row", s.completed
    # Nor is it what was done when the agent's last message is all there is.
    s = summarize(_session(), [Notes(last_message=over, modified=["src/export.py"], at=1.0)], [])
    assert s is not None and s.completed == "", s.completed


def test_an_outcome_that_names_what_was_done_is_kept() -> None:
    s = summarize(_session(), [Notes(status=["コミット完了しました。", "Done: read_row is used everywhere"],
                                     at=1.0)], [])
    assert s is not None and s.completed == "コミット完了しました。; Done: read_row is used everywhere"


def test_a_row_of_a_status_table_is_one_outcome_step_and_state() -> None:
    """A real release turn ended on a table "| 단계 | 상태 |" ("step | state"); its rows, split at the log's "; ",
    left "Done: 태그 `v0.16.1`" (the step without its state) in the session-start index."""
    from kenning.context.layout import field_items
    from kenning.observer.conclusion import status_said
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    rows = [u for u in units("## v0.16.1 릴리즈 완료\n\n| 단계 | 상태 |\n|---|---|\n| PR #236 머지 | 완료 |\n"
                             "| 태그 `v0.16.1` | 푸시됨 |\n") if u.table][1:]
    said = [status_said(Judged(u, role="status", p=0.9, speaker="agent", origin="final", worth=0.9)) for u in rows]
    assert said == ["PR #236 머지 — 완료", "태그 `v0.16.1` — 푸시됨"]
    s = summarize(_session(), [Notes(status=said, at=1.0)], [])
    assert s is not None and field_items(s.completed) == said


def test_a_greeting_is_not_what_the_session_was_about() -> None:
    """An unseen Copilot CLI session's line read "Worked on: how are you ?; then: review and refactor …"."""
    from kenning.observer.summary import request_of

    assert request_of(["how are you ?", "review and refactor src/pages/metrics.astro", "commit and push"], []) == \
        "review and refactor src/pages/metrics.astro; then: commit and push"
    assert request_of(["你好", "修复导出时丢失退款的问题"], []).startswith("修复导出")
    assert request_of(["hey, the export drops refunds"], []) != ""


def test_a_step_going_on_as_the_agent_speaks_is_no_outcome() -> None:
    """An unseen project's session line read "/bmad-code-review → Launching three parallel adversarial review layers
    now." (the usage limit stopped the session there): what was about to happen, not what was done."""
    from kenning.observer import gates

    s = summarize(_session(), [Notes(last_message="Launching three parallel review passes now.",
                                     modified=["src/export.py"], at=1.0)], [])
    assert s is not None and s.completed == "", s.completed
    assert not gates.ongoing("Caching is disabled for now.")  # (a gerund that names a thing, "for now")
    assert not gates.ongoing("Everything is clean now.")
