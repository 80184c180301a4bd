"""The page reader `kenning repair` uses on a file SQLite refuses (kenning/store/pages.py): it reads
exactly what SQLite reads from an intact file, and from a cut one every row before the cut."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest

from kenning.store import pages

VALUES = [None, 0, 1, -1, 127, -128, 255, 32767, -32768, 8_388_607, 2**31 - 1, -(2**31), 2**47 - 1, 2**63 - 1,
          -(2**63), 0.5, -1e300, "", "short", "ü" * 700, "x" * 20_000, b"", b"\x00\xff" * 3000]


def make(path: Path, rows: int, page_size: int = 4096) -> dict[int, tuple[object, ...]]:
    rnd = random.Random(7)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA page_size = {page_size}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a, b TEXT, c)")
    conn.execute("CREATE TABLE other (x TEXT)")
    conn.execute("CREATE INDEX t_b ON t (b)")
    out = {}
    for i in range(1, rows + 1):
        row = (rnd.choice(VALUES), f"row {i} " + "w" * rnd.randrange(0, 3000), rnd.choice(VALUES))
        conn.execute("INSERT INTO t (id, a, b, c) VALUES (?, ?, ?, ?)", (i, *row))
        conn.execute("INSERT INTO other VALUES (?)", (f"other {i}",))
        out[i] = row
    conn.commit()
    conn.execute("DELETE FROM t WHERE id % 10 = 0")  # deleted rows: on freed pages or in free blocks, never read
    conn.commit()
    conn.close()
    return {i: r for i, r in out.items() if i % 10}


@pytest.mark.parametrize("page_size", [1024, 4096, 65536])
def test_an_intact_file_reads_as_sqlite_reads_it(tmp_path: Path, page_size: int) -> None:
    db = tmp_path / "k.db"
    want = make(db, 400, page_size)
    got, tally = pages.read_tables(str(db), ["t", "other"])
    assert {r["id"]: (r["a"], r["b"], r["c"]) for r in got["t"]} == want
    assert len(got["other"]) == 400
    assert tally.lost_pages == 0 and tally.lost_cells == 0 and not tally.problems


def test_a_cut_file_gives_rows_before_the_cut_and_counts_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    want = make(db, 600)
    os.truncate(db, os.path.getsize(db) * 2 // 3 + 1001)
    with pytest.raises(sqlite3.DatabaseError):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.execute("SELECT COUNT(*) FROM t").fetchone()
    got, tally = pages.read_tables(str(db), ["t"])
    rows = {r["id"]: (r["a"], r["b"], r["c"]) for r in got["t"]}
    assert 0 < len(rows) < len(want)
    assert all(want[i] == r for i, r in rows.items())  # nothing invented, nothing garbled
    assert tally.lost_pages > 0 and any("the file ends after page" in p for p in tally.problems)


def test_a_file_cut_inside_its_first_page_says_so(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    make(db, 50)
    os.truncate(db, 2000)
    with pytest.raises(pages.Unreadable, match="not even its first page"):
        pages.read_tables(str(db), ["t"])
    os.truncate(db, 40)
    with pytest.raises(pages.Unreadable, match="first 100"):
        pages.read_tables(str(db), ["t"])
