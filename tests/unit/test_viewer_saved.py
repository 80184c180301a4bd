"""The viewer's Stats: what memory saves, shown to one decimal and never rounded up to all of it."""

from __future__ import annotations


def test_the_viewer_never_rounds_a_saving_up_to_all_of_it() -> None:
    from kenning.viewer.stats import saved_tenths

    assert saved_tenths({"work_tokens": 100_000, "index_tokens": 350}) == 99.6  # 99.65 %, not 100.0 %
    assert saved_tenths({"work_tokens": 1000, "index_tokens": 0}) == 100.0
    assert saved_tenths({"work_tokens": 100, "index_tokens": 300}) == 0.0
    assert saved_tenths({"work_tokens": 0, "index_tokens": 10}) is None
