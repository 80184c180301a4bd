"""Whether the database can be read, and if not, why: in one line a user can act on.

An unreadable memory must never pass for an empty one ("no memory of this project yet" would
be false twice: there is memory, and this session may not be saved). Standard library only
and light: the SessionStart hook uses it when it builds the context from the file itself.
"""

from __future__ import annotations

import errno
import os
import sqlite3

OK = "ok"
MISSING = "missing"
NO_SCHEMA = "no-schema"   # created, never migrated (the first worker is starting): truly empty
CORRUPT = "corrupt"
READ_ONLY = "read-only"
FULL = "full"
LOCKED = "locked"
UNREADABLE = "unreadable"


def uri_path(path: str) -> str:
    """Escape a file path for a ``file:`` URI (``?``, ``#`` and ``%`` are syntax there)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def open_readonly(path: str, timeout: float = 10.0) -> sqlite3.Connection:
    """A read-only connection that also works in a read-only data dir.

    SQLite needs to create the ``-shm`` file to read a WAL database; where it cannot (a read-only
    mount), the file is opened ``immutable`` instead: what was checkpointed is readable, what
    only a leftover ``-wal`` holds is not. Raises ``sqlite3.Error`` when the file cannot be read.
    """
    conn = sqlite3.connect(f"file:{uri_path(path)}?mode=ro", uri=True, timeout=timeout, isolation_level=None,
                           check_same_thread=False)
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return conn
    except sqlite3.OperationalError as e:
        conn.close()
        if not (_cannot_open(e) and not writable_dir(os.path.dirname(path)) and os.path.exists(path)):
            raise
    conn = sqlite3.connect(f"file:{uri_path(path)}?mode=ro&immutable=1", uri=True, timeout=timeout,
                           isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA schema_version").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def writable_dir(path: str) -> bool:
    """False on a read-only file system or a directory we may not write (root included: EROFS)."""
    return os.access(path, os.W_OK)


def _cannot_open(e: BaseException) -> bool:
    return getattr(e, "sqlite_errorname", "") == "SQLITE_CANTOPEN" or "unable to open" in str(e)


def classify(path: str, err: BaseException | None = None) -> tuple[str, str]:
    """(kind, one line with the remedy) for a database that could not be opened or read."""
    if not os.path.exists(path):
        return MISSING, f"{path} does not exist yet (the worker creates it)"
    text = f"{type(err).__name__}: {err}" if err is not None else ""
    low = str(err or "").lower()
    name = getattr(err, "sqlite_errorname", "") or ""
    eno = getattr(err, "errno", None)
    folder = os.path.dirname(path)
    if "no such table" in low:
        return NO_SCHEMA, f"{path} has no tables yet (the worker creates them on start)"
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in low or "not a database" in low \
            or "file is encrypted" in low or low.startswith("integrity check"):
        return CORRUPT, corrupt_line(path, str(err))
    if name == "SQLITE_FULL" or "disk is full" in low or eno == errno.ENOSPC:
        return FULL, f"the disk holding {folder} is full: free some space (`kenning doctor` shows how much is left)"
    if name in ("SQLITE_READONLY",) or "readonly" in low or "read-only" in low or eno == errno.EROFS \
            or not writable_dir(folder):
        return READ_ONLY, (f"the data dir {folder} is read-only: nothing can be saved until it is writable again "
                           "(remount it read-write, or set KENNING_DATA_DIR to a writable folder)")
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in low:
        return LOCKED, f"the database {path} is locked by another process ({err}); try again"
    if name == "SQLITE_CANTOPEN" or "unable to open" in low or eno in (errno.EACCES, errno.EPERM):
        return UNREADABLE, f"the database {path} cannot be opened ({err}): check its owner and mode (0600)"
    return UNREADABLE, f"the database {path} cannot be read ({text}): run `kenning doctor`"


def corrupt_line(path: str, detail: str) -> str:
    """What every surface (hook, CLI, MCP, worker API) says about a damaged database."""
    detail = " ".join(detail.split())[:200]
    return f"the database {path} is corrupt ({detail}): run `kenning repair`"


def explain(path: str, err: BaseException | None = None) -> str:
    """The one line every surface gives for a database that cannot be read (and why)."""
    return classify(path, err)[1]


# A damage found by one process (the worker's integrity check, a hook's read) is written beside the
# database, so that every other one says it too, even where what it reads happens to be intact. It
# names the file by inode: a repaired (or replaced) database is a new file, and the note no longer
# applies. It holds SQLite's error, never memory text.
NOTE_NAME = "kenning.damage"


def _note_path(path: str) -> str:
    return os.path.join(os.path.dirname(path), NOTE_NAME)


def note_damage(path: str, message: str) -> None:
    """Remember that the file at ``path`` is damaged (``message``: from :func:`explain`). Never raises."""
    import json

    try:
        st = os.stat(path)
        body = json.dumps({"dev": st.st_dev, "ino": st.st_ino, "message": message[:600]})
        if noted_damage(path) == message[:600]:
            return
        tmp = f"{_note_path(path)}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, body.encode("utf-8", "replace"))
        finally:
            os.close(fd)
        os.replace(tmp, _note_path(path))
    except (OSError, ValueError):
        pass  # a read-only or full disk: the damage is still told by whoever meets it


def noted_damage(path: str) -> str:
    """The damage noted for the file now at ``path``, or ''."""
    import json

    try:
        with open(_note_path(path), encoding="utf-8") as fh:
            note = json.loads(fh.read(4096))
        st = os.stat(path)
    except (OSError, ValueError):
        return ""
    if not isinstance(note, dict) or (note.get("dev"), note.get("ino")) != (st.st_dev, st.st_ino):
        return ""
    return str(note.get("message") or "")


def clear_damage(path: str) -> None:
    try:
        os.unlink(_note_path(path))
    except OSError:
        pass


def probe(path: str) -> tuple[str, str]:
    """(kind, message) of the database file now: OK, MISSING, or why it cannot be read."""
    if not os.path.exists(path):
        return classify(path)
    try:
        conn = open_readonly(path, timeout=2.0)
    except sqlite3.Error as e:
        return classify(path, e)
    try:
        conn.execute("SELECT 1 FROM observations LIMIT 1").fetchall()
        return OK, ""
    except sqlite3.Error as e:
        return classify(path, e)
    finally:
        conn.close()
