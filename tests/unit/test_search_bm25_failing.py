"""Unscoped ranking without the row join: with the default filters the rows they reject are
found beforehand by index seeks (bm25._failing), FTS5 alone reads the postings, and every score,
bit and statistic is exactly what joining each posting with its row gave."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kenning.search import bm25
from kenning.search.filters import make
from kenning.search.query import parse
from kenning.search.service import search
from tests.support.search_rows import NOW, Rows

COMMON = ["deploy", "cache", "retry", "invoice"]  # each in far more rows than the budget reads
WORDS = COMMON + [f"w{i}" for i in range(60)]


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    bm25.clear_cache()
    r = Rows(str(tmp_path / "kenning.db"))
    rng = random.Random(3)
    for i in range(900):
        words = [rng.choice(COMMON) if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(6)]
        status = "superseded" if i % 11 == 0 else "retracted" if i % 37 == 0 else "active"
        r.obs(" ".join(words[:3]), project=("alpha", "beta", "gamma")[i % 3], session=f"s{i // 30}",
              type="sensitive" if i % 23 == 0 else "discovery", narrative=" ".join(words), status=status,
              at=NOW - i * 600.0)
        if i % 30 == 0:
            r.summary(" ".join(words[:4]), project=("alpha", "beta", "gamma")[i % 3], session=f"s{i // 30}",
                      learned=" ".join(words))
    return r


def _ranking(rows: Rows, query: str, include_inactive: bool, joined: bool, kind: str = "observation",
             budget: int = 120) -> bm25.Ranking:
    bm25.clear_cache()
    real = bm25._failing
    if joined:
        bm25._failing = lambda *a: None  # type: ignore[assignment]
    try:
        return bm25.rank(rows.conn, kind, parse(query), make(include_inactive=include_inactive), 20,
                         budget=budget, keep=50)
    finally:
        bm25._failing = real  # type: ignore[assignment]


def test_the_rejected_rows_are_exactly_those_the_filters_reject(rows: Rows) -> None:
    for inactive in (False, True):
        cond = "type = 'sensitive'" + ("" if inactive else " OR status != 'active'")
        want = {r[0] for r in rows.conn.execute(f"SELECT id FROM observations WHERE {cond}")}
        assert want and bm25._failing(rows.conn, "observation", make(include_inactive=inactive)) == want
    assert bm25._failing(rows.conn, "summary", make()) == set()
    assert bm25._failing(rows.conn, "prompt", make()) is None  # not known: joined
    assert bm25._failing(rows.conn, "observation", make(project="alpha")) is None
    assert bm25._failing(rows.conn, "observation", make(types=["bugfix"])) is None


def test_too_many_rejected_rows_fall_back_to_the_join(rows: Rows, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "FAILING_MAX", 10)
    assert bm25._failing(rows.conn, "observation", make()) is None
    everything = bm25._failing(rows.conn, "observation", make(), cap=10_000)
    assert everything is not None
    # Rows both sensitive and inactive are listed twice: a cap between the distinct count and the
    # listed count must not return a set the LIMIT cut short.
    listed = rows.conn.execute("SELECT (SELECT COUNT(*) FROM observations WHERE type = 'sensitive') + "
                               "(SELECT COUNT(*) FROM observations WHERE status != 'active')").fetchone()[0]
    assert listed > len(everything)
    for cap in range(len(everything) - 3, listed + 2):
        got = bm25._failing(rows.conn, "observation", make(), cap=cap)
        assert got is None if cap < listed else got == everything, cap


def test_scores_bits_and_statistics_are_the_joins_over_random_queries(rows: Rows) -> None:
    rng = random.Random(8)
    compared = 0
    for _ in range(60):
        words = [rng.choice(COMMON) if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        query = " ".join(words)
        inactive = rng.random() < 0.3
        for kind in ("observation", "summary"):
            budget = 120 if kind == "observation" else 30
            a = _ranking(rows, query, inactive, joined=True, kind=kind, budget=budget)
            b = _ranking(rows, query, inactive, joined=False, kind=kind, budget=budget)
            assert a.scores == b.scores, query  # floats compared exactly, the order of the best too
            assert list(a.scores) == list(b.scores) and a.top(50) == b.top(50)
            # Which terms each candidate holds (the joined side also keeps rows it dropped unchecked).
            assert {r: a.held[r] for r in a.scores} == {r: b.held[r] for r in b.scores}
            assert [(s.term, s.n_all, s.n_scope, s.idf, s.read, s.scored) for s in a.terms] == \
                   [(s.term, s.n_all, s.n_scope, s.idf, s.read, s.scored) for s in b.terms]
            assert (a.complete, a.read_any, a.spent, a.query_idf) == (b.complete, b.read_any, b.spent, b.query_idf)
            compared += bool(a.scores) and any(not s.read for s in a.terms)  # the join's case: a common term
    assert compared > 30


def test_search_results_are_the_same_either_way(rows: Rows, monkeypatch: pytest.MonkeyPatch) -> None:
    queries = ["deploy cache w3", "retry invoice", "w5 deploy", "cache", "invoice w7 w8 deploy"]
    bm25.clear_cache()
    fast = [[h.as_dict() for h in search(rows.conn, q, limit=20, now=NOW)] for q in queries]
    monkeypatch.setattr(bm25, "_failing", lambda *a: None)
    bm25.clear_cache()
    joined = [[h.as_dict() for h in search(rows.conn, q, limit=20, now=NOW)] for q in queries]
    assert fast == joined and all(fast)
    assert not any(h["status"] != "active" or h["type"] == "sensitive" for hits in fast for h in hits)


def test_top_is_the_best_rows_by_score_then_id_whatever_the_sizes() -> None:
    rng = random.Random(4)
    for size in (0, 1, 5, 60, 400, 3000):
        r = bm25.Ranking("observation")
        r.scores = {rng.randint(1, 10**6): float(rng.randint(0, 40)) / 4 for _ in range(size)}  # many ties
        for n in (1, 20, 100, 5000):
            want = sorted(r.scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:n]
            assert r.top(n) == want, (size, n)
