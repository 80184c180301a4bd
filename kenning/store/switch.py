"""The worker's connections when the database file is deleted or replaced while it runs.

The old file's ``-wal`` and ``-shm`` stay at ``<path>-wal`` and ``<path>-shm`` until the last
connection to the old file closes. A connection opened to the new file meanwhile reads that log as
its own, and two connections of one process on different files sharing those names undo each
other's locks: either can corrupt the new file. So, in a process whose writer follows the path
(the worker's pipeline):

* the writer says which file it holds (:func:`hold`), and None while it switches (:func:`switching`);
* a connection is opened only to the file the writer holds (:func:`openable`; ``connect`` checks it);
* everything that keeps a connection (the read pool, the embedder, the evidence recorder) registers
  and gives it up when :func:`switching` asks, before the writer closes its own, so the old
  file's log goes away with the last connection to it.

A process with no writer (the CLI, a hook) is not concerned: :func:`openable` is then always true.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from typing import Protocol

_lock = threading.Lock()
_held: dict[str, tuple[int, int] | None] = {}
_keepers: dict[str, weakref.WeakSet[Keeper]] = {}


class Keeper(Protocol):
    def release(self) -> None: ...


class Switching(sqlite3.OperationalError):
    """The database file at the path is being switched: try again in a moment."""


def file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _key(path: str) -> str:
    return os.path.abspath(path)


def hold(path: str, ident: tuple[int, int] | None) -> None:
    """The writer now holds the file ``ident`` at ``path``."""
    with _lock:
        _held[_key(path)] = ident


def forget(path: str) -> None:
    """The writer of ``path`` is gone (the pipeline closed)."""
    with _lock:
        _held.pop(_key(path), None)


def register(path: str, keeper: Keeper) -> None:
    with _lock:
        _keepers.setdefault(_key(path), weakref.WeakSet()).add(keeper)


def switching(path: str) -> None:
    """The writer leaves the file it held: no new connection opens, and every keeper lets go."""
    key = _key(path)
    with _lock:
        _held[key] = None
        keepers = list(_keepers.get(key, ()))
    for k in keepers:
        k.release()


def openable(path: str) -> bool:
    """May a connection to the file now at ``path`` be opened (see the module's note)?"""
    key = _key(path)
    with _lock:
        if key not in _held:
            return True
        held = _held[key]
    return held is not None and held == file_id(path)


def check(path: str) -> None:
    """Raise :class:`Switching` unless :func:`openable`."""
    if not openable(path):
        raise Switching(f"the database file {path} is being switched: try again in a moment")


class Kept:
    """One connection kept by a long-lived part of the worker, given up when the writer switches.

    Use it under :attr:`lock`: ``with kept.lock: conn = kept.get()``; :meth:`release` takes the
    same lock, so a connection is never closed while it is in use.
    """

    def __init__(self, path: str, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None
        self.opened = 0  # connections opened so far: a new one may be to another file
        register(path, self)

    def get(self) -> sqlite3.Connection:
        """The connection (opened when needed); raises :class:`Switching` meanwhile."""
        from kenning.store.db import connect

        if self._conn is not None and self._file != file_id(self.path):
            self.release()  # replaced with no writer in this process to say so
        if self._conn is None:
            self._conn = connect(self.path, readonly=self.readonly)  # refused (Switching) meanwhile
            self._file = file_id(self.path)
            self.opened += 1
        return self._conn

    def release(self) -> None:
        with self.lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
            self._conn = None
            self._file = None
