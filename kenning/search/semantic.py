"""Embeddings in the worker: one background thread loads the model and fills in the vectors.

The thread loads the model lazily (after start-up, never on a request) and embeds the rows that
lack a vector in small slices, newest first: a writer's poke (the pipeline, an MCP or HTTP save)
wakes it at once, so a new memory has its vector within a second. Searches come first: a query
is embedded on the searching thread itself (never queued behind the backlog), and the backlog
waits while a search runs and for a moment after, so a long backlog (a first start, a reindex)
barely slows searches. A back-end that scales over threads (minilm) embeds a backlog on one
thread per core (``embedding_threads``), every one at the lowest CPU priority, pausing inside its
passes while a search runs; and every thread but the first sleeps while the machine has more
runnable tasks than cores. Thread priorities do not reach across processes where the kernel
groups them by session (autogroup: the worker's own session against the agent's), so without
that a hook would share a core with the backlog instead of taking it. If the model cannot load
(not installed, offline without a cached copy, endpoint down) the state says why, ``kenning
doctor`` shows it, and search keeps running on keywords alone.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from kenning import allocator
from kenning.paths import Paths
from kenning.search import embedders, indexer
from kenning.search.vectors import VectorIndex
from kenning.store import switch
from kenning.store.db import connect

log = logging.getLogger("kenning.search")

BATCH = 4                 # rows per pass of a backlog thread (MiniLM: ~0.15 s, pausing between its layers)
PASSES = 2                # passes per thread in a slice: the threads take them as they free up
SERIAL_BATCH = 2          # rows per slice of a back-end that cannot pause mid-pass (~20-60 ms)
MAX_THREADS = 4           # the default thread count's cap (each adds ~10-20 MB of activations)
PARK_MAX_S = 2.0          # longest a helper thread's pass sleeps for a busy machine
PARK_STEP_S = 0.005       # ...looking again this often
QUIET_S = 0.25            # the backlog resumes this long after the last search ended
MAX_DEFER_S = 2.0         # ...or after this long, however busy search is (the backlog must end)
IDLE_RECHECK_S = 5.0      # a writer that could not poke (another process, worker restarting) waits this long
RETRY_FAILED_S = 600.0    # try loading a failed back-end again this often (the user may fix it)
TRIM_EVERY_S = 5.0        # a long backlog hands its freed activations back to the OS this often


class Semantic:
    def __init__(self, paths: Paths, settings: Any, embedder: embedders.Embedder | None = None) -> None:
        self.paths = paths
        self.embedder = embedder or embedders.make(settings, paths.root)
        self.state = "starting"   # starting | loading | indexing | ready | failed | stopped | off
        self.detail = ""
        self.embedded_total = 0
        self.missing = -1
        self.index: VectorIndex | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._busy = threading.Condition()
        self._searching = 0
        self._last_search = 0.0
        self._slice_deadline = 0.0
        self._first_waits = False  # the first backlog thread waits for the helpers' passes of its slice
        self._cursor = indexer.Cursor()  # rows already seen with a vector: no full scan per batch
        self._opened = 1  # the kept connection this cursor belongs to
        self.threads = backlog_threads(getattr(settings, "embedding_threads", 0)) if self.embedder.parallel else 1
        self.slice_rows = BATCH * PASSES * self.threads if self.embedder.parallel else SERIAL_BATCH
        self._pool: ThreadPoolExecutor | None = None  # the threads beyond this one, while the backlog runs
        self._thread = threading.Thread(target=self._run, name="kenning-embed", daemon=True)

    # ----------------------------------------------------------------------- control
    def start(self) -> None:
        if self.embedder.backend == "none":
            # `auto` found no back-end installed: keyword search, as doctor says in green. Nothing to
            # warn about, and nothing to retry (the back-end is chosen once, at start).
            self.state, self.detail = "off", ("embeddings are off: no embedding back-end is installed "
                                                 "(`kenning extras add embeddings` adds one); search uses keywords")
            log.info("%s", self.detail)
            return
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
                "missing": self.missing, "embedded_since_start": self.embedded_total, "threads": self.threads}

    def wait_ready(self, timeout: float) -> bool:
        """For tests and reindex: wait until loaded and nothing is left to embed (or failure)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state in ("ready", "failed", "stopped", "off"):
                return self.state == "ready"
            time.sleep(0.05)
        return False

    # ----------------------------------------------------------------------- queries
    @contextmanager
    def searching(self) -> Iterator[None]:
        """Mark a search in progress: the backlog waits for it (and a moment after)."""
        with self._busy:
            self._searching += 1
        try:
            yield
        finally:
            with self._busy:
                self._searching -= 1
                self._last_search = time.monotonic()
                self._busy.notify_all()

    def _yield_to_searches(self, deadline: float = 0.0) -> None:
        """Before a backlog slice: wait while searches run, and QUIET_S after the last one (at most
        until ``deadline``, else MAX_DEFER_S)."""
        deadline = deadline or time.monotonic() + MAX_DEFER_S
        with self._busy:
            while not self._stopping.is_set():
                now = time.monotonic()
                quiet = self._last_search + QUIET_S - now
                if (self._searching == 0 and quiet <= 0) or now >= deadline:
                    return
                self._busy.wait(min(max(quiet, 0.01), deadline - now) if self._searching == 0 else deadline - now)

    def _parking(self) -> Callable[[], None]:
        """The pause of a helper thread's pass: as :meth:`_pause`, and while more tasks are runnable
        than the machine has cores (a hook, the agent, a build), it sleeps, so they get the core at
        once and not a share of it: the backlog then runs on the first thread alone. It goes on
        once the first thread has finished its share and waits (it just takes that one's place),
        and after PARK_MAX_S in any case."""
        left = PARK_MAX_S

        def pause() -> None:
            nonlocal left
            self._pause()
            while left > 0 and not self._stopping.is_set() and not self._first_waits and _cores_wanted():
                time.sleep(PARK_STEP_S)
                left -= PARK_STEP_S

        return pause

    def _pause(self) -> None:
        """Between two layers of a backlog pass: the same wait, the common case decided without the
        lock; all the pauses of one slice together last at most MAX_DEFER_S."""
        if self._searching or time.monotonic() < self._last_search + QUIET_S:
            self._yield_to_searches(self._slice_deadline)

    def embed_query(self, text: str) -> Any:
        """The query's vector, computed on the calling thread (the back-ends are thread-safe for
        inference); None when the model is not loaded or fails. The backlog pauses meanwhile
        (a prompt's meaning side embeds on a thread of its own, outside the search's own mark)."""
        if self.state not in ("indexing", "ready"):
            return None
        try:
            with self.searching():
                return self.embedder.embed([text])[0]
        except Exception as e:
            log.warning("query embedding failed: %s", e)
            return None

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
        _lower_priority()
        # Let the worker answer its first requests before a model load competes for the CPU.
        self._wake.wait(1.0)
        while not self._stopping.is_set():
            if self._load():
                break
            if self._stopping.wait(RETRY_FAILED_S):
                return
        kept = switch.Kept(self.paths.db)  # given up when the file is switched (kenning/store/switch.py)
        if self.threads > 1:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="kenning-embed",
                                            initializer=_lower_priority)
        try:
            # How big the backlog is: the one full count on this thread, before it answers queries.
            with kept.lock:
                self.missing = indexer.count_missing(kept.get(), self.embedder.model)
            self.state = "indexing"
            trimmed = time.monotonic()
            while not self._stopping.is_set():
                self._wake.clear()
                self._yield_to_searches()
                done = self._step_kept(kept)
                if done:
                    self.state = "indexing"
                    if time.monotonic() - trimmed > TRIM_EVERY_S:
                        allocator.trim()
                        trimmed = time.monotonic()
                    continue
                if self.state != "ready" or trimmed < self._last_search:
                    allocator.trim()  # idle now: what the passes (and the searches' queries) freed goes back
                    trimmed = time.monotonic()
                self.state = "ready"
                self._wake.wait(IDLE_RECHECK_S)
                if self._stopping.is_set():
                    break
        except Exception as e:
            self.state, self.detail = "failed", f"indexing stopped: {type(e).__name__}: {e}"
            log.exception("embedding loop failed")
        finally:
            kept.release()
            if self._pool is not None:
                self._pool.shutdown(wait=False)
            if self.state != "failed":
                self.state = "stopped"

    def _step_kept(self, kept: switch.Kept) -> int:
        """One step on the kept connection: none while the database file is being switched."""
        try:
            with kept.lock:
                conn = kept.get()
                if kept.opened != self._opened:  # maybe another file: what the cursor saw is not in it
                    self._opened, self._cursor = kept.opened, indexer.Cursor()
                return self._step(conn)
        except switch.Switching:
            return 0

    def _step(self, conn: Any) -> int:
        model = self.embedder.model
        try:
            n = indexer.step(conn, model, self._embed_slice, batch=self.slice_rows, cursor=self._cursor,
                             between=self._yield_to_searches, embed_fresh=self.embedder.embed)
        except Exception as e:  # e.g. the database is busy: try again on the next wake-up
            log.warning("embedding batch deferred: %s", e)
            return 0
        self.embedded_total += n
        # A running estimate (new rows arrive, some are skipped); status(fresh=True) counts exactly.
        self.missing = 0 if n == 0 else max(1, self.missing - n)
        if n == 0 and self.index is not None:
            self.index.refresh()  # incremental: the rows appended since the last look
        return n

    def _embed_slice(self, texts: list[str]) -> Any:
        """The vectors of a backlog slice: its texts in passes of BATCH (similar lengths together,
        longest first), taken by the backlog threads as each frees up, this one included."""
        if not self.embedder.parallel:
            return self.embedder.embed(texts)
        import numpy as np

        self._slice_deadline = time.monotonic() + MAX_DEFER_S
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        passes = [order[i:i + BATCH] for i in range(0, len(order), BATCH)]
        results: list[Any] = [None] * len(passes)
        todo = list(range(len(passes) - 1, -1, -1))  # list.pop() is atomic: each pass is taken once

        def drain(helper: bool) -> None:
            while True:
                if helper and _cores_wanted():
                    return  # the first thread does the rest of the slice
                try:
                    k = todo.pop()
                except IndexError:
                    return
                results[k] = self.embedder.embed_backlog([texts[i] for i in passes[k]],
                                                         self._parking() if helper else self._pause)

        helpers = [self._pool.submit(drain, True) for _ in range(min(self.threads, len(passes)) - 1)] \
            if self._pool else []
        try:
            drain(False)
        finally:
            self._first_waits = True  # its core is free now: a parked helper takes it
            wait(helpers)
            self._first_waits = False
        for f in helpers:
            f.result()  # a helper's exception, raised here
        out = np.empty((len(texts), results[0].shape[1]), dtype=np.float32)
        for k, idx in enumerate(passes):
            out[idx] = results[k]
        return out


def _cores_wanted() -> bool:
    """Whether more tasks are runnable right now, on the whole machine, than it has cores (Linux:
    /proc/loadavg, ~15 µs; elsewhere unknown: False, and backlog_threads() defaults to one thread)."""
    try:
        with open("/proc/loadavg", "rb") as f:
            runnable = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return runnable > (os.cpu_count() or 1)


def backlog_threads(setting: Any = 0) -> int:
    """Threads that embed a backlog: ``embedding_threads`` when set (> 0), else one per core this
    process may run on (its CPU affinity, e.g. a container's share), at most MAX_THREADS."""
    try:
        n = int(setting or 0)
    except (TypeError, ValueError):
        n = 0
    if n > 0:
        return n
    if not os.path.exists("/proc/loadavg"):  # no way to see that the cores are wanted: one thread
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def _lower_priority() -> None:
    """Run this thread at the lowest CPU priority (Linux: a thread has its own nice value): when the
    cores are busy, the searches and the pipeline get them first, the backlog takes what is left."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # not Linux, or not allowed: the slices and the pauses remain
        pass
