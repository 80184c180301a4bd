"""Memories next to the prompt (UserPromptSubmit): the few observations that match what was asked.

Candidates come from both sides of hybrid search, fused by weighted reciprocal rank:

* keywords: BM25 over the prompt's *selective* terms, the ones fewer than 200 observations (2%
  of a smaller memory) contain: an OR query over words many notes share makes BM25 score most
  of the table (~1.4 s at 200k rows), and such words cannot make one note relevant anyway;
* meaning: the nearest embeddings of the whole prompt, when the worker has a model loaded.

A candidate is given only when it is *relevant*, not merely ranked:

* by keywords: the IDF-weighted share of the prompt's terms the observation contains, stemmed
  by the same ``porter unicode61`` tokenizer as the FTS index, is at least ``min_relevance``
  (a rare term such as ``parse_invoice`` weighs far more than ``test``). A term is held when any
  word for it is (``k8s``: "Kubernetes"; :mod:`kenning.search.synonyms`); a CJK sentence gives
  the table's words inside it and its character pairs, as the index holds them
  (:func:`kenning.search.query.recall_terms`);
* or by meaning: its cosine similarity to the prompt is at least ``min_similarity``.

Search scores cannot serve as the threshold: BM25 tiers and reciprocal-rank fusion give numbers
on different scales, and both rank even hits that share a single common word.

Left out: other projects (so never another project's ``sensitive`` notes), inactive notes,
this very session's notes (the agent has them), those listed in this session's start index,
and those already given next to an earlier prompt of the session.

The hook imports this module for :func:`worth_asking` only: module-level imports stay light.
"""

from __future__ import annotations

import math
import time

from kenning.context.fence import CLOSE, OPEN, wrap  # noqa: F401 - CLOSE: part of this module's face

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from typing import Any

NOTIFICATION_PREFIX = "<task-notification>"
TITLE_CHARS = 160
CANDIDATES_PER_RESULT = 4  # hits searched per hit wanted: room for the threshold and exclusions
# A term is selective when fewer than min(DF_CAP, DF_CAP_SHARE x observations) notes hold it (at
# least 20): ~0.1% at 200k. An OR query over terms in ~700 notes each took 50-70 ms at 200k rows.
DF_CAP = 200               # document frequencies are counted up to this (cost stays bounded)
DF_CAP_SHARE = 0.02
UNSEEN_WEIGHT = 0.5        # weight factor of a prompt word no observation contains
# ... and of a CJK character pair none contains: most such pairs straddle two words of the
# sentence ("的回" in "完整的回归测试"), not a subject memory has never seen.
UNSEEN_PAIR_WEIGHT = 0.1
COVERAGE_CHUNK = 12        # candidates whose coverage is computed at once (most prompts stop early)
DF_TTL_S = 600.0
_df_cache: dict[tuple[str, str], tuple[int, int, int, float]] = {}  # (db, phrase) -> (df, cap, N, when)
_stem_cache: dict[str, frozenset[str]] = {}  # a word as indexed -> its tokens
STEM_CACHE_MAX = 20_000


CJK_CHAR_WEIGHT = 3  # an English word is ~6 characters with its space, a Chinese one ~1.7


def worth_asking(prompt: str, min_chars: int) -> bool:
    """Whether a prompt deserves a memory lookup: typed by the user, long enough to say something.
    A character of Chinese, Japanese or Korean (U+3040..U+D7A3) counts ``CJK_CHAR_WEIGHT`` times:
    "周五下午可以上线吗？" says as much as a 30-character English question."""
    text = prompt.strip()
    if text.startswith(NOTIFICATION_PREFIX):
        return False
    if len(text) >= min_chars:
        return True
    return len(text) + (CJK_CHAR_WEIGHT - 1) * sum("\u3040" <= c <= "\ud7a3" for c in text) >= min_chars


# -------------------------------------------------------------------------- relevance

