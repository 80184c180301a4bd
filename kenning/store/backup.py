"""Online backups of the database: what makes ``kenning repair`` possible when the file itself is lost.

SQLite's backup API (``sqlite3.Connection.backup``) copies the database page by page inside one read
transaction: a consistent snapshot, taken while the worker keeps writing (WAL readers never block
the writer). The worker takes one a day, and at start when the newest is older than a day
(:func:`due`), into ``<data>/backups/`` (0700), each file 0600, written under a temporary name,
checked (``PRAGMA quick_check``) and then renamed, so a file there is always whole. The newest
``backups_keep`` are kept (a setting, default 3; 0 turns them off).

A damaged database is never backed up (the copy would carry the damage over a good backup). Forgetting
resets them (:func:`reset`): every backup is deleted and a fresh one taken from the database as it is
after the forget, so no copy we keep still holds what the user asked us to forget.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass

from kenning.paths import DIR_MODE, FILE_MODE, Paths
from kenning.store.health import uri_path

PREFIX, SUFFIX = "kenning-", ".db"
EVERY_S = 24 * 3600


@dataclass(frozen=True)
class Backup:
    path: str
    taken_at: float


def listed(paths: Paths) -> list[Backup]:
    """The backups on disk, newest first (by the time in their name, then by their number in that second)."""
    try:
        names = os.listdir(paths.backups)
    except OSError:
        return []
    out = []
    for name in names:
        if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
            continue
        stamp = name[len(PREFIX):-len(SUFFIX)]
        try:
            taken = time.mktime(time.strptime(stamp[:15], "%Y%m%d-%H%M%S"))
            nth = int(stamp[16:] or 1)  # a second one taken within the same second: "-2"
        except ValueError:
            continue
        out.append((taken, nth, Backup(os.path.join(paths.backups, name), taken)))
    out.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [b for _t, _n, b in out]


def due(paths: Paths, now: float | None = None) -> bool:
    """Whether a backup should be taken now: none yet, or the newest is a day old."""
    now = time.time() if now is None else now
    found = listed(paths)
    return not found or now - found[0].taken_at >= EVERY_S or found[0].taken_at > now + 3600


def take(paths: Paths, keep: int, now: float | None = None) -> Backup | None:
    """A new backup of ``paths.db`` (then the oldest beyond ``keep`` deleted); None when ``keep`` is 0.
    Raises ``sqlite3.Error``/``OSError`` when the database cannot be read or the copy fails its check."""
    if keep <= 0 or not os.path.exists(paths.db):
        return None
    now = time.time() if now is None else now
    os.makedirs(paths.backups, mode=DIR_MODE, exist_ok=True)
    os.chmod(paths.backups, DIR_MODE)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    dest = os.path.join(paths.backups, f"{PREFIX}{stamp}{SUFFIX}")
    n = 1
    while os.path.exists(dest):
        n += 1
        dest = os.path.join(paths.backups, f"{PREFIX}{stamp}-{n}{SUFFIX}")
    partial = dest + ".partial"
    began = time.time()
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE))
    try:
        src = sqlite3.connect(f"file:{uri_path(paths.db)}?mode=ro", uri=True, timeout=10.0)
        try:
            out = sqlite3.connect(partial)
            try:
                src.backup(out)
                out.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal beside it
                # The API copies pages as they are, free space included: rebuilt, a deleted row's old
                # bytes (a forget's) are in no backup, whether or not the live file still holds them.
                out.execute("VACUUM")
                check = out.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise sqlite3.DatabaseError(f"the backup failed its integrity check: {check}")
            finally:
                out.close()
        finally:
            src.close()
        for extra in ("-wal", "-shm", "-journal"):
            if os.path.exists(partial + extra):
                os.unlink(partial + extra)
        fd = os.open(partial, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(partial, FILE_MODE)
        if _reset_since(paths, began):  # a forget reset the backups while this copy was read: it may hold it
            raise OSError("a forget happened while the backup was taken; it was discarded")
        os.replace(partial, dest)
    except BaseException:
        for p in (partial, partial + "-wal", partial + "-shm", partial + "-journal"):
            if os.path.exists(p):
                os.unlink(p)
        raise
    rotate(paths, keep)
    return Backup(dest, now)


def rotate(paths: Paths, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` backups (and any ``.partial`` left by a crash); returns what went."""
    gone = [b.path for b in listed(paths)[max(0, keep):]]
    try:
        gone += [os.path.join(paths.backups, n) for n in os.listdir(paths.backups) if ".partial" in n]
    except OSError:
        pass
    for p in gone:
        try:
            os.unlink(p)
        except OSError:
            pass
    return gone


def newest_good(paths: Paths) -> tuple[Backup | None, list[str]]:
    """The newest backup that reads and passes its integrity check; and why newer ones were passed over."""
    from kenning.store.identity import APPLICATION_ID

    skipped = []
    for b in listed(paths):
        try:
            conn = sqlite3.connect(f"file:{uri_path(b.path)}?mode=ro", uri=True)
            try:
                app = conn.execute("PRAGMA application_id").fetchone()[0]
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error as e:
            skipped.append(f"{os.path.basename(b.path)}: {e}")
            continue
        if app != APPLICATION_ID or check != "ok":
            skipped.append(f"{os.path.basename(b.path)}: " + ("not a Kenning database" if app != APPLICATION_ID
                                                              else f"integrity check: {check}"))
            continue
        return b, skipped
    return None, skipped


RESET_MARK = ".reset"


def _reset_since(paths: Paths, began: float) -> bool:
    try:
        return os.stat(os.path.join(paths.backups, RESET_MARK)).st_mtime >= began
    except OSError:
        return False


def reset(paths: Paths, keep: int) -> int:
    """After a forget: delete every backup, then take a fresh one from the database as it is now
    (none when ``keep`` is 0, or when there was none). Returns how many were deleted. Never raises:
    a backup that cannot be taken now is taken by the worker's next round; what was deleted stays
    deleted. A backup being taken meanwhile (the worker's) sees the mark and is discarded."""
    try:
        if os.path.isdir(paths.backups):
            os.close(os.open(os.path.join(paths.backups, RESET_MARK), os.O_WRONLY | os.O_CREAT, FILE_MODE))
            os.utime(os.path.join(paths.backups, RESET_MARK))
    except OSError:
        pass
    old = listed(paths)
    for b in old:
        try:
            os.unlink(b.path)
        except OSError:
            pass
    rotate(paths, 0)
    if old:  # none before: the worker takes the first one on its schedule
        try:
            take(paths, keep)
        except (sqlite3.Error, OSError):
            pass
    return len(old)


def after_forget(db_path: str) -> int:
    """:func:`reset` for the data dir of ``db_path``, with the user's ``backups_keep``: the one call
    the forget path makes (kenning/store/forget.py)."""
    from kenning.settings import load

    paths = Paths(os.path.dirname(os.path.abspath(db_path)))
    if os.path.realpath(paths.db) != os.path.realpath(db_path):
        return 0  # not a data dir's database (a file a test or a tool opened): no backups of it are ours
    try:
        keep = load(paths)[0].backups_keep
    except Exception:  # a broken settings file: the default
        keep = 3
    return reset(paths, keep)
