"""Exact nearest-neighbour search over the stored embeddings, with the matrix cached in memory.

At a personal memory's scale (≤100k rows × 384 floats) a float32 ``X @ q`` is ~5 ms, needs no
extension and no index to keep consistent (DESIGN.md §4). The cache follows the table cheaply:
rows appended since the last look are read incrementally (``id`` > the last id seen); any
delete (a trigger bumps ``embedding_state.deletes``) makes it reload everything. Each project's
vectors are one contiguous block: the scan is memory-bound (100k × 384 floats is 150 MB read per
query), and a search scoped to a project reads only its own rows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.search.filters import KINDS
from kenning.store import switch
from kenning.threads import LazyPool

QUERY_CACHE = 256
_KIND_SHIFT = 1 << 40  # a row's key in the lookup array: kind index * this + row id
SPLIT_ROWS = 32_768    # a longer scan is shared with a second thread (BLAS runs on one; matmul frees the GIL)

_scanner = LazyPool(1, "kenning-vscan")


def scores(m: Any, n: int, qv: Any) -> Any:
    """``m[:n] @ qv`` into one float32 array; past ``SPLIT_ROWS`` rows the second half on another
    thread (the scan is memory-bound: two cores read ~1.3-1.5x faster than one here)."""
    import numpy as np

    out = np.empty(n, dtype=np.float32)
    if n < SPLIT_ROWS:
        np.matmul(m[:n], qv, out=out)
        return out
    half = n // 2
    other = _scanner.get().submit(np.matmul, m[half:n], qv, out=out[half:])
    np.matmul(m[:half], qv, out=out[:half])
    other.result()
    return out


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


class _Block:
    """The vectors of one project, contiguous: a scoped search reads only its project's rows."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.n = 0
        self.matrix = np.zeros((64, dim), dtype=np.float32)  # rows [0, n) are live
        self.kind = np.zeros(64, dtype=np.int8)              # index into KINDS
        self.row = np.zeros(64, dtype=np.int64)              # row ids
        self.lookup: tuple[int, Any, Any] | None = None      # (n, sorted keys, their rows): built on demand

    def append(self, block: Any, kinds: Any, ids: Any) -> None:
        import numpy as np

        need = self.n + len(block)
        if need > self.matrix.shape[0]:
            cap = max(need, 2 * self.matrix.shape[0])
            grown = np.zeros((cap, self.matrix.shape[1]), dtype=np.float32)
            grown[: self.n] = self.matrix[: self.n]
            self.matrix = grown
            self.kind = np.resize(self.kind, cap)
            self.row = np.resize(self.row, cap)
        self.matrix[self.n:need] = block
        self.kind[self.n:need] = kinds
        self.row[self.n:need] = ids
        self.n = need

    def keys(self) -> tuple[Any, Any]:
        import numpy as np

        if self.lookup is None or self.lookup[0] != self.n:
            codes = self.kind[: self.n].astype(np.int64) * _KIND_SHIFT + self.row[: self.n]
            order = np.argsort(codes, kind="stable")
            self.lookup = (self.n, codes[order], order)
        return self.lookup[1], self.lookup[2]


