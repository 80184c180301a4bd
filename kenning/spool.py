"""The spool: a durable queue of captured events, one JSON file each. Standard library only.

A hook writes the file atomically (temp file in ``spool/tmp``, fsync, rename into
``spool/``) before it exits, so an event survives a worker that is down or crashing. The
worker deletes a file only after the rows it produced are committed; a file it cannot
parse is moved to ``spool/corrupt`` so one bad event never blocks the rest.
"""

from __future__ import annotations

import posix  # os costs a hook ~1 ms at import (see kenning.paths)
import time

from kenning import fastjson
from kenning.paths import FILE_MODE, Paths, basename, join

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any

SUFFIX = ".json"


def new_id() -> str:
    """Sortable unique id: nanosecond clock, pid, randomness."""
    return f"{time.time_ns():020d}-{posix.getpid():07d}-{posix.urandom(4).hex()}"


def write(paths: Paths, record: dict[str, Any], *, sync_dir: bool = True) -> str:
    """Write one event durably and return its final path. Raises OSError on failure."""
    rid = record.get("id") or new_id()
    record["id"] = rid
    # A lone surrogate (JSON "\udcff") is not UTF-8: SQLite would refuse it later and wedge the
    # worker, so it becomes "?" here, before it reaches the disk.
    data = fastjson.dumps(record, ensure_ascii=False).encode("utf-8", "replace")
    tmp = join(paths.spool_tmp, rid + SUFFIX)
    final = join(paths.spool, rid + SUFFIX)
    fd = posix.open(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            n = posix.write(fd, view)
            view = view[n:]
        posix.fsync(fd)
    except BaseException:
        posix.close(fd)
        _unlink(tmp)
        raise
    posix.close(fd)
    posix.rename(tmp, final)
    if sync_dir:
        # The rename is durable only once the directory entry is flushed.
        try:
            dfd = posix.open(paths.spool, posix.O_RDONLY)
            try:
                posix.fsync(dfd)
            finally:
                posix.close(dfd)
        except OSError:
            pass
    return final


def pending(paths: Paths, limit: int | None = None) -> list[str]:
    """Spooled event files, oldest first (names sort by capture time)."""
    try:
        names = [n for n in posix.listdir(paths.spool) if n.endswith(SUFFIX)]
    except OSError:  # missing, or not a directory: nothing to read (the hook reports failed writes)
        return []
    names.sort()
    if limit is not None:
        names = names[:limit]
    return [join(paths.spool, n) for n in names]


def depth(paths: Paths) -> int:
    """Number of events waiting in the spool."""
    try:
        return sum(1 for n in posix.listdir(paths.spool) if n.endswith(SUFFIX))
    except OSError:
        return 0


def corrupt_count(paths: Paths) -> int:
    try:
        return len(posix.listdir(paths.spool_corrupt))
    except OSError:
        return 0


def read(path: str) -> dict[str, Any]:
    """Parse one spool file; raises ValueError when it is not a valid event record."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        record = fastjson.loads(raw.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
        raise ValueError("not an event record")
    if not isinstance(record.get("event"), str):
        raise ValueError("event name missing")
    return record


def confirm(path: str) -> None:
    """The event's rows are committed: forget the file."""
    _unlink(path)


def quarantine(paths: Paths, path: str) -> str:
    """Move an unreadable file aside so the rest of the spool keeps flowing."""
    import os  # (the worker's side)

    os.makedirs(paths.spool_corrupt, mode=0o700, exist_ok=True)
    dest = join(paths.spool_corrupt, basename(path))
    try:
        posix.replace(path, dest)
    except FileNotFoundError:
        pass
    return dest


def clean_tmp(paths: Paths, older_than: float = 3600.0) -> int:
    """Remove temp files left by hooks that died mid-write (never renamed, so never visible)."""
    removed = 0
    now = time.time()
    try:
        names = posix.listdir(paths.spool_tmp)
    except FileNotFoundError:
        return 0
    for n in names:
        p = join(paths.spool_tmp, n)
        try:
            if now - posix.stat(p).st_mtime > older_than:
                posix.unlink(p)
                removed += 1
        except OSError:
            pass
    return removed


def _unlink(path: str) -> None:
    try:
        posix.unlink(path)
    except FileNotFoundError:
        pass
