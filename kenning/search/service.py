"""The search service: keyword (BM25) and semantic search over memory, timelines, full records.

Every surface (HTTP, MCP, CLI, context hooks) calls these three functions:

- :func:`search` returns compact :class:`Hit` rows (observations, session summaries, prompts);
- :func:`timeline` returns what happened just before and after one observation;
- :func:`get_observations` returns full records by id.

Keyword search runs the query with every term required first, then with any term, so
documents holding all the words come first and a partial match still answers. With a
:class:`~kenning.search.vectors.VectorIndex` the BM25 list and the nearest-embedding list are
fused by weighted reciprocal rank, with a mild recency boost.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from kenning.search import fts, rank, trigram
from kenning.search.config import DEFAULT, SearchConfig
from kenning.search.filters import KINDS, Filters, make, where
from kenning.search.plan import Plan
from kenning.search.query import clean, parse

if TYPE_CHECKING:
    from kenning.search.vectors import VectorIndex

ORDERS = ("relevance", "date")
MAX_LIMIT = 200
MAX_OFFSET = 10_000
MAX_IDS = 500
TITLE_CHARS = 160
# Observations are the distilled memory; summaries repeat them in longer form; prompts are raw asks.
KIND_WEIGHT = {"observation": 1.0, "summary": 0.85, "prompt": 0.7}
TIER_BASE = {"all": 2.0, "substring": 1.5, "some": 1.0}  # FTS-only scores: tiers never interleave

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
        return asdict(self)


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
               session_id=r.session_id, created_at=r.created_at, score=round(score, 6), tokens=(r.chars + 3) // 4,
               status=r.status, match=match, similarity=None if similarity is None else round(similarity, 4))


def _kinds(kinds: Sequence[str] | str | None, f: Filters) -> list[str]:
    if isinstance(kinds, str):
        kinds = [k for k in kinds.split(",") if k]
    wanted = list(dict.fromkeys(kinds or KINDS))
    bad = [k for k in wanted if k not in KINDS]
    if bad:
        raise ValueError(f"unknown kind {bad[0]!r}: use {', '.join(KINDS)}")
    return [k for k in wanted if f.kind_allowed(k)]


def search(conn: sqlite3.Connection, query: str = "", *, project: str | None = None,
           types: Sequence[str] | None = None, concepts: Sequence[str] | None = None,
           files: Sequence[str] | None = None, since: float | None = None, until: float | None = None,
           session: int | None = None, kinds: Sequence[str] = KINDS, order: str = "relevance",
           limit: int = 20, offset: int = 0, include_inactive: bool = False,
           vectors: VectorIndex | None = None, config: SearchConfig | None = None,
           now: float | None = None, agent: str | None = None) -> list[Hit]:
    """Search memory. Any query text is safe (it is never passed raw to FTS5); bad options
    (unknown order or kind) raise ValueError. A search not scoped to a project never returns
    ``sensitive`` observations."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    cfg = config or DEFAULT
    now = time.time() if now is None else now
    limit = max(1, min(int(limit), MAX_LIMIT))
    offset = max(0, min(int(offset), MAX_OFFSET))
    f = make(project, types, concepts, files, since, until, session, include_inactive, agent)
    wanted = _kinds(kinds, f)
    if not wanted:
        return []
    need = limit + offset
    text = clean(query or "").strip()
    q = parse(text)
    use_vectors = vectors is not None and bool(text) and order == "relevance"
    if q.empty and not use_vectors:
        rows = [r for k in wanted for r in fts.listing(conn, k, f, limit=need)]
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return [_hit(r, 0.0) for r in rows[offset:need]]
    if order == "date":
        return _by_date(conn, q, wanted, f, need)[offset:need]
    near = None
    if use_vectors:
        assert vectors is not None
        # Embedding the query and scanning the matrix release the GIL: run them while SQLite
        # ranks the keywords, so hybrid costs about max(keywords, vectors), not their sum.
        near = _pool().submit(vectors.nearest, text, k=max(60, need * 2), kinds=wanted, project=f.project)
    keyword = _keyword_ranked(conn, q, wanted, f, max(need, 50) if use_vectors else need, cfg, now,
                              with_recency=not use_vectors) if not q.empty else []
    if near is None:
        return keyword[offset:need]
    return _hybrid(conn, near.result(), keyword, wanted, f, need, cfg, now)[offset:need]


_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-vsearch")
        return _executor


