"""The term statistics of migration 0022 equal what FTS5's own index says after every kind of
write (insert, text edit, project move, prompt moved or forgotten, delete, session cascade,
project merge, ``kenning reindex``, an upgraded older database), and the ranking built on them
equals the ranking built on counted statistics."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from kenning.search import bm25, plan, reindex, terms
from kenning.search.filters import make
from kenning.search.query import Term, parse
from kenning.store.db import migrate, open_db
from kenning.store.projects import merge
from kenning.store.repair import recover

FTS = {"observation": ("observations_fts", "SELECT id, project FROM observations"),
       "summary": ("session_summaries_fts", "SELECT id, project FROM session_summaries"),
       "prompt": ("user_prompts_fts",
                  "SELECT u.id, s.project FROM user_prompts u JOIN sessions s ON s.id = u.session_id")}


def truth(conn: sqlite3.Connection) -> dict[tuple[str, str, str], int]:
    """(kind, token, project) -> rows, from each FTS5 index's own token instances."""
    out: dict[tuple[str, str, str], int] = {}
    for kind, (fts, rows) in FTS.items():
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{kind} USING fts5vocab (main, {fts}, 'instance')")
        project = dict(conn.execute(rows).fetchall())
        docs: dict[tuple[str, str], set[int]] = {}
        for term, doc in conn.execute(f"SELECT term, doc FROM temp.v_{kind}"):
            if doc in project:
                docs.setdefault((term, project[doc]), set()).add(doc)
        out.update(((kind, t, p), len(d)) for (t, p), d in docs.items())
    return out


def kept(conn: sqlite3.Connection) -> dict[tuple[str, str, str], int]:
    return {(r[0], r[1], r[2]): r[3] for r in conn.execute("SELECT kind, term, project, n FROM search_terms")}


def session(conn: sqlite3.Connection, sid: int, project: str, prompts: list[str], obs: list[str]) -> None:
    conn.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (?, ?, ?, 1.0)",
                 (sid, f"s-{sid}", project))
    for i, text in enumerate(prompts):
        conn.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                     "VALUES (?, ?, ?, 2.0)", (sid, i + 1, text))
    for i, title in enumerate(obs):
        conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, "
                     "created_at, recorded_at, content_hash) VALUES (?, ?, 'bugfix', ?, ?, '[\"Rounding fixed\"]', "
                     "'[\"gotcha\"]', 3.0, 3.0, ?)",
                     (sid, project, title, f"Running the {title} tests: naïve Café ÜBER runs", f"h{sid}-{i}"))
    conn.execute("INSERT INTO session_summaries (session_id, project, request, learned, created_at, recorded_at) "
                 "VALUES (?, ?, ?, 'invoices are rounded half up', 4.0, 4.0)", (sid, project, f"fix {obs[0]}"))


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "k.db"))
    session(c, 1, "shop", ["fix the invoice rounding", "and the VAT runner"], ["invoice rounding", "vat totals"])
    session(c, 2, "shop", ["deploy the shop"], ["deploy script", "invoice export"])
    session(c, 3, "blog", ["write the post about invoices"], ["post draft", "invoice template"])
    return c


def test_counts_follow_every_write(conn: sqlite3.Connection) -> None:
    assert kept(conn) == truth(conn)
    assert kept(conn)[("observation", "invoic", "shop")] == 2  # "invoice" as porter stems it
    assert kept(conn)[("observation", "cafe", "blog")] == 2    # unicode61's folding

    oid = conn.execute("SELECT MIN(id) FROM observations WHERE project = 'shop'").fetchone()[0]
    conn.execute("UPDATE observations SET title = 'ledger rounding', narrative = '' WHERE id = ?", (oid,))
    conn.execute("UPDATE observations SET project = 'blog' WHERE id = ?", (oid,))
    conn.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (oid,))  # no text: no change
    conn.execute("UPDATE observations SET title = title, project = project WHERE id = ?", (oid,))
    conn.execute("UPDATE session_summaries SET learned = 'nothing', project = 'blog' WHERE session_id = 2")
    conn.execute("UPDATE user_prompts SET prompt_text = '[forgotten]' WHERE session_id = 1 AND prompt_number = 1")
    conn.execute("UPDATE user_prompts SET session_id = 3, prompt_number = 9 WHERE session_id = 2")
    assert kept(conn) == truth(conn)

    conn.execute("UPDATE sessions SET project = 'shop' WHERE id = 3")  # its prompts move with it
    assert kept(conn) == truth(conn)
    conn.execute("DELETE FROM user_prompts WHERE id = (SELECT MIN(id) FROM user_prompts)")
    conn.execute("DELETE FROM observations WHERE id = ?", (oid,))
    conn.execute("DELETE FROM session_summaries WHERE session_id = 3")
    assert kept(conn) == truth(conn)

    conn.execute("DELETE FROM sessions WHERE id = 1")  # prompts, observations and summary cascade
    assert kept(conn) == truth(conn)

    session(conn, 4, "shop", ["one more"], ["more rounding"])
    conn.execute("BEGIN IMMEDIATE")
    merge(conn, "shop", "blog")  # sessions, observations and summaries re-filed at once
    conn.execute("COMMIT")
    assert kept(conn) == truth(conn)
    assert not [k for k in kept(conn) if k[2] == "shop"]
    assert all(n > 0 for n in kept(conn).values())  # counts reaching 0 are deleted

    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE observations SET title = 'boom' WHERE id = (SELECT MIN(id) FROM observations)")
    conn.execute("ROLLBACK")
    assert kept(conn) == truth(conn)
    assert conn.execute("SELECT COUNT(*) FROM search_terms_scratch_vocab").fetchone()[0] == 0  # left empty


