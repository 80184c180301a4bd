"""Small helpers that put rows in a real, migrated database for the search tests."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from kenning.records import ObservationDraft, SummaryDraft
from kenning.store import repo
from kenning.store.db import open_db

NOW = 1_800_000_000.0


class Rows:
    """A migrated database plus terse inserters (each returns the new row id)."""

    def __init__(self, path: str) -> None:
        self.conn: sqlite3.Connection = open_db(path)
        self._sessions: dict[tuple[str, str], int] = {}

    def session(self, project: str = "alpha", name: str = "s1", root: str = "/src/alpha") -> int:
        key = (project, name)
        if key not in self._sessions:
            self._sessions[key] = repo.upsert_session(
                self.conn, platform="claude-code", agent_session_id=f"{project}-{name}", project=project,
                project_root=root, cwd=root, at=NOW - 86400)
        return self._sessions[key]

    def obs(self, title: str, *, project: str = "alpha", session: str = "s1", type: str = "discovery",
            narrative: str = "", facts: list[str] | None = None, concepts: list[str] | None = None,
            files_read: list[str] | None = None, files_modified: list[str] | None = None, subtitle: str = "",
            at: float | None = None, status: str = "active") -> int:
        sid = self.session(project, session)
        d = ObservationDraft(type=type, title=title, created_at=NOW if at is None else at, subtitle=subtitle,
                             facts=facts or [], narrative=narrative, concepts=concepts or [],
                             files_read=files_read or [], files_modified=files_modified or [])
        # Recorded when it says it happened: NOW is a fixed instant, maybe ahead of this machine's
        # clock, and a time from the future would be stored as the arrival time (kenning/memory/order.py).
        oid = repo.insert_observation(self.conn, sid, project, d, "rules", max(time.time(), d.created_at))
        assert oid
        if status != "active":
            self.conn.execute("UPDATE observations SET status = ? WHERE id = ?", (status, oid))
        return oid

    def summary(self, request: str, *, project: str = "alpha", session: str = "s1", learned: str = "",
                completed: str = "", files_modified: list[str] | None = None, at: float | None = None) -> int:
        sid = self.session(project, session)
        s = SummaryDraft(created_at=NOW if at is None else at, request=request, learned=learned, completed=completed,
                         files_modified=files_modified or [])
        repo.upsert_summary(self.conn, sid, project, s, "rules", max(time.time(), s.created_at))
        return int(self.conn.execute("SELECT id FROM session_summaries WHERE session_id = ?", (sid,)).fetchone()[0])

    def prompt(self, text: str, *, project: str = "alpha", session: str = "s1", at: float | None = None) -> int:
        sid = self.session(project, session)
        number = repo.next_prompt_number(self.conn, sid)
        repo.add_prompt(self.conn, sid, number, text, NOW if at is None else at)
        return int(self.conn.execute("SELECT id FROM user_prompts WHERE session_id = ? AND prompt_number = ?",
                                     (sid, number)).fetchone()[0])


def ids(hits: list[Any]) -> list[int]:
    return [h.id for h in hits]