class Relevance:
    """IDF-weighted coverage of the prompt's terms, for a handful of candidate observations.

    Stems come from a temporary FTS5 table with the index's own tokenizer (read-only
    connections may create TEMP tables), so "failing" matches "fails" exactly as search does.
    """

    def __init__(self, conn: sqlite3.Connection, prompt: str) -> None:
        from kenning.search.query import phrase_of, recall_terms

        self.conn = conn
        self.terms = recall_terms(prompt)
        self.words = [t.text for t in self.terms]
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kenning_tok USING fts5(x, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kenning_tok_v USING fts5vocab(temp, kenning_tok, "
                     "'instance')")
        # Each term's stems, one set per word for it (the term and its synonyms), as the index holds
        # them; a word's stems are the tokenizer's, always the same: kept across prompts.
        forms = [(i, form) for i, t in enumerate(self.terms)
                 for form in (t.indexed, *(phrase_of(a)[0] for a in t.alts))]
        todo = list({f: 0 for _i, f in forms if f not in _stem_cache})
        if todo:
            if len(_stem_cache) > STEM_CACHE_MAX:
                _stem_cache.clear()
            got = self._stems(dict(enumerate(todo)), expand=False)
            _stem_cache.update((f, frozenset(got.get(k, ()))) for k, f in enumerate(todo))
        self.stems: dict[int, list[frozenset[str]]] = {}
        for i, f in forms:
            if _stem_cache[f]:
                self.stems.setdefault(i, []).append(_stem_cache[f])
        self.n = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM observations").fetchone()[0])
        self.cap = max(20, min(DF_CAP, int(self.n * DF_CAP_SHARE)))
        self.db = str(conn.execute("PRAGMA database_list").fetchone()[2])
        # CJK pairs (one token each) are many in a sentence: their counts are kept (kenning/search/terms.py).
        from kenning.search.terms import lookup

        kept = lookup(conn, "observation", [t for t in self.terms if t.is_cjk], None)
        self.dfs = [min(kept[t][0], self.cap) if t in kept else self._df(t) for t in self.terms]
        # A word no note holds cannot tell notes apart; it still dilutes, at half weight, so a
        # prompt mostly about things memory has never seen gets nothing.
        self.weights = [math.log(1.0 + max(self.n, 1) / (df + 1.0))
                        * (1.0 if df else UNSEEN_PAIR_WEIGHT if t.is_cjk and not t.alts else UNSEEN_WEIGHT)
                        for t, df in zip(self.terms, self.dfs, strict=True)]

    def search_text(self) -> str:
        """The prompt's selective terms (in fewer than ``cap`` observations, at least one), in order.

        Empty when every term is common or unknown: keyword search would only rank noise. Words
        memory has never seen are left out too (they can match nothing).
        """
        return " ".join(w for w, df in zip(self.words, self.dfs, strict=True) if 0 < df < self.cap)

    def _stems(self, texts: dict[int, str], expand: bool = True) -> dict[int, set[str]]:
        """The tokens of each text; with ``expand``, of the text as the index holds it (CJK runs as pairs)."""
        from kenning.search.cjk import expand as as_indexed

        self.conn.execute("DELETE FROM temp.kenning_tok")
        self.conn.executemany("INSERT INTO temp.kenning_tok (rowid, x) VALUES (?, ?)",
                              [(k, as_indexed(v) if expand else v) for k, v in texts.items()])
        out: dict[int, set[str]] = {k: set() for k in texts}
        for doc, term in self.conn.execute("SELECT doc, term FROM temp.kenning_tok_v"):
            out.setdefault(int(doc), set()).add(str(term))
        return out

    def _df(self, term: Any) -> int:
        """Observations holding ``term`` (its phrase, or any word for it), counted up to ``cap``.

        The weight of a term is then ln(1 + N / (df + 1)): rare terms weigh most. Counts of
        identifier phrases cost up to ~40 ms at 200k rows, so they are cached while still true
        enough: an exact count for DF_TTL_S, a saturated one while the cap has not grown, and
        "never seen" only until the next observation is stored (a new project's first notes
        must be found by the very next prompt).
        """
        phrase = term.phrase()
        key = (self.db, phrase.lower())
        now = time.monotonic()
        hit = _df_cache.get(key)
        if hit is not None:
            df, cap, n, at = hit
            fresh = now - at <= DF_TTL_S and (0 < df < cap or (df >= cap and self.cap <= cap)
                                              or (df == 0 and n == self.n))
            if fresh:
                return min(df, self.cap)
        try:
            df = int(self.conn.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? LIMIT ?)",
                (phrase, self.cap)).fetchone()[0])
        except Exception:  # a term FTS5 cannot parse as a phrase: treat it as unseen
            df = 0
        if len(_df_cache) > 20_000:
            _df_cache.clear()
        _df_cache[key] = (df, self.cap, self.n, now)
        return df

    def coverage(self, texts: dict[int, str]) -> dict[int, float]:
        """observation id -> share (0..1) of the prompt's term weight found in its text."""
        total = sum(w for i, w in enumerate(self.weights) if self.stems.get(i))
        if total <= 0 or not texts:
            return {k: 0.0 for k in texts}
        docs = self._stems(texts)
        out: dict[int, float] = {}
        for oid, have in docs.items():
            got = sum(w for i, w in enumerate(self.weights) if any(s <= have for s in self.stems.get(i, ())))
            out[oid] = got / total
        return out


