"""The embedding thread's scan for rows without a vector: with a cursor it reads only rows it has
not seen with a vector (no full anti-join per batch), in bounded ranges with a callback between
them, and starts over when a vector is deleted (an edited or forgotten row)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.search import indexer
from tests.support.fake_embedder import FakeEmbedder
from tests.support.search_rows import Rows


def _fill(rows: Rows, n: int) -> list[int]:
    ids = [rows.obs(f"note {i} about widgets", narrative=f"text {i}") for i in range(n)]
    rows.summary("a summary")
    rows.prompt("a prompt about widgets")
    return ids


def _embed_all(rows: Rows, emb: FakeEmbedder, cursor: indexer.Cursor | None, batch: int = 4) -> int:
    total = 0
    while n := indexer.step(rows.conn, emb.model, emb.embed, batch=batch, cursor=cursor):
        total += n
    return total


def test_cursor_embeds_exactly_what_the_full_scan_would(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    _fill(rows, 23)
    emb = FakeEmbedder()
    expected = indexer.count_missing(rows.conn, emb.model)
    assert _embed_all(rows, emb, indexer.Cursor()) == expected == 25
    assert indexer.count_missing(rows.conn, emb.model) == 0


def test_nothing_missing_means_no_anti_join(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    _fill(rows, 10)
    emb = FakeEmbedder()
    cursor = indexer.Cursor()
    _embed_all(rows, emb, cursor)
    seen: list[str] = []
    rows.conn.set_trace_callback(seen.append)
    assert indexer.missing(rows.conn, emb.model, 8, cursor) == []
    assert not [s for s in seen if "NOT EXISTS" in s], seen  # only MAX(id) and the state counter
    # A new row is found by reading just the ids above the high-water mark.
    new = rows.obs("fresh note", narrative="brand new")
    seen.clear()
    found = indexer.missing(rows.conn, emb.model, 8, cursor)
    assert [(i.kind, i.row_id) for i in found] == [("observation", new)]
    scans = [s for s in seen if "NOT EXISTS" in s]
    assert len(scans) == 1 and f"o.id > {new - 1}" in scans[0]
    rows.conn.set_trace_callback(None)


def test_backlog_is_read_in_ranges_with_queries_served_between(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    ids = _fill(rows, 12)
    emb = FakeEmbedder()
    # Everything has a vector except the oldest observation: the scan has to walk down to it.
    indexer.store(rows.conn, emb.model, [i for i in indexer.missing(rows.conn, emb.model, 100)
                                         if not (i.kind == "observation" and i.row_id == ids[0])],
                  list(emb.embed(["x"] * 13)))
    monkeypatch.setattr(indexer, "SCAN_CHUNK", 3)
    calls: list[int] = []
    found = indexer.missing(rows.conn, emb.model, 8, indexer.Cursor(), between=lambda: calls.append(1))
    assert [(i.kind, i.row_id) for i in found] == [("observation", ids[0])]
    assert len(calls) >= 3  # 12 ids in ranges of 3: the embedding thread answered queries in between


def test_edited_row_is_embedded_again(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    ids = _fill(rows, 6)
    emb = FakeEmbedder()
    cursor = indexer.Cursor()
    _embed_all(rows, emb, cursor)
    rows.conn.execute("UPDATE observations SET title = 'changed text' WHERE id = ?", (ids[2],))  # drops its vector
    found = indexer.missing(rows.conn, emb.model, 8, cursor)
    assert [(i.kind, i.row_id) for i in found] == [("observation", ids[2])]
    assert _embed_all(rows, emb, cursor) == 1 and indexer.count_missing(rows.conn, emb.model) == 0
