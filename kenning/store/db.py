"""Connections and numbered migrations.

Migrations are the ``NNNN_name.sql`` files beside this module, applied in order, each in
its own transaction together with its row in ``schema_migrations``; a fresh database and
an upgraded one end identical. A ``NNNN_name.py`` migration defines ``upgrade(conn)`` for what
SQL alone cannot compute (classifying existing rows); it runs the same way. Connections use
WAL, ``synchronous=NORMAL`` and a busy timeout so the hook's readers, the CLI and the worker's
writer never trip over each other.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kenning.store import switch
from kenning.store.health import open_readonly
from kenning.store.identity import ForeignDatabase, check, not_a_database, verify

BUSY_TIMEOUT_MS = 10_000


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the database (created 0600 when missing) with Kenning's pragmas.

    A file that is not Kenning's raises :class:`~kenning.store.identity.ForeignDatabase`
    before SQLite has opened it, so it is never switched to WAL nor migrated. In the worker, no
    connection opens while its writer switches to another file at ``path`` (kenning/store/switch.py).
    """
    switch.check(path)
    if readonly:
        try:
            conn = open_readonly(path, timeout=BUSY_TIMEOUT_MS / 1000)  # a read-only data dir too
        except sqlite3.DatabaseError as e:
            if not_a_database(e):
                raise ForeignDatabase(path, "not an SQLite file") from None
            raise
        try:
            verify(conn, path)
        except BaseException:
            conn.close()
            raise
    else:
        check(path)
        if not os.path.exists(path):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        _set_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _set_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retrying: when several connections switch a new file at once, SQLite
    can answer "database is locked" at once instead of waiting on the busy handler."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def readonly_uri_path(path: str) -> str:
    """Escape a file path for a ``file:`` URI (``?``, ``#`` and ``%`` are syntax there)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def migration_files() -> list[tuple[int, str, str]]:
    """(version, name, source) of every bundled migration (SQL, or Python for ``.py``), in order."""
    # Files beside the package, read directly (importlib.resources pulls in pathlib, tempfile and
    # urllib: ~7 ms for the MCP server, which checks the schema with this).
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
    out = []
    for name in os.listdir(folder):
        if not name.endswith((".sql", ".py")) or not name[:1].isdigit():
            continue
        version = int(name.split("_", 1)[0])
        stem = name.rsplit(".", 1)[0] + ("" if name.endswith(".sql") else ".py")
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            out.append((version, stem, fh.read()))
    out.sort()
    return out


def current_version(conn: sqlite3.Connection) -> int:
    try:
        row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, *, target: int | None = None) -> list[int]:
    """Apply pending migrations (up to ``target``); returns the versions applied.

    Safe when several processes start at once: each migration runs under BEGIN IMMEDIATE
    and re-checks inside the transaction that it is still missing. Migrations are applied by
    membership, not by "above the highest": one numbered below an applied one (branches
    landing out of order) is still applied.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)")
    applied: list[int] = []
    for version, name, sql in migration_files():
        if target is not None and version > target:
            break
        if _is_applied(conn, version):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _is_applied(conn, version):
                conn.execute("ROLLBACK")
                continue
            if name.endswith(".py"):
                _run_python(conn, name, sql)
            else:
                for statement in _statements(sql):
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                         (version, name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def _run_python(conn: sqlite3.Connection, name: str, source: str) -> None:
    """Run a Python migration's ``upgrade(conn)`` (inside the migration's transaction)."""
    namespace: dict[str, object] = {"__name__": f"kenning.store.migrations.m{name}"}
    exec(compile(source, name, "exec"), namespace)  # our own bundled file, never user input
    upgrade = namespace.get("upgrade")
    if not callable(upgrade):
        raise RuntimeError(f"migration {name} defines no upgrade(conn)")
    upgrade(conn)


def _is_applied(conn: sqlite3.Connection, version: int) -> bool:
    return conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone() is not None


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (``sqlite3.complete_statement`` knows about triggers)."""
    out: list[str] = []
    buf = ""
    for line in sql.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def open_db(path: str) -> sqlite3.Connection:
    """Connect and bring the schema up to date."""
    conn = connect(path)
    migrate(conn)
    return conn


READ_MMAP_BYTES = 64 * 1024 * 1024


class ReadPool:
    """Read-only connections to one database, kept open between requests (the worker's).

    Opening one per request costs the open, the schema parse and a cold statement cache
    (~0.5-4 ms, a third of an HTTP search at 10k rows); a kept connection also keeps its
    prepared statements (sqlite3's per-connection cache). In WAL mode each statement still
    sees the latest commit. A connection goes back only after a request that raised nothing,
    with any progress handler (a deadline) removed; all are dropped when the file at ``path``
    is no longer the one they opened (replaced or deleted), so nothing reads a stale file.
    """

    def __init__(self, path: str, size: int = 4) -> None:
        import threading

        self.path = path
        self.size = size
        self._idle: list[tuple[sqlite3.Connection, tuple[int, int] | None]] = []  # with the file each reads
        self._out: dict[int, tuple[int, int] | None] = {}  # id of a connection in use -> its file
        self._lock = threading.Lock()
        switch.register(path, self)

    def _identity(self) -> tuple[int, int] | None:
        return switch.file_id(self.path)

    def take(self) -> sqlite3.Connection:
        ident = self._identity()
        with self._lock:
            stale = [c for c, f in self._idle if f != ident]
            self._idle = [(c, f) for c, f in self._idle if f == ident]
            got = self._idle.pop() if self._idle else None
        for c in stale:
            c.close()
        if got is not None:
            conn, ident = got
        else:
            conn = connect(self.path, readonly=True)  # refused while the worker's writer switches files
            ident = self._identity()
            # No larger page cache here (PRAGMA cache_size): with it, a file restored from a copy
            # while the worker ran stayed locked against the writer's switch to WAL
            # (tests/security/test_fault_matrix.py), which the memory map below does not do.
            # The file's first 64 MiB read through a memory map: a page the OS has cached costs
            # no read() and no copy (another 5-10% of a search). Its pages are the OS page cache's,
            # shared by every connection (they count as the worker's RSS only while mapped).
            conn.execute(f"PRAGMA mmap_size = {READ_MMAP_BYTES}").fetchall()  # stepped to its end
        with self._lock:
            self._out[id(conn)] = ident
        return conn

    def take_idle(self) -> sqlite3.Connection | None:
        """An idle connection to the file now at ``path``, or None: never opens one (an open can
        wait on the file's locks) and leaves stale ones for :meth:`take` to close."""
        ident = self._identity()
        if ident is None or not switch.openable(self.path):
            return None
        with self._lock:
            for i, (c, f) in enumerate(self._idle):
                if f == ident:
                    del self._idle[i]
                    self._out[id(c)] = f
                    return c
        return None

    def give(self, conn: sqlite3.Connection, reusable: bool = True) -> None:
        with self._lock:
            ident = self._out.pop(id(conn), None)
        if reusable and not conn.in_transaction and ident is not None:
            conn.set_progress_handler(None, 0)
            # Kept only while it reads the file at the path, and no switch is under way.
            if ident == self._identity() and switch.openable(self.path):
                with self._lock:
                    if len(self._idle) < self.size:
                        self._idle.append((conn, ident))
                        return
        conn.close()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        conn = self.take()
        ok = False
        try:
            yield conn
            ok = True
        finally:
            self.give(conn, ok)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c, _f in idle:
            c.close()

    def release(self) -> None:
        """The writer switches files: the idle connections close now, those in use when given back."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._out = dict.fromkeys(self._out)
        for c, _f in idle:
            c.close()
