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
