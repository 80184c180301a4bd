"""Keeping the full-text indexes merged: fewer FTS5 segments, cheaper searches, same results.

FTS5 writes the terms of each statement as a new segment (rows are stored one statement at a
time) and merges them lazily: with its defaults a level holds up to 16 segments before they
are merged. Every term a search reads is looked up in every segment, so a fragmented index
costs each term a fixed price per segment: at 10k observations, 16-18 segments made the
summaries' and prompts' term statements ~2-3x slower than one segment, the observations' ~15%
(BENCHMARKS.md, "Search latency notes"). Merging changes no result: the doclists, row sizes
and totals that ``bm25()`` reads are the same, only stored in fewer b-trees.

:func:`tidy` merges, a bounded step at a time, any level of an index holding two segments or
more (FTS5's ``usermerge`` set to 2: at most one segment per level is left, a log2 merge tree);
the worker's pipeline calls it after every cycle (one that ran out of time asks for the next
at once). A merged index costs a read of its structure record and nothing else.
"""

from __future__ import annotations

import sqlite3
import time

from kenning.store.forget import fts_tables
from kenning.store.fts5_format import varint

USERMERGE = 2        # a level with this many segments is merged (FTS5's default usermerge is 4)
STEP_PAGES = 256     # pages written by one merge step (each step is one short write transaction)
BUDGET_S = 0.05      # merging stops for this call after this long (the next call goes on)
_V2 = b"\xff\x00\x00\x01"  # the structure record of SQLite >= 3.43 (contentless-delete tombstones)


def levels(conn: sqlite3.Connection, table: str) -> list[tuple[int, int]] | None:
    """(segments, segments being merged) per level of ``table``'s index, from its structure
    record; None when it cannot be read (an empty index has none; an unknown format)."""
    try:
        row = conn.execute(f'SELECT block FROM "{table}_data" WHERE id = 10').fetchone()
    except sqlite3.OperationalError:
        return None
    if not row or not row[0]:
        return None
    buf = bytes(row[0])
    try:
        i = 4  # the cookie
        v2 = buf[i:i + 4] == _V2
        if v2:
            i += 4
        n_levels, i = varint(buf, i)
        _n_segments, i = varint(buf, i)
        _writes, i = varint(buf, i)
        out = []
        for _ in range(n_levels):
            merging, i = varint(buf, i)
            n, i = varint(buf, i)
            for _s in range(n):
                for _f in range(8 if v2 else 3):  # segid, first and last page (+ origins, tombstones)
                    _v, i = varint(buf, i)
            out.append((n, merging))
        return out
    except IndexError:
        return None


def fragmented(conn: sqlite3.Connection, table: str) -> bool:
    """Whether a merge step would do work: a level holds ``USERMERGE`` segments or more, or a
    merge is under way (True too when the structure cannot be read: the step then tells)."""
    lv = levels(conn, table)
    if lv is None:
        return conn.execute(f'SELECT 1 FROM "{table}_data" WHERE id = 10').fetchone() is not None
    return any(n >= USERMERGE or merging for n, merging in lv)


def _usermerge(conn: sqlite3.Connection, table: str) -> None:
    row = conn.execute(f"SELECT v FROM \"{table}_config\" WHERE k = 'usermerge'").fetchone()
    if row is None or row[0] != USERMERGE:
        conn.execute(f'INSERT INTO "{table}" ("{table}", rank) VALUES (\'usermerge\', {USERMERGE})')


def tidy(conn: sqlite3.Connection, budget_s: float = BUDGET_S, step_pages: int = STEP_PAGES) -> tuple[int, bool]:
    """Merge the fragmented levels of every FTS5 index, a step at a time, for at most about
    ``budget_s``; returns the steps that did work and whether the time ran out first (more to
    merge). ``conn`` must be a writer in autocommit mode (each step commits on its own, so
    readers and other writers wait at most one step)."""
    deadline = time.monotonic() + budget_s
    steps = 0
    for table in fts_tables(conn):
        if not fragmented(conn, table):
            continue
        if time.monotonic() >= deadline:
            return steps, True
        _usermerge(conn, table)
        while True:
            before = conn.total_changes
            conn.execute(f'INSERT INTO "{table}" ("{table}", rank) VALUES (\'merge\', {int(step_pages)})')
            if conn.total_changes - before < 2:  # FTS5's sign that there was nothing to merge
                break
            steps += 1
            if time.monotonic() >= deadline:
                return steps, True
    return steps, False
