"""The database knows it is ours: PRAGMA application_id, checked before anything can write the file."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from kenning.store.db import connect, current_version, migrate, migration_files, open_db
from kenning.store.identity import APPLICATION_ID, ForeignDatabase, check


def header_id(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[68:72], "big")


def snapshot(d: Path) -> dict[str, str]:
    """Every file of the folder with a hash of its bytes (a refused file must not change, nor gain a -wal)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def other_app(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 0x47524F43")  # "GROC": somebody else's file format
    conn.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, note TEXT)")
    conn.execute("INSERT INTO sessions (note) VALUES ('theirs')")
    conn.commit()
    conn.close()


def unmarked_other_schema(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)")  # a look-alike, not ours
    conn.commit()
    conn.close()


def not_sqlite(path: Path) -> None:
    path.write_text("this is my shopping list, not a database\n" * 10)


def truncated(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00\x10\x00")


@pytest.mark.parametrize("make", [other_app, unmarked_other_schema, not_sqlite, truncated])
def test_a_foreign_file_is_refused_and_left_byte_identical(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "kenning.db"
    make(db)
    before = snapshot(tmp_path)
    for opener in (lambda: connect(str(db)), lambda: connect(str(db), readonly=True), lambda: open_db(str(db))):
        with pytest.raises(ForeignDatabase) as err:
            opener()
        assert str(db) in str(err.value) and "not a Kenning database" in str(err.value)
    assert isinstance(err.value, sqlite3.DatabaseError)
    assert snapshot(tmp_path) == before


def test_the_message_says_why(tmp_path: Path) -> None:
    db = tmp_path / "kenning.db"
    other_app(db)
    with pytest.raises(ForeignDatabase, match="application_id 0x47524f43"):
        check(str(db))
    db.unlink()
    unmarked_other_schema(db)
    with pytest.raises(ForeignDatabase, match="tables that are not Kenning's: memories, schema_migrations"):
        check(str(db))
    with pytest.raises(ForeignDatabase, match="a directory"):
        check(str(tmp_path))


def test_a_new_database_is_created_and_marked(tmp_path: Path) -> None:
    db = tmp_path / "kenning.db"
    check(str(db))  # missing: fine
    open_db(str(db)).close()
    assert header_id(db) == APPLICATION_ID  # in the file itself, not only in the WAL
    conn = connect(str(db), readonly=True)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_an_empty_file_is_a_new_database(tmp_path: Path) -> None:
    db = tmp_path / "kenning.db"
    db.touch()
    open_db(str(db)).close()
    assert header_id(db) == APPLICATION_ID


def test_an_empty_sqlite_database_is_ours_to_set_up(tmp_path: Path) -> None:
    db = tmp_path / "kenning.db"
    sqlite3.connect(db).execute("PRAGMA user_version = 0").connection.close()
    conn = sqlite3.connect(db)
    conn.execute("VACUUM")  # writes the header: a valid, empty SQLite file with id 0
    conn.close()
    assert db.stat().st_size > 0 and header_id(db) == 0
    open_db(str(db)).close()
    assert header_id(db) == APPLICATION_ID


def test_a_database_from_before_the_id_opens_keeps_its_rows_and_gets_marked(tmp_path: Path) -> None:
    db = tmp_path / "kenning.db"
    old = connect(str(db))
    migrate(old, target=6)
    old.execute("PRAGMA application_id = 0")  # what every database made before migration 0007 carries
    old.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (1, 's', 'shop', 1.0)")
    old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    old.close()
    assert header_id(db) == 0
    conn = open_db(str(db))
    assert current_version(conn) == migration_files()[-1][0]
    assert [tuple(r) for r in conn.execute("SELECT project FROM sessions")] == [("shop",)]
    conn.close()
    assert header_id(db) == APPLICATION_ID


def test_the_id_still_in_the_wal_is_found(tmp_path: Path) -> None:
    """A marked database whose first page was not copied back yet: the header says 0, the WAL says ours."""
    db = tmp_path / "kenning.db"
    writer = connect(str(db))
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    migrate(writer)
    writer.execute("PRAGMA application_id = 0")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # lands in the WAL only
    assert header_id(db) == 0
    check(str(db))
    connect(str(db), readonly=True).close()
    writer.close()
