"""The operation log (``memory_log``): what changed in memory, when, and through which surface.

Only :mod:`kenning.memory_service` writes it, inside the transaction of the change it records. A row
names observations by id and never copies their text: forgetting a memory leaves none of its words
here. Rows older than :data:`RETENTION_S` are pruned with the other ledgers.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable

RETENTION_S = 90 * 24 * 3600
SURFACES = ("observer", "import", "cli", "http", "viewer", "mcp", "demo", "team")


def record(conn: sqlite3.Connection, *, surface: str, op: str, ids: Iterable[int] = (), project: str = "",
           at: float | None = None) -> None:
    if surface not in SURFACES:
        raise ValueError(f"unknown surface {surface!r}")
    conn.execute("INSERT INTO memory_log (at, surface, op, project, ids) VALUES (?, ?, ?, ?, ?)",
                 (time.time() if at is None else at, surface, op, project,
                  json.dumps(sorted({int(i) for i in ids}))))


def recent(conn: sqlite3.Connection, limit: int = 100) -> list[dict[str, object]]:
    """The newest operations, newest first."""
    return [{"at": r[0], "surface": r[1], "op": r[2], "project": r[3], "ids": json.loads(r[4])}
            for r in conn.execute("SELECT at, surface, op, project, ids FROM memory_log "
                                  "ORDER BY at DESC, id DESC LIMIT ?", (limit,))]


def prune(conn: sqlite3.Connection, older_than: float) -> int:
    return conn.execute("DELETE FROM memory_log WHERE at < ?", (older_than,)).rowcount
