"""Candidate rows from the FTS5 indexes (BM25) and plain filtered listings, per kind of row."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from engram.search.filters import Filters, where

# BM25 column weights: a title says what a row is about; facts and subtitles are dense;
# narratives are long and wordy. Order = the FTS table's column order.
OBSERVATION_WEIGHTS = (4.0, 2.0, 1.0, 2.0, 1.0)   # title, subtitle, narrative, facts, concepts
SUMMARY_WEIGHTS = (3.0, 1.0, 2.0, 2.0, 1.0, 1.0)  # request, investigated, learned, completed, next_steps, notes
PROMPT_WEIGHTS = (1.0,)
WINDOW = 1000  # most matching rows ranked per query (the newest ones); see matching()


@dataclass(frozen=True)
class Source:
    table: str
    alias: str
    fts: str
    columns: str  # kind, id, type, title, project, session_id, created_at, status, chars
    joins: str
    weights: tuple[float, ...]


SOURCES = {
    "observation": Source(
        "observations", "o", "observations_fts",
        "'observation', o.id, o.type, o.title, o.project, o.session_id, o.created_at, o.status, "
        "length(o.title) + length(o.subtitle) + length(o.narrative) + length(o.facts) + length(o.concepts) "
        "+ length(o.files_read) + length(o.files_modified)",
        "", OBSERVATION_WEIGHTS),
    "summary": Source(
        "session_summaries", "s", "session_summaries_fts",
        "'summary', s.id, 'summary', CASE WHEN s.request != '' THEN s.request ELSE s.completed END, s.project, "
        "s.session_id, s.created_at, 'active', length(s.request) + length(s.investigated) + length(s.learned) "
        "+ length(s.completed) + length(s.next_steps) + length(s.notes) + length(s.files_read) "
        "+ length(s.files_modified)",
        "", SUMMARY_WEIGHTS),
    "prompt": Source(
        "user_prompts", "u", "user_prompts_fts",
        "'prompt', u.id, 'prompt', u.prompt_text, ses.project, u.session_id, u.created_at, 'active', "
        "length(u.prompt_text)",
        "JOIN sessions ses ON ses.id = u.session_id", PROMPT_WEIGHTS),
}


@dataclass
class Row:
    kind: str
    id: int
    type: str
    title: str
    project: str
    session_id: int
    created_at: float
    status: str
    chars: int
    bm25: float = 0.0  # FTS5 rank: more negative is better; 0 for plain listings


def _rows(cur: sqlite3.Cursor, ranked: bool) -> list[Row]:
    out = []
    for r in cur:
        out.append(Row(r[0], int(r[1]), r[2], r[3] or "", r[4], int(r[5]), float(r[6]), r[7], int(r[8] or 0),
                       float(r[9]) if ranked else 0.0))
    return out


def matching(conn: sqlite3.Connection, kind: str, match: str, f: Filters, *, limit: int,
             by_date: bool = False, fts_table: str | None = None, window: int = WINDOW) -> list[Row]:
    """Rows of ``kind`` whose text matches the FTS5 expression ``match``, best (or newest) first.

    Only the newest ``window`` matching rows (that pass the filters) are ranked. ``ORDER BY rank``
    would score every match: 0.5 s for a term in all of 100k rows. Walking the matches newest
    first (rowid order, which FTS5 streams) and scoring at most ``window`` of them keeps a
    common-word query near 10 ms; a selective query (fewer matches than that) is ranked exactly.
    """
    src = SOURCES[kind]
    fts = fts_table or src.fts
    params: list[object] = [match]
    cond = where(kind, f, params)
    weights = ", ".join(str(w) for w in src.weights) if fts == src.fts else ""
    rank = f"bm25({fts}{', ' + weights if weights else ''})"
    # Phase 1: ids, times and scores only (plain tuples: 1000 full rows cost more than the query).
    sql = (f"SELECT {src.alias}.id, {src.alias}.created_at, {rank} FROM {fts} JOIN {src.table} {src.alias} "
           f"ON {src.alias}.id = {fts}.rowid {src.joins} WHERE {fts} MATCH ? AND {cond} "
           f"ORDER BY {fts}.rowid DESC LIMIT ?")
    params.append(max(window, limit))
    cur = conn.cursor()
    cur.row_factory = None
    cands: list[tuple[int, float, float]] = cur.execute(sql, params).fetchall()
    if by_date:
        cands.sort(key=lambda c: (-c[1], -c[0]))
    else:
        cands.sort(key=lambda c: (c[2], -c[1], -c[0]))
    top = cands[:limit]
    # Phase 2: the full rows of the few that are returned.
    found = {r.id: r for r in by_ids(conn, kind, [c[0] for c in top], f)}
    out = []
    for rid, _at, score in top:
        r = found.get(rid)
        if r is not None:
            r.bm25 = float(score)
            out.append(r)
    return out


def listing(conn: sqlite3.Connection, kind: str, f: Filters, *, limit: int) -> list[Row]:
    """Rows of ``kind`` passing the filters, newest first (a search with no words)."""
    src = SOURCES[kind]
    params: list[object] = []
    cond = where(kind, f, params)
    sql = (f"SELECT {src.columns} FROM {src.table} {src.alias} {src.joins} WHERE {cond} "
           f"ORDER BY {src.alias}.created_at DESC, {src.alias}.id DESC LIMIT ?")
    params.append(limit)
    return _rows(conn.execute(sql, params), ranked=False)


def by_ids(conn: sqlite3.Connection, kind: str, ids: list[int], f: Filters) -> list[Row]:
    """Rows of ``kind`` among ``ids`` that pass the filters (vector hits are filtered here)."""
    if not ids:
        return []
    src = SOURCES[kind]
    params: list[object] = []
    cond = where(kind, f, params)
    marks = ",".join("?" * len(ids))
    sql = (f"SELECT {src.columns} FROM {src.table} {src.alias} {src.joins} "
           f"WHERE {cond} AND {src.alias}.id IN ({marks})")
    return _rows(conn.execute(sql, [*params, *ids]), ranked=False)
