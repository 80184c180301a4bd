"""What could not be saved, counted where a full disk cannot stop the count. Standard library only.

A hook that cannot write an event to the spool (disk full, read-only, no permission) has lost
it; the user must hear of it from ``doctor``, ``status`` and the next session's context. The
count lives in ``<data>/losses``, a file of exactly ``SIZE`` bytes created ahead of need (at
install and at every worker start) and only ever rewritten in place: overwriting blocks a file
already owns needs no free space. Where even that fails (a read-only data dir, the file never
created), a second copy goes to a private folder of this user in RAM (``$XDG_RUNTIME_DIR`` or
``/dev/shm``), which survives until reboot.
"""

from __future__ import annotations

import errno
import os
import time

from kenning import fastjson
from kenning.paths import FILE_MODE, Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any

SIZE = 4096
MAX_SESSIONS = 12  # session ids kept by name; the rest only counted
REASONS = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system",
           errno.EACCES: "permission denied", errno.EPERM: "permission denied", errno.ENOENT: "data dir missing",
           errno.ENOTDIR: "spool is not a directory"}


def reason_of(err: BaseException) -> str:
    """'disk full', 'read-only file system' …: why a write failed, in words."""
    no = getattr(err, "errno", None)
    if isinstance(no, int) and no in REASONS:
        return REASONS[no]
    return str(getattr(err, "strerror", None) or err or type(err).__name__)


