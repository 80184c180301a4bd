"""The database file replaced while the worker runs, with the worker's own readers in the way.

The old file's ``-wal`` keeps the path's ``-wal`` name until the last connection to the old file
closes. The writer's switch must not leave it there because one of the worker's readers held the
old file (the writer would wait for it for good), nor let a reader open the new file while it is
there (that reader would read the old log as the new file's).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from kenning.observer.providers.rules import RulesObserver
from kenning.paths import Paths
from kenning.store import switch
from kenning.store.db import ReadPool, connect, open_db
from kenning.worker.pipeline import Pipeline, _Waiting


def rows(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT title FROM t ORDER BY title")]


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths(str(tmp_path / "data"))


def test_a_read_under_way_holds_the_switch_back_and_then_the_new_file_opens_clean(paths: Paths) -> None:
    os.makedirs(paths.root, exist_ok=True)
    conn = open_db(paths.db)
    conn.execute("CREATE TABLE t (title TEXT)")
    conn.execute("INSERT INTO t VALUES ('kept in the copy')")
    restored = paths.db + ".copy"
    conn.execute("VACUUM INTO ?", (restored,))  # what the user restores later
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # the later rows stay in the old file's -wal
    for i in range(50):
        conn.execute("INSERT INTO t VALUES (?)", (f"only in the old file {i}",))
    pipe = Pipeline(paths, conn, RulesObserver())
    try:
        pool = ReadPool(paths.db)
        reading = pool.take()
        reading.execute("BEGIN")
        assert len(rows(reading)) == 51  # a read under way: a snapshot of the old file
        with pool.connection():
            pass  # and one idle connection kept by the pool
        os.replace(restored, paths.db)

        with pytest.raises(_Waiting):  # the read holds the old log: closing now would leave it behind
            pipe.check_file()
        with pytest.raises(switch.Switching):  # and nothing opens the new file meanwhile
            pool.take()
        with pytest.raises(switch.Switching):  # a request's own connection, a team round's neither
            connect(paths.db)
        assert os.path.getsize(paths.db + "-wal") > 0

        reading.execute("COMMIT")
        pool.give(reading)  # given back during the switch: closed, not kept
        assert pipe.check_file() is False  # switched: the new file is open
        assert rows(pipe.conn) == ["kept in the copy"]  # nothing of the old log read into it
        assert pipe.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        with pool.connection() as again:
            assert rows(again) == ["kept in the copy"]
        assert pipe.check_file() is True
    finally:
        pipe.close()
        pipe.conn.close()


def test_a_kept_connection_is_given_up_when_the_writer_switches_and_opens_the_new_file_after(paths: Paths) -> None:
    os.makedirs(paths.root, exist_ok=True)
    conn = open_db(paths.db)
    conn.execute("CREATE TABLE t (title TEXT)")
    conn.execute("INSERT INTO t VALUES ('old')")
    pipe = Pipeline(paths, conn, RulesObserver())
    try:
        kept = switch.Kept(paths.db)
        with kept.lock:
            first = kept.get()
            assert rows(first) == ["old"]
        os.unlink(paths.db)
        for suffix in ("-wal", "-shm"):
            os.unlink(paths.db + suffix)
        switch.switching(paths.db)  # what the pipeline does first when it sees the file gone
        with pytest.raises(sqlite3.ProgrammingError):
            first.execute("SELECT 1")  # closed: the old file is not held by it any more
        with pytest.raises(switch.Switching), kept.lock:
            kept.get()
        assert pipe.check_file() is False  # a new file at the path
        pipe.conn.execute("CREATE TABLE t (title TEXT)")
        pipe.conn.execute("INSERT INTO t VALUES ('new')")
        with kept.lock:
            assert rows(kept.get()) == ["new"]
            assert kept.opened == 2
    finally:
        pipe.close()
        pipe.conn.close()


def test_a_process_with_no_writer_opens_whatever_is_at_the_path(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    assert switch.openable(db)
    switch.hold(db, None)
    assert not switch.openable(db)
    switch.forget(db)
    assert switch.openable(db)
