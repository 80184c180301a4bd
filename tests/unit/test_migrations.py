"""Schema migrations, connection pragmas and the FTS5 triggers, on real SQLite files."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kenning.store.db import BUSY_TIMEOUT_MS, connect, current_version, migrate, migration_files, open_db
from kenning.store.identity import APPLICATION_ID

SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"


def schema(conn: sqlite3.Connection) -> list[tuple]:
    return [tuple(r) for r in conn.execute(SCHEMA_SQL)]


def all_versions() -> list[int]:
    return [v for v, _name, _sql in migration_files()]


def test_migration_files_are_numbered_uniquely_from_one() -> None:
    versions = all_versions()
    assert versions[0] == 1
    assert versions == sorted(set(versions))
    assert len(versions) >= 2  # the upgrade test below needs something to upgrade to


def test_fresh_db_records_every_migration(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "e.db"))
    rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    assert [(r[0], r[1]) for r in rows] == [(v, n) for v, n, _ in migration_files()]
    assert all(abs(r[2] - time.time()) < 60 for r in rows)
    assert current_version(conn) == all_versions()[-1]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "events", "user_prompts", "observations", "session_summaries", "observer_usage",
            "observations_fts", "session_summaries_fts", "user_prompts_fts"} <= tables


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    conn = connect(str(tmp_path / "e.db"))
    assert migrate(conn) == all_versions()
    before = schema(conn)
    assert migrate(conn) == []
    assert migrate(conn) == []
    assert schema(conn) == before
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(all_versions())


def fill_v1(conn: sqlite3.Connection) -> None:
    """Rows in every table of the first schema."""
    conn.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (1, 's-1', 'shop', 1.0)")
    conn.execute("INSERT INTO events (session_id, event_key, kind, occurred_at, payload) "
                 "VALUES (1, 'k1', 'tool', 2.0, '{}')")
    conn.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                 "VALUES (1, 1, 'fix the invoice rounding', 3.0)")
    conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, created_at, recorded_at, "
                 "content_hash) VALUES (1, 'shop', 'bugfix', 'Invoice rounding fixed', 'banker rounding', 4.0, 4.0, "
                 "'h1')")
    conn.execute("INSERT INTO session_summaries (session_id, project, request, learned, created_at, recorded_at) "
                 "VALUES (1, 'shop', 'fix rounding', 'decimals everywhere', 5.0, 5.0)")


def test_db_upgraded_from_v1_matches_fresh_db_and_keeps_rows(tmp_path: Path) -> None:
    old = connect(str(tmp_path / "old.db"))
    assert migrate(old, target=1) == [1]
    assert current_version(old) == 1
    assert "observations_project_time" in {r[1] for r in schema(old)}
    assert "observer_usage" not in {r[1] for r in schema(old)}
    fill_v1(old)
    old.close()

    upgraded = connect(str(tmp_path / "old.db"))
    assert migrate(upgraded) == all_versions()[1:]
    fresh = open_db(str(tmp_path / "fresh.db"))
    assert schema(upgraded) == schema(fresh)
    assert [tuple(r) for r in upgraded.execute("SELECT version, name FROM schema_migrations ORDER BY version")] == \
        [tuple(r) for r in fresh.execute("SELECT version, name FROM schema_migrations ORDER BY version")]

    # The rows survived, and the FTS index still finds the old ones.
    assert upgraded.execute("SELECT agent_session_id FROM sessions").fetchone()[0] == "s-1"
    assert upgraded.execute("SELECT event_key FROM events").fetchone()[0] == "k1"
    assert upgraded.execute("SELECT title FROM observations").fetchone()[0] == "Invoice rounding fixed"
    assert upgraded.execute("SELECT learned FROM session_summaries").fetchone()[0] == "decimals everywhere"
    assert upgraded.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'rounding'").fetchall()
    assert upgraded.execute("SELECT rowid FROM user_prompts_fts WHERE user_prompts_fts MATCH 'invoice'").fetchall()
    assert upgraded.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def migrate_in_thread(path: str, barrier: threading.Barrier, out: list[object]) -> None:
    try:
        barrier.wait()
        conn = connect(path)
        out.append(migrate(conn))
        conn.close()
    except BaseException as e:
        out.append(e)


def test_threads_migrating_at_once_do_not_fail(tmp_path: Path) -> None:
    path = str(tmp_path / "e.db")
    barrier = threading.Barrier(4)
    out: list[object] = []
    threads = [threading.Thread(target=migrate_in_thread, args=(path, barrier, out)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not [o for o in out if isinstance(o, BaseException)], out
    applied = sorted(v for o in out for v in o)  # type: ignore[union-attr]
    assert applied == all_versions()  # each migration applied exactly once overall
    conn = connect(path)
    assert schema(conn) == schema(open_db(str(tmp_path / "fresh.db")))


MIGRATE_AT_SIGNAL = (
    "import os, sys, time\n"
    "from kenning.store.db import connect, migrate\n"
    "open(sys.argv[3], 'w').close()\n"
    "while not os.path.exists(sys.argv[2]): time.sleep(0.001)\n"
    "print(','.join(map(str, migrate(connect(sys.argv[1])))))\n"
)


@pytest.mark.parametrize("round_", range(3))  # the race is timing-dependent: try it a few times
def test_processes_migrating_at_once_do_not_fail(tmp_path: Path, round_: int) -> None:
    path = str(tmp_path / "e.db")
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", MIGRATE_AT_SIGNAL, path, str(go), str(tmp_path / f"ready{i}")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"ready{i}").exists() for i in range(3)) and time.monotonic() < deadline:
        time.sleep(0.005)
    go.touch()  # all three open the fresh file and migrate at the same moment
    applied: list[int] = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=60)
        assert p.returncode == 0, stderr
        applied += [int(v) for v in stdout.strip().split(",") if v]
    assert sorted(applied) == all_versions()
    assert schema(connect(path)) == schema(open_db(str(tmp_path / "fresh.db")))


def test_connect_waits_for_a_writer_while_switching_a_new_file_to_wal(tmp_path: Path) -> None:
    # What loses the race above, made deterministic: another connection is writing to the
    # still rollback-journal file. SQLite then reports "locked" for the switch to WAL without
    # calling the busy handler, so connect must wait for the writer itself.
    path = str(tmp_path / "e.db")
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # a Kenning file (connect refuses others)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    release = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    release.start()
    try:
        started = time.monotonic()
        conn = connect(path)
        assert time.monotonic() - started >= 0.2  # it waited for the writer, then switched
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert [tuple(r) for r in conn.execute("SELECT x FROM t")] == [(1,)]
    finally:
        release.join()


def test_connect_sets_wal_busy_timeout_and_private_file(tmp_path: Path) -> None:
    path = str(tmp_path / "e.db")
    conn = connect(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert BUSY_TIMEOUT_MS >= 1000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    # WAL is a property of the file: a second plain connection sees it too.
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_readonly_connect_has_busy_timeout_and_cannot_write(tmp_path: Path) -> None:
    path = str(tmp_path / "e.db")
    open_db(path).close()
    ro = connect(path, readonly=True)
    assert ro.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    with pytest.raises(sqlite3.OperationalError):
        ro.execute("INSERT INTO sessions (agent_session_id, project, started_at) VALUES ('x', 'p', 1)")


# ---------------------------------------------------------------------------- FTS5 triggers


@pytest.fixture
def db(tmp_path: Path) -> sqlite3.Connection:
    conn = open_db(str(tmp_path / "e.db"))
    conn.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (1, 's-1', 'shop', 1.0)")
    return conn


def hits(conn: sqlite3.Connection, fts: str, query: str) -> list[int]:
    return [r[0] for r in conn.execute(f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid", (query,))]


def integrity(conn: sqlite3.Connection, fts: str) -> None:
    # Raises SQLITE_CORRUPT_VTAB when the index and its content table disagree.
    conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')")


def test_observations_fts_follows_insert_update_delete(db: sqlite3.Connection) -> None:
    cur = db.execute(
        "INSERT INTO observations (session_id, project, type, title, narrative, facts, concepts, created_at, "
        "recorded_at, content_hash) VALUES (1, 'shop', 'bugfix', 'Invoice rounding', 'uses decimal quantize', "
        "'[\"totals off by a cent\"]', '[\"gotcha\"]', 1, 1, 'h1')")
    oid = cur.lastrowid
    assert hits(db, "observations_fts", "rounding") == [oid]
    assert hits(db, "observations_fts", "quantize") == [oid]     # narrative
    assert hits(db, "observations_fts", "cent") == [oid]         # facts
    assert hits(db, "observations_fts", "gotcha") == [oid]       # concepts
    assert hits(db, "observations_fts", "round") == [oid]        # porter stemming
    integrity(db, "observations_fts")

    db.execute("UPDATE observations SET title = 'Currency formatting' WHERE id = ?", (oid,))
    assert hits(db, "observations_fts", "rounding") == []
    assert hits(db, "observations_fts", "currency") == [oid]
    integrity(db, "observations_fts")

    db.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (oid,))  # not an FTS column
    assert hits(db, "observations_fts", "currency") == [oid]
    integrity(db, "observations_fts")

    db.execute("DELETE FROM observations WHERE id = ?", (oid,))
    assert hits(db, "observations_fts", "currency") == []
    assert hits(db, "observations_fts", "quantize") == []
    integrity(db, "observations_fts")


def test_session_summaries_fts_follows_insert_update_delete(db: sqlite3.Connection) -> None:
    cur = db.execute("INSERT INTO session_summaries (session_id, project, request, learned, next_steps, "
                     "created_at, recorded_at) VALUES (1, 'shop', 'speed up checkout', 'n+1 queries', "
                     "'add caching', 1, 1)")
    sid = cur.lastrowid
    assert hits(db, "session_summaries_fts", "checkout") == [sid]
    assert hits(db, "session_summaries_fts", "caching") == [sid]
    db.execute("UPDATE session_summaries SET request = 'refactor payments' WHERE id = ?", (sid,))
    assert hits(db, "session_summaries_fts", "checkout") == []
    assert hits(db, "session_summaries_fts", "payments") == [sid]
    integrity(db, "session_summaries_fts")
    db.execute("DELETE FROM session_summaries WHERE id = ?", (sid,))
    assert hits(db, "session_summaries_fts", "payments") == []
    integrity(db, "session_summaries_fts")


def test_user_prompts_fts_follows_insert_update_delete(db: sqlite3.Connection) -> None:
    cur = db.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                     "VALUES (1, 1, 'why is the webhook retrying', 1)")
    pid = cur.lastrowid
    assert hits(db, "user_prompts_fts", "webhook") == [pid]
    db.execute("UPDATE user_prompts SET prompt_text = 'rename the migration' WHERE id = ?", (pid,))
    assert hits(db, "user_prompts_fts", "webhook") == []
    assert hits(db, "user_prompts_fts", "migration") == [pid]
    integrity(db, "user_prompts_fts")
    db.execute("DELETE FROM user_prompts WHERE id = ?", (pid,))
    assert hits(db, "user_prompts_fts", "migration") == []
    integrity(db, "user_prompts_fts")


def test_deleting_a_session_cascades_into_the_fts_indexes(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO observations (session_id, project, type, title, created_at, recorded_at, content_hash) "
               "VALUES (1, 'shop', 'change', 'zebra stripes', 1, 1, 'h')")
    db.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
               "VALUES (1, 1, 'zebra prompt', 1)")
    db.execute("DELETE FROM sessions WHERE id = 1")
    assert hits(db, "observations_fts", "zebra") == []
    assert hits(db, "user_prompts_fts", "zebra") == []
    integrity(db, "observations_fts")
    integrity(db, "user_prompts_fts")


def test_a_migration_numbered_below_an_applied_one_is_still_applied(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Branches can land out of order: 0002 arriving after 0003 was applied must still run."""
    from kenning.store import db

    files = [(1, "0001_a", "CREATE TABLE a (x);"), (2, "0002_b", "CREATE TABLE b (x);"),
             (3, "0003_c", "CREATE TABLE c (x);")]
    monkeypatch.setattr(db, "migration_files", lambda: files)
    conn = db.connect(str(tmp_path / "gap.db"))
    db.migrate(conn, target=1)
    # An older build with a later migration applied 0003 before 0002 existed.
    conn.executescript(files[2][2])
    conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (3, '0003_c', 0)")
    assert db.migrate(conn) == [2]
    assert {r[0] for r in conn.execute("SELECT version FROM schema_migrations")} == {1, 2, 3}
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'").fetchone()[0] == 1