def prepare(paths: Paths) -> bool:
    """Create the count file at full size if it is missing (while there is room). True when it exists."""
    try:
        fd = os.open(path_of(paths), os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return True
    except OSError:
        return False
    try:
        _pwrite_all(fd, _encode(_empty()))
        os.fsync(fd)
        return True
    except OSError:
        try:
            os.unlink(path_of(paths))  # a short file could not hold the count later
        except OSError:
            pass
        return False
    finally:
        os.close(fd)


def record(paths: Paths, session_id: str, event: str, err: BaseException, n: int = 1) -> bool:
    """Count ``n`` events of ``session_id`` that could not be saved; True when the count was kept."""
    reason = reason_of(err)
    kept = _update(path_of(paths), session_id, event, reason, n, create=False)
    if not kept:
        fallback = _fallback_path(paths)
        kept = fallback is not None and _update(fallback, session_id, event, reason, n, create=True)
    return kept


def read(paths: Paths) -> dict[str, Any]:
    """Every loss still on record (the data dir's count and the RAM copy, merged)."""
    out = _empty()
    for path in (path_of(paths), _fallback_path(paths, create=False)):
        if not path:
            continue
        try:
            with open(path, "rb") as fh:
                data = _decode(fh.read(SIZE))
        except OSError:
            continue
        out = _merge(out, data)
    return out


def clear(paths: Paths) -> None:
    """Forget the record once the user has read it (the file keeps its size)."""
    for path in (path_of(paths), _fallback_path(paths, create=False)):
        if not path:
            continue
        try:
            fd = os.open(path, os.O_WRONLY)
        except OSError:
            continue
        try:
            _pwrite_all(fd, _encode(_empty()))
        except OSError:
            pass
        finally:
            os.close(fd)


def describe(rec: dict[str, Any]) -> str:
    """'24 events of 1 session could not be saved on 2026-12-01: disk full', or '' when none."""
    events = int(rec.get("events") or 0)
    if not events:
        return ""
    sessions = int(rec.get("session_count") or 0)
    first = time.strftime("%Y-%m-%d", time.localtime(float(rec.get("first_at") or 0)))
    last = time.strftime("%Y-%m-%d", time.localtime(float(rec.get("last_at") or 0)))
    when = f"on {first}" if first == last else f"between {first} and {last}"
    reasons = rec.get("reasons") or {}
    why = ", ".join(sorted(reasons, key=lambda r: -int(reasons[r]))) or "unknown"
    ids = list(rec.get("sessions") or {})
    named = f" (session {', '.join(ids[:3])}{' …' if len(ids) > 3 else ''})" if ids else ""
    return (f"{events} event{'s' if events != 1 else ''} of {sessions} session{'s' if sessions != 1 else ''}"
            f"{named} could not be saved {when}: {why}")


def path_of(paths: Paths) -> str:
    return os.path.join(paths.root, "losses")


# ------------------------------------------------------------------------------ internals

def _empty() -> dict[str, Any]:
    return {"v": 1, "events": 0, "session_count": 0, "sessions": {}, "reasons": {}, "first_at": 0, "last_at": 0}


def _encode(rec: dict[str, Any]) -> bytes:
    sessions = dict(rec.get("sessions") or {})
    while True:
        data = fastjson.dumps({**rec, "sessions": sessions}).encode("ascii")
        if len(data) < SIZE or not sessions:
            break
        sessions.pop(next(iter(sessions)))  # the oldest names give way; the counts stay
    return data[:SIZE - 1].ljust(SIZE - 1) + b"\n"


def _decode(data: bytes) -> dict[str, Any]:
    try:
        rec = fastjson.loads(data.decode("ascii", "replace").strip() or "{}")
    except ValueError:
        return _empty()
    return rec if isinstance(rec, dict) else _empty()


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    if not b.get("events"):
        return a
    if not a.get("events"):
        return {**_empty(), **b}
    reasons = dict(a.get("reasons") or {})
    for k, v in (b.get("reasons") or {}).items():
        reasons[k] = int(reasons.get(k, 0)) + int(v)
    sessions = {**(a.get("sessions") or {}), **(b.get("sessions") or {})}
    return {"v": 1, "events": int(a["events"]) + int(b["events"]),
            "session_count": max(len(sessions), int(a.get("session_count") or 0) + int(b.get("session_count") or 0)),
            "sessions": sessions, "reasons": reasons,
            "first_at": min(float(a.get("first_at") or 0) or 9e18, float(b.get("first_at") or 0) or 9e18),
            "last_at": max(float(a.get("last_at") or 0), float(b.get("last_at") or 0))}


def _update(path: str, session_id: str, event: str, reason: str, n: int, *, create: bool) -> bool:
    import fcntl

    flags = os.O_RDWR | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, FILE_MODE)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # hooks of parallel sessions count into the same file
        if create and os.fstat(fd).st_uid != os.getuid():
            return False
        rec = _decode(os.pread(fd, SIZE, 0))
        if not rec.get("events"):
            rec = _empty()
        now = time.time()
        sid = session_id[:64]
        sessions = rec.setdefault("sessions", {})
        if sid not in sessions:
            rec["session_count"] = int(rec.get("session_count") or 0) + 1
        sessions[sid] = int(sessions.pop(sid, 0)) + n  # re-inserted: the newest names last
        rec["events"] = int(rec.get("events") or 0) + n
        reasons = rec.setdefault("reasons", {})
        reasons[reason] = int(reasons.get(reason, 0)) + n
        rec["first_at"] = rec.get("first_at") or now
        rec["last_at"] = now
        rec["last_event"] = event[:40]
        _pwrite_all(fd, _encode(rec))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _pwrite_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    off = 0
    while off < len(data):
        off += os.pwrite(fd, view[off:], off)


def _fallback_path(paths: Paths, create: bool = True) -> str | None:
    """``<RAM dir>/kenning-<uid>/losses-<hash of the data dir>``, in a folder only this user can use."""
    base = os.environ.get("XDG_RUNTIME_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else "")
    if not base:
        return None
    folder = os.path.join(base, f"kenning-{os.getuid()}")
    try:
        if create:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # somebody else's, or a symlink: never follow it
    import zlib

    return os.path.join(folder, f"losses-{zlib.crc32(paths.root.encode('utf-8', 'replace')):08x}")
