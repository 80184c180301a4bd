"""Exact nearest-neighbour search over the stored embeddings, with the matrix cached in memory.

At a personal memory's scale (≤100k rows × 384 floats) a float32 ``X @ q`` is ~5 ms, needs no
extension and no index to keep consistent (DESIGN.md §4). The cache follows the table cheaply:
rows appended since the last look are read incrementally (``id`` > the last id seen); any
delete (a trigger bumps ``embedding_state.deletes``) makes it reload everything.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.search.filters import KINDS
from kenning.store.db import connect

QUERY_CACHE = 256
_KIND_SHIFT = 1 << 40  # a row's key in the lookup array: kind index * this + row id


@dataclass
class VectorMatches:
    """One query's answer: the nearest rows, and the similarity of any other row on request."""

    nearest: list[tuple[str, int, float]] = field(default_factory=list)
    searched: bool = False       # the query was embedded and compared (False: ``note`` says why)
    note: str = ""
    index: VectorIndex | None = None
    query: Any = None

    def similarities(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], float]:
        if self.index is None or self.query is None or not keys:
            return {}
        return self.index.similarities(self.query, keys)


class VectorIndex:
    """Vectors of one model. ``embed_query`` turns a query into a normalised vector (or None when
    the model cannot answer right now: the search then runs on keywords alone)."""

    def __init__(self, db_path: str, model: str, embed_query: Callable[[str], Any]) -> None:
        self.db_path = db_path
        self.model = model
        self.embed_query = embed_query
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._matrix: Any = None   # (capacity, dim) float32; rows [0, n) are live
        self._n = 0
        self._kind: Any = None     # int8 index into KINDS
        self._row: Any = None      # int64 row ids
        self._proj: Any = None     # int32 project codes
        self._projects: dict[str, int] = {}
        self._last_id = 0
        self._deletes = -1
        self._lookup: tuple[int, Any, Any] | None = None  # (n, sorted keys, their rows): built on demand
        self._own: sqlite3.Connection | None = None
        self._version = -1

    # ------------------------------------------------------------------------- cache
    def _state(self, conn: sqlite3.Connection) -> tuple[int, int]:
        last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM embeddings").fetchone()[0]
        deletes = conn.execute("SELECT deletes FROM embedding_state WHERE id = 1").fetchone()
        return int(last), int(deletes[0]) if deletes else 0

    def refresh(self, conn: sqlite3.Connection | None = None) -> int:
        """Bring the cached matrix up to date; returns the number of vectors. Without ``conn`` it
        uses a read connection of its own, kept open: when nothing was committed since the last
        look (``PRAGMA data_version``), that costs one pragma."""
        with self._lock:
            c = conn
            if c is None:
                if self._own is None:
                    self._own = connect(self.db_path, readonly=True)
                c = self._own
                version = int(c.execute("PRAGMA data_version").fetchone()[0])
                if version == self._version and self._matrix is not None:
                    return self._n
                self._version = version
            last, deletes = self._state(c)
            if deletes != self._deletes:
                self._reset()
                self._deletes = deletes
            if last > self._last_id:
                self._append(c, last)
            return self._n

    def close(self) -> None:
        with self._lock:
            if self._own is not None:
                self._own.close()
                self._own = None

    def _reset(self) -> None:
        self._matrix = None
        self._lookup = None
        self._n = 0
        self._last_id = 0
        self._projects = {}

    def _append(self, conn: sqlite3.Connection, last: int) -> None:
        import numpy as np

        rows = conn.execute("SELECT id, kind, row_id, project, dim, vector FROM embeddings "
                            "WHERE model = ? AND id > ? AND id <= ? ORDER BY id", (self.model, self._last_id, last)
                            ).fetchall()
        self._last_id = last
        if not rows:
            return
        dim = int(rows[0][4])
        if self._matrix is not None and self._matrix.shape[1] != dim:
            self._reset()
        rows = [r for r in rows if int(r[4]) == dim and len(r[5]) == 4 * dim]
        block = np.frombuffer(b"".join(r[5] for r in rows), dtype="<f4").reshape(len(rows), dim)
        kinds = np.array([KINDS.index(r[1]) for r in rows], dtype=np.int8)
        ids = np.array([r[2] for r in rows], dtype=np.int64)
        projs = np.array([self._projects.setdefault(r[3], len(self._projects)) for r in rows], dtype=np.int32)
        need = self._n + len(rows)
        if self._matrix is None or need > self._matrix.shape[0]:
            cap = max(need, 2 * (self._matrix.shape[0] if self._matrix is not None else 0), 1024)
            grown = np.zeros((cap, dim), dtype=np.float32)
            kind_a = np.zeros(cap, dtype=np.int8)
            row_a = np.zeros(cap, dtype=np.int64)
            proj_a = np.zeros(cap, dtype=np.int32)
            if self._matrix is not None and self._n:
                grown[: self._n] = self._matrix[: self._n]
                kind_a[: self._n] = self._kind[: self._n]
                row_a[: self._n] = self._row[: self._n]
                proj_a[: self._n] = self._proj[: self._n]
            self._matrix, self._kind, self._row, self._proj = grown, kind_a, row_a, proj_a
        self._matrix[self._n:need] = block
        self._kind[self._n:need] = kinds
        self._row[self._n:need] = ids
        self._proj[self._n:need] = projs
        self._n = need

    def __len__(self) -> int:
        return self._n

    # ------------------------------------------------------------------------ search
    def query_vector(self, text: str) -> Any:
        key = text.strip()[:2000]
        with self._lock:
            hit = self._queries.get(key)
            if hit is not None:
                self._queries.move_to_end(key)
                return hit
        vec = self.embed_query(key)
        if vec is not None:
            with self._lock:
                self._queries[key] = vec
                while len(self._queries) > QUERY_CACHE:
                    self._queries.popitem(last=False)
        return vec

    def nearest(self, text: str, *, k: int, kinds: Sequence[str] = KINDS,
                project: str | None = None) -> list[tuple[str, int, float]]:
        """Up to ``k`` (kind, row id, cosine similarity), most similar first."""
        return self.search(text, k=k, kinds=kinds, project=project).nearest

    def search(self, text: str, *, k: int, kinds: Sequence[str] = KINDS,
               project: str | None = None) -> VectorMatches:
        """The nearest rows of ``text`` and a handle on the similarity of any other row."""
        q = self.query_vector(text)
        if q is None:
            return VectorMatches(note="the query could not be embedded in time")
        self.refresh()
        if self._n == 0:
            return VectorMatches(note="no memory has a vector yet")
        return VectorMatches(self.nearest_vector(q, k=k, kinds=kinds, project=project), True, "", self, q)

    def similarities(self, q: Any, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """Cosine similarity of ``q`` with each (kind, row id) that has a vector."""
        import numpy as np

        with self._lock:
            n, m, kind_a, row_a = self._n, self._matrix, self._kind, self._row
            if n == 0 or m is None:
                return {}
            if self._lookup is None or self._lookup[0] != n:
                codes = kind_a[:n].astype(np.int64) * _KIND_SHIFT + row_a[:n]
                order = np.argsort(codes, kind="stable")
                self._lookup = (n, codes[order], order)
            _n, sorted_codes, order = self._lookup
        want = np.array([KINDS.index(kind) * _KIND_SHIFT + rid for kind, rid in keys], dtype=np.int64)
        pos = np.minimum(np.searchsorted(sorted_codes, want), n - 1)
        found = sorted_codes[pos] == want
        rows = order[pos[found]]
        sims = m[rows] @ q.astype(np.float32).reshape(-1)
        hit = [key for key, f in zip(keys, found.tolist(), strict=True) if f]
        return {key: float(v) for key, v in zip(hit, sims.tolist(), strict=True)}

    def nearest_vector(self, q: Any, *, k: int, kinds: Sequence[str] = KINDS,
                       project: str | None = None) -> list[tuple[str, int, float]]:
        import numpy as np

        with self._lock:
            n = self._n
            if n == 0 or self._matrix is None or q.shape[-1] != self._matrix.shape[1]:
                return []
            m, kind_a, row_a, proj_a = self._matrix, self._kind, self._row, self._proj
            code = self._projects.get(project) if project else None
        if project and code is None:
            return []
        scores = m[:n] @ q.astype(np.float32).reshape(-1)
        mask = None
        if set(kinds) != set(KINDS):
            mask = np.isin(kind_a[:n], [KINDS.index(x) for x in kinds])
        if code is not None:
            pm = proj_a[:n] == code
            mask = pm if mask is None else mask & pm
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        k = min(k, n)
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-scores[top])]
        return [(KINDS[int(kind_a[i])], int(row_a[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]
