"""Rebuilding every derived search index from the canonical rows.

FTS5 ('rebuild', from the content views of migration 0026, after their CJK rows are recomputed),
``observation_files`` (which observation touched which file: the same rows its triggers in
migration 0004 derive from ``files_read`` / ``files_modified``), ``observation_concepts`` (the
viewer's concept filter, migration 0006), ``search_scope_rows`` (the per-project row counts of the
keyword ranking, migration 0020), ``search_terms`` (its per-project term frequencies, migration
0022), the optional trigram tables (created, refilled or dropped to match ``search_trigram``) and
the embeddings (vectors of deleted rows pruned, missing ones computed; ``force`` recomputes all of
the current model). The database rows are never touched.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

from kenning.search import cjk, indexer, terms, trigram
from kenning.store.repo import transaction

FTS_TABLES = ("observations_fts", "session_summaries_fts", "user_prompts_fts")
# The trigger's rows for every observation at once: one row per distinct path, modified when the
# path is in files_modified, n_files = distinct paths of the observation; malformed JSON reads as [].
OBSERVATION_FILES_SQL = """
INSERT OR REPLACE INTO observation_files
    (path, observation_id, session_id, project, type, status, created_at, modified, n_files)
SELECT f.path, o.id, o.session_id, o.project, o.type, o.status, o.created_at, f.modified, f.n_files
FROM (SELECT path, id, MAX(modified) AS modified, COUNT(*) OVER (PARTITION BY id) AS n_files
      FROM (SELECT j.value AS path, o.id AS id, 1 AS modified
            FROM observations o,
                 json_each(CASE WHEN json_valid(o.files_modified) THEN o.files_modified ELSE '[]' END) j
            WHERE j.type = 'text' AND j.value != ''
            UNION ALL
            SELECT j.value, o.id, 0
            FROM observations o,
                 json_each(CASE WHEN json_valid(o.files_read) THEN o.files_read ELSE '[]' END) j
            WHERE j.type = 'text' AND j.value != '')
      GROUP BY id, path) f
JOIN observations o ON o.id = f.id
"""


# The trigger's rows of migration 0006 for every observation at once; malformed JSON reads as [].
OBSERVATION_CONCEPTS_SQL = """
INSERT OR IGNORE INTO observation_concepts (concept, created_at, observation_id)
SELECT DISTINCT j.value, o.created_at, o.id
FROM observations o, json_each(CASE WHEN json_valid(o.concepts) THEN o.concepts ELSE '[]' END) j
WHERE j.type = 'text' AND j.value != ''
"""
# The per-project row counts of the per-scope BM25 (migration 0020), as its triggers keep them.
SEARCH_SCOPE_ROWS_SQL = """
INSERT INTO search_scope_rows (kind, project, n)
SELECT 'observation', project, COUNT(*) FROM observations GROUP BY project
UNION ALL SELECT 'summary', project, COUNT(*) FROM session_summaries GROUP BY project
UNION ALL SELECT 'prompt', s.project, COUNT(*) FROM user_prompts u JOIN sessions s ON s.id = u.session_id
GROUP BY s.project
"""
# Tables derived from the canonical rows by triggers, and how to refill each from scratch (an
# INSERT after emptying it, or a function doing both: the term statistics of migration 0022).
DERIVED: dict[str, str | Callable[[sqlite3.Connection], int]] = {
    "observation_files": OBSERVATION_FILES_SQL, "observation_concepts": OBSERVATION_CONCEPTS_SQL,
    "search_scope_rows": SEARCH_SCOPE_ROWS_SQL, "search_terms": terms.refill}


def rebuild_derived(conn: sqlite3.Connection, table: str) -> int | None:
    """Refill a table of ``DERIVED`` from the canonical rows; its row count (None: no such table yet)."""
    exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    if conn.execute(exists, (table,)).fetchone() is None:
        return None
    fill = DERIVED[table]
    with transaction(conn):
        if callable(fill):
            return fill(conn)
        conn.execute(f"DELETE FROM {table}")
        conn.execute(fill)
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


Progress = Callable[[str, int, int], None]  # (stage, done, total)


def rebuild_text(conn: sqlite3.Connection, *, use_trigram: bool, progress: Progress | None = None) -> dict[str, Any]:
    """FTS5 and trigram indexes; returns what was done and how long it took."""
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    steps = len(FTS_TABLES) + 1
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_cjk_input'").fetchone():
        with transaction(conn):  # the CJK text the indexes read (migration 0026), before they are rebuilt
            out["cjk_rows"] = cjk.refill(conn)
    for i, table in enumerate(FTS_TABLES):
        if progress:
            progress("full-text index", i, steps)
        with transaction(conn):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    for table in DERIVED:
        rows = rebuild_derived(conn, table)
        if rows is not None:
            out[table] = rows
    if progress:
        progress("trigram index", len(FTS_TABLES), steps)
    if use_trigram:
        if not trigram.enable(conn):
            with transaction(conn):
                trigram.rebuild(conn)
        out["trigram"] = "rebuilt"
    else:
        out["trigram"] = "dropped" if trigram.disable(conn) else "off"
    if progress:
        progress("trigram index", steps, steps)
    out["fts_seconds"] = round(time.monotonic() - t0, 2)
    return out


def reset_vectors(conn: sqlite3.Connection, model: str, *, force: bool) -> int:
    """Prune vectors of deleted rows; with ``force`` drop the model's vectors so all are recomputed."""
    n = indexer.prune(conn)
    if force:
        with transaction(conn):
            n += conn.execute("DELETE FROM embeddings WHERE model = ?", (model,)).rowcount
    return n


def embed_all(conn: sqlite3.Connection, model: str, embed: Callable[[list[str]], Any], *, batch: int = 32,
              progress: Progress | None = None) -> int:
    """Embed every row lacking a vector (used when no worker runs to do it)."""
    total = indexer.count_missing(conn, model)
    done = 0
    if progress:
        progress("vectors", 0, total)
    while True:
        n = indexer.step(conn, model, embed, batch=batch)
        if not n:
            break
        done += n
        if progress:
            progress("vectors", min(done, total), total)
    return done
