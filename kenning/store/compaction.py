"""Reclaiming space after a delete, in the background, coalesced.

A delete commits at once (the rows, their search entries, freed pages zeroed by
``secure_delete``); what remains is the slow part of forgetting: merging the FTS segments
that still hold deleted terms, rewriting the file (VACUUM: seconds at 100k observations) and
truncating the WAL that keeps old page images (``forget.reclaim``). Doing that inside the
request left the user staring at a frozen button, so it runs here instead: one thread, a
short delay so that a burst of deletes is one run, and a status a page can show as progress.

Nothing is lost if the worker stops first: a marker file says a compaction is owed, and the
next worker pays it at start.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from typing import Any

from kenning.store import forget as fg
from kenning.store.db import connect

log = logging.getLogger("kenning.compaction")

DELAY_S = 3.0  # a burst of deletes (a person clearing a few in a row) is one run
PHASES = {"merge": "merging the search index", "vacuum": "rewriting the database file",
          "checkpoint": "truncating the write-ahead log"}
_ORDER = list(PHASES)


class Compactor:
    """``request()`` after each delete; ``status()`` for the page. Thread-safe."""

    def __init__(self, db_path: str, marker: str, delay: float = DELAY_S) -> None:
        self.db_path, self.marker, self.delay = db_path, marker, delay
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._due = 0.0
        self._dirty = False
        self._vacuum_ops = 0  # VM steps of the last VACUUM per page: the next one's progress estimate
        self._status: dict[str, Any] = {"state": "idle", "runs": 0}

    def resume(self) -> None:
        """Pay a compaction a previous worker owed (it stopped between a delete and its compaction)."""
        if os.path.exists(self.marker):
            self.request(deleted=0)

    def request(self, deleted: int = 1) -> dict[str, Any]:
        with self._lock:
            self._dirty = True
            self._due = time.monotonic() + self.delay
            st = self._status
            if st["state"] != "running":
                st.update(state="waiting", phase="", step=0, fraction=None)
            st["pending_deletes"] = st.get("pending_deletes", 0) + deleted
            try:
                with open(self.marker, "w", encoding="utf-8") as fh:
                    fh.write(str(time.time()))
            except OSError:
                pass
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="kenning-compaction", daemon=True)
                self._thread.start()
            self._wake.notify_all()
            return dict(st)

    def status(self) -> dict[str, Any]:
        with self._lock:
            st = dict(self._status)
        if st["state"] == "running" and st.get("started"):
            st["elapsed_s"] = round(time.time() - st["started"], 1)
        return st

    # ------------------------------------------------------------------------------- thread
    def _loop(self) -> None:
        while True:
            with self._lock:
                while True:
                    if not self._dirty:
                        self._thread = None
                        return
                    wait = self._due - time.monotonic()
                    if wait <= 0:
                        break
                    self._wake.wait(wait)  # another delete moves the start back: one run for a burst
                self._dirty = False
                deletes = self._status.get("pending_deletes", 0)
                self._status.update(state="running", phase="", step=0, steps=len(_ORDER), fraction=0.0,
                                    started=time.time(), pending_deletes=0, error=None)
            self._run(deletes)

    def _run(self, deletes: int) -> None:
        before = fg.file_bytes(self.db_path)
        error = None
        try:
            conn = connect(self.db_path)
            try:
                pages = int(conn.execute("PRAGMA page_count").fetchone()[0]) or 1
                ops = [0]

                def tick() -> int:
                    ops[0] += 1
                    if self._vacuum_ops:
                        with self._lock:
                            self._status["fraction"] = round((1 + min(0.98, ops[0] / (self._vacuum_ops * pages)))
                                                             / len(_ORDER), 3)
                    return 0

                def phase(name: str) -> None:
                    step = _ORDER.index(name)
                    with self._lock:
                        self._status.update(phase=PHASES[name], step=step + 1, fraction=round(step / len(_ORDER), 3))
                    conn.set_progress_handler(tick if name == "vacuum" else None, 1000)

                fg.reclaim(conn, on_phase=phase)
                conn.set_progress_handler(None, 0)
                if ops[0]:
                    self._vacuum_ops = max(1, ops[0] // pages)
            finally:
                conn.close()
        except sqlite3.Error as e:
            error = f"the space is not reclaimed yet ({e}); it is retried after the next delete"
            log.warning("compaction: %s", e)
        after = fg.file_bytes(self.db_path)
        with self._lock:
            again = self._dirty
            if error is None and not again:
                try:
                    os.unlink(self.marker)
                except OSError:
                    pass
            self._status.update(state="waiting" if again else ("failed" if error else "done"), phase="",
                                fraction=None if again else 1.0, error=error, bytes_before=before,
                                bytes_after=after, deleted=deletes, finished=time.time(),
                                seconds=round(time.time() - self._status.get("started", time.time()), 2),
                                runs=self._status.get("runs", 0) + 1)
