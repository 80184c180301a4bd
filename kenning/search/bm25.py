"""Keyword ranking: BM25 with the statistics of the scope searched, every candidate scored.

FTS5's ``bm25()`` weighs a term by its rarity over the whole table. A project's own name, or a
speaker's, is common in that project and rare overall, so it outweighs the words that tell the
rows apart. We score the way a BM25 over the scope alone would:

* each term is its own FTS5 statement; ``bm25()`` of a one-phrase query is ``-IDF_all · T`` where
  ``T`` is the term-frequency and length part (column weights included) and ``IDF_all`` comes
  from the row counts FTS5 uses, which we know exactly (the table's averages record holds the row
  total; a term's rows are kept per project as rows are written, :mod:`kenning.search.terms`,
  for a term of one token, and counted for a prefix or a phrase), so ``T`` is exact;
* the row's score is the sum over terms of ``IDF_scope · T``, with BM25's smooth IDF
  ``log(1 + (N - n + 0.5) / (n + 0.5))`` over the rows of the project searched (the column the
  observations' project is stored in; all rows when unscoped): a word in most of the project's
  rows weighs little there, and no term is dropped for being common elsewhere or for matching
  nothing;
* every row holding a term is a candidate and is scored, whatever its age. The cost is bounded
  by postings, not by recency: the rarest terms are read in full first, up to ``BUDGET``
  postings per query (~2-6 µs each at 100k rows: the join that tells the project, and FTS5's
  length lookup); a term too common to fit is scored only on the rows the rarer terms found
  (one FTS5 AND; exactly, from the AND's ``bm25()`` less the read terms' known part, when its
  doclist is short enough to walk, else as one occurrence in a row of average length), for the
  ``MAX_COMMON`` of them rarest in the scope (a one-token term's rows in the scope are kept
  exactly; a prefix's or a phrase's are estimated from ``SAMPLE`` of its postings and, past
  ``EXACT_ROWS`` rows, the newest ``RECENT_ROWS``). Such a term is in more than ``BUDGET`` rows, so
  its weight is low; a term in half of a large scope or more (FTS5's IDF is 0 there) is not
  scored at all. Rows holding only such terms are not candidates: ``complete`` says whether
  that can change the top (a max-score bound), and when no read term tells rows apart the
  caller falls back to a bounded FTS5 listing (newest matches first);
* words the query writes side by side and a row holds as that phrase add the phrase's own
  BM25 at a small weight (``_phrases``), and ``coverage`` says how much of the query's IDF a
  row holds (the fusion weighs a partial match by it).
"""

from __future__ import annotations

import heapq
import math
import sqlite3
import threading
import time
from dataclasses import dataclass, field

from kenning.search import fts, terms
from kenning.search.filters import Filters, where
from kenning.search.query import FtsQuery, Term
from kenning.store.fts5_format import varint

BUDGET = 800          # postings read in full per query, all kinds together (~3-6 µs each at 100k rows)
REFINE_MAX = 10_000  # a common term is scored exactly when in at most this many rows (its doclist is walked)
MAX_COMMON = 4         # terms too common to read that are still scored on the rows found
# Prefixes and phrases only (one-token terms have kept statistics, kenning/search/terms.py):
SAMPLE = 100           # a common term's share in the scope is judged on this many of its postings
EXACT_ROWS = 20_000    # up to this many indexed rows, a common term's statistics are exact-ish (walked)
RECENT_ROWS = 5000     # past it, its frequency is taken from the newest this-many rows
K1 = 1.2               # FTS5's BM25 constants (a row's term part T is below K1 + 1)
IDF_FLOOR = 1e-6       # FTS5's IDF for a term in half the rows or more: it orders nothing
SMALL_SCOPE = 1000     # below this many rows, a row holds "all the words" only with every one of them
CACHE_TTL_S = 120.0
PHRASE_WEIGHT = 0.1 / 0.85  # an adjacent pair of query words found as a phrase: SDM's λ_O / λ_T
_GROWTH = 0.05
FAILING_MAX = 1000     # unscoped: past this many rows the default filters reject, the rows are joined instead
FAILING_BEST = 100     # ... and checked on the best rows instead when every term is read in full (cheaper)


@dataclass(frozen=True)
class Source:
    table: str
    alias: str
    fts: str
    joins: str
    project: str          # the column holding a row's project (statistics follow it)
    weights: tuple[float, ...]