def texts_of(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
    """The searchable text of observations (the FTS columns plus the files they touched)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT id, title, subtitle, narrative, facts, concepts, files_read, files_modified FROM observations "
        f"WHERE id IN ({marks})", tuple(ids)).fetchall()
    return {int(r[0]): "\n".join(str(v or "") for v in tuple(r)[1:]) for r in rows}


# ---------------------------------------------------------------------- exclusions

def session_row(conn: sqlite3.Connection, agent_session_id: str,
                agent: str = "claude-code") -> tuple[int, float] | None:
    """(sessions.id, started_at) of the agent's session, once the worker has seen it."""
    r = conn.execute("SELECT id, started_at FROM sessions WHERE platform = ? AND agent_session_id = ?",
                     (agent, agent_session_id)).fetchone()
    return (int(r[0]), float(r[1])) if r else None


def shown_at_start(conn: sqlite3.Connection, project: str, started_at: float, count: int,
                   settings: Any = None) -> set[int]:
    """The observations the session-start index listed (what it selected from the rows stored by then)."""
    if settings is None:  # the newest ``count`` active ones
        return {int(r[0]) for r in conn.execute(
            "SELECT id FROM observations WHERE project = ? AND status = 'active' AND recorded_at <= ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (project, started_at + 1.0, count))}
    from kenning.context.index import Selection

    return Selection(conn, settings, project, started_at, recorded_before=started_at + 1.0).shown_ids()


class Given:
    """Observations already given next to a prompt, per agent session (bounded, in memory)."""

    def __init__(self, max_sessions: int = 1000) -> None:
        from collections import OrderedDict

        self.max_sessions = max_sessions
        self._by_session: OrderedDict[str, set[int]] = OrderedDict()

    def get(self, session: str) -> set[int]:
        ids = self._by_session.get(session)
        if ids is None:
            return set()
        self._by_session.move_to_end(session)
        return set(ids)

    def add(self, session: str, ids: Iterable[int]) -> None:
        self._by_session.setdefault(session, set()).update(ids)
        self._by_session.move_to_end(session)
        while len(self._by_session) > self.max_sessions:
            self._by_session.popitem(last=False)


# ------------------------------------------------------------------------- building

class Candidate:
    """An observation of the project found by keywords, by meaning, or both."""

    __slots__ = ("created_at", "id", "kind", "layer", "project", "rank", "session_id", "similarity", "title", "type")

    def __init__(self, id: int, session_id: int, project: str, type: str, title: str, created_at: float,
                 similarity: float | None = None, rank: float = 0.0, layer: str = "log", kind: str = "") -> None:
        self.id = id
        self.session_id = session_id
        self.project = project
        self.type = type
        self.title = title
        self.created_at = created_at
        self.similarity = similarity
        self.rank = rank  # fused reciprocal-rank score: higher first
        self.layer = layer
        self.kind = kind  # "proposed": a rule the agent saved, not confirmed by the user

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session_id": self.session_id, "project": self.project, "type": self.type,
                "title": self.title, "created_at": self.created_at, "similarity": self.similarity,
                "rank": round(self.rank, 6)}


LAYER_WEIGHT = {"rule": 1.5, "key": 1.5}  # a decision or root cause outranks routine work on equal terms


def candidates(conn: sqlite3.Connection, project: str, keyword_ids: Sequence[int], similar: dict[int, float],
               *, fts_weight: float = 1.0, vector_weight: float = 1.0, rrf_k: int = 60,
               archive_before: float = 0.0) -> list[Candidate]:
    """Active observations of ``project`` from both lists, best fused rank first.

    Only heads of near-duplicate groups; routine work older than ``archive_before`` is the archive.
    Rules and key memories weigh more than routine work of the same rank.
    """
    from kenning.search.rank import rrf

    by_meaning = sorted(similar, key=lambda i: -similar[i])
    fused = rrf([(fts_weight, list(keyword_ids)), (vector_weight, by_meaning)], rrf_k)
    if not fused:
        return []
    ids = [int(i) for i in fused]  # type: ignore[call-overload]
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT id, session_id, project, type, title, created_at, layer, kind FROM observations "
        f"WHERE id IN ({marks}) AND project = ? AND status = 'active' AND duplicate_of IS NULL "
        "AND NOT (layer = 'log' AND created_at < ?)", (*ids, project, archive_before)).fetchall()
    out = [Candidate(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4] or ""), float(r[5]),
                     similar.get(int(r[0])), fused[int(r[0])] * LAYER_WEIGHT.get(str(r[6]), 1.0), str(r[6] or "log"),
                     str(r[7] or ""))
           for r in rows]
    out.sort(key=lambda c: (-c.rank, -c.created_at))
    return out


