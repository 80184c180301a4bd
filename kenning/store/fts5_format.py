"""Reading FTS5's own records (its ``_data`` shadow table): the structure record of the segments
(kenning/store/segments.py) and the averages record holding the row count bm25() uses
(kenning/search/bm25.py)."""

from __future__ import annotations


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at ``buf[i]`` (big-endian, 7 bits a byte, the 9th byte whole): (value, next index)."""
    v = 0
    for k in range(9):
        b = buf[i + k]
        if k == 8:
            return (v << 8) | b, i + 9
        v = (v << 7) | (b & 0x7F)
        if b < 0x80:
            return v, i + k + 1
    return v, i + 9
