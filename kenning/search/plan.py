"""Query planning for keyword search: which terms to require, which to score, which to widen with.

FTS5's ``bm25()`` counts, once per statement, the rows holding each phrase of the query: a full
walk of each phrase's doclist (~4 ms for a word in every row of 100k, ~8 ms for a phrase of
common words), whatever ``LIMIT`` says. And for a term in at least half the rows FTS5 clamps
the IDF to 1e-6: such a term costs the most and changes no score. So, per kind of row:

* a term of one token has its document frequency kept exactly as rows are written
  (:mod:`kenning.search.terms`); a prefix's or a phrase's is estimated cheaply (a count capped at
  ``DF_CAP``; past the cap, the share of the newest ``SAMPLE_ROWS`` rows holding it) and cached
  for a while;
* *universal* terms (in at least half the rows) are dropped from the query when a more
  selective term remains: BM25 gives them no weight, so the ranking is the same, and a row
  need not hold them to count as holding "all" the words (like a stopword of this memory);
* when every term is universal BM25 cannot tell the rows apart: the matches come newest
  first, unscored, and no any-term fallback runs (it could only add noise);
* the ``MAX_OR_TERMS`` most selective terms make the cheap probe (do they even meet?) and
  the any-term fallback.

Below ``MIN_ROWS`` rows nothing is dropped (every query is cheap there).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass

from kenning.search import terms
from kenning.search.query import _RUN, FtsQuery, Term

MAX_OR_TERMS = 4      # the probe and the any-term fallback use this many of the most selective terms
DF_CAP = 1000         # document frequencies are counted exactly up to here
SAMPLE_ROWS = 500     # past the cap, the share of the newest this-many rows holding the term
UNIVERSAL_SHARE = 0.5  # in at least this share of rows: FTS5's BM25 IDF is clamped to ~0
MIN_ROWS = 1000       # smaller tables run every term (exact and cheap anyway)
CACHE_TTL_S = 300.0
CACHE_MAX = 20_000
_GROWTH = 0.1         # a cached estimate is redone once the table grew (or shrank) by 10%


@dataclass(frozen=True)
class Estimate:
    df: int           # rows holding the term: exact below DF_CAP, else estimated from the sample
    universal: bool   # in at least UNIVERSAL_SHARE of the rows (only judged from MIN_ROWS rows)


@dataclass(frozen=True)
class Plan:
    required: FtsQuery  # what an "all"-tier row holds (and what BM25 scores)
    ranked: bool        # False: every term is universal; matches come newest first, unscored
    rare: FtsQuery      # the most selective terms: the probe and the any-term fallback
    dropped: tuple[Term, ...] = ()  # universal terms left out of ``required``

    @property
    def probe_needed(self) -> bool:
        """Whether the required terms are more than the rare ones (ask first if the rare ones meet)."""
        return bool(self.rare.terms) and len(self.required.terms) > len(self.rare.terms)


_cache: dict[tuple[str, str, str, bool, tuple[str, ...]], tuple[Estimate, int, float]] = {}
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def _db_name(conn: sqlite3.Connection) -> str:
    try:
        row = conn.execute("PRAGMA database_list").fetchone()
        return str(row[2] or id(conn))
    except sqlite3.Error:
        return str(id(conn))


def table_rows(conn: sqlite3.Connection, content: str) -> int:
    """An upper bound of the rows indexed from ``content`` (its largest id: O(1); asking the FTS5
    table itself would scan it)."""
    row = conn.execute(f"SELECT MAX(id) FROM {content}").fetchone()
    return int(row[0] or 0) if row else 0


def multi_token(t: Term) -> bool:
    """A phrase of several tokens (``src/db.py``, ``parse_config``, ``数据库``): counting it walks
    its tokens' doclists and checks positions, so only the bounded sample is taken."""
    return len(_RUN.findall(t.indexed)) > 1


def estimate(conn: sqlite3.Connection, fts: str, t: Term, n_rows: int, db: str = "") -> Estimate:
    """The document frequency of ``t`` in ``fts`` and whether it is universal (cached)."""
    key = (db or _db_name(conn), fts, t.text.lower(), t.prefix, t.alts)
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None:
        est, n_then, at = hit
        if now - at <= CACHE_TTL_S and abs(n_rows - n_then) <= _GROWTH * max(n_then, 1):
            return est
    est = _measure(conn, fts, t, n_rows)
    with _cache_lock:
        if len(_cache) >= CACHE_MAX:
            _cache.clear()
        _cache[key] = (est, n_rows, now)
    return est


def _measure(conn: sqlite3.Connection, fts: str, t: Term, n_rows: int) -> Estimate:
    phrase = t.phrase()
    try:
        if not multi_token(t) or n_rows < MIN_ROWS:
            df = int(conn.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
                                  (phrase, DF_CAP)).fetchone()[0])
            if df < DF_CAP:
                return Estimate(df, n_rows >= MIN_ROWS and df >= UNIVERSAL_SHARE * n_rows)
        lo = max(0, n_rows - SAMPLE_ROWS)
        seen = int(conn.execute(f"SELECT COUNT(*) FROM {fts} WHERE {fts} MATCH ? AND rowid > ?",
                                (phrase, lo)).fetchone()[0])
    except sqlite3.OperationalError:  # a term FTS5 cannot read as a phrase: it matches nothing
        return Estimate(0, False)
    share = seen / max(1, n_rows - lo)
    df = int(share * n_rows)
    if not multi_token(t):
        df = max(df, DF_CAP)  # the capped count already saw this many
    return Estimate(df, n_rows >= MIN_ROWS and share >= UNIVERSAL_SHARE)


def make(conn: sqlite3.Connection, fts: str, content: str, q: FtsQuery, kind: str = "observation") -> Plan:
    """The plan of ``q`` over the FTS table ``fts`` (indexing the rows of ``content``, of ``kind``)."""
    if not q.terms:
        return Plan(q, True, q)
    n_rows = table_rows(conn, content)
    if n_rows < MIN_ROWS and len(q.terms) <= MAX_OR_TERMS:
        return Plan(q, True, q)  # small table, short query: exact, nothing to choose
    db = _db_name(conn)
    # Terms of one token have exact frequencies (kenning/search/terms.py); the others are estimated.
    exact = terms.lookup(conn, kind, q.terms, None)
    est = {t: Estimate(exact[t][0], n_rows >= MIN_ROWS and exact[t][0] >= UNIVERSAL_SHARE * n_rows) if t in exact
           else estimate(conn, fts, t, n_rows, db) for t in q.terms}
    selective = tuple(t for t in q.terms if not est[t].universal)
    if not selective:
        return Plan(q, False, FtsQuery(()), ())
    dropped = tuple(t for t in q.terms if est[t].universal)
    required = FtsQuery(selective)
    keep = set(sorted(selective, key=lambda t: (est[t].df, selective.index(t)))[:MAX_OR_TERMS])
    rare = FtsQuery(tuple(t for t in selective if t in keep))
    return Plan(required, True, rare, dropped)
