"""The worker's record of what session starts found gone (for review: ``kenning stale``).

Each answered session start hands its evidence check here (:meth:`Recorder.add`); one thread
writes them through :class:`kenning.memory_service.MemoryService`, on a connection it keeps
(given up when the database file is switched: kenning/store/switch.py), once session starts
have paused for ``settle`` seconds: a burst of them (a resume, a compaction, several agents at
once) costs one short transaction, taken when nobody waits for an answer.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

from kenning.store import switch

log = logging.getLogger("kenning.worker")

SETTLE_S = 1.0


class Pending:
    """What the session starts of one project found, since the last write."""

    __slots__ = ("checked", "counts", "first", "gone", "last")

    def __init__(self, at: float) -> None:
        self.checked: tuple[int, ...] = ()
        self.gone: dict[int, list[str]] = {}
        self.counts: dict[int, int] = {}
        self.first = self.last = at


class Recorder:
    def __init__(self, db_path: str, settle: float = SETTLE_S) -> None:
        self.db_path = db_path
        self.settle = settle
        self._todo: dict[str, Pending] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._kept = switch.Kept(db_path)
        self._opened = 0
        self._known: dict[str, set[int]] = {}  # per project: ids with a record this recorder wrote
        self.written = 0

    def add(self, project: str, ids: tuple[int, ...], gone: dict[int, list[str]]) -> None:
        now = time.time()
        with self._cond:
            p = self._todo.setdefault(project, Pending(now))
            p.checked, p.gone, p.last = ids, gone, now  # the latest check says what holds now
            for oid in gone:
                p.counts[oid] = p.counts.get(oid, 0) + 1
            self._cond.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kenning-evidence-recorder", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._todo:
                    self._cond.wait()
                quiet = self.settle - (time.time() - max(p.last for p in self._todo.values()))
                if quiet > 0:
                    self._cond.wait(quiet)
                    continue
                batch, self._todo = self._todo, {}
            try:
                self._write(batch)
            except (sqlite3.Error, OSError) as e:  # counted again at the next session start
                log.warning("evidence record not written: %s", e)
                self._close()

    def _write(self, batch: dict[str, Pending]) -> None:
        with self._kept.lock:
            conn = self._kept.get()
            if self._kept.opened != self._opened:  # a new connection, maybe to another file
                self._opened = self._kept.opened
                self._known.clear()
            self._write_with(conn, batch)

    def _write_with(self, conn: sqlite3.Connection, batch: dict[str, Pending]) -> None:
        from kenning.memory_service import MemoryService

        door = MemoryService(conn, "http")
        for project, p in batch.items():
            known = self._known.get(project)
            # Only ids that may hold a record are cleared: after the first write, those this recorder wrote.
            cleared = p.checked if known is None else tuple(i for i in p.checked if i in known and i not in p.gone)
            if not p.gone and not cleared:
                continue
            door.evidence_checked(project, cleared, p.gone, p.last,
                                  counts={i: p.counts.get(i, 1) for i in p.gone}, since=p.first)
            mine = self._known.setdefault(project, set())
            mine.difference_update(cleared)
            mine.update(p.gone)
            self.written += 1

    def _close(self) -> None:
        self._kept.release()
        self._known.clear()
