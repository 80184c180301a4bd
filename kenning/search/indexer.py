"""Keeping the embeddings table in step with the canonical rows.

Rows without a vector for the current model are embedded newest first (recent memory is
searchable first), in small batches so a query waiting for the same thread never waits long.
The text of a row is hashed: a vector for identical text under the same model is copied, not
recomputed. Deletes and edits remove vectors through triggers (migration 0003).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kenning.store.repo import transaction

MAX_TEXT_CHARS = 2000  # models read ~256-512 tokens; the head of a record says what it is about


@dataclass
class Item:
    kind: str
    row_id: int
    project: str
    text: str
    fresh: bool = False  # stored since the embedder's last look (a new memory), not backlog

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "replace")).hexdigest()[:32]


def _list_text(raw: str | None) -> str:
    try:
        v = json.loads(raw or "[]")
    except ValueError:
        return raw or ""
    return "; ".join(str(x) for x in v) if isinstance(v, list) else str(v)


def _join(*parts: str) -> str:
    return ". ".join(p.strip() for p in parts if p and p.strip())[:MAX_TEXT_CHARS]


# kind: (SELECT of id, project, text parts… for rows missing a vector of model ?, text builder)
_MISSING: dict[str, tuple[str, Callable[[sqlite3.Row], str]]] = {
    "observation": (
        "SELECT o.id, o.project, o.title, o.subtitle, o.facts, o.narrative FROM observations o "
        "WHERE (o.title != '' OR o.narrative != '') AND NOT EXISTS (SELECT 1 FROM embeddings e "
        "WHERE e.kind = 'observation' AND e.row_id = o.id AND e.model = ?) ORDER BY o.id DESC LIMIT ?",
        lambda r: _join(r["title"], r["subtitle"], _list_text(r["facts"]), r["narrative"])),
    "summary": (
        "SELECT s.id, s.project, s.request, s.learned, s.completed, s.investigated, s.next_steps, s.notes "
        "FROM session_summaries s WHERE (s.request != '' OR s.learned != '' OR s.completed != '' "
        "OR s.investigated != '' OR s.next_steps != '' OR s.notes != '') AND NOT EXISTS (SELECT 1 FROM "
        "embeddings e WHERE e.kind = 'summary' AND e.row_id = s.id AND e.model = ?) ORDER BY s.id DESC LIMIT ?",
        lambda r: _join(r["request"], r["learned"], r["completed"], r["investigated"], r["next_steps"], r["notes"])),
    "prompt": (
        "SELECT u.id, ses.project, u.prompt_text FROM user_prompts u JOIN sessions ses ON ses.id = u.session_id "
        "WHERE u.prompt_text NOT IN ('', '[forgotten]') AND NOT EXISTS (SELECT 1 FROM embeddings e "
        "WHERE e.kind = 'prompt' AND e.row_id = u.id AND e.model = ?) ORDER BY u.id DESC LIMIT ?",
        lambda r: _join(r["prompt_text"])),
}


def missing(conn: sqlite3.Connection, model: str, limit: int, cursor: Cursor | None = None,
            between: Callable[[], None] | None = None) -> list[Item]:
    """Up to ``limit`` rows (observations first, then summaries, then prompts) lacking a vector.

    Without ``cursor`` every call is an anti-join over whole tables (~250 ms at 200k rows when
    nothing is missing). With one, only rows not yet seen with a vector are read: the new rows
    above its high-water mark (``fresh``; a call that finds some returns no backlog with them),
    then the backlog below its low mark in ranges of ``SCAN_CHUNK`` ids, calling ``between()``
    after each range (the embedding thread answers queries there).
    """
    if cursor is None:
        return _missing_full(conn, model, limit)
    cursor.sync(conn, model)
    tops = {kind: int(conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {_TABLE[kind]}").fetchone()[0])
            for kind in _MISSING}
    for kind, top in tops.items():
        if cursor.lo.get(kind) is None or cursor.hi.get(kind) is None:
            cursor.lo[kind] = cursor.hi[kind] = top  # nothing checked yet: all of it is backlog
    out: list[Item] = []
    for kind, (sql, text_of) in _MISSING.items():  # rows stored since the last look, alone
        if len(out) >= limit:
            break
        if tops[kind] > cursor.hi[kind]:
            found = _range(conn, sql, text_of, kind, model, cursor.hi[kind], tops[kind], limit - len(out))
            for item in found:
                item.fresh = True
            out += found
            if not found:
                cursor.hi[kind] = tops[kind]
    if out:
        return out
    for kind, (sql, text_of) in _MISSING.items():
        lo = cursor.lo[kind]
        while lo > 0 and len(out) < limit:
            floor = max(0, lo - SCAN_CHUNK)
            found = _range(conn, sql, text_of, kind, model, floor, lo, limit - len(out))
            out += found
            lo = max((i.row_id for i in found), default=floor) if found else floor
            if found:
                break  # what is below was not read yet
            if between is not None:
                between()
        cursor.lo[kind] = lo
        if len(out) >= limit:
            break
    return out


SCAN_CHUNK = 5000  # ids per backlog range (~6 ms): the longest a query waits behind the scan


class Cursor:
    """What :func:`missing` has already read, per kind: every row with ``lo < id <= hi`` had a
    vector of the model (or no text). Any deleted vector (an edited or forgotten row, a prune, a
    forced reindex: the ``embedding_state.deletes`` counter) starts it over."""

    def __init__(self) -> None:
        self.model = ""
        self.deletes = -1
        self.lo: dict[str, int] = {}
        self.hi: dict[str, int] = {}

    def sync(self, conn: sqlite3.Connection, model: str) -> None:
        row = conn.execute("SELECT deletes FROM embedding_state WHERE id = 1").fetchone()
        deletes = int(row[0]) if row else 0
        if deletes != self.deletes or model != self.model:
            self.model, self.deletes = model, deletes
            self.lo.clear()
            self.hi.clear()


def _range(conn: sqlite3.Connection, sql: str, text_of: Callable[[sqlite3.Row], str], kind: str, model: str,
           above: int, upto: int, limit: int) -> list[Item]:
    alias = sql.split(" FROM ", 1)[1].split()[1]  # o, s, u
    ranged = sql.replace(" ORDER BY ", f" AND {alias}.id > ? AND {alias}.id <= ? ORDER BY ", 1)
    cur = conn.cursor()
    cur.row_factory = sqlite3.Row
    out = []
    for r in cur.execute(ranged, (model, above, upto, limit)):
        text = text_of(r)
        if text:
            out.append(Item(kind, int(r[0]), r[1] or "", text))
    return out


def _missing_full(conn: sqlite3.Connection, model: str, limit: int) -> list[Item]:
    out: list[Item] = []
    for kind, (sql, text_of) in _MISSING.items():
        if len(out) >= limit:
            break
        cur = conn.cursor()
        cur.row_factory = sqlite3.Row
        for r in cur.execute(sql, (model, limit - len(out))):
            text = text_of(r)
            if text:
                out.append(Item(kind, int(r[0]), r[1] or "", text))
    return out


def count_missing(conn: sqlite3.Connection, model: str) -> int:
    total = 0
    for sql, _text_of in _MISSING.values():
        inner = sql.split(" ORDER BY ")[0].replace("SELECT ", "SELECT COUNT(*) FROM (SELECT ", 1)
        total += int(conn.execute(inner + ")", (model,)).fetchone()[0])
    return total


def store(conn: sqlite3.Connection, model: str, items: list[Item], vectors: Any) -> int:
    """Insert the vectors of ``items`` (one transaction); rows deleted meanwhile are skipped."""
    now = time.time()
    n = 0
    with transaction(conn):
        for item, vec in zip(items, vectors, strict=True):
            blob = vec.astype("<f4").tobytes()
            cur = conn.execute(
                "INSERT INTO embeddings (kind, row_id, project, model, content_hash, dim, vector, created_at) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM " + _TABLE[item.kind] + " WHERE id = ?) "
                "ON CONFLICT (kind, row_id, model) DO NOTHING",
                (item.kind, item.row_id, item.project, model, item.content_hash, int(vec.shape[0]), blob, now,
                 item.row_id))
            n += cur.rowcount
    return n


_TABLE = {"observation": "observations", "summary": "session_summaries", "prompt": "user_prompts"}


def reuse(conn: sqlite3.Connection, model: str, items: list[Item]) -> tuple[list[Item], list[bytes | None]]:
    """The stored vector of identical text under ``model`` for each item (None: must be computed)."""
    found: list[bytes | None] = []
    for item in items:
        row = conn.execute("SELECT vector FROM embeddings WHERE model = ? AND content_hash = ? LIMIT 1",
                           (model, item.content_hash)).fetchone()
        found.append(bytes(row[0]) if row else None)
    return items, found


def step(conn: sqlite3.Connection, model: str, embed: Callable[[list[str]], Any], batch: int = 16,
         cursor: Cursor | None = None, between: Callable[[], None] | None = None,
         embed_fresh: Callable[[list[str]], Any] | None = None) -> int:
    """Embed one batch of rows lacking a vector; returns how many rows got one (0: all done).
    New memories (``fresh`` rows) go to ``embed_fresh`` when given, the backlog to ``embed``."""
    import numpy as np

    items = missing(conn, model, batch, cursor, between)
    if not items:
        return 0
    _items, known = reuse(conn, model, items)
    todo = [i for i, v in enumerate(known) if v is None]
    if embed_fresh is not None and any(i.fresh for i in items):
        embed = embed_fresh
    computed = embed([items[i].text for i in todo]) if todo else np.zeros((0, 0), dtype=np.float32)
    vectors: list[Any] = []
    it = iter(computed)
    for v in known:
        vectors.append(np.frombuffer(v, dtype="<f4") if v is not None else next(it))
    store(conn, model, items, vectors)
    return len(items)  # rows deleted meanwhile are skipped by store() and gone from missing() too


def prune(conn: sqlite3.Connection, keep_model: str | None = None) -> int:
    """Delete vectors whose row is gone (and, with ``keep_model``, vectors of other models)."""
    n = 0
    with transaction(conn):
        for kind, table in _TABLE.items():
            n += conn.execute(f"DELETE FROM embeddings WHERE kind = ? AND row_id NOT IN (SELECT id FROM {table})",
                              (kind,)).rowcount
        if keep_model is not None:
            n += conn.execute("DELETE FROM embeddings WHERE model != ?", (keep_model,)).rowcount
    return n


def counts(conn: sqlite3.Connection, model: str) -> dict[str, int]:
    have = int(conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0])
    return {"embedded": have, "missing": count_missing(conn, model)}
