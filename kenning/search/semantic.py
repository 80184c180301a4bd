"""Embeddings in the worker: one background thread owns the model.

The thread loads the model lazily (after start-up, never on a request), embeds the rows that
lack a vector in small batches, and answers query embeddings in between — queries first, so
a search waits at most for one small batch. If the model cannot load (not installed, offline
without a cached copy, endpoint down) the state says why, ``kenning doctor`` shows it, and
search keeps running on keywords alone.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any

from kenning.paths import Paths
from kenning.search import embedders, indexer
from kenning.search.vectors import VectorIndex
from kenning.store.db import connect

log = logging.getLogger("kenning.search")

BATCH = 8                 # ~0.1 s on one core for MiniLM: the longest a query waits behind indexing
QUERY_TIMEOUT_S = 2.0     # a query embedding slower than this is dropped: keyword results only
IDLE_RECHECK_S = 60.0
RETRY_FAILED_S = 600.0    # try loading a failed back-end again this often (the user may fix it)


class Semantic:
    def __init__(self, paths: Paths, settings: Any, embedder: embedders.Embedder | None = None) -> None:
        self.paths = paths
        self.embedder = embedder or embedders.make(settings, paths.root)
        self.state = "starting"   # starting | loading | indexing | ready | failed | stopped
        self.detail = ""
        self.embedded_total = 0
        self.missing = -1
        self.index: VectorIndex | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._queries: deque[tuple[str, Future[Any]]] = deque()
        self._cursor = indexer.Cursor()  # rows already seen with a vector: no full scan per batch
        self._thread = threading.Thread(target=self._run, name="kenning-embed", daemon=True)

    # ----------------------------------------------------------------------- control
    def start(self) -> None:
        missing = embedders.missing_package(self.embedder.backend)
        if missing:  # say so at once (no "starting" for a back-end that cannot load)
            self.state, self.detail = "failed", f"{missing} is not installed for {self.embedder.backend} " \
                f"({embedders.install_hint(self.embedder.backend)}), or choose another embedding_backend (keyword " \
                "search keeps working)"
            log.warning("embeddings unavailable, search uses keywords only: %s", self.detail)
            return
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    def poke(self) -> None:
        self._wake.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:  # never started when the back-end's package is missing
            self._thread.join(timeout)

    def index_if_ready(self) -> VectorIndex | None:
        return self.index if self.state in ("indexing", "ready") else None

    def status(self, fresh: bool = False) -> dict[str, Any]:
        if fresh and self.state in ("indexing", "ready"):
            conn = connect(self.paths.db, readonly=True)
            try:
                self.missing = indexer.count_missing(conn, self.embedder.model)
            finally:
                conn.close()
        return {"backend": self.embedder.backend, "model": self.embedder.model, "state": self.state,
                "detail": self.detail, "vectors": len(self.index) if self.index is not None else 0,
                "missing": self.missing, "embedded_since_start": self.embedded_total}

    def wait_ready(self, timeout: float) -> bool:
        """For tests and reindex: wait until loaded and nothing is left to embed (or failure)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state in ("ready", "failed", "stopped"):
                return self.state == "ready"
            time.sleep(0.05)
        return False

    # ----------------------------------------------------------------------- queries
    def embed_query(self, text: str) -> Any:
        """Runs on the embedding thread; None if it cannot answer within QUERY_TIMEOUT_S."""
        if self.state not in ("indexing", "ready"):
            return None
        fut: Future[Any] = Future()
        self._queries.append((text, fut))
        self._wake.set()
        try:
            return fut.result(timeout=QUERY_TIMEOUT_S)[0]
        except Exception:
            return None

    def _serve_queries(self) -> None:
        while self._queries:
            text, fut = self._queries.popleft()
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(self.embedder.embed([text]))
                except Exception as e:
                    fut.set_exception(e)

    # -------------------------------------------------------------------------- loop
    def _load(self) -> bool:
        self.state, self.detail = "loading", f"loading {self.embedder.describe()}"
        t0 = time.monotonic()
        try:
            self.embedder.load()
        except embedders.Unavailable as e:
            self.state, self.detail = "failed", str(e)
            log.warning("embeddings unavailable, search uses keywords only: %s", e)
            return False
        except Exception as e:  # a broken install must not take the worker down
            self.state, self.detail = "failed", f"{type(e).__name__}: {e}"
            log.exception("embedding model failed to load")
            return False
        self.index = VectorIndex(self.paths.db, self.embedder.model, self.embed_query)
        self.detail = f"{self.embedder.describe()} ({self.embedder.dim} dims) loaded in {time.monotonic() - t0:.1f} s"
        log.info("embeddings: %s", self.detail)
        return True

    def _run(self) -> None:
        # Let the worker answer its first requests before a model load competes for the CPU.
        self._wake.wait(1.0)
        while not self._stopping.is_set():
            if self._load():
                break
            if self._stopping.wait(RETRY_FAILED_S):
                return
        conn = None
        try:
            conn = connect(self.paths.db)
            # How big the backlog is: the one full count on this thread, before it answers queries.
            self.missing = indexer.count_missing(conn, self.embedder.model)
            self.state = "indexing"
            while not self._stopping.is_set():
                self._serve_queries()
                done = self._step(conn)
                if done:
                    self.state = "indexing"
                    continue
                self.state = "ready"
                self._wake.wait(IDLE_RECHECK_S)
                self._wake.clear()
                if self._stopping.is_set():
                    break
        except Exception as e:
            self.state, self.detail = "failed", f"indexing stopped: {type(e).__name__}: {e}"
            log.exception("embedding loop failed")
        finally:
            if conn is not None:
                conn.close()
            if self.state != "failed":
                self.state = "stopped"

    def _step(self, conn: Any) -> int:
        model = self.embedder.model
        try:
            n = indexer.step(conn, model, self.embedder.embed, batch=BATCH, cursor=self._cursor,
                             between=self._serve_queries)
        except Exception as e:  # e.g. the database is busy: try again on the next wake-up
            log.warning("embedding batch deferred: %s", e)
            return 0
        self.embedded_total += n
        # A running estimate (new rows arrive, some are skipped); status(fresh=True) counts exactly.
        self.missing = 0 if n == 0 else max(1, self.missing - n)
        if n == 0 and self.index is not None:
            self.index.refresh()  # incremental: the rows appended since the last look
        return n
