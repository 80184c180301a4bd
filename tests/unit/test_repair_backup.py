"""`kenning repair` with a backup (kenning/store/repair.py): the rows the damaged file lost come back
from the backup, and a stale rule the backup gives back is superseded again by the user's newer
correction the damaged file kept (its mark was on the lost row)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from kenning.paths import Paths
from kenning.records import ObservationDraft
from kenning.store import backup, repair, repo, supersede
from kenning.store.db import open_db

STALE = "Always use 4 spaces, not tabs, in the YAML files"
FIXED = "Use 2 spaces in the YAML files from now on"
USER = {"said": "", "by": "user", "origin": "typed", "where": "prompt 1", "how": "judged rule", "sure": 0.9}


def rule(conn: object, sid: int, title: str, at: float) -> int:
    oid = repo.insert_observation(conn, sid, "p", ObservationDraft(  # type: ignore[arg-type]
        type="decision", title=title, created_at=at, kind="rule", why={**USER, "said": title}), "rules", at)
    assert oid
    return oid


def test_a_stale_rule_the_backup_gives_back_is_superseded_by_the_correction_the_file_kept(tmp_path: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    conn = open_db(paths.db)
    t0 = time.time() - 60
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="s", project="p",
                                  project_root="/p", cwd="/p", at=t0)
        stale = rule(conn, sid, STALE, t0)
        other = rule(conn, sid, "Run the linter before every commit", t0 + 1)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    made = backup.take(paths, 3)
    assert made is not None
    time.sleep(1.1)
    with repo.transaction(conn):  # after the backup, the user corrects the rule; the store marks the stale one
        fixed = rule(conn, sid, FIXED, time.time())
        assert supersede.automatic(conn, [fixed]) == [(stale, fixed)]
    # The damage takes the stale rule's row (and its mark) but keeps the correction.
    with repo.transaction(conn):
        conn.execute("DELETE FROM observations WHERE id = ?", (stale,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    damaged = str(tmp_path / "damaged.db")
    shutil.copy(paths.db, damaged)
    report = repair.recover(damaged, paths.db, use_cli=False, backup=made.path)
    assert report.from_backup.get("observations") == 1 and report.restored_ids == [stale]
    assert report.resuperseded == 1
    conn = open_db(paths.db)
    try:
        got = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, status, superseded_by FROM observations")}
    finally:
        conn.close()
    assert got[stale] == ("superseded", fixed) and got[fixed] == ("active", None) and got[other][0] == "active"