def _source(kind: str, project: str) -> Source:
    s = fts.SOURCES[kind]
    return Source(s.table, s.alias, s.fts, s.joins, project, s.weights)


SOURCES = {"observation": _source("observation", "o.project"), "summary": _source("summary", "s.project"),
           "prompt": _source("prompt", "ses.project")}


@dataclass
class TermStat:
    term: Term
    n_all: int            # rows of the whole index holding it (exact when ``read``)
    n_scope: int          # rows of the scope holding it (exact when ``read``, else estimated)
    idf: float            # FTS5's IDF over the scope
    read: bool            # its postings were read and scored in full
    scored: bool = True   # read, or scored on the rows the read terms found
    @property
    def bound(self) -> float:
        """The most it can add to a row's score."""
        return self.idf * (K1 + 1.0)


@dataclass
class Ranking:
    """Per-scope BM25 of one kind of row: every candidate's score and which terms it holds."""

    kind: str
    scores: dict[int, float] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)   # row id -> bit i set when it holds terms[i]
    terms: list[TermStat] = field(default_factory=list)
    scope_rows: int = 0
    unmatched: int = 0      # query terms no row of this kind holds
    complete: bool = True   # no row outside ``scores`` can score higher than the ``need``-th one
    read_any: bool = False  # some term was read in full (else: every term is too common to read)
    query_idf: float = 0.0  # the IDF of every query term in the scope, summed (absent terms at their rarest)
    _want: int | None = None
    _cover: dict[int, float] = field(default_factory=dict)  # coverage() by the bits a row holds

    def informative(self) -> int:
        """Bits of the terms a row must hold to hold "all the words": those found in the scope, less
        those in half its rows or more (from ``SMALL_SCOPE`` rows: below, every word counts)."""
        big = self.scope_rows >= SMALL_SCOPE
        return sum(1 << i for i, s in enumerate(self.terms)
                   if s.scored and not (big and s.n_scope >= self.scope_rows / 2))

    def distinguishes(self) -> bool:
        """Whether some term found in the scope tells its rows apart (else BM25 orders noise)."""
        big = self.scope_rows >= SMALL_SCOPE
        return any(s.n_scope > 0 and not (big and s.n_scope >= self.scope_rows / 2) for s in self.terms)

    def holds_all(self, rid: int) -> bool:
        """Whether the row holds every word (but those in half of a large scope)."""
        if self._want is None:
            self._want = self.informative()
        return not self.unmatched and self.held.get(rid, 0) & self._want == self._want

    def coverage(self, rid: int) -> float:
        """The share of the query's IDF held by the row: 1 when it holds every word."""
        bits = self.held.get(rid, 0)
        hit = self._cover.get(bits)
        if hit is None:
            have = sum(s.idf for i, s in enumerate(self.terms) if bits >> i & 1)
            hit = self._cover[bits] = have / self.query_idf if self.query_idf > 0 else 0.0
        return hit

    def top(self, n: int) -> list[tuple[int, float]]:
        """The best ``n`` rows, best first (ties: the higher id)."""
        # (score, id) pairs compare in C (no key function called per row); a sort beats the heap
        # until there are ~10 times as many rows as asked for.
        pairs = zip(self.scores.values(), self.scores, strict=True)
        best = sorted(pairs, reverse=True)[:n] if len(self.scores) <= 8 * n else heapq.nlargest(n, pairs)
        return [(rid, score) for score, rid in best]

    spent: int = 0          # postings read


def scope_idf(n_rows: int, n_hits: int) -> float:
    """The weight of a term in the scope: BM25's IDF in its smooth form, ``log(1 + (N - n + 0.5) / (n + 0.5))``
    (Lucene's): positive for every term, so none is dropped, and small for one in most rows."""
    n_hits = min(max(n_hits, 0), n_rows)
    return math.log(1.0 + (n_rows - n_hits + 0.5) / (n_hits + 0.5))


def idf(n_rows: int, n_hits: int) -> float:
    """FTS5's BM25 IDF (Robertson/Spärck Jones), floored like FTS5's: what its bm25() multiplied by."""
    n_hits = min(max(n_hits, 0), n_rows)  # an estimate may overshoot
    v = math.log((n_rows - n_hits + 0.5) / (n_hits + 0.5)) if n_rows > 0 else 0.0
    return v if v > 0 else IDF_FLOOR


