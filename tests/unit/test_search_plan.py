"""The keyword query plan: universal terms (in at least half the rows) are neither required nor
scored, an all-universal query lists matches newest first, the most selective terms make the
probe and the any-term fallback, and hostile text stays harmless on a planned (large) table."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from kenning.search import fts, plan
from kenning.search.config import SearchConfig
from kenning.search.query import parse
from kenning.search.service import search
from tests.support.search_rows import NOW, Rows
from tests.unit.test_search_query import HOSTILE

N = 1500  # above plan.MIN_ROWS
NO_RECENCY = SearchConfig(recency_weight=0.0)
FILLER = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "eiusmod",
          "tempor", "incididunt", "labore", "magna", "aliqua", "veniam", "nostrud", "ullamco", "laboris", "nisi"]


def _bulk(rows: Rows, texts: list[tuple[str, str]]) -> list[int]:
    sid = rows.session()
    conn = rows.conn
    conn.execute("BEGIN IMMEDIATE")
    out = []
    for i, (title, narrative) in enumerate(texts):
        cur = conn.execute(
            "INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, created_at, "
            "recorded_at, content_hash) VALUES (?, 'alpha', 'discovery', ?, ?, '[]', '[]', ?, ?, ?)",
            (sid, title, narrative, NOW, NOW, f"h{i}-{json.dumps(title)}"))
        out.append(int(cur.lastrowid or 0))
    conn.execute("COMMIT")
    return out


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Rows, dict[str, list[int]]]:
    """N observations: every one says "widget" once; every 7th says "frobnicate" (1-3 times, in texts
    of varied length); every 50th says "quux"; the rest is filler."""
    plan.clear_cache()
    rng = random.Random(7)
    rows = Rows(str(Path(tmp_path_factory.mktemp("plan")) / "kenning.db"))
    texts = []
    for i in range(N):
        words = [rng.choice(FILLER) for _ in range(rng.randint(5, 40))]
        if i % 7 == 0:
            for _ in range(1 + i % 3):
                words.insert(rng.randint(0, len(words)), "frobnicate")
        if i % 50 == 0:
            words.append("quux")
        texts.append((f"note {i} widget", " ".join(words)))
    ids = _bulk(rows, texts)
    groups = {"frobnicate": [ids[i] for i in range(N) if i % 7 == 0], "quux": [ids[i] for i in range(N) if i % 50 == 0]}
    # A row holding the selective word but not the universal one.
    groups["lone"] = _bulk(rows, [("frobnicate on its own", "nothing else here")])
    return rows, groups


def test_universal_term_is_neither_required_nor_scored(big: tuple[Rows, dict[str, list[int]]]) -> None:
    rows, _groups = big
    p = fts.plan(rows.conn, parse("widget frobnicate"))
    assert [t.text for t in p.dropped] == ["widget"]
    assert [t.text for t in p.required.terms] == ["frobnicate"]
    assert p.ranked


def test_dropping_universal_terms_keeps_the_bm25_order(big: tuple[Rows, dict[str, list[int]]]) -> None:
    """FTS5 clamps the IDF of a term in half the rows or more to ~0: the exact full query ranks alike."""
    rows, groups = big
    weights = ", ".join(str(w) for w in fts.OBSERVATION_WEIGHTS)
    exact = [r[0] for r in rows.conn.execute(
        f"SELECT rowid FROM observations_fts WHERE observations_fts MATCH ? "
        f"ORDER BY bm25(observations_fts, {weights}), rowid DESC LIMIT 20", ('"widget" AND "frobnicate"',))]
    hits = search(rows.conn, "widget frobnicate", kinds=["observation"], limit=21, config=NO_RECENCY)
    got = [h.id for h in hits if h.id not in groups["lone"]]  # the one row without "widget" (see below)
    assert got[:20] == exact
    assert all(h.match == "all" for h in hits)


def test_a_row_without_the_universal_term_still_holds_all_words(big: tuple[Rows, dict[str, list[int]]]) -> None:
    rows, groups = big
    hits = search(rows.conn, "widget frobnicate", kinds=["observation"], limit=200)
    by_id = {h.id: h for h in hits}
    assert groups["lone"][0] in by_id and by_id[groups["lone"][0]].match == "all"


def test_all_universal_query_lists_newest_first_unscored(big: tuple[Rows, dict[str, list[int]]]) -> None:
    rows, _groups = big
    p = fts.plan(rows.conn, parse("widget note"))
    assert not p.ranked and not p.rare.terms
    hits = search(rows.conn, "widget note", kinds=["observation"], limit=10)
    newest = [r[0] for r in rows.conn.execute(
        "SELECT id FROM observations WHERE title LIKE '%widget%' ORDER BY id DESC LIMIT 10")]
    assert [h.id for h in hits] == newest
    assert all(h.match == "all" for h in hits)


def test_probe_and_fallback_use_the_most_selective_terms(big: tuple[Rows, dict[str, list[int]]]) -> None:
    rows, groups = big
    q = parse("lorem ipsum dolor frobnicate quux amet widget tempor")
    p = fts.plan(rows.conn, q)
    # The filler words are in most rows (20 of them, 5-40 per row): universal, like "widget".
    assert [t.text for t in p.rare.terms] == ["frobnicate", "quux"]
    assert {t.text for t in p.dropped} == {"lorem", "ipsum", "dolor", "amet", "widget", "tempor"}
    rare = fts.plan(rows.conn, parse("alphazz betazz gammazz deltazz epsilonzz quux frobnicate"))
    assert len(rare.rare.terms) == plan.MAX_OR_TERMS and "frobnicate" not in {t.text for t in rare.rare.terms}
    # Nothing holds every selective word: the any-term fallback answers, rows with quux first.
    hits = search(rows.conn, "frobnicate quux zyzzyva", kinds=["observation"], limit=5)
    assert hits and all(h.match == "some" for h in hits)
    both = set(groups["frobnicate"]) & set(groups["quux"])
    assert both and hits[0].id in both


def test_small_table_keeps_every_term(tmp_path: Path) -> None:
    plan.clear_cache()
    rows = Rows(str(tmp_path / "small.db"))
    a = rows.obs("widget frobnicate")
    b = rows.obs("frobnicate alone")
    rows.obs("widget only")
    p = fts.plan(rows.conn, parse("widget frobnicate"))
    assert not p.dropped and p.ranked
    hits = search(rows.conn, "widget frobnicate", kinds=["observation"])
    assert [(h.id, h.match) for h in hits][:1] == [(a, "all")]
    assert {h.id: h.match for h in hits}[b] == "some"


def test_estimates_are_cached_and_redone_when_the_table_grows(big: tuple[Rows, dict[str, list[int]]],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rows, _groups = big
    plan.clear_cache()
    calls: list[str] = []
    real = plan._measure

    def counting(conn: sqlite3.Connection, table: str, t: plan.Term, n: int) -> plan.Estimate:
        calls.append(t.text)
        return real(conn, table, t, n)

    monkeypatch.setattr(plan, "_measure", counting)
    fts.plan(rows.conn, parse("widget frobnicate"))
    assert calls == []  # words of one token: their kept frequencies (kenning/search/terms.py), no estimate
    # Estimated: terms without kept statistics (prefixes, phrases; a database from before migration 0022).
    monkeypatch.setattr(plan.terms, "lookup", lambda *_a, **_k: {})
    fts.plan(rows.conn, parse("widget frobnicate"))
    fts.plan(rows.conn, parse("frobnicate widget"))
    assert sorted(calls) == ["frobnicate", "widget"]
    est = plan.estimate(rows.conn, "observations_fts", parse("widget").terms[0], int(N * 1.5))
    assert len(calls) == 3 and calls[-1] == "widget" and est.df >= plan.DF_CAP  # measured again


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("order", ["relevance", "date"])
def test_hostile_text_on_a_planned_table(big: tuple[Rows, dict[str, list[int]]], text: str, order: str) -> None:
    rows, _groups = big
    assert isinstance(search(rows.conn, text, order=order), list)
    assert isinstance(search(rows.conn, f"widget {text} frobnicate", order=order), list)
