"""Search inside the worker: read connections, the ranking settings, the vector index and the
background embedder, behind one object every in-worker caller (HTTP routes, prompt context) shares.

``current()`` returns the worker's runtime (None in other processes: they search FTS-only with
:func:`kenning.search.service.search` on their own connection).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kenning.paths import Paths
from kenning.search import service
from kenning.search.config import SearchConfig
from kenning.store.db import BUSY_TIMEOUT_MS, ReadPool, connect

log = logging.getLogger("kenning.search")

_current: SearchRuntime | None = None


def current() -> SearchRuntime | None:
    """The runtime of this worker process, if one was started."""
    return _current


class WouldWait(Exception):
    """A call that must not wait (``wait=False``) needed a new connection or a lock."""


def _busy(e: sqlite3.OperationalError) -> bool:
    return getattr(e, "sqlite_errorcode", 0) & 0xFF == 5 or "locked" in str(e) or "busy" in str(e)


class SearchRuntime:
    """Search for the worker. Thread-safe: every call has a read-only connection of its own, from
    ``pool`` (the worker's: kept open, statements stay prepared) or opened for the call."""

    def __init__(self, paths: Paths, settings: Any, *, background: bool = True, pool: ReadPool | None = None) -> None:
        self.paths = paths
        self.settings = settings
        self.pool = pool
        self.config = SearchConfig.from_settings(settings)
        self.semantic: Any = None  # kenning.search.semantic.Semantic once embeddings are configured
        if background and getattr(settings, "embedding_backend", "none") != "none":
            from kenning.search.semantic import Semantic

            self.semantic = Semantic(paths, settings)
            self.semantic.start()

    def install(self) -> SearchRuntime:
        global _current
        _current = self
        return self

    def close(self) -> None:
        global _current
        if self.semantic is not None:
            self.semantic.stop()
        if _current is self:
            _current = None

    def notify(self, event: dict[str, Any] | None = None) -> None:
        """New rows were stored (a pipeline listener): embed them soon, in the background."""
        if self.semantic is not None:
            self.semantic.poke()

    @contextmanager
    def reading(self, wait: bool = True) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection for one call, or None when there is no database yet.

        ``wait=False`` (a caller on the event loop): an idle pooled connection with no busy
        timeout, else :class:`WouldWait`, also raised when a statement meets a lock; the caller
        then runs the call again where it may wait."""
        if not wait:
            pool = self.pool
            if pool is None or (conn := pool.take_idle()) is None:
                raise WouldWait("no idle connection")
            conn.execute("PRAGMA busy_timeout = 0")
            ok = False
            try:
                yield conn
                ok = True
            except sqlite3.OperationalError as e:
                if _busy(e):
                    raise WouldWait(str(e)) from e
                raise
            finally:
                try:
                    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                except sqlite3.Error:
                    ok = False
                pool.give(conn, ok)
            return
        if not os.path.exists(self.paths.db):
            yield None
        elif self.pool is not None:
            with self.pool.connection() as conn:
                yield conn
        else:
            conn = connect(self.paths.db, readonly=True)
            try:
                yield conn
            finally:
                conn.close()

    def vectors(self) -> Any:
        """The vector index when it can answer now (model loaded), else None (FTS only)."""
        return self.semantic.index_if_ready() if self.semantic is not None else None

    def search(self, query: str = "", wait: bool = True, **kw: Any) -> list[service.Hit]:
        """Search with this worker's vectors and settings; ``info`` (a SearchInfo) also says why
        meaning did not answer (model loading, rows not embedded yet). ``wait``: see :meth:`reading`."""
        with self.reading(wait) as conn:
            if conn is None:
                return []
            kw.setdefault("vectors", self.vectors())
            kw.setdefault("config", self.config)
            info = kw.setdefault("info", service.SearchInfo())
            with self.busy():
                hits = service.search(conn, query, **kw)
            if not info.meaning and not info.note:
                info.note = self.meaning_unavailable()
            elif info.meaning and self.semantic is not None and self.semantic.state == "indexing":
                info.note = f"{max(self.semantic.missing, 0):,} memories are still being embedded"
            return hits

    def busy(self) -> Any:
        """A context for a search: the embedding backlog waits while it runs."""
        return self.semantic.searching() if self.semantic is not None else contextlib.nullcontext()

    def meaning_unavailable(self) -> str:
        """Why search cannot match by meaning now ("" when it can)."""
        if self.semantic is None:
            return "embeddings are off (embedding_backend none)"
        state = self.semantic.state
        if state in ("indexing", "ready"):
            return ""
        if state == "failed":
            return f"the embedding model is unavailable: {self.semantic.detail}"
        if state == "off":
            return str(self.semantic.detail)
        return "the embedding model is still loading"

    def timeline(self, **kw: Any) -> dict[str, Any]:
        with self.reading() as conn:
            if conn is None:
                raise ValueError("no memory yet")
            kw.setdefault("vectors", self.vectors())
            return service.timeline(conn, **kw)

    def get_observations(self, ids: Sequence[int], project: str | None = None) -> list[dict[str, Any]]:
        with self.reading() as conn:
            if conn is None:
                return []
            return service.get_observations(conn, ids, project=project)

    def reindex_vectors(self, force: bool = False) -> dict[str, Any]:
        """Prune vectors of deleted rows (all of the model's with ``force``) and wake the embedder,
        which recomputes what is missing in the background (poll :meth:`status`)."""
        if self.semantic is None:
            raise ValueError("embedding_backend is none: there are no vectors to rebuild")
        from kenning.search import reindex

        conn = connect(self.paths.db)
        try:
            pruned = reindex.reset_vectors(conn, self.semantic.embedder.model, force=force)
        finally:
            conn.close()
        self.semantic.poke()
        return {"pruned": pruned, **self.status(fresh=True)}

    def status(self, fresh: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"fts": True, "trigram": self.config.trigram,
                               "fusion": {"fts_weight": self.config.fts_weight,
                                          "vector_weight": self.config.vector_weight,
                                          "vector_depth": self.config.vector_depth,
                                          "recency_weight": self.config.recency_weight}}
        out["embeddings"] = (self.semantic.status(fresh=fresh) if self.semantic is not None
                             else {"backend": "none", "state": "off", "detail": "embedding_backend is none"})
        return out
