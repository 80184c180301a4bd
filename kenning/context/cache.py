"""The worker's kept session-start selections: read once, re-timed for every answer.

Building the index reads a few hundred rows and checks the session log against every memory
that stopped being true (~6 ms at 10k observations); a new session usually asks about a
project nothing was written to since the last one asked. A selection is kept with the change
counters of migration 0021 as they stood *before* its queries ran (triggers move them in the
transaction of every write it could see), and with the identity of the database file. It is
used again only while both counters and the file are the same, and only re-timed forward
(:meth:`kenning.context.index.Selection.at`): the ages, the archive's cut and the ranking of
key memories are those of the asking moment, and the text is rendered afresh each time.
"""

from __future__ import annotations

import os
import sqlite3
import threading

from kenning.context.index import Selection, moment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from kenning.settings import Settings

KEPT = 16  # projects kept (the least recently asked go first)


class SelectionCache:
    def __init__(self, db_path: str, size: int = KEPT) -> None:
        self.db_path = db_path
        self.size = size
        self._kept: dict[str, tuple[tuple[object, ...], Settings, Selection]] = {}
        self._texts: dict[str, tuple[Selection, tuple[object, ...], str]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = self.texts_reused = 0

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
            with self._lock:
                self._kept.pop(project, None)
                self._kept[project] = (tag, settings, sel)
                while len(self._kept) > self.size:
                    self._kept.pop(next(iter(self._kept)))
        return sel

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
        with self._lock:
            self._texts.pop(project, None)
            self._texts[project] = (base, key, text)
            while len(self._texts) > self.size:
                self._texts.pop(next(iter(self._texts)))
        return text

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
