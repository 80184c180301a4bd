"""Rebuilding every derived search index from the canonical rows.

FTS5 ('rebuild'), the optional trigram tables (created, refilled or dropped to match
``search_trigram``) and the embeddings (vectors of deleted rows pruned, missing ones computed;
``force`` recomputes all of the current model). The database rows are never touched.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

from engram.search import indexer, trigram
from engram.store.repo import transaction

FTS_TABLES = ("observations_fts", "session_summaries_fts", "user_prompts_fts")
Progress = Callable[[str, int, int], None]  # (stage, done, total)


def rebuild_text(conn: sqlite3.Connection, *, use_trigram: bool, progress: Progress | None = None) -> dict[str, Any]:
    """FTS5 and trigram indexes; returns what was done and how long it took."""
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    steps = len(FTS_TABLES) + 1
    for i, table in enumerate(FTS_TABLES):
        if progress:
            progress("full-text index", i, steps)
        with transaction(conn):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
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
