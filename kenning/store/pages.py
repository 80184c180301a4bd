"""Reading rows out of an SQLite file that SQLite refuses: a file cut short, page by page.

A database cut at some byte keeps every page before the cut intact, but SQLite will not open it:
its header promises more pages than the file holds, and the first b-tree walk that reaches past the
end fails the whole query. This reader follows the file format itself (sqlite.org/fileformat2.html):
the schema table rooted at page 1 names every table and its root page; each table's b-tree is walked
from its root, page by page, and every leaf cell found on a page that exists is decoded. Pages past
the cut, or that do not parse, are counted, never guessed: no page is taken for a table's unless
that table's own b-tree points at it (so a freed page still holding deleted rows is never read).

Standard library only. Used by ``kenning repair`` (kenning/store/repair.py), never on a hot path.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kenning.store.fts5_format import varint

HEADER = b"SQLite format 3\x00"
LEAF_TABLE, INTERIOR_TABLE = 0x0D, 0x05
MAX_DEPTH = 20


class Unreadable(Exception):
    """Nothing can be read page by page (the message says exactly why)."""


@dataclass
class Tally:
    lost_pages: int = 0        # pages a b-tree points at that are past the cut or do not parse
    lost_cells: int = 0        # rows on a readable page that could not be decoded (overflow past the cut)
    problems: list[str] = field(default_factory=list)


class PageFile:
    """An SQLite file read page by page, whatever its length."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(100)
        if len(head) < 100 or not head.startswith(HEADER):
            raise Unreadable(f"the file is {self.size} bytes and its first 100 (SQLite's header) are "
                             + ("cut" if len(head) < 100 else "not an SQLite header") + ": no page can be found")
        size = struct.unpack(">H", head[16:18])[0]
        self.page_size = 65536 if size == 1 else size
        if self.page_size < 512 or self.page_size & (self.page_size - 1):
            raise Unreadable(f"the header's page size ({size}) is not one SQLite writes")
        self.usable = self.page_size - head[20]
        self.encoding = struct.unpack(">I", head[56:60])[0] or 1
        self.header_pages = struct.unpack(">I", head[28:32])[0]
        self.pages = self.size // self.page_size  # whole pages on disk; a partial last page is not trusted
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        self._fh.close()

    def page(self, number: int) -> bytes | None:
        if number < 1 or number > self.pages:
            return None
        self._fh.seek((number - 1) * self.page_size)
        data = self._fh.read(self.page_size)
        return data if len(data) == self.page_size else None

    def text(self, raw: bytes) -> str:
        codec = {1: "utf-8", 2: "utf-16-le", 3: "utf-16-be"}.get(self.encoding, "utf-8")
        return raw.decode(codec, "replace")

    # ---------------------------------------------------------------------------------- b-trees

    def rows(self, root: int, tally: Tally) -> Iterator[tuple[int, list[Any]]]:
        """(rowid, values) of every cell of the table b-tree rooted at ``root`` that can be read."""
        stack = [(root, 0)]
        seen: set[int] = set()
        while stack:
            number, depth = stack.pop()
            if number in seen or depth > MAX_DEPTH:
                continue
            seen.add(number)
            data = self.page(number)
            if data is None:
                tally.lost_pages += 1
                continue
            start = 100 if number == 1 else 0
            kind = data[start]
            if kind not in (LEAF_TABLE, INTERIOR_TABLE):
                tally.lost_pages += 1
                continue
            cells = struct.unpack(">H", data[start + 3:start + 5])[0]
            header = 8 if kind == LEAF_TABLE else 12
            pointers = start + header
            if pointers + 2 * cells > len(data):
                tally.lost_pages += 1
                continue
            offsets = [struct.unpack(">H", data[pointers + 2 * i:pointers + 2 * i + 2])[0] for i in range(cells)]
            if kind == INTERIOR_TABLE:
                children = [struct.unpack(">I", data[o:o + 4])[0] for o in offsets if o + 4 <= len(data)]
                children.append(struct.unpack(">I", data[start + 8:start + 12])[0])
                stack.extend((c, depth + 1) for c in reversed(children))
                continue
            for o in offsets:
                try:
                    yield self._leaf_cell(data, o)
                except (IndexError, ValueError, struct.error, _Lost):
                    tally.lost_cells += 1

    def _leaf_cell(self, data: bytes, at: int) -> tuple[int, list[Any]]:
        size, at = varint(data, at)
        rowid, at = varint(data, at)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        local = self._local(size)
        payload = data[at:at + local]
        if local < size:
            nxt = struct.unpack(">I", data[at + local:at + local + 4])[0]
            chunks = [payload]
            got = local
            hops = 0
            while got < size:
                page = self.page(nxt) if nxt else None
                hops += 1
                if page is None or hops > 1 << 16:
                    raise _Lost
                take = min(self.usable - 4, size - got)
                chunks.append(page[4:4 + take])
                got += take
                nxt = struct.unpack(">I", page[:4])[0]
            payload = b"".join(chunks)
        if len(payload) != size:
            raise _Lost
        return rowid, self.record(payload)

    def _local(self, size: int) -> int:
        u = self.usable
        x = u - 35
        if size <= x:
            return size
        m = ((u - 12) * 32 // 255) - 23
        k = m + (size - m) % (u - 4)
        return k if k <= x else m

    def record(self, payload: bytes) -> list[Any]:
        head, at = varint(payload, 0)
        types = []
        while at < head:
            t, at = varint(payload, at)
            types.append(t)
        pos = head
        out: list[Any] = []
        for t in types:
            if t == 0:
                out.append(None)
            elif 1 <= t <= 6:
                n = (0, 1, 2, 3, 4, 6, 8)[t]
                out.append(int.from_bytes(payload[pos:pos + n], "big", signed=True))
                pos += n
            elif t == 7:
                out.append(struct.unpack(">d", payload[pos:pos + 8])[0])
                pos += 8
            elif t in (8, 9):
                out.append(t - 8)
            elif t >= 12:
                n = (t - 12) // 2
                raw = payload[pos:pos + n]
                out.append(raw if t % 2 == 0 else self.text(raw))
                pos += n
            else:
                raise ValueError(f"serial type {t}")
            if pos > len(payload):
                raise ValueError("a value runs past its record")
        return out

    def schema(self, tally: Tally) -> list[tuple[str, str, int, str]]:
        """(type, name, root page, sql) of what page 1's schema table still lists."""
        out = []
        for _rowid, v in self.rows(1, tally):
            if len(v) >= 5 and isinstance(v[1], str) and isinstance(v[3], int):
                out.append((str(v[0]), v[1], int(v[3]), str(v[4] or "")))
        return out


class _Lost(Exception):
    """An overflow chain that runs past the cut."""




def table_columns(sql: str) -> tuple[list[str], str | None]:
    """(column names in order, the INTEGER PRIMARY KEY column whose value is the rowid) of a
    ``CREATE TABLE`` statement, as SQLite itself parses it (in a scratch in-memory database)."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(sql)
        name = mem.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        info = mem.execute(f'PRAGMA table_info("{name}")').fetchall()
    finally:
        mem.close()
    cols = [str(r[1]) for r in info]
    pk = [r for r in info if r[5]]
    alias = str(pk[0][1]) if len(pk) == 1 and str(pk[0][2]).upper() == "INTEGER" else None
    return cols, alias


def read_tables(path: str, wanted: list[str]) -> tuple[dict[str, list[dict[str, Any]]], Tally]:
    """Every readable row of the ``wanted`` tables, by table, as {column: value}; and what was lost.

    Raises :class:`Unreadable` when nothing can be read at all (the header or the schema is gone)."""
    tally = Tally()
    pf = PageFile(path)
    try:
        if pf.pages < 1:
            raise Unreadable(f"the file is {pf.size} bytes: not even its first page ({pf.page_size} bytes, which "
                             "holds the schema) is whole")
        found = {name: (root, sql) for kind, name, root, sql in pf.schema(tally) if kind == "table"}
        if not found:
            raise Unreadable("the schema on the first pages was cut: no table can be told from another")
        out: dict[str, list[dict[str, Any]]] = {}
        for name in wanted:
            if name not in found:
                tally.problems.append(f"{name}: not in what is left of the schema")
                continue
            root, sql = found[name]
            if "WITHOUT ROWID" in " ".join(sql.upper().split()):
                tally.problems.append(f"{name}: a WITHOUT ROWID table (derived, or evidence for joins), not read "
                                      "page by page")
                continue
            try:
                cols, alias = table_columns(sql)
            except sqlite3.Error as e:
                tally.problems.append(f"{name}: its definition cannot be read ({e})")
                continue
            rows = []
            for rowid, values in pf.rows(root, tally):
                if len(values) > len(cols):
                    tally.lost_cells += 1
                    continue
                row = dict(zip(cols, values, strict=False))  # older rows: columns added later take defaults
                if alias:
                    row[alias] = rowid
                rows.append(row)
            out[name] = rows
        if pf.header_pages > pf.pages:
            tally.problems.append(f"the file ends after page {pf.pages} of the {pf.header_pages} its header counts "
                                  f"({pf.size:,} bytes): what the missing pages held is lost")
        return out, tally
    finally:
        pf.close()
