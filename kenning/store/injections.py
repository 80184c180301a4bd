"""The injection ledger: which memories were handed to an agent, when, by which path and why, and the
signs that they helped (migration 0032).

Not memory: it records what memory did. Written by the worker only (kenning/worker/given.py): the
session-start index, prompt recall and file history it served or read back, what the MCP server tells
it it answered (that server only reads the database), and the uses it finds in captured events;
never by a hook. Rows name memories by id; forgetting a
memory deletes its rows (:func:`forget`). Bounded: rows older than :data:`RETENTION_S` go, and past
:data:`MAX_ROWS` the oldest go (:func:`prune`, with the other ledgers).

A handing counts as *used* when a use of the same memory follows it in the same session (or, for a
use whose session is unknown, such as an MCP fetch, within :data:`USE_WINDOW_S` in the same project),
and as *contradicted* when the memory was superseded or retracted after it was given.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

RETENTION_S = 180 * 24 * 3600   # half a year: the check-up proposes memories never used in that time
MAX_ROWS = 200_000               # handings kept at most (the oldest go first)
USE_WINDOW_S = 24 * 3600         # a use with no session counts for handings this recent
VIAS = ("session_start", "prompt", "file", "mcp")
USE_KINDS = ("fetched", "cited", "edited", "ran", "named")
CHUNK = 500


@dataclass(frozen=True)
class Given:
    """One memory in one handing: why it was shown and how many characters its line took."""

    observation_id: int
    reason: str = ""
    chars: int = 0


def record(conn: sqlite3.Connection, *, via: str, items: Iterable[Given], session: str = "", agent: str = "",
           project: str = "", at: float | None = None, ref: str | None = None) -> int:
    """Add one handing (inside the caller's transaction, or autocommit); returns rows added. A ``ref``
    already recorded adds nothing (a file read again after a restart)."""
    if via not in VIAS:
        raise ValueError(f"unknown path {via!r}")
    when = time.time() if at is None else at
    rows = [(when, session[:200], agent[:40], project, via, int(g.observation_id), g.reason[:300], int(g.chars), ref)
            for g in items]
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO injections (at, session, agent, project, via, observation_id, reason, "
                     "chars, ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return conn.total_changes - before


def use(conn: sqlite3.Connection, *, observation_ids: Iterable[int], kind: str, session: str = "", detail: str = "",
        at: float | None = None) -> int:
    """Record a sign that memories helped. Only memories given before (in ``session``, or anywhere when it
    is unknown) are recorded: a use is of something handed over. Returns rows added."""
    if kind not in USE_KINDS:
        raise ValueError(f"unknown use {kind!r}")
    when = time.time() if at is None else at
    ids = sorted({int(i) for i in observation_ids})
    if not ids:
        return 0
    given: set[int] = set()
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        if session:
            sql = (f"SELECT DISTINCT observation_id FROM injections WHERE observation_id IN ({marks}) "
                   "AND session = ? AND at <= ?")
            args: tuple[Any, ...] = (*chunk, session, when)
        else:
            sql = (f"SELECT DISTINCT observation_id FROM injections WHERE observation_id IN ({marks}) "
                   "AND at <= ? AND at >= ?")
            args = (*chunk, when, when - USE_WINDOW_S)
        given.update(int(r[0]) for r in conn.execute(sql, args))
    rows = [(when, session[:200], i, kind, detail[:300]) for i in ids if i in given]
    conn.executemany("INSERT INTO injection_uses (at, session, observation_id, kind, detail) VALUES (?, ?, ?, ?, ?)",
                     rows)
    return len(rows)


def prune(conn: sqlite3.Connection, older_than: float, max_rows: int = MAX_ROWS) -> int:
    """Drop handings and uses older than ``older_than``, then the oldest handings past ``max_rows``."""
    n = conn.execute("DELETE FROM injections WHERE at < ?", (older_than,)).rowcount
    n += conn.execute("DELETE FROM injection_uses WHERE at < ?", (older_than,)).rowcount
    over = int(conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0]) - max_rows
    if over > 0:
        cut = conn.execute("SELECT at FROM injections ORDER BY at LIMIT 1 OFFSET ?", (over - 1,)).fetchone()
        if cut is not None:
            n += conn.execute("DELETE FROM injections WHERE at <= ?", (cut[0],)).rowcount
            n += conn.execute("DELETE FROM injection_uses WHERE at <= ?", (cut[0],)).rowcount
    return n


def forget(conn: sqlite3.Connection, observation_ids: Sequence[int]) -> None:
    """A forgotten memory leaves no trace here (called in the forget's own transaction)."""
    for chunk in _chunks(sorted({int(i) for i in observation_ids})):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM injections WHERE observation_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM injection_uses WHERE observation_id IN ({marks})", chunk)


def scanned(conn: sqlite3.Connection) -> int:
    """The last captured event looked through for uses (0: none yet)."""
    row = conn.execute("SELECT event_id FROM injection_scan WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def set_scanned(conn: sqlite3.Connection, event_id: int) -> None:
    conn.execute("INSERT INTO injection_scan (id, event_id) VALUES (1, ?) ON CONFLICT (id) DO UPDATE "
                 "SET event_id = excluded.event_id", (event_id,))


def given_in(conn: sqlite3.Connection, session: str, before: float) -> set[int]:
    """The memories handed to ``session`` up to ``before``."""
    return {int(r[0]) for r in conn.execute(
        "SELECT DISTINCT observation_id FROM injections WHERE session = ? AND at <= ?", (session, before))}


# ------------------------------------------------------------------------------------------- reading

_USED = ("EXISTS (SELECT 1 FROM injection_uses u WHERE u.observation_id = i.observation_id AND u.at >= i.at "
         f"AND (u.session = i.session AND i.session != '' OR u.session = '' AND u.at <= i.at + {USE_WINDOW_S}))"
         )
_CONTRADICTED = ("(o.status IN ('superseded', 'retracted') AND COALESCE(o.superseded_at, 0) >= i.at)")


def for_session(conn: sqlite3.Connection, session: str) -> list[dict[str, Any]]:
    """What ``session`` was told, oldest first: each handing with its memory's title and what came of it."""
    rows = conn.execute(
        f"SELECT i.at, i.via, i.observation_id, i.reason, i.chars, i.agent, i.project, o.title, o.type, o.status, "
        f"{_USED} AS used, {_CONTRADICTED} AS contradicted FROM injections i "
        "LEFT JOIN observations o ON o.id = i.observation_id WHERE i.session = ? ORDER BY i.at, i.id",
        (session,)).fetchall()
    return [{"at": r[0], "via": r[1], "id": r[2], "reason": r[3], "chars": r[4], "agent": r[5], "project": r[6],
             "title": r[7] or "", "type": r[8] or "", "status": r[9] or "forgotten", "used": bool(r[10]),
             "contradicted": bool(r[11])} for r in rows]


def uses_in(conn: sqlite3.Connection, session: str) -> list[dict[str, Any]]:
    """The uses that count for ``session``'s handings: its own, and those with no session (an MCP fetch)
    of a memory it was given, within :data:`USE_WINDOW_S` after."""
    return [{"at": r[0], "id": r[1], "kind": r[2], "detail": r[3]} for r in conn.execute(
        "SELECT at, observation_id, kind, detail FROM injection_uses u WHERE u.session = ?1 OR (u.session = '' "
        "AND EXISTS (SELECT 1 FROM injections i WHERE i.session = ?1 AND i.observation_id = u.observation_id "
        f"AND u.at >= i.at AND u.at <= i.at + {USE_WINDOW_S})) ORDER BY at, id", (session,))]


def for_memory(conn: sqlite3.Connection, oid: int, limit: int = 50) -> dict[str, Any]:
    """``oid``'s handings (newest first, at most ``limit``) and uses: "given N times, used M times"."""
    given = int(conn.execute("SELECT COUNT(*) FROM injections WHERE observation_id = ?", (oid,)).fetchone()[0])
    used = int(conn.execute(f"SELECT COUNT(*) FROM injections i WHERE i.observation_id = ? AND {_USED}",
                            (oid,)).fetchone()[0])
    recent = [{"at": r[0], "via": r[1], "session": r[2], "agent": r[3], "reason": r[4], "chars": r[5]}
              for r in conn.execute("SELECT at, via, session, agent, reason, chars FROM injections "
                                    "WHERE observation_id = ? ORDER BY at DESC, id DESC LIMIT ?", (oid, limit))]
    uses = [{"at": r[0], "session": r[1], "kind": r[2], "detail": r[3]}
            for r in conn.execute("SELECT at, session, kind, detail FROM injection_uses WHERE observation_id = ? "
                                  "ORDER BY at DESC, id DESC LIMIT ?", (oid, limit))]
    # The sessions' own row ids, so a surface can open the session that received it (its ledger).
    named = sorted({r["session"] for r in recent if r["session"]})
    rows = dict(conn.execute(f"SELECT agent_session_id, MIN(id) FROM sessions WHERE agent_session_id IN "
                             f"({','.join('?' * len(named))}) GROUP BY agent_session_id", named).fetchall()) \
        if named else {}
    for r in recent:
        r["session_id"] = rows.get(r["session"])
    return {"given": given, "used": used, "last_given": recent[0]["at"] if recent else None,
            "last_used": uses[0]["at"] if uses else None, "injections": recent, "uses": uses}


def health(conn: sqlite3.Connection, *, since: float | None = None, until: float | None = None,
           project: str | None = None) -> dict[str, Any]:
    """Handings in a time range: how many, how many were used (the hit rate), the share of injected
    characters that were used, how many were contradicted, and per path."""
    where = ["1 = 1"]
    args: list[Any] = []
    if since is not None:
        where.append("i.at >= ?")
        args.append(since)
    if until is not None:
        where.append("i.at < ?")
        args.append(until)
    if project is not None:
        where.append("i.project = ?")
        args.append(project)
    cond = " AND ".join(where)
    rows = conn.execute(
        f"SELECT i.via, COUNT(*), SUM({_USED}), SUM(i.chars), SUM(CASE WHEN {_USED} THEN i.chars ELSE 0 END), "
        f"SUM({_CONTRADICTED}), COUNT(DISTINCT i.session) FROM injections i "
        f"LEFT JOIN observations o ON o.id = i.observation_id WHERE {cond} GROUP BY i.via", args).fetchall()
    by_via = {str(r[0]): {"given": int(r[1]), "used": int(r[2] or 0), "chars": int(r[3] or 0),
                          "used_chars": int(r[4] or 0), "contradicted": int(r[5] or 0)} for r in rows}
    given = sum(v["given"] for v in by_via.values())
    used = sum(v["used"] for v in by_via.values())
    chars = sum(v["chars"] for v in by_via.values())
    used_chars = sum(v["used_chars"] for v in by_via.values())
    sessions = int(conn.execute(f"SELECT COUNT(DISTINCT i.session) FROM injections i WHERE {cond} "
                                "AND i.session != ''", args).fetchone()[0])
    return {"given": given, "used": used, "hit_rate": round(used / given, 4) if given else None,
            "tokens": (chars + 3) // 4, "used_tokens": (used_chars + 3) // 4,
            "used_token_share": round(used_chars / chars, 4) if chars else None,
            "contradicted": sum(v["contradicted"] for v in by_via.values()), "sessions": sessions,
            "by_via": by_via}


def empty_health() -> dict[str, Any]:
    return {"given": 0, "used": 0, "hit_rate": None, "tokens": 0, "used_tokens": 0, "used_token_share": None,
            "contradicted": 0, "sessions": 0, "by_via": {}}


def never_used(conn: sqlite3.Connection, *, older_than: float, project: str | None = None,
               limit: int = 50) -> list[dict[str, Any]]:
    """Active memories recorded before ``older_than`` with no use on record (given or not): proposed for
    review, never deleted here."""
    args: list[Any] = [older_than]
    extra = ""
    if project is not None:
        extra = " AND o.project = ?"
        args.append(project)
    args.append(limit)
    rows = conn.execute(
        "SELECT o.id, o.type, o.title, o.layer, o.created_at, o.project, "
        "(SELECT COUNT(*) FROM injections i WHERE i.observation_id = o.id) FROM observations o "
        "WHERE o.status = 'active' AND o.duplicate_of IS NULL AND o.created_at < ? "
        "AND NOT EXISTS (SELECT 1 FROM injection_uses u WHERE u.observation_id = o.id)"
        f"{extra} ORDER BY o.created_at LIMIT ?", args).fetchall()
    return [{"id": r[0], "type": r[1], "title": r[2], "layer": r[3], "created_at": r[4], "project": r[5],
             "given": int(r[6])} for r in rows]


def never_used_count(conn: sqlite3.Connection, *, older_than: float, project: str | None = None) -> int:
    args: list[Any] = [older_than]
    extra = ""
    if project is not None:
        extra = " AND o.project = ?"
        args.append(project)
    return int(conn.execute(
        "SELECT COUNT(*) FROM observations o WHERE o.status = 'active' AND o.duplicate_of IS NULL "
        "AND o.created_at < ? AND NOT EXISTS (SELECT 1 FROM injection_uses u WHERE u.observation_id = o.id)"
        f"{extra}", args).fetchone()[0])


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i:i + CHUNK]
