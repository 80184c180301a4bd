"""The per-project row counts of the keyword ranking (migration 0020) follow every write: each
equals the COUNT the search would otherwise run, after inserts, moves, deletes, a cascade, a
project merge, and ``kenning reindex`` refills it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kenning.search import bm25, reindex
from kenning.store.db import open_db
from kenning.store.projects import merge

KINDS = {"observation": "SELECT project, COUNT(*) FROM observations GROUP BY project",
         "summary": "SELECT project, COUNT(*) FROM session_summaries GROUP BY project",
         "prompt": "SELECT s.project, COUNT(*) FROM user_prompts u JOIN sessions s ON s.id = u.session_id "
                   "GROUP BY s.project"}


def counted(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    return {(kind, r[0]): r[1] for kind, sql in KINDS.items() for r in conn.execute(sql)}


def kept(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    return {(r[0], r[1]): r[2] for r in conn.execute("SELECT kind, project, n FROM search_scope_rows") if r[2]}


def session(conn: sqlite3.Connection, sid: int, project: str, prompts: int, obs: int) -> None:
    conn.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (?, ?, ?, 1.0)",
                 (sid, f"s-{sid}", project))
    for i in range(prompts):
        conn.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                     "VALUES (?, ?, 'fix the invoice rounding', 2.0)", (sid, i + 1))
    for i in range(obs):
        conn.execute("INSERT INTO observations (session_id, project, type, title, created_at, recorded_at, "
                     "content_hash) VALUES (?, ?, 'bugfix', 'rounding', 3.0, 3.0, ?)", (sid, project, f"h{sid}-{i}"))
    conn.execute("INSERT INTO session_summaries (session_id, project, request, created_at, recorded_at) "
                 "VALUES (?, ?, 'fix rounding', 4.0, 4.0)", (sid, project))


def test_counts_follow_inserts_moves_deletes_cascades_and_merges(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    session(conn, 1, "shop", 3, 4)
    session(conn, 2, "shop", 1, 2)
    session(conn, 3, "blog", 2, 5)
    assert kept(conn) == counted(conn)
    assert kept(conn)[("prompt", "shop")] == 4 and kept(conn)[("observation", "blog")] == 5

    oid = conn.execute("SELECT MIN(id) FROM observations WHERE project = 'shop'").fetchone()[0]
    conn.execute("UPDATE observations SET project = 'blog' WHERE id = ?", (oid,))
    conn.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (oid,))  # not the project
    conn.execute("UPDATE session_summaries SET project = 'blog' WHERE session_id = 2")
    conn.execute("UPDATE user_prompts SET session_id = 3, prompt_number = 9 WHERE session_id = 2")
    assert kept(conn) == counted(conn)

    conn.execute("DELETE FROM user_prompts WHERE id = (SELECT MIN(id) FROM user_prompts)")
    conn.execute("DELETE FROM observations WHERE id = ?", (oid,))
    assert kept(conn) == counted(conn)

    conn.execute("DELETE FROM sessions WHERE id = 1")  # its prompts, observations and summary cascade
    assert kept(conn) == counted(conn)

    session(conn, 4, "shop", 2, 1)
    conn.execute("BEGIN IMMEDIATE")
    merge(conn, "shop", "blog")  # sessions, observations and summaries re-filed at once
    conn.execute("COMMIT")
    assert kept(conn) == counted(conn)
    assert ("prompt", "shop") not in kept(conn)

    n_all = bm25.index_rows(conn, "observations_fts")
    assert bm25.scope_rows(conn, "observation", "blog", n_all) == counted(conn)[("observation", "blog")]
    assert bm25.scope_rows(conn, "prompt", "nowhere", n_all) == 0


def test_reindex_refills_the_counts(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    session(conn, 1, "shop", 3, 4)
    session(conn, 2, "blog", 1, 2)
    expected = counted(conn)
    conn.execute("UPDATE search_scope_rows SET n = n + 7")  # drifted (a bug, a copy without triggers)
    conn.execute("INSERT INTO search_scope_rows (kind, project, n) VALUES ('summary', 'ghost', 3)")
    assert kept(conn) != expected
    reindex.rebuild_text(conn, use_trigram=False)
    assert kept(conn) == expected
