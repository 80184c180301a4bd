"""The service layer: what every surface (HTTP, CLI, hooks' fallback) asks of memory.

Reads open their own short-lived connection, so they never wait on the pipeline's writer
(WAL lets readers and the writer run together).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kenning import spool
from kenning.context.cache import SelectionCache
from kenning.context.session_start import context_text
from kenning.observer import trouble
from kenning.paths import Paths
from kenning.project import identify, is_excluded, resolve_key
from kenning.records import text_tokens
from kenning.settings import Settings
from kenning.store import projects, repo
from kenning.store.db import ReadPool, connect, current_version, migration_files
from kenning.worker.evidence_recorder import Recorder


class Memory:
    """Read side of Kenning over one data directory.

    ``pooled`` (the worker): read connections are kept and reused (:class:`ReadPool`); otherwise
    each read opens and closes its own, as a one-off CLI command wants.
    """

    def __init__(self, paths: Paths, settings: Settings, *, pooled: bool = False) -> None:
        self.paths = paths
        self.settings = settings
        self.pool = ReadPool(paths.db) if pooled else None
        self.selections = SelectionCache(paths.db) if pooled else None  # the worker's: see kenning/context/cache.py
        self.recorder = Recorder(paths.db) if pooled else None  # what session starts found gone (review)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for one request (the database file must exist)."""
        if self.pool is not None:
            with self.pool.connection() as conn:
                yield conn
            return
        conn = connect(self.paths.db, readonly=True)
        try:
            yield conn
        finally:
            conn.close()

    def context(self, cwd: str = "", project: str = "", now: float | None = None,
                agent: str = "claude-code") -> dict[str, Any]:
        """The session-start context for a cwd (or a project: its key, path or name), as ``agent`` sees it."""
        if project:
            name, root, key = project, "", project
        else:
            p = identify(cwd or os.getcwd())
            name, root, key = p.name, p.root, p.key
        if is_excluded(name, root, cwd, self.settings.excluded_projects):
            return {"project": name, "context": "", "excluded": True, "chars": 0, "tokens": 0}
        if project:
            def key_of(conn: sqlite3.Connection) -> str:
                return projects.one(conn, project)
        else:
            def key_of(conn: sqlite3.Connection) -> str:
                return resolve_key(conn, key)
        text, resolved = context_text(self.paths, self.settings, name, key_of, now=now, agent=agent,
                                      pool=self.pool, cache=self.selections, root=root)
        if self.recorder is not None and resolved:  # the worker: count what the check found, for review
            self._record_evidence(resolved)
        return {"project": name, "key": resolved or key, "context": text, "excluded": False, "chars": len(text),
                "tokens": text_tokens(text)}

    def _record_evidence(self, project: str) -> None:
        """Hand the evidence check of the session start just answered to the worker's recorder."""
        from kenning.context.evidence_marks import last_checked

        got = last_checked(project)
        if got is not None and self.recorder is not None and (got[0] or got[1]):
            self.recorder.add(project, got[0], got[1])

    def warm_contexts(self) -> int:
        """Read again the kept session-start selections that writes have changed (the worker's)."""
        if self.selections is None or not os.path.exists(self.paths.db):
            return 0
        with self.reading() as conn:
            return self.selections.refresh(conn, time.time())

    def observation(self, oid: int) -> dict[str, Any] | None:
        if not os.path.exists(self.paths.db):
            return None
        with self.reading() as conn:
            return repo.get_observation(conn, oid)

    def evidence(self, oid: int, cwd: str = "") -> dict[str, Any]:
        """What the evidence check says of one memory: its record (gone since, in how many sessions)
        and, checked now against the working tree of ``cwd``, what it cites that is gone."""
        from kenning.context.evidence_marks import check
        from kenning.store import evidence

        if not os.path.exists(self.paths.db):
            return {}
        with self.reading() as conn:
            rec = evidence.of(conn, oid)
            now = check(conn, identify(cwd).root, [oid]).get(oid, []) if cwd else []
        return {"record": rec, "gone_here": now}

    def stale(self, project: str = "", min_sessions: int | None = None) -> list[dict[str, Any]]:
        """Memories whose evidence was found gone in at least ``min_sessions`` session starts (review)."""
        from kenning.store import evidence

        if not os.path.exists(self.paths.db):
            return []
        wanted = self.settings.evidence_review_sessions if min_sessions is None else min_sessions
        with self.reading() as conn:
            key = projects.one(conn, project) if project else ""
            return evidence.listed(conn, key or None, wanted)

    def checkout_joins(self) -> list[Any]:
        """Checkouts filed under another project and why (``kenning.store.checkouts.Join``), newest first."""
        from kenning.store import checkouts

        if not os.path.exists(self.paths.db):
            return []
        try:
            with self.reading() as conn:
                return list(checkouts.joins(conn))
        except sqlite3.Error:
            return []  # doctor's database check says what is wrong with the file

    def status(self) -> dict[str, Any]:
        """Counts, queue depths and database health."""
        out: dict[str, Any] = {"data_dir": self.paths.root, "spool_depth": spool.depth(self.paths),
                               "spool_corrupt": spool.corrupt_count(self.paths), "db": self.paths.db}
        # Why events wait for an observer that cannot work (None: it works); counted again below with the
        # events already in the database.
        out["observer_trouble"] = trouble.summary(self.paths, out["spool_depth"])
        if not os.path.exists(self.paths.db):
            out.update(db_ok=False, db_error="database not created yet (the worker creates it)")
            return out
        try:
            with self.reading() as conn:
                out["counts"] = repo.counts(conn)
                out["schema_version"] = current_version(conn)
                out["schema_latest"] = migration_files()[-1][0]
                out["projects"] = repo.projects(conn)[:20]
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
                out["db_ok"] = check == "ok"
                if check != "ok":
                    from kenning.store import health

                    out["db_error"] = health.corrupt_line(self.paths.db, f"integrity check: {check}")
                    health.note_damage(self.paths.db, out["db_error"])
            out["db_bytes"] = sum(os.path.getsize(p) for p in (self.paths.db, self.paths.db + "-wal")
                                  if os.path.exists(p))
            waiting = int(out["counts"].get("pending_events", 0)) + int(out["spool_depth"])
            out["observer_trouble"] = trouble.summary(self.paths, waiting)  # None: the observer works
        except sqlite3.Error as e:
            from kenning.store import health

            kind, message = health.classify(self.paths.db, e)
            if kind == health.CORRUPT:
                health.note_damage(self.paths.db, message)
            out.update(db_ok=False, db_error=message)
        out["at"] = time.time()
        return out
