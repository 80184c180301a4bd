"""The loss count: fixed size, rewritten in place, bounded however many sessions it counts."""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from pathlib import Path

import pytest

from kenning import losses
from kenning.paths import Paths
from kenning.store import health


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    p = Paths(str(tmp_path / "data"))
    p.ensure()
    return p


def test_the_count_file_keeps_its_size_and_inode(paths: Paths) -> None:
    assert losses.prepare(paths)
    path = losses.path_of(paths)
    before = os.stat(path)
    full = OSError(errno.ENOSPC, "No space left on device")
    for i in range(300):
        assert losses.record(paths, f"session-{i % 40}-" + "x" * 50, "PostToolUse", full)
    after = os.stat(path)
    assert after.st_size == losses.SIZE == 4096 and after.st_ino == before.st_ino
    rec = losses.read(paths)
    assert rec["events"] == 300 and rec["session_count"] == 40 and rec["reasons"] == {"disk full": 300}
    assert len(rec["sessions"]) <= 40
    text = losses.describe(rec)
    assert text.startswith("300 events of 40 sessions (session ") and text.endswith(
        f"could not be saved on {time.strftime('%Y-%m-%d')}: disk full"), text


def test_without_the_file_the_count_goes_to_the_private_ram_copy(paths: Paths) -> None:
    assert not os.path.exists(losses.path_of(paths))  # never prepared (or a read-only data dir)
    assert losses.record(paths, "s1", "Stop", OSError(errno.EROFS, "Read-only file system"))
    assert losses.record(paths, "s1", "Stop", OSError(errno.EROFS, "Read-only file system"))
    rec = losses.read(paths)
    assert rec["events"] == 2 and rec["session_count"] == 1 and "read-only file system" in losses.describe(rec)
    folder = Path(os.environ["XDG_RUNTIME_DIR"]) / f"kenning-{os.getuid()}"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    losses.clear(paths)
    assert losses.describe(losses.read(paths)) == ""


def test_a_ram_folder_of_someone_else_or_a_symlink_is_never_used(paths: Paths, tmp_path: Path) -> None:
    run = Path(os.environ["XDG_RUNTIME_DIR"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (run / f"kenning-{os.getuid()}").symlink_to(elsewhere)
    assert not losses.record(paths, "s1", "Stop", OSError(errno.EROFS, "ro"))
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(("message", "kind"), [
    ("database disk image is malformed", health.CORRUPT), ("file is not a database", health.CORRUPT),
    ("database or disk is full", health.FULL), ("attempt to write a readonly database", health.READ_ONLY),
    ("database is locked", health.LOCKED), ("no such table: observations", health.NO_SCHEMA),
])
def test_database_errors_are_named_with_their_remedy(tmp_path: Path, message: str, kind: str) -> None:
    db = tmp_path / "kenning.db"
    db.write_bytes(b"x")
    got, text = health.classify(str(db), sqlite3.DatabaseError(message))
    assert got == kind, text
    assert str(db.parent) in text or str(db) in text
