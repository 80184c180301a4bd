"""Is the file at the data path Kenning's? Checked before anything may write it.

Opening a database with our pragmas (WAL) or migrating it changes the file, so the check runs on a
read-only connection first (``mode=ro``: SQLite never writes the file through it, nor rolls back
another program's journal). It reads ``PRAGMA application_id`` (the 4 bytes at offset 68 of the
header, or their newer copy in the WAL), which the first migration sets to :data:`APPLICATION_ID`.
A file carrying another id is refused. An id of 0 is a database of this project made before the
id existed (it has our ``schema_migrations`` table), an empty database, or someone else's: only
the last is refused. Refused files are left byte for byte as they were.

The header is read through SQLite, never with ``open()``: closing any descriptor of a database
file drops every POSIX lock this process holds on it, including those of live SQLite connections.

Standard library only, and only the C module ``_sqlite3`` (the hooks' fallback paths use this).
"""

from __future__ import annotations

import _sqlite3
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

APPLICATION_ID = 0x4B4E4E47  # "KNNG"
FIRST_MIGRATION = (1, "0001_initial")


class ForeignDatabase(_sqlite3.DatabaseError):
    """The file at the database path belongs to something else; it was not touched."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} is not a Kenning database ({reason}): Kenning will not open it and left it "
                         "untouched. Move it away, or set KENNING_DATA_DIR to another directory.")


def readonly_uri(path: str) -> str:
    """A ``file:`` URI opening ``path`` read-only (``?``, ``#`` and ``%`` are URI syntax)."""
    return "file:" + path.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"


def check(path: str) -> None:
    """Raise :class:`ForeignDatabase` unless ``path`` is missing, empty, or a Kenning database."""
    if os.path.isdir(path):
        raise ForeignDatabase(path, "a directory")
    if not os.path.exists(path):
        return  # created and marked on first open
    try:
        _verify_at(readonly_uri(path), path)
    except _sqlite3.OperationalError as e:
        # A WAL database in a folder we may not write: SQLite cannot make its -shm, so read the file
        # as it is on disk (as kenning/store/health.py does for readers).
        if "unable to open" not in str(e) or os.access(os.path.dirname(path) or ".", os.W_OK):
            raise
        _verify_at(readonly_uri(path) + "&immutable=1", path)


def _verify_at(uri: str, path: str) -> None:
    conn = _sqlite3.connect(uri, uri=True, timeout=10.0)
    try:
        verify(conn, path)
    finally:
        conn.close()


def verify(conn: Any, path: str) -> None:
    """:func:`check` on a connection already open (read-only) on ``path``."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id == APPLICATION_ID:
            return
        if app_id:
            raise ForeignDatabase(path, f"SQLite application_id {app_id:#010x}, Kenning's is {APPLICATION_ID:#010x}")
        tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        if not tables or _ours_before_the_id(conn, tables):
            return
    except _sqlite3.DatabaseError as e:
        if isinstance(e, ForeignDatabase) or not not_a_database(e):
            raise
        raise ForeignDatabase(path, "not an SQLite file") from None
    shown = ", ".join(tables[:6]) + (", …" if len(tables) > 6 else "")
    raise ForeignDatabase(path, f"it holds tables that are not Kenning's: {shown}")


def not_a_database(e: Exception) -> bool:
    """SQLite's answer for a file that is not an SQLite database."""
    return getattr(e, "sqlite_errorname", "") == "SQLITE_NOTADB" or "not a database" in str(e)


def _ours_before_the_id(conn: Any, tables: list[str]) -> bool:
    """Our ``schema_migrations`` (same columns, our first migration recorded, or nothing yet
    when it is the only table: a first migrate that stopped before its first migration)."""
    if "schema_migrations" not in tables:
        return False
    cols = [r[1] for r in conn.execute("PRAGMA table_info(schema_migrations)")]
    if cols != ["version", "name", "applied_at"]:
        return False
    first = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version LIMIT 1").fetchone()
    if first is None:
        return tables == ["schema_migrations"]
    return tuple(first) == FIRST_MIGRATION
