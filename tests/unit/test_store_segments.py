"""The full-text indexes are kept merged (kenning/store/segments.py): fewer segments, the very
same search results, bounded work per call, nothing written when there is nothing to merge."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from kenning.search import bm25
from kenning.search.service import search
from kenning.store import segments
from kenning.store.forget import fts_tables
from tests.support.search_rows import NOW, Rows

WORDS = [f"w{i}" for i in range(120)] + ["deploy", "webhook", "invoice", "rounding", "cache", "retry"]


def _zipf(rng: random.Random, n: int) -> str:
    return " ".join(WORDS[min(int(rng.paretovariate(0.9)) - 1, len(WORDS) - 1)] for _ in range(n))


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    bm25.clear_cache()
    r = Rows(str(tmp_path / "kenning.db"))
    rng = random.Random(5)
    for i in range(700):  # one statement a row, as the worker stores them: a segment each, merged lazily
        project = "alpha" if i % 4 else "beta"
        r.obs(_zipf(rng, 4), project=project, session=f"s{i // 20}", narrative=_zipf(rng, 30),
              at=NOW - i * 3600.0)
        if i % 20 == 0:
            r.summary(_zipf(rng, 6), project=project, session=f"s{i // 20}", learned=_zipf(rng, 20))
        if i % 3 == 0:
            r.prompt(_zipf(rng, 10), project=project, session=f"s{i // 20}")
    return r


def _segment_count(conn: sqlite3.Connection, table: str) -> int:
    lv = segments.levels(conn, table)
    assert lv is not None
    return sum(n for n, _m in lv)


def _results(conn: sqlite3.Connection, queries: list[tuple[str, str | None]]) -> list[list[dict]]:
    bm25.clear_cache()
    return [[h.as_dict() for h in search(conn, q, project=p, limit=30, now=NOW)] for q, p in queries]


def test_a_store_written_row_by_row_is_fragmented_and_tidy_merges_it(rows: Rows) -> None:
    conn = rows.conn
    before = {t: _segment_count(conn, t) for t in fts_tables(conn)}
    assert before["observations_fts"] > 3  # the state a worker's store is in after ordinary use
    assert any(segments.fragmented(conn, t) for t in before)
    while segments.tidy(conn, budget_s=10.0)[0]:
        pass
    for t in before:
        lv = segments.levels(conn, t)
        assert lv is not None and all(n <= 1 and not merging for n, merging in lv), (t, lv)
        assert not segments.fragmented(conn, t)
    assert _segment_count(conn, "observations_fts") < before["observations_fts"]


def test_merging_changes_no_search_result(rows: Rows) -> None:
    # Random queries of one to four words (rare, common, absent), scoped and not: every hit, its
    # score and its order are the same before and after the merge.
    rng = random.Random(17)
    queries: list[tuple[str, str | None]] = []
    for _ in range(80):
        words = [rng.choice(WORDS[:8]) if rng.random() < 0.4 else rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.15:
            words.append("zzqqxx")
        queries.append((" ".join(words), rng.choice([None, "alpha", "beta"])))
    before = _results(rows.conn, queries)
    assert sum(1 for r in before if r) > 60
    while segments.tidy(rows.conn, budget_s=10.0)[0]:
        pass
    assert _results(rows.conn, queries) == before


def test_work_per_call_is_bounded_and_a_merged_index_costs_no_write(rows: Rows) -> None:
    conn = rows.conn
    steps, more = segments.tidy(conn, budget_s=0.0, step_pages=1)  # the deadline passed: at most one step
    assert steps <= 1 and more
    while segments.tidy(conn, budget_s=10.0, step_pages=8)[0]:
        pass
    changes = conn.total_changes
    assert segments.tidy(conn) == (0, False)
    assert conn.total_changes == changes  # nothing to merge: not even a write transaction


def test_an_unreadable_structure_record_is_left_to_fts5(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "x.db"), isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
    assert segments.levels(conn, "t") is None or segments.levels(conn, "t") == []
    conn.execute("INSERT INTO t (a) VALUES ('one two')")
    assert segments.levels(conn, "t") == [(1, 0)]
    conn.execute("UPDATE t_data SET block = x'00000000ff' WHERE id = 10")  # truncated: cannot be read
    assert segments.levels(conn, "t") is None and segments.fragmented(conn, "t")
