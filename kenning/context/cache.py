"""The worker's kept session-start selections: read once, re-timed for every answer.

Building the index reads a few hundred rows and checks the session log against every memory
that stopped being true (~6 ms at 10k observations); a new session usually asks about a
project nothing was written to since the last one asked. A selection is kept with the change
counters of migration 0021 as they stood *before* its queries ran (triggers move them in the
transaction of every write it could see), and with the identity of the database file. It is
used again only while both counters and the file are the same, and only re-timed forward
(:meth:`kenning.context.index.Selection.at`): the ages, the archive's cut and the ranking of
key memories are those of the asking moment, and the text is rendered afresh each time (or
given again when nothing it shows of the time changed: :func:`kenning.context.index.moment`).

When the worker's pipeline stores rows, the kept selections they changed are read again in
the background (:class:`Warmer`), so the next session start does not pay for the reading.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

from kenning.context.index import Selection, moment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from kenning.settings import Settings

KEPT = 16  # projects kept (the least recently asked go first)
WARM_AFTER_S = 0.3  # after the last rows stored: a burst of cycles reads each selection again once

log = logging.getLogger("kenning.worker")


class SelectionCache:
    def __init__(self, db_path: str, size: int = KEPT) -> None:
        self.db_path = db_path
        self.size = size
        self._kept: dict[str, tuple[tuple[object, ...], Settings, Selection]] = {}
        self._texts: dict[str, tuple[Selection, tuple[object, ...], str]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = self.texts_reused = self.warmed = 0

    def selection(self, conn: sqlite3.Connection, settings: Settings, project: str, now: float) -> Selection:
        """The selection of ``project`` at ``now``, read through ``conn`` unless a kept one still holds."""
        tag = self._tag(conn, project)
        with self._lock:
            kept = self._kept.pop(project, None)
            if kept is not None:
                self._kept[project] = kept  # most recently asked last
        if tag is not None and kept is not None and kept[0] == tag and kept[1] is settings \
                and now >= kept[2].fetched_at:
            self.hits += 1
            return kept[2].at(now)
        self.misses += 1
        sel = Selection(conn, settings, project, now)
        if tag is not None:
            self._put(self._kept, project, (tag, settings, sel))
        return sel

    def refresh(self, conn: sqlite3.Connection, now: float) -> int:
        """Read again every kept selection whose counters moved; returns how many were read."""
        with self._lock:
            kept = [(project, entry[0], entry[1]) for project, entry in self._kept.items()]
        done = 0
        for project, tag, settings in kept:
            new = self._tag(conn, project)
            if new is None or new == tag:
                continue
            sel = Selection(conn, settings, project, now)  # counters read first: a later write moves them again
            with self._lock:
                if project in self._kept:  # not dropped meanwhile; an answer may have read it too: both hold
                    self._kept[project] = (new, settings, sel)
            done += 1
        self.warmed += done
        return done

    def text(self, project: str, sel: Selection, rest: tuple[object, ...], render: Callable[[], str]) -> str:
        """``render()``, or the text rendered last for this very selection (the one read, re-timed
        or not) when everything else it shows (``rest``: title, icons, footer, agent) and all it
        shows of the time (:func:`kenning.context.index.moment`) are equal."""
        base = sel.base
        key = (rest, moment(sel))
        with self._lock:
            last = self._texts.get(project)
        if last is not None and last[0] is base and last[1] == key:
            self.texts_reused += 1
            return last[2]
        text = render()
        self._put(self._texts, project, (base, key, text))
        return text

    def _put(self, kept: dict[str, Any], project: str, entry: Any) -> None:
        """Keep ``entry`` as the most recently asked; the least recently asked beyond ``size`` go."""
        with self._lock:
            kept.pop(project, None)
            kept[project] = entry
            while len(kept) > self.size:
                kept.pop(next(iter(kept)))

    def _tag(self, conn: sqlite3.Connection, project: str) -> tuple[object, ...] | None:
        """(the file's identity, the global and the project's change counters); None: cannot tell."""
        try:
            st = os.stat(self.db_path)
            row = conn.execute("SELECT (SELECT n FROM context_changes WHERE project = ''), "
                               "(SELECT n FROM context_changes WHERE project = ?)", (project,)).fetchone()
        except (OSError, sqlite3.Error):  # no file, or a database from before migration 0021
            return None
        if row is None or row[0] is None:
            return None
        return st.st_dev, st.st_ino, row[0], row[1]


class Warmer:
    """Calls ``fn`` on its own thread ``delay`` seconds after the last :meth:`poke` (pokes coalesce)."""

    def __init__(self, fn: Callable[[], object], delay: float = WARM_AFTER_S) -> None:
        self.fn = fn
        self.delay = delay
        self._poked = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def poke(self) -> None:
        self._poked.set()
        if self._thread is None:  # started by the first rows stored, not by every app made
            with self._start:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="kenning-context-warmer", daemon=True)
                    self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._poked.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._poked.wait()
            while self._poked.is_set() and not self._stopping.is_set():
                self._poked.clear()
                self._stopping.wait(self.delay)  # a poke meanwhile: wait again
            if self._stopping.is_set():
                return
            try:
                self.fn()
            except Exception:  # sqlite3.Error, a file replaced: the next answer reads for itself
                log.exception("context warm-up failed")
