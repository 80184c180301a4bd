"""A memory's title, type or status changed by hand (the viewer's edit; the caller checked the values)."""

from __future__ import annotations

import sqlite3

EDITABLE = ("title", "type", "status")


class NotFound(LookupError):
    pass


def apply(conn: sqlite3.Connection, oid: int, changes: dict[str, str]) -> bool:
    """Apply ``changes`` to observation ``oid`` (call inside a transaction; FTS and the file index follow by
    trigger); False when nothing was left to change. A superseded memory stays superseded: a newer one exists."""
    if any(k not in EDITABLE for k in changes):
        raise ValueError(f"only {', '.join(EDITABLE)} can be edited")
    row = conn.execute("SELECT status FROM observations WHERE id = ?", (oid,)).fetchone()
    if row is None:
        raise NotFound(f"no observation {oid}")
    if changes.get("status") == "active" and row[0] == "superseded":
        changes = {k: v for k, v in changes.items() if k != "status"}
    if not changes:
        return False
    sets = ", ".join(f"{k} = ?" for k in changes)
    conn.execute(f"UPDATE observations SET {sets} WHERE id = ?", [*changes.values(), oid])
    return True
