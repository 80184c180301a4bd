"""The worker's pool of read connections: reused, never stale, never carrying a deadline over."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from kenning.store.db import ReadPool, open_db


def make(path: Path, rows: int) -> None:
    conn = open_db(str(path))
    conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(rows)])
    conn.close()


def count(pool: ReadPool) -> int:
    with pool.connection() as conn:
        return int(conn.execute("SELECT COUNT(*) FROM t").fetchone()[0])


def test_a_connection_is_reused_and_sees_every_new_commit(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    make(db, 3)
    pool = ReadPool(str(db))
    with pool.connection() as first:
        pass
    with pool.connection() as second:
        assert second is first
        # the file read through a memory map (its first 64 MiB)
        assert second.execute("PRAGMA mmap_size").fetchone()[0] == 64 * 1024 * 1024
    make(db, 2)  # another connection commits: the kept one reads it (WAL, autocommit)
    assert count(pool) == 5
    with pytest.raises(sqlite3.OperationalError), pool.connection() as conn:
        conn.execute("INSERT INTO t VALUES (1)")  # read-only
    with pool.connection() as after_error:
        assert after_error is not first  # a connection that raised is not handed out again


def test_a_replaced_or_deleted_file_is_never_read_through_an_old_connection(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    make(db, 3)
    pool = ReadPool(str(db))
    assert count(pool) == 3
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{db}{suffix}"):
            os.unlink(f"{db}{suffix}")
    make(db, 7)  # a new file at the same path (restore, repair, another install)
    assert count(pool) == 7
    os.unlink(db)
    with pytest.raises(sqlite3.OperationalError):
        count(pool)


def test_a_deadline_set_by_one_request_does_not_interrupt_the_next(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    make(db, 3)
    pool = ReadPool(str(db))
    with pool.connection() as conn:
        deadline = time.monotonic() - 1  # already past, as file_history sets it
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 1)
    assert count(pool) == 3


def test_threads_each_get_their_own_connection(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    make(db, 3)
    pool = ReadPool(str(db), size=2)
    held: list[sqlite3.Connection] = []
    barrier = threading.Barrier(3)

    def work() -> None:
        with pool.connection() as conn:
            held.append(conn)
            barrier.wait(timeout=10)
            assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 3

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in held}) == 3
    assert len(pool._idle) == 2  # at most `size` are kept
    pool.close()
    assert pool._idle == []
