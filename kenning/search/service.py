"""The search service: keyword (BM25) and semantic search over memory, timelines, full records.

Every surface (HTTP, MCP, CLI, context hooks) calls these three functions:

- :func:`search` returns compact :class:`Hit` rows (observations, session summaries, prompts);
- :func:`timeline` returns what happened just before and after one observation;
- :func:`get_observations` returns full records by id.

Keyword search scores every row holding a query term by BM25 with the statistics of the scope
searched (:mod:`kenning.search.bm25`). With a :class:`~kenning.search.vectors.VectorIndex` the
nearest rows join the candidates and every candidate is scored on both signals: a convex
combination of its BM25 score (relative to the best one) and its cosine similarity. A mild
recency boost (at most ``1 + recency_weight``) breaks near-ties without burying old evidence.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kenning.records import text_tokens, tokens_of
from kenning.search import bm25, fts, rank, trigram
from kenning.search.config import DEFAULT, SearchConfig
from kenning.search.filters import KINDS, Filters, make, where
from kenning.search.plan import Plan
from kenning.search.query import FtsQuery, clean, parse
from kenning.threads import LazyPool

if TYPE_CHECKING:
    from kenning.search.vectors import VectorIndex, VectorMatches

ORDERS = ("relevance", "date")
MAX_LIMIT = 200
MAX_OFFSET = 10_000
MAX_IDS = 500
TITLE_CHARS = 160
# Observations are the distilled memory; summaries repeat them in longer form; prompts are raw asks.
KIND_WEIGHT = {"observation": 1.0, "summary": 0.85, "prompt": 0.7}

_SPACE = re.compile(r"\s+")


@dataclass
class Hit:
    kind: str          # "observation" | "summary" | "prompt"
    id: int
    type: str          # the observation type, or "summary" / "prompt"
    title: str         # one line, at most 160 characters
    project: str
    session_id: int
    created_at: float  # epoch seconds of the event
    score: float       # higher is better; comparable within one result list
    tokens: int        # size of the full record in tokens (~chars/4)
    status: str = "active"            # observations: active | superseded | retracted
    match: str = ""                   # keyword match: "all" terms, "substring" (trigram), "some", "" (none)
    similarity: float | None = None   # cosine similarity to the query, when found by meaning

    def as_dict(self) -> dict[str, Any]:
        # Every field is a scalar: a copy of the instance dict is what asdict() builds, at a
        # twentieth of its cost (asdict deep-copies field by field; 20 hits a search response).
        return dict(self.__dict__)


def one_line(text: str, limit: int = TITLE_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary when one is near the end."""
    s = _SPACE.sub(" ", text or "").strip()
    if len(s) <= limit:
        return s
    head = s[: limit - 1]
    space = head.rfind(" ")
    if space >= limit * 2 // 3:  # a word boundary near the end: never cut mid-word
        head = head[:space]
    return head.rstrip(" ,;:-") + "…"


def _hit(r: fts.Row, score: float, match: str = "", similarity: float | None = None) -> Hit:
    return Hit(kind=r.kind, id=r.id, type=r.type, title=one_line(r.title), project=r.project,
               session_id=r.session_id, created_at=r.created_at, score=round(score, 6), tokens=tokens_of(r.chars),
               status=r.status, match=match, similarity=None if similarity is None else round(similarity, 4))


def _kinds(kinds: Sequence[str] | str | None, f: Filters) -> list[str]:
    if isinstance(kinds, str):
        kinds = [k for k in kinds.split(",") if k]
    wanted = list(dict.fromkeys(kinds or KINDS))
    bad = [k for k in wanted if k not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad[0]!r}: use {', '.join(KINDS)}")
    return [k for k in wanted if f.kind_allowed(k)]


@dataclass
class SearchInfo:
    """Which paths answered one search (``search(..., info=SearchInfo())`` fills it)."""

    keywords: bool = False      # the keyword (BM25) path ran
    keyword_hits: int = 0       # rows it found (before paging)
    meaning: bool = False       # the query was embedded and compared with the stored vectors
    meaning_hits: int = 0       # rows it found (before paging)
    complete: bool = True       # every keyword candidate was scored (False: some terms too common to read)
    note: str = ""              # why meaning did not answer, when it was asked to

    def paths(self) -> list[str]:
        return [name for name, on in (("keywords", self.keywords), ("meaning", self.meaning)) if on]


