"""A memory's fields changed by hand (the viewer's edit; the caller checked the values)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from kenning.store import memory_index

TEXT = ("title", "subtitle", "type", "status", "narrative")
LISTS = ("facts", "concepts", "files_read", "files_modified")
EDITABLE = (*TEXT, *LISTS, "importance")
# What the memory index derives layer, importance, signature and subjects from: re-derived after an edit.
DERIVED_FROM = ("title", "subtitle", "type", "facts", "concepts")


class NotFound(LookupError):
    pass


def apply(conn: sqlite3.Connection, oid: int, changes: dict[str, Any]) -> bool:
    """Apply ``changes`` to observation ``oid`` (call inside a transaction; FTS, vectors, the file and concept
    indexes follow by trigger; layer, importance and subjects are derived again, a hand-set importance kept).
    False when nothing was left to change. A superseded memory stays superseded: a newer one exists."""
    if any(k not in EDITABLE for k in changes):
        raise ValueError(f"only {', '.join(EDITABLE)} can be edited")
    row = conn.execute("SELECT status FROM observations WHERE id = ?", (oid,)).fetchone()
    if row is None:
        raise NotFound(f"no observation {oid}")
    if changes.get("status") == "active" and row[0] == "superseded":
        changes = {k: v for k, v in changes.items() if k != "status"}
    if not changes:
        return False
    cols: dict[str, Any] = {}
    for k, v in changes.items():
        if k in LISTS:
            cols[k] = json.dumps(list(v), ensure_ascii=False)
        elif k == "importance":  # by hand: kept over index rebuilds; None gives it back to the index
            cols["user_importance"] = v
            if v is not None:
                cols["importance"] = v
        else:
            cols[k] = v
    current = conn.execute(f"SELECT {', '.join(cols)} FROM observations WHERE id = ?", (oid,)).fetchone()
    cols = {k: v for (k, v), now in zip(cols.items(), current, strict=True) if v != now}
    if not cols:
        return False
    sets = ", ".join(f"{k} = ?" for k in cols)
    conn.execute(f"UPDATE observations SET {sets} WHERE id = ?", [*cols.values(), oid])
    if any(k in cols for k in DERIVED_FROM) or "user_importance" in cols:
        memory_index.reclassify(conn, [oid])
    return True