class VectorIndex:
    """Vectors of one model. ``embed_query`` turns a query into a normalised vector (or None when
    the model cannot answer right now: the search then runs on keywords alone)."""

    def __init__(self, db_path: str, model: str, embed_query: Callable[[str], Any]) -> None:
        self.db_path = db_path
        self.model = model
        self.embed_query = embed_query
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._blocks: dict[str, _Block] = {}  # per project
        self._dim = 0
        self._n = 0
        self._last_id = 0
        self._deletes = -1
        self._own = switch.Kept(db_path, readonly=True)  # given up when the file is switched (the worker)
        self._opened = 0
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
                with self._own.lock:
                    c = self._own.get()
                    if self._own.opened != self._opened:  # maybe another file: nothing cached holds
                        self._opened, self._version, self._deletes = self._own.opened, -1, -1
                        self._reset()
                    return self._refresh_own(c)
            return self._refresh(c)

    def _refresh_own(self, c: sqlite3.Connection) -> int:
        version = int(c.execute("PRAGMA data_version").fetchone()[0])
        if version == self._version and self._n:
            return self._n
        self._version = version
        return self._refresh(c)

    def _refresh(self, c: sqlite3.Connection) -> int:
        last, deletes = self._state(c)
        if deletes != self._deletes:
            self._reset()
            self._deletes = deletes
        if last > self._last_id:
            self._append(c, last)
        return self._n

    def close(self) -> None:
        self._own.release()

    def _reset(self) -> None:
        self._blocks = {}
        self._dim = 0
        self._n = 0
        self._last_id = 0

    def _append(self, conn: sqlite3.Connection, last: int) -> None:
        import numpy as np

        rows = conn.execute("SELECT id, kind, row_id, project, dim, vector FROM embeddings "
                            "WHERE model = ? AND id > ? AND id <= ? ORDER BY id", (self.model, self._last_id, last)
                            ).fetchall()
        self._last_id = last
        if not rows:
            return
        dim = int(rows[0][4])
        if self._dim and self._dim != dim:
            self._reset()
        self._dim = dim
        by_project: dict[str, list[Any]] = {}
        for r in rows:
            if int(r[4]) == dim and len(r[5]) == 4 * dim:
                by_project.setdefault(r[3], []).append(r)
        for project, part in by_project.items():
            block = np.frombuffer(b"".join(r[5] for r in part), dtype="<f4").reshape(len(part), dim)
            kinds = np.array([KINDS.index(r[1]) for r in part], dtype=np.int8)
            ids = np.array([r[2] for r in part], dtype=np.int64)
            self._blocks.setdefault(project, _Block(dim)).append(block, kinds, ids)
            self._n += len(part)

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
            blocks = [(b, b.n, b.matrix, *b.keys()) for b in self._blocks.values() if b.n]
        if not blocks or not keys:
            return {}
        want = np.array([KINDS.index(kind) * _KIND_SHIFT + rid for kind, rid in keys], dtype=np.int64)
        qv = q.astype(np.float32).reshape(-1)
        out: dict[tuple[str, int], float] = {}
        for _b, n, m, sorted_codes, order in blocks:
            pos = np.minimum(np.searchsorted(sorted_codes, want), n - 1)
            found = sorted_codes[pos] == want
            if not found.any():
                continue
            sims = m[order[pos[found]]] @ qv
            hit = [key for key, f in zip(keys, found.tolist(), strict=True) if f]
            out.update((key, float(v)) for key, v in zip(hit, sims.tolist(), strict=True))
        return out

    def nearest_vector(self, q: Any, *, k: int, kinds: Sequence[str] = KINDS,
                       project: str | None = None) -> list[tuple[str, int, float]]:
        import numpy as np

        with self._lock:
            if not self._n or q.shape[-1] != self._dim:
                return []
            if project:
                b = self._blocks.get(project)
                blocks = [(b.n, b.matrix, b.kind, b.row)] if b is not None and b.n else []
            else:
                blocks = [(b.n, b.matrix, b.kind, b.row) for b in self._blocks.values() if b.n]
        qv = q.astype(np.float32).reshape(-1)
        some_kinds = set(kinds) != set(KINDS)
        wanted = [KINDS.index(x) for x in kinds]
        best: list[tuple[float, int, int]] = []  # (score, kind, row id)
        for n, m, kind_a, row_a in blocks:
            sims = scores(m, n, qv)  # only this project's rows are read
            if some_kinds:
                sims[~np.isin(kind_a[:n], wanted)] = -np.inf
            top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
            best.extend((float(sims[i]), int(kind_a[i]), int(row_a[i])) for i in top.tolist()
                        if np.isfinite(sims[i]))
        best.sort(key=lambda t: -t[0])
        return [(KINDS[kind], rid, score) for score, kind, rid in best[:k]]