def index_rows(conn: sqlite3.Connection, fts: str) -> int:
    """The row count FTS5's bm25() uses: the first varint of the table's averages record."""
    row = conn.execute(f"SELECT block FROM {fts}_data WHERE id = 1").fetchone()
    if not row or not row[0]:
        return 0
    return varint(bytes(row[0]), 0)[0]


_cache: dict[tuple[object, ...], tuple[int, int, float]] = {}
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()
    terms.clear_cache()


def _cached(key: tuple[object, ...], size: int) -> int | None:
    with _cache_lock:
        hit = _cache.get(key)
    if hit is None:
        return None
    value, size_then, at = hit
    if time.monotonic() - at > CACHE_TTL_S or abs(size - size_then) > _GROWTH * max(size_then, 20):
        return None
    return value


def _store(key: tuple[object, ...], value: int, size: int) -> None:
    with _cache_lock:
        if len(_cache) > 20_000:
            _cache.clear()
        _cache[key] = (value, size, time.monotonic())


def _db(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2] or id(conn))


def scope_rows(conn: sqlite3.Connection, kind: str, project: str | None, n_all: int, db: str = "") -> int:
    """Rows of ``kind`` in ``project`` (every row when None): one lookup in the counts the triggers
    of migration 0020 keep; counted (and cached while the index barely changes) on a database
    without them."""
    if not project:
        return n_all
    try:
        row = conn.execute("SELECT n FROM search_scope_rows WHERE kind = ? AND project = ?", (kind, project)).fetchone()
        return max(0, int(row[0])) if row else 0
    except sqlite3.OperationalError:  # not migrated yet (a read-only look at an older file)
        pass
    src = SOURCES[kind]
    key = ("rows", db or _db(conn), kind, project)
    hit = _cached(key, n_all)
    if hit is not None:
        return hit
    n = int(conn.execute(f"SELECT COUNT(*) FROM {src.table} {src.alias} {src.joins} WHERE {src.project} = ?",
                         (project,)).fetchone()[0])
    _store(key, n, n_all)
    return n


def _count(conn: sqlite3.Connection, fts: str, phrase: str, cap: int) -> int:
    """Rows holding ``phrase``, counted up to ``cap`` (FTS5 alone: ~0.3 µs a posting)."""
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
                                (phrase, cap)).fetchone()[0])
    except sqlite3.OperationalError:  # a term FTS5 cannot read as a phrase matches nothing
        return 0


def _capped_all(conn: sqlite3.Connection, fts: str, terms: tuple[Term, ...], budget: int, n_rows: int,
                db: str) -> dict[Term, int]:
    """``_capped`` for every term, the uncached ones in one statement (a statement costs more than
    counting a few hundred postings)."""
    out: dict[Term, int] = {}
    todo: list[Term] = []
    for t in terms:
        hit = _cached(("capped", db, fts, t.text.lower(), t.prefix, t.alts), n_rows)
        if hit is not None and hit > budget:
            out[t] = hit
        else:
            todo.append(t)
    if todo:
        part = f"(SELECT COUNT(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT {budget + 1}))"
        try:
            row = conn.execute("SELECT " + ", ".join([part] * len(todo)), [t.phrase() for t in todo]).fetchone()
            found = dict(zip(todo, (int(v) for v in row), strict=True))
        except sqlite3.OperationalError:  # one term FTS5 cannot read: count them one by one
            found = {t: _count(conn, fts, t.phrase(), budget + 1) for t in todo}
        for t, n in found.items():
            out[t] = n
            if n > budget:
                _store(("capped", db, fts, t.text.lower(), t.prefix, t.alts), n, n_rows)
    return out


