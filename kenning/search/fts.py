"""Candidate rows from the FTS5 indexes (BM25) and plain filtered listings, per kind of row."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kenning.search import plan as planning
from kenning.search.filters import Filters, where
from kenning.search.query import FtsQuery

# BM25 column weights: a title says what a row is about; facts and subtitles are dense;
# narratives are long and wordy. Order = the FTS table's column order.
OBSERVATION_WEIGHTS = (4.0, 2.0, 1.0, 2.0, 1.0)   # title, subtitle, narrative, facts, concepts
SUMMARY_WEIGHTS = (3.0, 1.0, 2.0, 2.0, 1.0, 1.0)  # request, investigated, learned, completed, next_steps, notes
PROMPT_WEIGHTS = (1.0,)
WINDOW = 500         # most matching observations ranked per query (the newest ones); see matching()
SMALL_WINDOW = 300   # the same for summaries, prompts and the any-term fallback
MAX_OR_TERMS = 4     # the any-term fallback of a long query keeps only its rarest terms
DF_CAP = 2000        # document frequencies are counted up to here (enough to tell rare from common)


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
             by_date: bool = False, fts_table: str | None = None, window: int = WINDOW,
             slack: float = 1.0, ranked: bool = True) -> list[Row]:
    """Rows of ``kind`` whose text matches the FTS5 expression ``match``, best (or newest) first.

    Only the newest ``window`` matching rows are ranked. ``ORDER BY rank`` would score every
    match: 0.5 s for a term in all of 100k rows. FTS5 streams matches newest first (rowid
    order), so scoring at most ``window`` of them bounds a common-word query; a selective query
    (fewer matches than that) is ranked exactly. Filters are checked on the best candidates
    only; when they reject most of them (a small project, a rare type), the matches that pass
    them are walked instead.

    ``slack`` (≥ 1, the caller's largest score multiplier, e.g. the recency boost) adds every
    row beyond the first ``limit`` that the multiplier could lift into them, so re-ranking and
    paging stay consistent.

    ``ranked=False`` skips ``bm25()`` (its cost is a full walk of every phrase's doclist): for
    a query whose every term is in most rows (see :mod:`kenning.search.plan`), matches newest first.
    """
    src = SOURCES[kind]
    fts = fts_table or src.fts
    weights = ", ".join(str(w) for w in src.weights) if fts == src.fts else ""
    rank = f"bm25({fts}{', ' + weights if weights else ''})" if ranked else "0.0"
    window = max(window, limit)
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: building 1000 Row objects costs more than the query
    # Phase 1: FTS5 alone, no table lookups: the newest `window` matches and their scores.
    cands: list[tuple[int, float]] = cur.execute(
        f"SELECT rowid, {rank} FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT ?", (match, window)
    ).fetchall()
    if not by_date:
        cands.sort(key=lambda c: (c[1], -c[0]))
    slack = 1.0 if by_date else slack
    out, selective = _passing(conn, kind, f, cands, limit, slack)
    if len(out) < limit and len(cands) >= window and selective:
        # Phase 2: the filters reject most matches: walk only those that pass them.
        params: list[object] = [match]
        cond = where(kind, f, params)
        params.append(window)
        cands = cur.execute(
            f"SELECT {src.alias}.id, {rank} FROM {fts} JOIN {src.table} {src.alias} ON {src.alias}.id = {fts}.rowid "
            f"{src.joins} WHERE {fts} MATCH ? AND {cond} ORDER BY {fts}.rowid DESC LIMIT ?", params).fetchall()
        if not by_date:
            cands.sort(key=lambda c: (c[1], -c[0]))
        out, _sel = _passing(conn, kind, f, cands, limit, slack)
    if by_date:
        out.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    return out


def _squash(bm25: float) -> float:
    s = max(0.0, -bm25)
    return s / (1.0 + s)


def _passing(conn: sqlite3.Connection, kind: str, f: Filters, cands: list[tuple[int, float]],
             limit: int, slack: float = 1.0) -> tuple[list[Row], bool]:
    """The first ``limit`` candidates (in order) that pass the filters, as full rows, plus those
    right after them whose score is within ``slack`` of the last one; and whether the filters
    looked selective (they rejected most of what was checked)."""
    out: list[Row] = []
    checked = 0
    chunk = max(2 * limit, 40)
    cap = 2 * limit + 20  # bounds the extra rows when many scores tie
    floor: float | None = None
    for i in range(0, len(cands), chunk):
        part = cands[i:i + chunk]
        found = {r.id: r for r in by_ids(conn, kind, [c[0] for c in part], f)}
        checked += len(part)
        for rid, score in part:
            if floor is not None and (_squash(score) < floor or len(out) >= cap):
                return out, False
            r = found.get(rid)
            if r is None:
                continue
            r.bm25 = float(score)
            out.append(r)
            if len(out) == limit:
                if slack <= 1.0:
                    return out, False
                floor = _squash(score) / slack
        if floor is None and checked >= 2 * chunk and len(out) * 5 < checked:
            return out, True  # under 20% pass: stop probing, let the caller walk the passing rows
    return out, floor is None and len(out) * 5 < checked


def any_match(conn: sqlite3.Connection, kind: str, match: str) -> bool:
    """Whether any row of ``kind`` matches (unfiltered; cheap: stops at the first)."""
    fts = SOURCES[kind].fts
    return conn.execute(f"SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT 1", (match,)).fetchone() is not None


def plan(conn: sqlite3.Connection, q: FtsQuery) -> planning.Plan:
    """Which terms of ``q`` to require, score and widen with. The statistics come from the
    observations (the memory proper; the largest table) and the plan serves every kind: a term in
    most observations is a stopword of this memory, in its prompts and summaries too."""
    src = SOURCES["observation"]
    return planning.make(conn, src.fts, src.table, q)


def listing(conn: sqlite3.Connection, kind: str, f: Filters, *, limit: int) -> list[Row]:
    """Rows of ``kind`` passing the filters, newest first (a search with no words)."""
    src = SOURCES[kind]
    params: list[object] = []
    cond = where(kind, f, params)
    sql = (f"SELECT {src.columns} FROM {src.table} {src.alias} {src.joins} WHERE {cond} "
           f"ORDER BY {src.alias}.created_at DESC, {src.alias}.id DESC LIMIT ?")
    params.append(limit)
    return _rows(conn.execute(sql, params), ranked=False)


def by_ids(conn: sqlite3.Connection, kind: str, ids: list[int], f: Filters | None) -> list[Row]:
    """Rows of ``kind`` among ``ids`` that pass the filters (vector hits are filtered here); every
    one of them with ``f`` None."""
    if not ids:
        return []
    src = SOURCES[kind]
    params: list[object] = []
    cond = where(kind, f, params) if f is not None else "1"
    marks = ",".join("?" * len(ids))
    # NOT INDEXED: look the ids up by primary key; with a project filter the planner would
    # otherwise scan the project's whole index (8,000 entries for 40 ids).
    sql = (f"SELECT {src.columns} FROM {src.table} {src.alias} NOT INDEXED {src.joins} "
           f"WHERE {cond} AND {src.alias}.id IN ({marks})")
    return _rows(conn.execute(sql, [*params, *ids]), ranked=False)
