"""Background compaction after a delete: one run for a burst of deletes, progress, a debt that outlives the worker."""

from __future__ import annotations

import time
from pathlib import Path

from kenning.store import forget as fg
from kenning.store.compaction import Compactor
from tests.support.search_rows import Rows


def wait_done(c: Compactor, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = c.status()
        if st["state"] in ("done", "failed"):
            return st
        time.sleep(0.02)
    raise AssertionError(f"compaction never finished: {c.status()}")


def test_a_burst_of_deletes_is_one_run_and_the_text_leaves_the_file(tmp_path: Path) -> None:
    db = str(tmp_path / "kenning.db")
    rows = Rows(db)
    secret = "walrus-kazoo-4242"
    ids = [rows.obs(f"note {i} {secret}", narrative=f"{secret} " * 200) for i in range(40)]
    marker = str(tmp_path / "compaction.pending")
    c = Compactor(db, marker, delay=0.3)
    phases: list[str] = []
    for oid in ids:
        sel = fg.select(rows.conn, fg.Filters(ids=(oid,)))
        fg.apply(rows.conn, sel)
        st = c.request()
        assert st["state"] == "waiting"  # the request answers at once
    assert Path(marker).exists()
    deadline = time.monotonic() + 30
    while c.status()["state"] != "done" and time.monotonic() < deadline:
        st = c.status()
        if st["state"] == "running" and st["phase"]:
            phases.append(st["phase"])
        time.sleep(0.001)
    st = wait_done(c)
    assert st["runs"] == 1 and st["deleted"] == 40 and st["fraction"] == 1.0 and st["error"] is None
    assert st["bytes_after"] < st["bytes_before"]
    assert not Path(marker).exists()
    rows.conn.close()
    for path in (db, db + "-wal"):
        if Path(path).exists():
            assert secret.encode() not in Path(path).read_bytes()


def test_a_delete_during_a_run_gets_a_run_of_its_own(tmp_path: Path) -> None:
    db = str(tmp_path / "kenning.db")
    rows = Rows(db)
    rows.obs("one")
    c = Compactor(db, str(tmp_path / "m"), delay=0.05)
    c.request()
    deadline = time.monotonic() + 10
    while c.status()["state"] != "running" and c.status()["state"] != "done" and time.monotonic() < deadline:
        time.sleep(0.001)
    c.request()  # while running (or just after): never lost
    st = wait_done(c)
    while st["runs"] < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
        st = wait_done(c)
    assert st["runs"] == 2


def test_a_compaction_owed_by_a_previous_worker_is_paid_at_start(tmp_path: Path) -> None:
    db = str(tmp_path / "kenning.db")
    Rows(db).conn.close()
    marker = tmp_path / "compaction.pending"
    marker.write_text("1")
    c = Compactor(db, str(marker), delay=0.01)
    c.resume()
    assert wait_done(c)["runs"] == 1 and not marker.exists()
    idle = Compactor(db, str(tmp_path / "none"), delay=0.01)
    idle.resume()
    assert idle.status()["state"] == "idle"
