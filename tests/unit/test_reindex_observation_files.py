"""`kenning reindex` rebuilds observation_files from observations, with the triggers' semantics."""

from __future__ import annotations

from pathlib import Path

from kenning.search import reindex
from tests.support.search_rows import Rows

COLS = "path, observation_id, session_id, project, type, status, created_at, modified, n_files"


def _all(rows: Rows) -> list[tuple]:
    return [tuple(r) for r in rows.conn.execute(
        f"SELECT {COLS} FROM observation_files ORDER BY path, project, observation_id")]


def test_reindex_rebuilds_observation_files_like_the_triggers(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    rows.obs("edit db", files_read=["src/db.py", "README.md"], files_modified=["src/db.py"])
    rows.obs("read only", project="beta", files_read=["README.md", "README.md", ""])
    rows.obs("no files")
    rows.obs("changed three", files_modified=["a.py", "b.py"], files_read=["c.py"], status="superseded")
    bad = rows.obs("bad json", files_read=["x.py"])
    rows.conn.execute("UPDATE observations SET files_modified = 'not json' WHERE id = ?", (bad,))
    expected = _all(rows)
    assert ("src/db.py", 1) in [(r[0], r[1]) for r in expected] and len(expected) == 7
    # The derived table drifted (e.g. a database copied without its triggers' rows, a bug, a crash).
    rows.conn.execute("DELETE FROM observation_files WHERE observation_id = 1")
    rows.conn.execute(f"INSERT INTO observation_files ({COLS}) VALUES ('ghost.py', 999, 1, 'alpha', 'change', "
                      "'active', 0, 0, 1)")
    rows.conn.execute("UPDATE observation_files SET status = 'active', n_files = 42")
    assert _all(rows) != expected
    out = reindex.rebuild_text(rows.conn, use_trigram=False)
    assert out["observation_files"] == len(expected)
    assert _all(rows) == expected


def test_reindex_rebuilds_observation_concepts_like_the_triggers(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    rows.obs("a", concepts=["gotcha", "pattern", "gotcha"])
    rows.obs("b", concepts=["pattern"])
    bad = rows.obs("c", concepts=["x"])
    rows.conn.execute("UPDATE observations SET concepts = 'not json' WHERE id = ?", (bad,))

    def table() -> list[tuple]:
        return [tuple(r) for r in rows.conn.execute("SELECT * FROM observation_concepts ORDER BY 1, 2, 3")]

    expected = table()
    assert [(r[0], r[2]) for r in expected] == [("gotcha", 1), ("pattern", 1), ("pattern", 2)]
    rows.conn.execute("DELETE FROM observation_concepts WHERE observation_id = 2")
    rows.conn.execute("INSERT INTO observation_concepts VALUES ('ghost', 0, 999)")
    out = reindex.rebuild_text(rows.conn, use_trigram=False)
    assert out["observation_concepts"] == 3 and table() == expected
