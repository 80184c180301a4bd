"""The worker's record of what session starts found gone (for review: ``kenning stale``).

Each answered session start hands its evidence check here (:meth:`Recorder.add`); one thread
writes them, after the answer, through :class:`kenning.memory_service.MemoryService` on a
connection it keeps. Checks that pile up while it writes are written together, so the answer
never waits and a burst of session starts costs one short transaction.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

log = logging.getLogger("kenning.worker")

Check = tuple[str, tuple[int, ...], dict[int, list[str]], float]  # project, ids checked, gone notes, when


class Recorder:
    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        self._todo: list[Check] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._known: dict[str, set[int]] = {}  # per project: ids with a record (None yet: unknown)
        self.written = 0

    def add(self, project: str, ids: tuple[int, ...], gone: dict[int, list[str]]) -> None:
        with self._cond:
            self._todo.append((project, ids, gone, time.time()))
            self._cond.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kenning-evidence-recorder", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._todo:
                    self._cond.wait()
                batch, self._todo = self._todo, []
            try:
                self._write(batch)
            except (sqlite3.Error, OSError) as e:  # counted again at the next session start
                log.warning("evidence record not written: %s", e)
                self._close()

    def _write(self, batch: list[Check]) -> None:
        from kenning.memory_service import MemoryService
        from kenning.store.db import connect

        if self._conn is None:
            self._conn = connect(self.db_path)
        door = MemoryService(self._conn, "http")
        for project, ids, gone, at in batch:
            known = self._known.get(project)
            # Only ids that may hold a record are cleared: after the first write, those this recorder wrote.
            cleared = ids if known is None else tuple(i for i in ids if i in known and i not in gone)
            if not gone and not cleared:
                continue
            door.evidence_checked(project, cleared, gone, at)
            mine = self._known.setdefault(project, set())
            mine.difference_update(cleared)
            mine.update(gone)
            self.written += 1

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._known.clear()
