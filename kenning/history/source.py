"""Reading a past session's file when the folder holding it is not ours to trust.

A transcripts folder may hold what is not a transcript at all: a FIFO (opening it waits for a
writer that never comes), a symlink to ``/dev/zero`` (a line that never ends), a symlink loop,
a file we may not read, one line of 100,000 nested brackets (``json`` raises RecursionError) or
a line of gigabytes. One such file or line must cost only itself: it is skipped and said, and
the rest of the import goes on.

* Only regular files are read: opened with ``O_NONBLOCK`` (a FIFO without a writer does not
  block the open) and checked with ``fstat`` on the descriptor before a byte is read, so the
  check and the read are about the same file (symlinks are followed, their target is checked).
* A line longer than ``MAX_LINE_BYTES`` (the bound ``kenning import`` keeps) is skipped without
  being held in memory.
* A line that does not parse, at any nesting depth, is skipped and counted; what parses is cut at
  ``MAX_DEPTH`` levels (deeper values become a marker) as it is parsed, before anything walks it
  (``str()`` of a value, cleaning, redaction, storage, the observer).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from kenning.store.transfer import MAX_LINE_BYTES

MAX_DEPTH = 100  # levels of JSON nesting kept; real payloads use about ten
DEEP_MARK = f"[nested deeper than {MAX_DEPTH} levels: left out]"
_CHUNK = 1024 * 1024

# Why a line was skipped (the import report counts each).
TOO_LONG = f"longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB"
TOO_DEEP = "nested too deeply to parse"
NOT_JSON = "not JSON (a line cut short?)"


class Unreadable(Exception):
    """A path that is not read: the message says why in a few words."""


@dataclass
class Problems:
    """What could not be read of one session: whole files and single lines."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    lines: dict[str, int] = field(default_factory=dict)  # why -> count
    cut: int = 0  # lines nested deeper than MAX_DEPTH, kept to that depth

    def line(self, why: str) -> None:
        self.lines[why] = self.lines.get(why, 0) + 1

    def file(self, path: str, why: str) -> None:
        if (path, why) not in self.files:
            self.files.append((path, why))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _why(e: OSError, path: str) -> str:
    if e.errno == errno.ELOOP:
        return "a symlink loop"
    if e.errno == errno.ENOENT and os.path.islink(path):
        return "a symlink to nothing"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return e.strerror or str(e)


def check(path: str) -> tuple[os.stat_result | None, str]:
    """(the file's stat, "") for a regular file (symlinks followed), else (None, why not)."""
    try:
        st = os.stat(path)
    except OSError as e:
        return None, _why(e, path)
    if not stat.S_ISREG(st.st_mode):
        return None, _kind(st.st_mode) + (" (by a symlink)" if os.path.islink(path) else "")
    return st, ""


def open_regular(path: str) -> IO[bytes]:
    """The file at ``path`` open for binary reading, only if it is a regular file (Unreadable if not)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise Unreadable(_why(e, path)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise Unreadable(_kind(mode) + (" (by a symlink)" if os.path.islink(path) else ""))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def tail(path: str, nbytes: int) -> bytes | None:
    """The whole lines of the last ``nbytes`` of the regular file at ``path`` (a session still being written: its
    latest turns); None when it is no regular file or cannot be read."""
    try:
        # A regular file only, checked on the open descriptor: a FIFO put at the path would block a read.
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > nbytes:
                fh.seek(size - nbytes)
                fh.readline()  # a partial line
            return fh.read(nbytes)
    except (Unreadable, OSError, ValueError):
        return None


def lines(fh: IO[bytes], problems: Problems | None = None, max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``fh``; one longer than ``max_line`` is counted and comes as ``b""`` (line numbers
    stay those of the file) without being held."""
    while True:
        line = fh.readline(max_line + 1)
        if not line:
            return
        if len(line) > max_line and not line.endswith(b"\n"):
            line = b""  # drop it before reading the rest of it
            while True:
                rest = fh.readline(_CHUNK)
                if not rest or rest.endswith(b"\n"):
                    break
            if problems is not None:
                problems.line(TOO_LONG)
        yield line


def records(path: str, problems: Problems, body: str) -> Iterator[tuple[int, dict[str, Any], float]]:
    """(line number, record, time) of each line of a session file that is an object with an object under
    ``body`` and a time it can be read from ("timestamp"): a Codex rollout's ``payload``, a Copilot log's
    ``data``. What cannot be read (the file, or a line) is told to ``problems`` and skipped."""
    from kenning.history import timestamp

    try:
        fh = open_regular(path)
    except Unreadable as e:
        problems.file(path, str(e))
        return
    with fh:
        for n, line in enumerate(lines(fh, problems)):
            rec = parse(line, problems)
            if not isinstance(rec, dict) or not isinstance(rec.get(body), dict):
                continue
            at = timestamp(rec.get("timestamp"))
            if at is not None:
                yield n, rec, at


def parse(line: bytes | str, problems: Problems | None = None) -> Any:
    """The JSON value of one line, cut at ``MAX_DEPTH`` levels (counted); None (counted) when it is no
    JSON, however deep."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    if not text.strip():
        return None  # a blank line (or one skipped as too long) is no problem of its own
    try:
        value = json.loads(text)
    except RecursionError:
        if problems is not None:
            problems.line(TOO_DEEP)
        return None
    except ValueError:
        if problems is not None:
            problems.line(NOT_JSON)
        return None
    if cap_depth(value) and problems is not None:
        problems.cut += 1
    return value


def loads(text: str) -> Any:
    """``json.loads`` of text found inside a line (a tool's output, call arguments), cut at
    ``MAX_DEPTH`` levels: ValueError for text that is no JSON, whatever its depth."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    cap_depth(value)
    return value


def cap_depth(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Replace, in place, every list or object deeper than ``limit`` levels with ``DEEP_MARK``;
    True when something was cut. Iterative: any depth is walked without recursion."""
    cut = False
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for k in list(keys):
            child = node[k]
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    node[k] = DEEP_MARK
                    cut = True
                elif child:
                    stack.append((child, depth + 1))
    return cut