def search(conn: sqlite3.Connection, query: str = "", *, project: str | None = None,
           types: Sequence[str] | None = None, concepts: Sequence[str] | None = None,
           files: Sequence[str] | None = None, since: float | None = None, until: float | None = None,
           session: int | None = None, kinds: Sequence[str] = KINDS, order: str = "relevance",
           limit: int = 20, offset: int = 0, include_inactive: bool = False,
           vectors: VectorIndex | None = None, config: SearchConfig | None = None,
           now: float | None = None, agent: str | None = None, info: SearchInfo | None = None,
           synonyms: bool | None = None, max_limit: int = MAX_LIMIT) -> list[Hit]:
    """Search memory. Any query text is safe (it is never passed raw to FTS5); bad options
    (unknown order or kind) raise ValueError. A search not scoped to a project never returns
    ``sensitive`` observations. ``synonyms`` (default: the config's) also matches the other words
    for a query word (:mod:`kenning.search.synonyms`). ``max_limit`` lets a caller that pages through one
    ranking itself (the viewer) read it in one call: the ranking of a deeper call is not always the
    shallower one's continuation (rows tied at a cut), so windows of one query would skip or repeat rows."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    cfg = config or DEFAULT
    info = info if info is not None else SearchInfo()
    now = time.time() if now is None else now
    limit = max(1, min(int(limit), max(MAX_LIMIT, min(int(max_limit), MAX_OFFSET))))
    offset = max(0, min(int(offset), MAX_OFFSET))
    f = make(project, types, concepts, files, since, until, session, include_inactive, agent)
    wanted = _kinds(kinds, f)
    if not wanted:
        return []
    need = limit + offset
    text = clean(query or "").strip()
    q = parse(text, cfg.synonyms if synonyms is None else synonyms)
    use_vectors = vectors is not None and bool(text) and order == "relevance" and cfg.vector_weight > 0
    if q.empty and not use_vectors:
        rows = [r for k in wanted for r in fts.listing(conn, k, f, limit=need)]
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return [_hit(r, 0.0) for r in rows[offset:need]]
    if order == "date":
        info.keywords = True
        hits = _by_date(conn, q, wanted, f, need)
        info.keyword_hits = len(hits)
        return hits[offset:need]
    near = None
    if use_vectors:
        assert vectors is not None
        # Embedding the query and scanning the matrix release the GIL: run them while SQLite
        # ranks the keywords, so hybrid costs about max(keywords, vectors), not their sum.
        near = _vsearch.get().submit(vectors.search, text, k=max(cfg.vector_depth, need), kinds=wanted,
                                     project=f.project)
    cands = _keyword_candidates(conn, q, wanted, f, need, cfg, info, fused=near is not None) if not q.empty else {}
    info.keywords = not q.empty
    if near is not None:
        found = near.result()
        if found is None:
            info.note = "the query could not be embedded in time"
        else:
            _add_meaning(conn, cands, found, f, cfg, info)
    return _final(conn, cands, need, cfg, now, hybrid=info.meaning)[offset:need]


@dataclass
class _Cand:
    kind: str
    id: int
    bm25: float = 0.0                # per-scope BM25 (0: not a keyword candidate, or an unscored tail row)
    match: str = ""                  # "all" | "some" | "substring" | ""
    tail: bool = False               # listed after every scored row (matches of unread terms only)
    similarity: float | None = None  # cosine with the query, when it has a vector
    row: fts.Row | None = None
    cover: float = 1.0               # the share of the query's IDF the row holds


_vsearch = LazyPool(2, "kenning-vsearch")


def _keyword_candidates(conn: sqlite3.Connection, q: FtsQuery, kinds: list[str], f: Filters, need: int,
                        cfg: SearchConfig, info: SearchInfo, fused: bool = True) -> dict[tuple[str, int], _Cand]:
    """Every row holding a query term, scored by BM25 over the scope (:mod:`kenning.search.bm25`).
    A kind whose every term is too common to read falls back to the bounded FTS5 listing; rows
    matching only unread terms, and trigram substrings, follow when the scored ones are too few."""
    out: dict[tuple[str, int], _Cand] = {}
    dropped = 0  # scored rows no ordering by ``_final`` can reach: counted, not built
    budget = bm25.BUDGET  # shared: observations (the memory proper) first, summaries and prompts a share
    depth = max(cfg.keyword_depth, need)
    for kind in kinds:
        main = kind == "observation"
        share = budget if main else min(budget, bm25.BUDGET // 4)
        r = bm25.rank(conn, kind, q, f, need, budget=max(share, 0),
                      max_common=bm25.MAX_COMMON if main else bm25.MAX_COMMON // 2,
                      phrases=main, keep=depth)  # two statements a phrase: the memory proper only
        budget -= r.spent
        if (r.read_any and r.distinguishes()) or not r.terms:
            # The best ``depth`` of them: further down, fusion cannot lift a row into the top.
            # Coverage weighs a row only in the fusion with meaning (``fused``: vectors were asked).
            best = r.top(depth)
            if fused:
                for rid, score in best:
                    out[(kind, rid)] = _Cand(kind, rid, score, "all" if r.holds_all(rid) else "some",
                                             cover=r.coverage(rid))
            else:
                kept = _kept_of_kind(r, kind, best, need)
                dropped += len(best) - len(kept)
                for rid, score, match in kept:
                    out[(kind, rid)] = _Cand(kind, rid, score, match)
            info.complete = info.complete and r.complete
            continue
        # Every term is too common to read, or in half the rows (no term tells them apart): the
        # bounded FTS5 listing (newest matches first when every term is in most rows).
        info.complete = False
        p = fts.plan(conn, q)
        for tier, rows in _tiers(conn, q, p, kind, f, need, cfg):
            for row in rows:
                out.setdefault((kind, row.id), _Cand(kind, row.id, max(0.0, -row.bm25), tier, row=row))
    if len(out) < need:
        for kind in kinds:
            if cfg.trigram:
                tq = trigram.match_expression(q)
                table = trigram.table_for(conn, kind)
                if tq and table:
                    for row in fts.matching(conn, kind, tq, f, limit=need, fts_table=table):
                        out.setdefault((kind, row.id), _Cand(kind, row.id, 0.0, "substring", tail=True, row=row))
            if len(out) < need and len(q.terms) > 0:
                for row in fts.matching(conn, kind, q.any_term(), f, limit=need, window=fts.SMALL_WINDOW):
                    out.setdefault((kind, row.id), _Cand(kind, row.id, 0.0, "some", tail=True, row=row))
    # Rows are dropped only from a tier holding more than _kept(need) > need of them: the tail
    # above, asked for when fewer than ``need`` were found, never runs after a drop.
    info.keyword_hits = len(out) + dropped
    return out


def _kept(need: int) -> int:
    """How many of the best scored rows ``_final`` orders by recency (a boost of at most
    x top_r: it reorders near-ties only)."""
    return 2 * need + 10


def _kept_of_kind(r: bm25.Ranking, kind: str, best: list[tuple[int, float]],
                  need: int) -> list[tuple[int, float, str]]:
    """Of one kind's best rows (``r.top()``) for keywords alone, those that can be among the
    ``_kept(need)`` that ``_final`` orders, as (id, score, match): in each match tier, the best
    that many by ``_final``'s own key (weighted score, then the higher id). A candidate built for
    every scored row cost a search at 10k rows ~0.5 ms, for rows no ordering could reach."""
    w, k = KIND_WEIGHT[kind], _kept(need)
    tiers: dict[str, list[tuple[int, float]]] = {"all": [], "some": []}
    for rid, score in best:
        tiers["all" if r.holds_all(rid) else "some"].append((rid, score))
    out: list[tuple[int, float, str]] = []
    for match, rows in tiers.items():
        if len(rows) > k:
            # r.top() orders by (score, id), _final by (weight x score, id): the same order, but
            # where the weighting rounds two scores to one value.
            rows = sorted(rows, key=lambda e: (-w * e[1], -e[0]))[:k]
        out.extend((rid, score, match) for rid, score in rows)
    return out


def _tiers(conn: sqlite3.Connection, q: Any, p: Plan, kind: str, f: Filters, need: int, cfg: SearchConfig,
           by_date: bool = False) -> list[tuple[str, list[fts.Row]]]:
    """(tier, rows) for one kind, from bounded FTS5 listings: all terms, then any term.

    Ordering by date lists matches newest first; relevance uses it only when every term is too
    common to read in full (see :mod:`kenning.search.bm25`). The query plan
    (:mod:`kenning.search.plan`) leaves out the terms in most rows and picks the most selective
    terms for the probe and the any-term fallback.
    """
    window = fts.WINDOW if kind == "observation" else fts.SMALL_WINDOW
    # A long query (a pasted prompt) rarely has every word in one row, and an AND over many
    # words walks many doclists: ask first whether its most selective words even meet.
    if not p.probe_needed or fts.any_match(conn, kind, p.rare.all_terms()):
        rows = fts.matching(conn, kind, p.required.all_terms(), f, limit=need, by_date=by_date, window=window,
                            ranked=p.ranked)
    else:
        rows = []
    out: list[tuple[str, list[fts.Row]]] = [("all", rows)]
    seen = {r.id for r in rows}
    if cfg.trigram and len(seen) < need:
        tq = trigram.match_expression(q)
        table = trigram.table_for(conn, kind)
        if tq and table:
            rows = [r for r in fts.matching(conn, kind, tq, f, limit=need, by_date=by_date, fts_table=table,
                                            window=window) if r.id not in seen]
            seen.update(r.id for r in rows)
            out.append(("substring", rows))
    if len(p.rare.terms) > 1 and len(seen) < need and not (by_date and seen):
        rows = [r for r in fts.matching(conn, kind, p.rare.any_term(), f, limit=need + len(seen), by_date=by_date,
                                        window=fts.SMALL_WINDOW) if r.id not in seen]
        out.append(("some", rows))
    return out


def _by_date(conn: sqlite3.Connection, q: Any, kinds: list[str], f: Filters, need: int) -> list[Hit]:
    rows: list[tuple[fts.Row, str]] = []
    p = fts.plan(conn, q)
    for kind in kinds:
        for tier, tier_rows in _tiers(conn, q, p, kind, f, need, DEFAULT, by_date=True):
            rows.extend((r, tier) for r in tier_rows)
    # The any-term fallback only answers when nothing holds every term.
    if any(t != "some" for _r, t in rows):
        rows = [(r, t) for r, t in rows if t != "some"]
    rows.sort(key=lambda rt: (rt[0].created_at, rt[0].id), reverse=True)
    return [_hit(r, 0.0, match=t) for r, t in rows[:need]]


def _add_meaning(conn: sqlite3.Connection, cands: dict[tuple[str, int], _Cand], found: VectorMatches,
                 f: Filters, cfg: SearchConfig, info: SearchInfo) -> None:
    """Add the nearest rows (those passing the filters) to the candidates and give every
    candidate its cosine similarity, so each is fused on both signals."""
    near = [(kind, rid, sim) for kind, rid, sim in found.nearest if sim >= cfg.min_similarity]
    by_kind: dict[str, list[int]] = {}
    for kind, rid, _sim in near:
        by_kind.setdefault(kind, []).append(rid)
    passing: dict[tuple[str, int], fts.Row] = {}
    for kind, ids in by_kind.items():
        for r in fts.by_ids(conn, kind, ids, f):
            passing[(kind, r.id)] = r
    info.meaning = found.searched
    info.meaning_hits = len(passing)
    if not found.searched:
        info.note = found.note
        return
    for kind, rid, sim in near:
        if (kind, rid) in passing:
            c = cands.setdefault((kind, rid), _Cand(kind, rid, row=passing[(kind, rid)]))
            c.similarity = sim
    missing = [key for key, c in cands.items() if c.similarity is None]
    for key, sim in found.similarities(missing).items():
        cands[key].similarity = sim


def _final(conn: sqlite3.Connection, cands: dict[tuple[str, int], _Cand], need: int,
           cfg: SearchConfig, now: float, *, hybrid: bool) -> list[Hit]:
    """The best ``need`` candidates as hits: keyword score (or the fusion of both signals) times
    the kind weight and the recency boost; unscored tail rows last, newest first."""
    scored = [c for c in cands.values() if not c.tail]
    base: dict[tuple[str, int], float] = {}
    if hybrid:
        # Convex combination of the keyword evidence and the cosine: every candidate has both (the
        # BM25 of a row found by meaning alone is 0; a row not yet embedded counts as average among
        # the keyword candidates).
        a = cfg.vector_weight / max(cfg.fts_weight + cfg.vector_weight, 1e-9)
        top_b = max((c.bm25 for c in scored), default=0.0)
        sims = [c.similarity for c in scored if c.similarity is not None and c.bm25 > 0]
        fill = sum(sims) / len(sims) if sims else 0.0
        for c in scored:
            sim = c.similarity if c.similarity is not None else fill
            # How strongly it matches (relative to the best keyword row) times, squared, how much of
            # the query it explains: a row holding only the commonest of a paraphrase's words is
            # the best keyword match and still weak evidence; one holding most of a question's
            # words is strong even when no row holds them all.
            kw = (c.bm25 / top_b if top_b > 0 else 0.0) * c.cover * c.cover
            base[(c.kind, c.id)] = KIND_WEIGHT[c.kind] * ((1 - a) * kw + a * max(sim, 0.0))
    else:
        for c in scored:
            base[(c.kind, c.id)] = KIND_WEIGHT[c.kind] * c.bm25
    top_r = 1.0 + max(cfg.recency_weight, 0.0)
    # Keywords alone: rows holding all the words first (they were, in every set we measured, at
    # least as relevant), then by score. Fused: the combined score alone.
    order = KINDS.index
    ranked = sorted((0 if hybrid or cands[k].match == "all" else 1, -b, order(k[0]), -k[1], k) for k, b in base.items())
    keep = ranked[:_kept(need)]
    tail = [c for c in cands.values() if c.tail] if len(keep) < need else []
    # The rows' times first (recency needs them); whole rows only for the hits returned.
    when = _created(conn, [cands[e[4]] for e in keep])
    scale = max(base.values(), default=0.0) * top_r or 1.0
    out: list[tuple[int, float, int, int, tuple[str, int], float]] = []
    for tier, _b, ko, nid, k in keep:
        at = when.get(k)
        if at is None:  # gone meanwhile
            continue
        v = base[k] * rank.recency(at, now, cfg.recency_weight, cfg.half_life_days)
        # One scale for the list: tier 0 in [2, 3), tier 1 in [1, 2); fused scores as they are.
        score = v if hybrid else (2.0 - tier) + 0.999 * v / scale
        out.append((tier, -round(score, 6), ko, nid, k, score))  # ties: as cut (the hit's rounded score)
    out.sort()
    hits: list[Hit] = []
    at = 0
    while len(hits) < need and at < len(out):
        part = out[at:at + need - len(hits)]
        at += len(part)
        _fetch_rows(conn, [cands[e[4]] for e in part])
        for e in part:
            c = cands[e[4]]
            if c.row is not None:  # else gone meanwhile
                hits.append(_hit(c.row, e[5], c.match, c.similarity))
    if tail and len(hits) < need:
        _fetch_rows(conn, tail)
        rest = sorted((c for c in tail if c.row is not None), key=lambda c: (c.row.created_at, c.row.id),  # type: ignore[union-attr]
                      reverse=True)
        hits += [_hit(c.row, 0.0, c.match, c.similarity) for c in rest[:need - len(hits)] if c.row is not None]
    return hits[:need]


def _created(conn: sqlite3.Connection, cands: list[_Cand]) -> dict[tuple[str, int], float]:
    """(kind, id) -> created_at of the candidates still stored (a row read already gives its own)."""
    out: dict[tuple[str, int], float] = {}
    by_kind: dict[str, list[int]] = {}
    for c in cands:
        if c.row is not None:
            out[(c.kind, c.id)] = c.row.created_at
        else:
            by_kind.setdefault(c.kind, []).append(c.id)
    for kind, ids in by_kind.items():
        src = fts.SOURCES[kind]
        cur = conn.cursor()
        cur.row_factory = None
        for rid, at in cur.execute(f"SELECT id, created_at FROM {src.table} NOT INDEXED WHERE id IN "
                                   f"({','.join('?' * len(ids))})", ids):
            out[(kind, rid)] = float(at)
    return out


def _fetch_rows(conn: sqlite3.Connection, cands: list[_Cand]) -> None:
    by_kind: dict[str, list[_Cand]] = {}
    for c in cands:
        if c.row is None:
            by_kind.setdefault(c.kind, []).append(c)
    for kind, group in by_kind.items():  # every candidate passed the filters already
        rows = {r.id: r for r in fts.by_ids(conn, kind, [c.id for c in group], None)}
        for c in group:
            c.row = rows.get(c.id)


# ---------------------------------------------------------------------------- timeline

def timeline(conn: sqlite3.Connection, *, anchor: int | None = None, query: str | None = None, before: int = 3,
             after: int = 3, project: str | None = None, kinds: Sequence[str] = KINDS,
             include_inactive: bool = False, vectors: VectorIndex | None = None) -> dict[str, Any]:
    """What happened around one observation (``anchor``) or around the best observation for ``query``.

    Returns ``{"anchor": hit, "before": [...], "after": [...]}``, both lists oldest first and
    within the anchor's project. Raises ValueError when there is no such anchor.
    """
    before = max(0, min(int(before), 50))
    after = max(0, min(int(after), 50))
    if anchor is None:
        if not query or not clean(query).strip():
            raise ValueError("give an observation id or a query")
        best = search(conn, query, project=project, kinds=("observation",), limit=1, vectors=vectors,
                      include_inactive=include_inactive)
        if not best:
            raise ValueError(f"no observation matches {one_line(query, 80)!r}")
        anchor = best[0].id
    row = conn.execute("SELECT project, type, created_at FROM observations WHERE id = ?", (int(anchor),)).fetchone()
    if row is None or (project and row[0] != project) or (row[1] == "sensitive" and row[0] != project):
        raise ValueError(f"no observation {anchor}")
    f = make(project=row[0], include_inactive=True)
    anchor_rows = fts.by_ids(conn, "observation", [int(anchor)], f)
    if not anchor_rows:
        raise ValueError(f"no observation {anchor}")
    a = anchor_rows[0]
    f = replace(make(project=row[0], include_inactive=include_inactive), hide_sensitive=not project)
    wanted = _kinds(kinds, f)
    older: list[fts.Row] = []
    newer: list[fts.Row] = []
    for kind in wanted:
        older += _around(conn, kind, f, a, before, older=True)
        newer += _around(conn, kind, f, a, after, older=False)
    older.sort(key=_chrono)
    newer.sort(key=_chrono)
    return {"anchor": _hit(a, 0.0).as_dict(),
            "before": [_hit(r, 0.0).as_dict() for r in older[-before:]] if before else [],
            "after": [_hit(r, 0.0).as_dict() for r in newer[:after]]}


def _chrono(r: fts.Row) -> tuple[float, int, int]:
    return (r.created_at, KINDS.index(r.kind), r.id)


def _around(conn: sqlite3.Connection, kind: str, f: Filters, a: fts.Row, n: int, *, older: bool) -> list[fts.Row]:
    if n <= 0:
        return []
    src = fts.SOURCES[kind]
    params: list[object] = []
    cond = where(kind, f, params)
    al = src.alias
    # Strictly before/after the anchor in (time, kind, id) order, so equal timestamps do not repeat rows.
    ko = KINDS.index(kind)
    ka = KINDS.index(a.kind)
    if older:
        pos = (f"({al}.created_at < ? OR ({al}.created_at = ? AND (? < ? OR (? = ? AND {al}.id < ?))))")
        order = f"{al}.created_at DESC, {al}.id DESC"
    else:
        pos = (f"({al}.created_at > ? OR ({al}.created_at = ? AND (? > ? OR (? = ? AND {al}.id > ?))))")
        order = f"{al}.created_at, {al}.id"
    params += [a.created_at, a.created_at, ko, ka, ko, ka, a.id]
    sql = (f"SELECT {src.columns} FROM {src.table} {al} {src.joins} WHERE {cond} AND {pos} "
           f"ORDER BY {order} LIMIT ?")
    params.append(n)
    return fts._rows(conn.execute(sql, params), ranked=False)


# ------------------------------------------------------------------------ full records

def get_observations(conn: sqlite3.Connection, ids: Sequence[int], *, project: str | None = None) -> list[dict]:
    """Full observation records (facts, concepts and files as lists) in the order asked; unknown
    ids are skipped. A ``sensitive`` observation is returned only when ``project`` is its own."""
    wanted: list[int] = []
    for i in ids:
        try:
            v = int(i)
        except (TypeError, ValueError):
            continue
        if 0 < v < 2**63 and v not in wanted:
            wanted.append(v)
        if len(wanted) >= MAX_IDS:
            break
    if not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    found: dict[int, dict[str, Any]] = {}
    for r in conn.execute(
            "SELECT o.*, s.agent_session_id, s.platform FROM observations o JOIN sessions s ON s.id = o.session_id "
            f"WHERE o.id IN ({marks})", wanted):
        d = dict(r)
        if d["type"] == "sensitive" and d["project"] != project:
            continue
        for k in ("facts", "concepts", "files_read", "files_modified"):
            try:
                value = json.loads(d.get(k) or "[]")
            except ValueError:
                value = []
            d[k] = value if isinstance(value, list) else []
        d["tokens"] = text_tokens(json.dumps(d, ensure_ascii=False))
        found[int(d["id"])] = d
    return [found[i] for i in wanted if i in found]