def test_reindex_refills_and_an_upgraded_database_is_counted(tmp_path: Path) -> None:
    c = sqlite3.connect(str(tmp_path / "old.db"), isolation_level=None)
    migrate(c, target=21)  # a database from before migration 0022, with rows
    session(c, 1, "shop", ["fix the invoice rounding"], ["invoice rounding", "vat totals"])
    session(c, 2, "blog", ["write the post"], ["post draft"])
    assert c.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_terms'").fetchone() is None
    migrate(c)
    assert kept(c) == truth(c) and kept(c)

    expected = kept(c)
    c.execute("UPDATE search_terms SET n = n + 7")  # drifted (a bug, a copy without triggers)
    c.execute("INSERT INTO search_terms (kind, term, project, n) VALUES ('summary', 'ghost', 'x', 3)")
    reindex.rebuild_text(c, use_trigram=False)
    assert kept(c) == expected


def test_the_tokenizer_is_the_indexes_own(conn: sqlite3.Connection) -> None:
    for name in ("observations_fts", "session_summaries_fts", "user_prompts_fts", terms.SCRATCH):
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
        assert re.search(r"tokenize\s*=\s*'([^']*)'", sql).group(1) == terms.TOKENIZE  # type: ignore[union-attr]


def test_lookup_gives_the_rows_a_match_counts(conn: sqlite3.Connection) -> None:
    words = [Term("invoices", False), Term("Running", False), Term("cafe", False), Term("nowhere", False),
             Term("vat.totals", False), Term("rounding", True)]
    for kind, (fts, _rows) in FTS.items():
        for project in ("shop", "blog", None):
            got = terms.lookup(conn, kind, words, project)
            assert set(got) == set(words[:4])  # a phrase of two tokens and a prefix are counted, not looked up
            src = bm25.SOURCES[kind]
            for t, (n_all, n_scope) in got.items():
                assert n_all == conn.execute(f"SELECT COUNT(*) FROM {fts} WHERE {fts} MATCH ?",
                                             (t.phrase(),)).fetchone()[0]
                assert n_scope == (n_all if project is None else conn.execute(
                    f"SELECT COUNT(*) FROM {fts} JOIN {src.table} {src.alias} ON {src.alias}.id = {fts}.rowid "
                    f"{src.joins} WHERE {fts} MATCH ? AND {src.project} = ?", (t.phrase(), project)).fetchone()[0])


def test_without_the_table_or_temporary_tables_the_ranking_counts_instead(conn: sqlite3.Connection) -> None:
    terms.clear_cache()  # tokens another test cached for the same word need no temporary table
    conn.execute("PRAGMA query_only = ON")  # no temporary table to tokenize in
    assert terms.lookup(conn, "observation", [Term("invoice", False)], "shop") == {}
    conn.execute("PRAGMA query_only = OFF")
    assert terms.lookup(conn, "observation", [Term("invoice", False)], "shop")
    conn.execute("DROP TABLE search_terms")
    assert terms.lookup(conn, "observation", [Term("invoice", False)], "shop") == {}


def _ranking(conn: sqlite3.Connection, text: str, project: str | None) -> list[tuple[int, float]]:
    bm25.clear_cache()
    plan.clear_cache()
    r = bm25.rank(conn, "observation", parse(text), make(project), 10, budget=12, max_common=2)
    return [(rid, round(s, 9)) for rid, s in r.top(10)]


def test_the_ranking_on_kept_statistics_equals_the_ranking_on_counted_ones(conn: sqlite3.Connection,
                                                                            tmp_path: Path) -> None:
    for i in range(40):  # common words (over the budget of 12), in both projects unevenly; rare ones
        session(conn, 10 + i, "shop" if i % 3 else "blog", ["more"],
                [f"invoice rounding {'vat ' * (i % 2)}{'totals ' * (i % 5 == 0)}x{i % 7}"])
    queries = ["invoice rounding vat x3", "rounding totals x1 x2", "deploy invoice x4 x5", "cafe invoice x6 vat"]
    scopes = ("shop", "blog", None)
    kept_rank = {(q, p): _ranking(conn, q, p) for q in queries for p in scopes}
    assert all(len(v) >= 2 for v in kept_rank.values()) and sum(map(len, kept_rank.values())) >= 60
    conn.execute(f"VACUUM INTO '{tmp_path / 'counted.db'}'")
    counted = open_db(str(tmp_path / "counted.db"))
    counted.execute("DROP TABLE search_terms")  # every statistic counted (a small index: exactly)
    assert {k: _ranking(counted, *k) for k in kept_rank} == kept_rank
    conn.execute("UPDATE search_terms SET n = n + 20 WHERE term = 'vat' AND project = 'shop'")  # were they used?
    assert {k: _ranking(conn, *k) for k in kept_rank} != kept_rank


def test_a_repaired_database_counts_its_salvaged_rows(conn: sqlite3.Connection, tmp_path: Path) -> None:
    conn.execute("UPDATE search_terms SET n = n + 5")  # whatever the damaged file held is not copied
    conn.close()
    recover(str(tmp_path / "k.db"), str(tmp_path / "repaired.db"), use_cli=False)
    repaired = sqlite3.connect(str(tmp_path / "repaired.db"))
    assert kept(repaired) == truth(repaired) and kept(repaired)
