"""kenning/history/source.py: regular files only, bounded lines, any nesting survived."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from kenning.history import source


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            stack.extend((c, d + 1) for c in (node.values() if isinstance(node, dict) else node))
    return deepest


def test_cap_depth_cuts_any_depth_without_recursion() -> None:
    value: object = {"leaf": 1}
    for i in range(100_000):
        value = [value] if i % 2 else {"k": value}
    assert source.cap_depth(value)
    assert _depth(value) == source.MAX_DEPTH
    assert source.DEEP_MARK in str(value)
    shallow = {"a": [1, {"b": "c"}]}
    assert not source.cap_depth(shallow) and shallow == {"a": [1, {"b": "c"}]}


def test_a_line_too_long_is_skipped_without_shifting_the_line_numbers() -> None:
    problems = source.Problems()
    data = b'{"n": 0}\n' + b"x" * 5000 + b"\n" + b'{"n": 2}\n'
    got = list(source.lines(io.BytesIO(data), problems, max_line=1000))
    assert got == [b'{"n": 0}\n', b"", b'{"n": 2}\n']
    assert problems.lines == {source.TOO_LONG: 1}


def test_parse_counts_what_is_no_json_whatever_its_depth() -> None:
    problems = source.Problems()
    assert source.parse(b"[" * 100_000 + b"]" * 100_000, problems) is None
    assert source.parse(b'{"cut": ', problems) is None
    assert source.parse(b"\n", problems) is None  # blank: no problem
    assert source.parse(b'{"ok": true}\n', problems) == {"ok": True}
    assert problems.lines == {source.TOO_DEEP: 1, source.NOT_JSON: 1}
    with pytest.raises(ValueError):
        source.loads("[" * 100_000)


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    good = tmp_path / "good.jsonl"
    good.write_text("{}\n")
    linked = tmp_path / "linked.jsonl"
    linked.symlink_to(good)
    for path, why in ((fifo, "a FIFO (named pipe)"), (zero, "a character device (by a symlink)"),
                      (loop, "a symlink loop"), (tmp_path, "a directory"),
                      (tmp_path / "missing.jsonl", "No such file or directory")):
        with pytest.raises(source.Unreadable, match=rf"^{re.escape(why)}$"):
            source.open_regular(str(path))
        assert source.check(str(path)) == (None, why)
    for path in (good, linked):
        with source.open_regular(str(path)) as fh:
            assert fh.read() == b"{}\n"
        assert source.check(str(path))[0] is not None


def test_the_live_transcript_reader_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    import time

    from kenning.observer.transcript import read_turn

    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)  # no writer: a plain open would wait for ever
    started = time.monotonic()
    assert read_turn(str(fifo)) == ([], [])
    assert time.monotonic() - started < 5
