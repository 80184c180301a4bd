"""Fill the memory index (migration 0009's columns) for the observations stored before it existed."""

from __future__ import annotations

import sqlite3


def upgrade(conn: sqlite3.Connection) -> None:
    from kenning.store.memory_index import rebuild

    rebuild(conn)
