"""Keyword ranking by BM25 over the scope searched: per-project statistics, every candidate scored
whatever its age, no term dropped for matching nothing, FTS5's own scores reproduced."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kenning.search import bm25
from kenning.search.filters import make
from kenning.search.query import parse
from kenning.search.service import search
from tests.support.search_rows import NOW, Rows, ids

DAY = 86400.0


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    bm25.clear_cache()
    return Rows(str(tmp_path / "kenning.db"))


def test_a_word_common_in_the_project_weighs_little_there(rows: Rows) -> None:
    # "ledger" is in every row of its project (its own name) and in no other project's.
    for i in range(200):
        rows.obs(f"note {i} about other things", project="beta", session="b")
    for i in range(20):
        rows.obs(f"Ledger ledger {i}", project="ledger", narrative="the ledger service")
    filler = " ".join(f"word{i}" for i in range(60))
    target = rows.obs("Monthly close", project="ledger", narrative=f"{filler} reconciliation {filler}")
    # Over all rows "ledger" is rare (20 of 221) and its title hits would win; in its project it is
    # in almost every row and the rare word decides.
    assert ids(search(rows.conn, "ledger reconciliation", project="ledger", limit=3))[0] == target
    r = bm25.rank(rows.conn, "observation", parse("ledger reconciliation"), make(project="ledger"), 5)
    by_term = {s.term.text: s for s in r.terms}
    assert by_term["ledger"].n_scope == 20 and by_term["ledger"].n_all == 20 and r.scope_rows == 21
    assert by_term["ledger"].idf < 0.1 < 2.0 < by_term["reconciliation"].idf


def test_old_evidence_is_scored_however_many_newer_rows_match(rows: Rows) -> None:
    old = rows.obs("Cluster notes", narrative="we moved the workers to kubernetes", at=NOW - 400 * DAY)
    for i in range(600):  # far more than any window of newest matches
        rows.obs(f"Deploy {i}", narrative="deploy again", at=NOW - i * 60)
    hits = search(rows.conn, "how did we deploy to kubernetes", limit=10, now=NOW)
    assert ids(hits)[0] == old  # the rare word outweighs the recency boost of 600 newer rows


def test_a_term_matching_nothing_drops_nothing(rows: Rows) -> None:
    a = rows.obs("Retry policy for webhooks")
    b = rows.obs("Webhook signature check")
    hits = search(rows.conn, "webhook zyzzyvaqqq retry")
    assert ids(hits)[:2] == [a, b] and all(h.match == "some" for h in hits)  # no row holds every word


def test_scores_match_fts5_bm25_when_unscoped(rows: Rows) -> None:
    texts = ["alpha beta", "alpha gamma gamma", "beta delta", "alpha alpha alpha beta", "epsilon"]
    made = [rows.obs(t, narrative=t * (i + 1)) for i, t in enumerate(texts)]
    r = bm25.rank(rows.conn, "observation", parse("alpha"), make(), 10)
    weights = ", ".join(str(w) for w in bm25.SOURCES["observation"].weights)
    fts = dict(rows.conn.execute(f"SELECT rowid, bm25(observations_fts, {weights}) FROM observations_fts "
                                 "WHERE observations_fts MATCH 'alpha'").fetchall())
    n, hits = len(made), len(fts)
    scale = bm25.scope_idf(n, hits) / bm25.idf(n, hits)
    assert set(r.scores) == set(fts)
    for rid, score in r.scores.items():
        assert math.isclose(score, -fts[rid] * scale, rel_tol=1e-9)


def test_recency_breaks_near_ties_only(rows: Rows) -> None:
    old_exact = rows.obs("Timezone bug in invoices", at=NOW - 300 * DAY)
    rows.obs("Bug in the cache", narrative="a bug", at=NOW)
    rows.obs("Cache notes", at=NOW)
    assert ids(search(rows.conn, "timezone bug", now=NOW))[0] == old_exact
    twin_old = rows.obs("Flaky upload test", narrative="seen on ci", at=NOW - 300 * DAY)
    twin_new = rows.obs("Flaky upload test", narrative="seen on mac", at=NOW - DAY)
    got = ids(search(rows.conn, "flaky upload", now=NOW))
    assert got.index(twin_new) < got.index(twin_old)


def test_common_terms_past_the_budget_are_still_scored_on_the_rows_found(rows: Rows,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "BUDGET", 10)
    for i in range(60):
        rows.obs(f"Upload {i}" if i % 3 == 0 else f"Note {i}", narrative="handler")
    both = rows.obs("Upload retries", narrative="with backoff")
    only = rows.obs("Mailer retries", narrative="with backoff")
    r = bm25.rank(rows.conn, "observation", parse("upload backoff"), make(), 5, budget=10)
    by_term = {s.term.text: s for s in r.terms}
    assert by_term["backoff"].read and not by_term["upload"].read and by_term["upload"].scored
    assert r.scores[both] > r.scores[only]  # "upload" counted where it is
    assert ids(search(rows.conn, "upload backoff"))[:2] == [both, only]


def test_words_found_side_by_side_as_written_score_more(rows: Rows) -> None:
    apart = rows.obs("Rink notes", narrative="cream for the ice rink")
    together = rows.obs("Rink notes", narrative="ice cream for the rink")
    rows.obs("Other notes", narrative="nothing sweet")
    r = bm25.rank(rows.conn, "observation", parse("ice cream"), make(), 5)
    plain = bm25.rank(rows.conn, "observation", parse("cream, ice"), make(), 5)  # not written side by side
    assert math.isclose(plain.scores[apart], plain.scores[together])
    assert r.scores[together] > r.scores[apart] and math.isclose(r.scores[apart], plain.scores[apart])


def test_coverage_is_the_share_of_the_query_held(rows: Rows) -> None:
    for i in range(30):
        rows.obs(f"Routine note {i}", narrative="deploy")
    both = rows.obs("Deploy rollback", narrative="rollback after deploy")
    r = bm25.rank(rows.conn, "observation", parse("deploy rollback zyzzyvaqqq"), make(), 5)
    common = next(rid for rid in r.scores if rid != both)
    # The word no row holds counts at its rarest: even the row holding the other two explains
    # under two thirds of the query, and one holding only the common word very little.
    assert 0.3 < r.coverage(both) < 0.67 and r.coverage(common) < 0.1