def test_messages_imported_before_migration_0024_are_known_to_the_import(tmp_path: Path) -> None:
    """A resumed session's file imported after the upgrade must find what earlier imports stored."""
    conn = connect(str(tmp_path / "k.db"))
    migrate(conn, target=23)
    conn.execute("INSERT INTO sessions (id, platform, agent_session_id, project, started_at) "
                 "VALUES (1, 'claude-code', 'sess-a', '/w/ledger', 1.0), (2, 'codex', 'sess-c', '/w/ledger', 1.0)")
    for sid, key in ((1, "h:prompt:uuid-1"), (1, "h:stop:uuid-2"), (1, "PostToolUse:toolu_1"), (1, "spool-77"),
                     (2, "h:prompt:7")):
        conn.execute("INSERT INTO events (session_id, event_key, kind, occurred_at, payload) VALUES (?, ?, 'x', 2.0, "
                     "'{}')", (sid, key))
    conn.commit()
    assert 24 in migrate(conn)
    assert sorted(tuple(r) for r in conn.execute("SELECT agent, key, agent_session_id FROM history_messages")) == [
        ("claude-code", "PostToolUse:toolu_1", "sess-a"), ("claude-code", "prompt:uuid-1", "sess-a"),
        ("claude-code", "stop:uuid-2", "sess-a")]