def _recent_all(conn: sqlite3.Connection, kind: str, terms: list[Term]) -> dict[Term, int]:
    """Each term's postings among the newest ``RECENT_ROWS`` rows, in one statement (what
    :func:`_frequency` scales past ``EXACT_ROWS``). A term with more of them than the budget is
    known to be too common to read without counting its postings from the start."""
    if not terms:
        return {}
    src = SOURCES[kind]
    top = int(conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {src.table}").fetchone()[0])
    part = f"(SELECT COUNT(*) FROM {src.fts} WHERE {src.fts} MATCH ? AND rowid > {int(top - RECENT_ROWS)})"
    try:
        row = conn.execute("SELECT " + ", ".join([part] * len(terms)), [t.phrase() for t in terms]).fetchone()
        return dict(zip(terms, (int(v) for v in row), strict=True))
    except sqlite3.OperationalError:  # one term FTS5 cannot read: leave them all to the usual path
        return {}


def _frequency(conn: sqlite3.Connection, kind: str, t: Term, n_all_rows: int, db: str, floor: int,
               recent: int | None = None) -> int:
    """Rows holding ``t``, a term known to be in more than ``floor`` rows: counted up to
    ``EXACT_ROWS`` indexed rows; past that its share of the newest ``RECENT_ROWS`` rows, scaled
    (a full walk of a doclist of 100k rows costs milliseconds; recent use weighs more; ``recent``
    when :func:`_recent_all` counted it already). Cached."""
    src = SOURCES[kind]
    key = ("freq", db, kind, t.text.lower(), t.prefix, t.alts)
    hit = _cached(key, n_all_rows)
    if hit is not None:
        return hit
    if n_all_rows <= EXACT_ROWS:
        n = _count(conn, src.fts, t.phrase(), 1 << 40)
    elif recent is not None:
        n = max(floor + 1, round(recent * n_all_rows / RECENT_ROWS))
    else:
        top = int(conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {src.table}").fetchone()[0])
        recent = int(conn.execute(f"SELECT COUNT(*) FROM {src.fts} WHERE {src.fts} MATCH ? AND rowid > ?",
                                  (t.phrase(), top - RECENT_ROWS)).fetchone()[0])
        n = max(floor + 1, round(recent * n_all_rows / RECENT_ROWS))
    _store(key, n, n_all_rows)
    return n


def _in_scope(conn: sqlite3.Connection, kind: str, t: Term, project: str | None, n_all: int, n_all_rows: int,
              db: str) -> int:
    """Rows of the scope holding ``t`` (a common term, in ``n_all`` rows overall): its share among
    ``SAMPLE`` of its postings. Up to ``EXACT_ROWS`` indexed rows a pseudo-random sample (a
    multiplicative hash of the row id: no bias towards new rows, nor towards one of two projects
    whose rows alternate); past that its newest postings (bounded cost). Cached."""
    if not project:
        return n_all
    src = SOURCES[kind]
    key = ("share", db, kind, t.text.lower(), t.prefix, t.alts, project)
    share_pm = _cached(key, n_all_rows)
    if share_pm is None:
        if n_all_rows <= EXACT_ROWS:
            per_mille = min(1000, max(1, round(1000 * SAMPLE / max(n_all, 1))))
            pick = f"AND ({src.fts}.rowid * 2654435761) % 1000 < {per_mille}"
        else:
            pick = f"ORDER BY {src.fts}.rowid DESC LIMIT {SAMPLE}"
        sample = conn.execute(
            f"SELECT {src.project} = ? FROM {src.fts} CROSS JOIN {src.table} {src.alias} "
            f"ON {src.alias}.id = {src.fts}.rowid {src.joins} WHERE {src.fts} MATCH ? {pick}",
            (project, t.phrase())).fetchall()
        share_pm = round(1_000_000 * sum(1 for (x,) in sample if x) / max(1, len(sample)))
        _store(key, share_pm, n_all_rows)
    return round(n_all * share_pm / 1_000_000)


def _phrases(conn: sqlite3.Connection, out: Ranking, q: FtsQuery, sql: str, params: list[object],
             n_rows: int, n_scope_rows: int, budget: int) -> int:
    """Words the query writes side by side ("ice cream", "dairy-free") found side by side in a row:
    the phrase is scored like one more term, at ``PHRASE_WEIGHT`` (the sequential dependence
    model's ordered-window feature, Metzler & Croft 2005). Only pairs with a word read in full
    (so the phrase's rows are among rows already scored, and its cost is bounded by theirs).
    Returns the postings read. ``params`` are the statement's, the phrase as ``"?phrase"``."""
    read = {s.term: s for s in out.terms if s.read}
    at = params.index("?phrase")
    spent = 0
    for a, b in q.pairs:
        sa, sb = read.get(a), read.get(b)
        if sa is None and sb is None:
            continue
        cap = min(s.n_all for s in (sa, sb) if s is not None)
        if not cap or spent + 2 * cap > budget:
            continue
        phrase = Term(f"{a.text} {b.text}", b.prefix).phrase()
        n_all = _count(conn, out_fts(out.kind), phrase, cap + 1)
        spent += cap
        if not n_all:
            continue
        rows = conn.execute(sql, [*params[:at], phrase, *params[at + 1:]]).fetchall()
        spent += len(rows)
        w = PHRASE_WEIGHT * scope_idf(n_scope_rows, len(rows)) / idf(n_rows, n_all)
        for rid, b25 in rows:
            if b25 is not None and rid in out.scores:
                out.scores[rid] -= b25 * w
    return spent


def out_fts(kind: str) -> str:
    return SOURCES[kind].fts


def _passing_ids(conn: sqlite3.Connection, kind: str, f: Filters, ids: list[int]) -> set[int]:
    src = fts.SOURCES[kind]
    out: set[int] = set()
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        params: list[object] = []
        cond = where(kind, f, params)
        out.update(r[0] for r in conn.execute(
            f"SELECT {src.alias}.id FROM {src.table} {src.alias} NOT INDEXED {src.joins} "
            f"WHERE {cond} AND {src.alias}.id IN ({','.join('?' * len(part))})", [*params, *part]))
    return out


def _failing(conn: sqlite3.Connection, kind: str, f: Filters, cap: int | None = None) -> set[int] | None:
    """Unscoped: the ids of the rows of ``kind`` that the filters reject, when they are the default
    ones (nothing but "active" and "not sensitive") and at most ``cap`` rows fail them; None
    otherwise (the caller checks the rows instead). Found by index seeks: ~10 µs and ~0.3 µs a
    rejected row, where joining each posting with its row costs ~1 µs a posting."""
    if f.project or f.types or f.concepts or f.files or f.since is not None or f.until is not None \
            or f.session is not None or f.agent:
        return None
    if kind == "summary":
        return set()  # the default filters hold every summary (``where`` is "1")
    if kind != "observation":
        return None
    # NOT (type != 'sensitive' AND status = 'active'), both columns NOT NULL: a sensitive type, or a
    # status either side of 'active', in each project (every project, by a skip scan of the index).
    parts = ["SELECT id FROM observations INDEXED BY observations_type_created WHERE type = 'sensitive'"]
    if not f.include_inactive:
        parts += [f"SELECT o.id FROM p CROSS JOIN observations o INDEXED BY observations_project_status_time "
                  f"WHERE o.project = p.x AND o.status {op} 'active'" for op in ("<", ">")]
    sql = ("WITH RECURSIVE p(x) AS (SELECT (SELECT MIN(project) FROM observations) UNION ALL "
           "SELECT (SELECT MIN(project) FROM observations WHERE project > p.x) FROM p WHERE p.x IS NOT NULL) "
           + " UNION ALL ".join(parts) + " LIMIT ?")
    cap = FAILING_MAX if cap is None else cap
    cur = conn.cursor()
    cur.row_factory = None
    try:
        found = cur.execute(sql, (cap + 1,)).fetchall()
    except sqlite3.OperationalError:  # an older schema without those indexes
        return None
    # Counted with repeats (a row both sensitive and inactive is listed twice): past the cap the
    # LIMIT may have cut the list, whatever the count of distinct ids.
    return {rid for (rid,) in found} if len(found) <= cap else None


def _keep_passing(conn: sqlite3.Connection, out: Ranking, f: Filters, keep: int) -> None:
    """Leave in ``out.scores`` the best ``keep`` rows passing ``f`` (best first, checked a chunk at
    a time); rows below them are dropped unchecked."""
    passing: dict[int, float] = {}
    chunk = keep + keep // 4 + 8  # most rows pass the default filters
    ranked = out.top(chunk)  # the whole sort only when too few pass
    for i in range(0, len(out.scores), chunk):
        if i == chunk:
            ranked = out.top(len(out.scores))
        part = ranked[i:i + chunk]
        ok = _passing_ids(conn, out.kind, f, [rid for rid, _s in part])
        for rid, score in part:
            if rid in ok:
                passing[rid] = score
                if len(passing) >= keep:
                    break
        if len(passing) >= keep:
            break
    out.scores = passing


def rank(conn: sqlite3.Connection, kind: str, q: FtsQuery, f: Filters, need: int, *,
         budget: int = BUDGET, max_common: int = MAX_COMMON, phrases: bool = True, keep: int = 0) -> Ranking:
    """Per-scope BM25 of every row of ``kind`` that holds a query term and passes ``f``.

    Unscoped, every row is in the scope: the postings are read from FTS5 alone (no lookup of each
    row: ~40% of a posting's cost) and the filters are checked on the best rows only, until the
    best ``max(need, keep)`` of them pass (``top()`` beyond that is not asked for). With the
    default filters the rows they reject are known beforehand (``_failing``, index seeks) and are
    never scored, whether or not every term is read in full: no check of the best rows, and no
    join of each posting with its row when a term too common to read is refined."""
    src = SOURCES[kind]
    out = Ranking(kind)
    if q.empty:
        return out
    db = _db(conn)
    n_rows = index_rows(conn, src.fts)
    n_scope_rows = out.scope_rows = scope_rows(conn, kind, f.project, n_rows, db)
    # Terms of one token: (rows of the index, rows of the scope) holding them, kept exactly as rows
    # are written (kenning/search/terms.py). The others (prefixes, phrases) are counted.
    exact = terms.lookup(conn, kind, q.terms, f.project)
    recent: dict[Term, int] = {}
    if n_rows > EXACT_ROWS:  # cold terms: one statement tells the common ones (and their frequency)
        recent = _recent_all(conn, kind, [t for t in q.terms if t not in exact and _cached(
            ("capped", db, src.fts, t.text.lower(), t.prefix, t.alts), n_rows) is None])
    known = {t: budget + 1 for t, n in recent.items() if n > budget}  # as the capped count would say
    for t in known:
        _store(("capped", db, src.fts, t.text.lower(), t.prefix, t.alts), budget + 1, n_rows)
    known.update((t, min(n, budget + 1)) for t, (n, _s) in exact.items())
    counts = {**_capped_all(conn, src.fts, tuple(t for t in q.terms if t not in known), budget, n_rows, db),
              **known}
    pos = {t: i for i, t in enumerate(q.terms)}  # ties: the query's order
    order = sorted((t for t in q.terms if counts[t] > 0), key=lambda t: (counts[t], pos[t]))
    out.unmatched = len(q.terms) - len(order)
    weights = ", ".join(str(w) for w in src.weights)
    params: list[object] = []
    # Lazy only when every term is read in full: a term too common to read is refined on the rows
    # found, judged by how many pass the filters, and checking them all costs more than the join.
    # Unscoped with the default filters, the few rows they reject are known beforehand instead
    # (``_failing``): FTS5 alone reads the postings, those rows are left out as the join would,
    # and the best rows need no check.
    fits, lazy = 0, not f.project
    for t in order:
        if fits + counts[t] > budget:
            lazy = False
        else:
            fits += counts[t]
    failing = None if f.project else _failing(conn, kind, f, FAILING_BEST if lazy else FAILING_MAX)
    if lazy or failing is not None:
        sql = f"SELECT rowid, bm25({src.fts}, {weights}) FROM {src.fts} WHERE {src.fts} MATCH ?"
        tail: list[object] = []
    else:
        ok = where(kind, f, params)
        # Rows of the scope only (they make its statistics); the score only for those passing the filters.
        sql = (f"SELECT {src.alias}.id, CASE WHEN {ok} THEN bm25({src.fts}, {weights}) END "
               f"FROM {src.fts} CROSS JOIN {src.table} {src.alias} ON {src.alias}.id = {src.fts}.rowid {src.joins} "
               f"WHERE {src.fts} MATCH ?" + (f" AND {src.project} = ?" if f.project else ""))
        tail = [f.project] if f.project else []
    cur = conn.cursor()
    cur.row_factory = None
    spent = 0
    common: list[Term] = []
    scores, held = out.scores, out.held
    read_rows: list[list[tuple[int, float | None]]] = []  # each read term's (row, FTS5 score)
    get = scores.get
    for t in order:
        n_all = counts[t]  # exact up to the budget
        if spent + n_all > budget:
            common.append(t)
            continue
        spent += n_all
        rows = cur.execute(sql, [*params, t.phrase(), *tail]).fetchall()
        read_rows.append(rows)
        stat = TermStat(t, n_all, len(rows), scope_idf(n_scope_rows, len(rows)), True)
        bit = 1 << len(out.terms)
        out.terms.append(stat)
        scale = -stat.idf / idf(n_rows, n_all)  # bm25 = -IDF_all * T; we want IDF_scope * T
        hget = held.get
        if failing:  # rows the filters reject (the join gave them no score)
            rows_passing: list[tuple[int, float | None]] = [rb for rb in rows if rb[0] not in failing]
        else:
            rows_passing = rows
        for rid, b in rows_passing:
            if b is not None:
                scores[rid] = get(rid, 0.0) + b * scale
                held[rid] = hget(rid, 0) | bit
    out.read_any = bool(scores)
    bound = 0.0
    read = " OR ".join(s.term.phrase() for s in out.terms if s.read and s.n_all)
    # The cost bound for the terms too common to read: the MAX_COMMON rarest of them in the scope
    # that tell rows apart (in under half of a large scope) are scored on the rows found; the
    # others only widen ``bound`` (each is in more than the budget's rows, and in more than these).
    freq = {t: exact[t][0] if t in exact else _frequency(conn, kind, t, n_rows, db, budget, recent.get(t))
            for t in common}
    common.sort(key=lambda t: (freq[t], pos[t]))
    stats = []
    for i, t in enumerate(common):
        # Only those that may be scored get their (costlier) share in the scope; the others are
        # taken as spread evenly (they only widen the bound).
        n_scope = (exact[t][1] if t in exact
                   else _in_scope(conn, kind, t, f.project, freq[t], n_rows, db) if i < max_common
                   else round(freq[t] * n_scope_rows / max(n_rows, 1)))
        stats.append(TermStat(t, freq[t], n_scope, scope_idf(n_scope_rows, n_scope), False))
    stats.sort(key=lambda st: st.n_scope)
    big = n_scope_rows >= SMALL_SCOPE
    scored = 0
    raw: dict[int, float] | None = None
    for stat in stats:
        bit = 1 << len(out.terms)
        out.terms.append(stat)
        bound += stat.bound
        if not read or not scores or scored >= max_common or (big and stat.n_scope >= n_scope_rows / 2):
            stat.scored = False
            continue
        scored += 1
        match = f"{stat.term.phrase()} AND ({read})"
        if spent + len(scores) <= budget and stat.n_all <= REFINE_MAX:
            if raw is None:  # per row: the read terms' sum of FTS5's own scores (IDF_all * T)
                raw = {}
                for rows in read_rows:
                    for rid, b in rows:
                        if b is not None:
                            raw[rid] = raw.get(rid, 0.0) - b
            # Its exact part on the rows found: the AND's bm25 is the sum of every phrase's
            # IDF_all * T, and the read terms' share of it is known (FTS5 walks its doclist once).
            n_exact = exact[stat.term][0] if stat.term in exact else _count(conn, src.fts, stat.term.phrase(), 1 << 40)
            idf_all = idf(n_rows, n_exact)
            stat.n_all = n_exact
            found = cur.execute(f"SELECT rowid, bm25({src.fts}, {weights}) FROM {src.fts} WHERE {src.fts} "
                                "MATCH ?", (match,)).fetchall()
            spent += len(found)
            for rid, b in found:
                if rid in scores:
                    scores[rid] += stat.idf * max(0.0, -b - raw[rid]) / idf_all
                    held[rid] |= bit
            continue
        # Too many rows to score again: one occurrence in a row of average length, T = 1.
        for (rid,) in cur.execute(f"SELECT rowid FROM {src.fts} WHERE {src.fts} MATCH ?", (match,)):
            if rid in scores:
                scores[rid] += stat.idf
                held[rid] |= bit
    if phrases:
        spent += _phrases(conn, out, q, sql, [*params, "?phrase", *tail], n_rows, n_scope_rows, budget - spent)
    if lazy and scores:
        if failing is None:
            _keep_passing(conn, out, f, max(need, keep))
        else:  # every row left passes
            out.scores = dict(out.top(max(need, keep)))
        out.read_any = bool(out.scores)
    out.spent = spent
    # The query's weight in the scope, for coverage(): words no row of the scope holds count at
    # their rarest (they are the most telling part of the query, and nothing matched them), so a
    # row holding only the commonest word of a question explains little of it.
    absent = len(q.terms) - len(out.terms)
    out.query_idf = sum(s.idf for s in out.terms) + absent * scope_idf(n_scope_rows, 0)
    if bound > 0:
        best = out.top(need)
        out.complete = len(best) >= need and best[-1][1] > bound
    return out
