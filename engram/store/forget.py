"""Forgetting: delete memory by id, search query, project or date range, and what derives from it.

Observations, summaries and prompts are the canonical rows; their FTS entries go with them
(triggers), and so do the raw captured events of the same prompt turns, so nothing
forgotten can be re-derived later. Space is reclaimed afterwards (checkpoint + VACUUM).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from engram.store.repo import transaction


@dataclass
class Selection:
    """What a forget request matches (computed before anything is deleted: the dry run)."""

    observation_ids: list[int] = field(default_factory=list)
    summary_ids: list[int] = field(default_factory=list)
    prompt_ids: list[int] = field(default_factory=list)
    session_ids: list[int] = field(default_factory=list)  # whole sessions (forget by project)

    @property
    def empty(self) -> bool:
        return not (self.observation_ids or self.summary_ids or self.prompt_ids or self.session_ids)

    def as_dict(self) -> dict[str, list[int]]:
        return {"observations": self.observation_ids, "summaries": self.summary_ids,
                "prompts": self.prompt_ids, "sessions": self.session_ids}


def fts_phrase_query(text: str) -> str:
    """Every term of ``text`` becomes a quoted FTS5 phrase (AND): user text never reaches MATCH raw."""
    terms = [t.replace('"', '""') for t in text.split() if t.strip('"')]
    return " ".join(f'"{t}"' for t in terms)


def select(conn: sqlite3.Connection, *, ids: list[int] | None = None, query: str | None = None,
           project: str | None = None, since: float | None = None, until: float | None = None) -> Selection:
    """Resolve a forget request. Filters combine (AND); at least one must be given."""
    if not ids and not query and not project and since is None and until is None:
        raise ValueError("say what to forget: ids, a query, a project or a date range")
    sel = Selection()
    if project and not ids and not query and since is None and until is None:
        sel.session_ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE project = ?", (project,))]
        return sel

    def where(alias: str, time_col: str) -> tuple[str, list[object]]:
        clauses: list[str] = []
        params: list[object] = []
        if project:
            clauses.append(f"{alias}.project = ?")
            params.append(project)
        if since is not None:
            clauses.append(f"{alias}.{time_col} >= ?")
            params.append(since)
        if until is not None:
            clauses.append(f"{alias}.{time_col} < ?")
            params.append(until)
        return (" AND ".join(clauses) or "1"), params

    w, p = where("o", "created_at")
    if ids:
        marks = ",".join("?" * len(ids))
        sel.observation_ids = [r[0] for r in conn.execute(
            f"SELECT o.id FROM observations o WHERE o.id IN ({marks}) AND {w} ORDER BY o.id", [*ids, *p])]
        return sel
    if query:
        q = fts_phrase_query(query)
        if not q:
            raise ValueError("the query has no words")
        sel.observation_ids = [r[0] for r in conn.execute(
            f"SELECT o.id FROM observations_fts f JOIN observations o ON o.id = f.rowid "
            f"WHERE observations_fts MATCH ? AND {w} ORDER BY o.id", [q, *p])]
        ws, ps = where("s", "created_at")
        sel.summary_ids = [r[0] for r in conn.execute(
            f"SELECT s.id FROM session_summaries_fts f JOIN session_summaries s ON s.id = f.rowid "
            f"WHERE session_summaries_fts MATCH ? AND {ws} ORDER BY s.id", [q, *ps])]
        pw = []
        pp: list[object] = []
        if project:
            pw.append("ses.project = ?")
            pp.append(project)
        if since is not None:
            pw.append("u.created_at >= ?")
            pp.append(since)
        if until is not None:
            pw.append("u.created_at < ?")
            pp.append(until)
        sel.prompt_ids = [r[0] for r in conn.execute(
            "SELECT u.id FROM user_prompts_fts f JOIN user_prompts u ON u.id = f.rowid "
            "JOIN sessions ses ON ses.id = u.session_id WHERE user_prompts_fts MATCH ? AND "
            + (" AND ".join(pw) or "1") + " ORDER BY u.id", [q, *pp])]
        return sel
    sel.observation_ids = [r[0] for r in conn.execute(f"SELECT o.id FROM observations o WHERE {w}", p)]
    ws, ps = where("s", "created_at")
    sel.summary_ids = [r[0] for r in conn.execute(f"SELECT s.id FROM session_summaries s WHERE {ws}", ps)]
    return sel


def apply(conn: sqlite3.Connection, sel: Selection) -> dict[str, int]:
    """Delete what ``sel`` names and the raw events behind it, in one transaction."""
    out = {"observations": 0, "summaries": 0, "prompts": 0, "sessions": 0, "event_payloads": 0}
    conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left readable in the file
    with transaction(conn):
        for oid in sel.observation_ids:
            row = conn.execute("SELECT session_id, prompt_number FROM observations WHERE id = ?", (oid,)).fetchone()
            if row is None:
                continue
            out["event_payloads"] += _drop_turn_events(conn, row[0], row[1])
            conn.execute("UPDATE observations SET superseded_by = NULL WHERE superseded_by = ?", (oid,))
            out["observations"] += conn.execute("DELETE FROM observations WHERE id = ?", (oid,)).rowcount
        for sid in sel.summary_ids:
            out["summaries"] += conn.execute("DELETE FROM session_summaries WHERE id = ?", (sid,)).rowcount
        for pid in sel.prompt_ids:
            row = conn.execute("SELECT session_id, prompt_number FROM user_prompts WHERE id = ?", (pid,)).fetchone()
            if row is None:
                continue
            out["event_payloads"] += _drop_turn_events(conn, row[0], row[1])
            # Keep the numbering (later prompts keep their numbers); the text is what is forgotten.
            out["prompts"] += conn.execute("UPDATE user_prompts SET prompt_text = '[forgotten]' WHERE id = ?",
                                           (pid,)).rowcount
        for sid in sel.session_ids:
            out["sessions"] += conn.execute("DELETE FROM sessions WHERE id = ?", (sid,)).rowcount
    return out


def _drop_turn_events(conn: sqlite3.Connection, session_id: int, prompt_number: int | None) -> int:
    if prompt_number is None:
        return 0
    return conn.execute("UPDATE events SET payload = NULL WHERE session_id = ? AND prompt_number = ? "
                        "AND payload IS NOT NULL AND status != 'pending'", (session_id, prompt_number)).rowcount


def reclaim(conn: sqlite3.Connection) -> None:
    """Give the freed pages back to the file system (forgotten text leaves the file too)."""
    # FTS5 keeps deleted terms in old segments until they merge: merge them all now.
    for table in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
