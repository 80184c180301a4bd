"""How much smaller the index is than the work it condenses: rounded down to a tenth, never up to 100."""

from __future__ import annotations

from kenning.store import usage


def test_a_saving_of_99_65_percent_reads_99_6_not_100() -> None:
    assert usage.saved_percent({"work_tokens": 100_000, "index_tokens": 350}) == 99.6
    assert usage.saved_percent({"work_tokens": 1_000, "index_tokens": 500}) == 50.0


def test_no_work_yet_has_no_percentage_and_a_bigger_index_is_zero() -> None:
    assert usage.saved_percent({"work_tokens": 0, "index_tokens": 10}) is None
    assert usage.saved_percent({"work_tokens": 100, "index_tokens": 300}) == 0.0