class Pick:
    """One observation chosen for the prompt, with why."""

    __slots__ = ("coverage", "hit")

    def __init__(self, hit: Any, coverage: float) -> None:
        self.hit = hit
        self.coverage = coverage

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.hit.as_dict())
        d["coverage"] = round(self.coverage, 3)
        return d


def select(conn: sqlite3.Connection, rel: Relevance, found: Sequence[Any], *, limit: int, min_relevance: float,
           min_similarity: float, exclude: set[int] | None = None,
           exclude_session: int | None = None) -> list[Pick]:
    """The first ``limit`` candidates (in the order given) that are relevant and not excluded."""
    skip = exclude or set()
    todo = [c for c in found if c.id not in skip and c.session_id != exclude_session]
    out: list[Pick] = []
    for start in range(0, len(todo), COVERAGE_CHUNK):
        chunk = todo[start:start + COVERAGE_CHUNK]
        cov = rel.coverage(texts_of(conn, [c.id for c in chunk]))
        for c in chunk:
            share = cov.get(c.id, 0.0)
            similar = c.similarity is not None and c.similarity >= min_similarity
            if share >= min_relevance or similar:
                out.append(Pick(c, share))
                if len(out) >= limit:
                    return out
    return out


def render(picks: Sequence[Pick], icons: dict[str, str]) -> str:
    from kenning.context.layout import PROPOSED

    lines = [OPEN, "Kenning: earlier observations that share this prompt's rarer terms or its meaning "
                   "(best match first)."]
    for p in picks:
        h = p.hit
        day = time.strftime("%Y-%m-%d", time.localtime(h.created_at))
        title = " ".join(str(h.title).split())
        if len(title) > TITLE_CHARS:
            title = title[:TITLE_CHARS - 1] + "…"
        mark = PROPOSED if h.kind == "proposed" and h.layer != "rule" else ""
        lines.append(f"#{h.id} {day} {icons.get(h.type, '•')} {title}{mark}")
    lines.append("Full record of a row: `kenning show <ID>` or the get_observations tool.")
    return wrap("\n".join(lines[1:]))


