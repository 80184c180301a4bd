"""The record of memories whose evidence is gone (migration 0031), for review and expiry.

Written by :meth:`kenning.memory_service.MemoryService.evidence_checked` only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any


def record(conn: sqlite3.Connection, project: str, checked: Iterable[int], gone: Mapping[int, list[str]],
           now: float, counts: Mapping[int, int] | None = None, since: float | None = None) -> None:
    """Session starts' checks: each of ``gone`` (id -> notes) counted ``counts[id]`` (1) more sessions,
    first found at ``since`` (``now``); every other ``checked`` id forgotten (its evidence holds again,
    or can no longer be told)."""
    first = now if since is None else since
    for oid, notes in gone.items():
        n = (counts or {}).get(oid, 1)
        conn.execute("INSERT INTO evidence_gone (observation_id, project, since, last_at, sessions, notes) "
                     "SELECT ?1, ?2, ?5, ?3, ?6, ?4 WHERE EXISTS (SELECT 1 FROM observations WHERE id = ?1) "
                     "ON CONFLICT (observation_id) DO UPDATE SET last_at = ?3, sessions = sessions + ?6, notes = ?4",
                     (oid, project, now, json.dumps(notes[:5], ensure_ascii=False), first, n))
    held = [i for i in checked if i not in gone]
    for start in range(0, len(held), 500):
        part = held[start:start + 500]
        conn.execute(f"DELETE FROM evidence_gone WHERE observation_id IN ({','.join('?' * len(part))})", part)


def since(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, float]:
    """When the evidence of each of ``ids`` was first found gone (those with a record)."""
    wanted = list(ids)
    if not wanted:
        return {}
    try:
        return {int(r[0]): float(r[1]) for r in conn.execute(
            f"SELECT observation_id, since FROM evidence_gone WHERE observation_id IN ({','.join('?' * len(wanted))})",
            wanted)}
    except sqlite3.OperationalError:  # a file before migration 0031 (a hook reading during an upgrade)
        return {}


def listed(conn: sqlite3.Connection, project: str | None = None, min_sessions: int = 1) -> list[dict[str, Any]]:
    """Active memories whose evidence is gone in at least ``min_sessions`` sessions, longest gone first."""
    sql = ("SELECT e.observation_id, e.project, e.since, e.last_at, e.sessions, e.notes, o.title, o.type "
           "FROM evidence_gone e JOIN observations o ON o.id = e.observation_id "
           "WHERE o.status = 'active' AND e.sessions >= ?")
    args: list[Any] = [min_sessions]
    if project:
        sql += " AND e.project = ?"
        args.append(project)
    rows = conn.execute(sql + " ORDER BY e.since, e.observation_id", args).fetchall()
    return [{"id": r[0], "project": r[1], "since": r[2], "last_at": r[3], "sessions": r[4],
             "notes": json.loads(r[5] or "[]"), "title": r[6], "type": r[7]} for r in rows]


def of(conn: sqlite3.Connection, oid: int) -> dict[str, Any] | None:
    """The record of one memory, or None."""
    try:
        r = conn.execute("SELECT since, last_at, sessions, notes FROM evidence_gone WHERE observation_id = ?",
                         (oid,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if r is None else {"since": r[0], "last_at": r[1], "sessions": r[2], "notes": json.loads(r[3] or "[]")}