def _tiers(conn: sqlite3.Connection, q: Any, p: Plan, kind: str, f: Filters, need: int, cfg: SearchConfig,
           by_date: bool = False) -> list[tuple[str, list[fts.Row]]]:
    """(tier, rows) for one kind: all terms, then substrings (trigram), then any term.

    The query plan (:mod:`kenning.search.plan`) leaves out the terms in most rows (BM25 gives
    them no weight and they cost the most) and picks the most selective terms for the probe
    and the any-term fallback.
    """
    slack = 1.0 + max(cfg.recency_weight, 0.0)  # what the recency boost can change in the order
    # Observations are the memory proper: rank more of their matches than of summaries / prompts.
    window = fts.WINDOW if kind == "observation" else fts.SMALL_WINDOW
    # A long query (a pasted prompt) rarely has every word in one row, and an AND over many
    # words walks many doclists: ask first whether its most selective words even meet.
    if not p.probe_needed or fts.any_match(conn, kind, p.rare.all_terms()):
        rows = fts.matching(conn, kind, p.required.all_terms(), f, limit=need, by_date=by_date, window=window,
                            slack=slack, ranked=p.ranked)
    else:
        rows = []
    out: list[tuple[str, list[fts.Row]]] = [("all", rows)]
    seen = {r.id for r in rows}
    if cfg.trigram and len(seen) < need:
        tq = trigram.match_expression(q)
        table = trigram.table_for(conn, kind)
        if tq and table:
            rows = [r for r in fts.matching(conn, kind, tq, f, limit=need, by_date=by_date, fts_table=table,
                                            window=window, slack=slack) if r.id not in seen]
            seen.update(r.id for r in rows)
            out.append(("substring", rows))
    if len(p.rare.terms) > 1 and len(seen) < need and not (by_date and seen):
        # The fallback is weak evidence and costs the most (a union of doclists): the most
        # selective terms and a small window are enough.
        rows = [r for r in fts.matching(conn, kind, p.rare.any_term(), f, limit=need + len(seen), by_date=by_date,
                                        window=fts.SMALL_WINDOW, slack=slack) if r.id not in seen]
        out.append(("some", rows))
    return out


def _keyword_ranked(conn: sqlite3.Connection, q: Any, kinds: list[str], f: Filters, need: int,
                    cfg: SearchConfig, now: float, *, with_recency: bool) -> list[Hit]:
    """BM25 hits of every kind, ranked by tier, then weighted score (× recency when asked)."""
    scored: list[tuple[int, float, fts.Row, str]] = []
    order = list(TIER_BASE)
    top = 1.0 + max(cfg.recency_weight, 0.0)
    p = fts.plan(conn, q)
    for kind in kinds:
        for tier, rows in _tiers(conn, q, p, kind, f, need, cfg):
            for r in rows:
                v = rank.squash(r.bm25) * KIND_WEIGHT[kind]
                if with_recency:
                    v *= rank.recency(r.created_at, now, cfg.recency_weight, cfg.half_life_days) / top
                scored.append((order.index(tier), v, r, tier))
    scored.sort(key=lambda t: (t[0], -t[1], -t[2].created_at, t[2].kind, -t[2].id))
    return [_hit(r, TIER_BASE[tier] + 0.5 * v, match=tier) for _i, v, r, tier in scored[:need]]


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


def _hybrid(conn: sqlite3.Connection, nearest: list[tuple[str, int, float]], keyword: list[Hit], kinds: list[str],
            f: Filters, need: int, cfg: SearchConfig, now: float) -> list[Hit]:
    """Weighted RRF of the BM25 list and the embedding list, times the recency boost."""
    near = [(kind, rid, sim) for kind, rid, sim in nearest if sim >= cfg.min_similarity]
    rows: dict[tuple[str, int], fts.Row] = {}
    by_kind: dict[str, list[int]] = {}
    for kind, rid, _sim in near:
        by_kind.setdefault(kind, []).append(rid)
    for kind, ids in by_kind.items():
        for r in fts.by_ids(conn, kind, ids, f):
            rows[(kind, r.id)] = r
    sims = {(kind, rid): sim for kind, rid, sim in near if (kind, rid) in rows}
    vec_keys = sorted(sims, key=lambda key: -sims[key] * KIND_WEIGHT[key[0]])
    # Keyword hits holding every word (or the substring) are strong evidence; hits holding only
    # some words are weak, and for a paraphrase they are mostly noise: a list of their own.
    strong = [(h.kind, h.id) for h in keyword if h.match != "some"]
    weak = [(h.kind, h.id) for h in keyword if h.match == "some"]
    fused = rank.rrf([(cfg.fts_weight, strong), (cfg.fts_weight * cfg.some_terms_weight, weak),
                      (cfg.vector_weight, vec_keys)], cfg.rrf_k)
    kw = {(h.kind, h.id): h for h in keyword}
    out: list[Hit] = []
    top_r = 1.0 + max(cfg.recency_weight, 0.0)
    best = sorted(fused.items(), key=lambda kv: -kv[1])
    cut = best[need - 1][1] / top_r if len(best) >= need else 0.0  # recency can lift nothing below this
    for key, score in best:
        if score < cut:
            break
        kind, rid = key  # type: ignore[misc]
        h = kw.get((kind, rid))
        if h is None:
            h = _hit(rows[(kind, rid)], 0.0)
        h.score = round(score * rank.recency(h.created_at, now, cfg.recency_weight, cfg.half_life_days), 6)
        h.similarity = round(sims[(kind, rid)], 4) if (kind, rid) in sims else h.similarity
        out.append(h)
    out.sort(key=lambda h: (-h.score, -h.created_at))
    return out[:need]


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
        d["tokens"] = (len(json.dumps(d, ensure_ascii=False)) + 3) // 4
        found[int(d["id"])] = d
    return [found[i] for i in wanted if i in found]