class Meaning:
    """The nearest embeddings of a prompt, asked in the background and awaited at most ``budget_s``.

    Embedding the prompt waits for the worker's embedding thread (and a remote ``/embeddings``
    endpoint may take hundreds of ms): past the budget the prompt gets its keyword matches
    alone, so the hook's latency never depends on the embedding back-end. While recent
    lookups have been slower than the budget, none is awaited at all (they still run, warm
    the query cache and tell when the embedder is fast again); at most two run at once.
    """

    _pool: Any = None
    _lock: Any = None
    _recent: Any = None    # durations (s) of the last lookups
    _inflight = 0
    _generation = 0        # bumped by reset(): lookups started before it are not counted after it
    RECENT = 9
    MAX_INFLIGHT = 2

    @classmethod
    def reset(cls) -> None:
        """Forget how fast recent lookups were (tests; a new embedder)."""
        from collections import deque

        if cls._pool is None:
            import threading
            from concurrent.futures import ThreadPoolExecutor

            cls._pool = ThreadPoolExecutor(max_workers=cls.MAX_INFLIGHT, thread_name_prefix="kenning-meaning")
            cls._lock = threading.Lock()
        with cls._lock:
            cls._recent = deque(maxlen=cls.RECENT)
            cls._inflight = 0
            cls._generation += 1

    def __init__(self, vectors: Any, budget_s: float | None) -> None:
        self.vectors = vectors
        self.budget_s = budget_s
        self.state = "off" if vectors is None else "asked"
        self._future: Any = None
        self._result: list[tuple[str, int, float]] = []
        self._started = 0.0

    @classmethod
    def _slow(cls, budget_s: float) -> bool:
        with cls._lock:
            recent = sorted(cls._recent)
        return len(recent) >= 3 and recent[len(recent) // 2] > budget_s

    @classmethod
    def _done(cls, started: float, generation: int | None = None) -> None:
        with cls._lock:
            if generation is not None and generation != cls._generation:
                return
            cls._inflight -= 1
            cls._recent.append(time.monotonic() - started)

    def start(self, prompt: str, *, k: int, project: str) -> None:
        if self.vectors is None:
            return
        if self.budget_s is None:  # in-line (tests, callers without a deadline)
            self._result = self.vectors.nearest(prompt, k=k, kinds=("observation",), project=project)
            return
        if Meaning._pool is None:
            Meaning.reset()
        with Meaning._lock:
            if Meaning._inflight >= self.MAX_INFLIGHT:
                self.state = "skipped: busy"
                return
            Meaning._inflight += 1
            generation = Meaning._generation
        started = self._started = time.monotonic()
        self._future = Meaning._pool.submit(self.vectors.nearest, prompt, k=k, kinds=("observation",),
                                            project=project)
        self._future.add_done_callback(lambda _f: Meaning._done(started, generation))

    def result(self) -> list[tuple[str, int, float]]:
        if self.vectors is None or self.state.startswith("skipped"):
            return []
        if self._future is None:
            self.state = "answered"
            return list(self._result)
        from concurrent.futures import TimeoutError as FutureTimeout

        budget = self.budget_s or 0.0
        slow = Meaning._slow(budget) and not self._future.done()
        left = 0.0 if slow else max(0.0, budget - (time.monotonic() - self._started))
        try:
            found = self._future.result(timeout=left)
        except FutureTimeout:
            self.state = "skipped: slow lately" if slow else "timed out"
            return []
        except Exception:  # the embedder failed: keywords alone
            self.state = "failed"
            return []
        self.state = "answered"
        return list(found or [])


def build(conn: sqlite3.Connection, prompt: str, project: str, *, keyword_search: Any, vectors: Any = None,
          limit: int, min_relevance: float, min_similarity: float, agent_session_id: str = "",
          start_count: int = 50, given: Given | None = None, icons: dict[str, str] | None = None,
          weights: tuple[float, float, int] = (1.0, 0.5, 60), semantic_budget_s: float | None = None,
          meaning: Meaning | None = None, agent: str = "claude-code", settings: Any = None,
          root: str = "") -> tuple[str, list[Pick]]:
    """Text for additionalContext ('' when nothing is relevant) and the picks.

    ``keyword_search(query, project=, kinds=, limit=)`` is the search service without vectors;
    ``vectors`` a :class:`~kenning.search.vectors.VectorIndex` (or None: keywords alone), asked
    in parallel with the keyword side and awaited at most ``semantic_budget_s`` (None: no limit);
    ``weights`` = (keyword weight, vector weight, RRF k), the search settings' fusion;
    ``meaning``, when given, is used for the lookup (its ``state`` then tells what happened);
    ``settings``, when given, says what the session-start index listed and what is archived;
    ``root``, the working tree the memories are checked against (kenning/context/evidence_marks.py).
    """
    exclude: set[int] = set()
    this_session = None
    if agent_session_id:
        row = session_row(conn, agent_session_id, agent)
        if row is not None:
            this_session = row[0]
            exclude |= shown_at_start(conn, project, row[1], start_count, settings)
        if given is not None:
            exclude |= given.get(agent_session_id)
    need = min(200, limit * CANDIDATES_PER_RESULT + len(exclude))
    meaning = meaning or Meaning(vectors, semantic_budget_s)
    if prompt.strip():
        meaning.start(prompt, k=need, project=project)  # runs while the keyword side works
    rel = Relevance(conn, prompt)
    query = rel.search_text()
    keyword_ids = [h.id for h in keyword_search(query, project=project, kinds=("observation",), limit=need,
                                                synonyms=True) if h.kind == "observation"] if query else []
    similar: dict[int, float] = {}
    for kind, rid, sim in (meaning.result() if prompt.strip() else []):
        if kind == "observation" and sim >= min_similarity:
            similar[int(rid)] = float(sim)
    archive = time.time() - settings.archive_after_days * 86400 if settings and settings.archive_after_days else 0.0
    found = candidates(conn, project, keyword_ids, similar, fts_weight=weights[0], vector_weight=weights[1],
                       rrf_k=weights[2], archive_before=archive)
    if found:
        from kenning.context.index import Stale

        stale = Stale(conn, project)
        found = [c for c in found if not (c.layer == "log" and stale.echoed(c.title, c.created_at))]
    picks = select(conn, rel, found, limit=limit, min_relevance=min_relevance, min_similarity=min_similarity,
                   exclude=exclude, exclude_session=this_session)
    if not picks:
        return "", []
    if given is not None and agent_session_id:
        given.add(agent_session_id, (p.hit.id for p in picks))
    if root:
        from kenning.context.evidence_marks import mark_titles  # gone evidence noted (docs/memory.md)

        mark_titles(conn, root, [p.hit for p in picks], settings, TITLE_CHARS)
    if icons is None:
        from kenning.context.file_history import CODE_ICONS

        icons = CODE_ICONS
    return render(picks, icons), picks
