"""Projects: which key a checkout's rows are filed under, and what to call a project.

A key is the canonical path of a repository's main checkout (:mod:`kenning.project`). The
database joins what paths cannot: a checkout whose remote is already known to another
project (a second clone) becomes an alias of that project, and a project whose checkout
turns out to be a clone of a known remote is merged into it (its rows re-keyed). Readers
resolve a key through the aliases (``kenning.project.resolve_key``) before they read.

Display names are the folder names, disambiguated where two projects share one.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from kenning import winpath
from kenning.project import canonical, git_remote, identify, resolve_key

# Tables whose rows carry a project key (re-keyed by a merge).
KEYED_TABLES = ("sessions", "observations", "session_summaries", "embeddings")


def attach(conn: sqlite3.Connection, key: str, *, name: str, root: str, at: float,
           remote: str | None = None) -> str:
    """The key a new session of checkout ``root`` is filed under; registers or joins the project.

    ``remote`` (normalised) is read from the checkout's git config when not given. Call inside
    the transaction that inserts the session.
    """
    key = resolve_key(conn, key)
    if remote is None:
        remote = git_remote(root) if root else ""
    row = conn.execute("SELECT remote FROM projects WHERE key = ?", (key,)).fetchone()
    if remote and (row is None or row[0] != remote):
        other = conn.execute("SELECT key FROM projects WHERE remote = ? AND key != ? ORDER BY first_seen, key "
                             "LIMIT 1", (remote, key)).fetchone()
        if other is not None:
            # Another checkout of a remote already known: one repository, one memory.
            reason, now = f"same remote {remote}", time.time()  # when it was joined, not when the session ran
            if row is None:
                alias(conn, key, str(other[0]), reason, now)
            else:
                merge(conn, key, str(other[0]), reason=reason, at=now)
            key = str(other[0])
            row = (remote,)
    if row is None:
        conn.execute("INSERT INTO projects (key, name, root, remote, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)",
                     (key, name or os.path.basename(root) or key, root, remote, at, at))
    else:
        conn.execute("UPDATE projects SET last_seen = MAX(last_seen, ?), "
                     "root = CASE WHEN ? != '' THEN ? ELSE root END, "
                     "remote = CASE WHEN ? != '' THEN ? ELSE remote END WHERE key = ?",
                     (at, root, root, remote, remote, key))
    return key


def alias(conn: sqlite3.Connection, old: str, new: str, reason: str = "", at: float | None = None) -> None:
    """Record that checkout key ``old`` is filed under project ``new``, and why. Inside a transaction."""
    conn.execute("INSERT OR REPLACE INTO project_aliases (alias, key, reason, joined_at) VALUES (?, ?, ?, ?)",
                 (old, new, reason, at))


def merge(conn: sqlite3.Connection, old: str, new: str, *, reason: str = "", at: float | None = None) -> None:
    """File every row of project ``old`` under ``new``; ``old`` becomes an alias (``reason`` says why).
    Inside a transaction."""
    if old == new:
        return
    for table in KEYED_TABLES:
        conn.execute(f"UPDATE {table} SET project = ? WHERE project = ?", (new, old))
    conn.execute("UPDATE project_aliases SET key = ? WHERE key = ?", (new, old))
    alias(conn, old, new, reason, at)
    seen = conn.execute("SELECT first_seen, last_seen FROM projects WHERE key = ?", (old,)).fetchone()
    if seen is not None:
        conn.execute("UPDATE projects SET first_seen = MIN(first_seen, ?), last_seen = MAX(last_seen, ?) "
                     "WHERE key = ?", (seen[0], seen[1], new))
    conn.execute("DELETE FROM projects WHERE key = ?", (old,))


def key_for_record(rec: dict[str, Any]) -> str:
    """The key a captured record names: ``project_key`` when the hook sent it, else from its root."""
    key = rec.get("project_key")
    if isinstance(key, str) and key:
        return key
    root = str(rec.get("project_root") or "")
    return canonical(root) if root else str(rec.get("project") or "unknown")


# ----------------------------------------------------------------------------- names

def names(conn: sqlite3.Connection, keys: list[str] | None = None) -> dict[str, str]:
    """key -> display name of every project (and of ``keys``, themselves when unknown)."""
    try:
        rows = conn.execute("SELECT key, name, root FROM projects").fetchall()
    except sqlite3.OperationalError:  # before migration 0008
        return {k: k for k in keys or []}
    sharing: dict[str, int] = {}
    for r in rows:
        sharing[str(r[1]).lower()] = sharing.get(str(r[1]).lower(), 0) + 1
    out = {str(key): _label(str(name), str(root or key), sharing[str(name).lower()] > 1) for key, name, root in rows}
    for k in keys or []:
        out.setdefault(k, k)
    return out


def display(conn: sqlite3.Connection, key: str, fallback: str = "") -> str:
    """The display name of one project: its folder name, with its checkout where another shares the name."""
    try:
        rows = conn.execute("SELECT key, name, root FROM projects WHERE name = "
                            "(SELECT name FROM projects WHERE key = ?) COLLATE NOCASE", (key,)).fetchall()
    except sqlite3.Error:  # before migration 0008
        return fallback or key
    mine = next((r for r in rows if r[0] == key), None)
    if mine is None:
        return fallback or key
    return _label(str(mine[1]), str(mine[2] or key), len(rows) > 1)


def _label(name: str, where: str, shared: bool) -> str:
    if not shared:
        return name
    home = os.path.expanduser("~").rstrip("/")
    if home and where.startswith(home + "/"):
        where = "~" + where[len(home):]
    return f"{name} ({where})"


def find(conn: sqlite3.Connection, text: str) -> list[str]:
    """The keys a user's project argument may mean: a key, a path, a display name or a folder name."""
    t = text.strip()
    if not t:
        return []
    if t.startswith(("/", "~", ".")):
        p = os.path.expanduser(t)
        if os.path.exists(p):
            return [resolve_key(conn, identify(p).key)]
    if winpath.is_windows(t):  # a checkout on a Windows machine, however it is spelled
        return [resolve_key(conn, identify(t).key)]
    aliased = resolve_key(conn, t)
    if aliased != t:
        return [aliased]
    try:
        if conn.execute("SELECT 1 FROM projects WHERE key = ?", (t,)).fetchone():
            return [t]
        shown = [k for k, v in names(conn).items() if v == t]
        if shown:
            return shown
        return [str(r[0]) for r in conn.execute("SELECT key FROM projects WHERE name = ? COLLATE NOCASE "
                                                "ORDER BY last_seen DESC", (t,))]
    except sqlite3.OperationalError:  # before migration 0008: keys were names
        return [t]


class AmbiguousProject(ValueError):
    """Several projects answer to the name given; the message lists them."""


def one(conn: sqlite3.Connection, text: str) -> str:
    """The single key ``text`` names (``text`` itself when it names none: it then matches no row)."""
    keys = find(conn, text)
    if len(keys) > 1:
        shown = names(conn, keys)
        raise AmbiguousProject(f"{len(keys)} projects are called {text!r}: "
                               + "; ".join(f"{shown[k]} = {k} ({_sessions(conn, k)})" for k in keys)
                               + ". Give its path.")
    return keys[0] if keys else text.strip()


def _sessions(conn: sqlite3.Connection, key: str) -> str:
    n = int(conn.execute("SELECT COUNT(*) FROM sessions WHERE project = ?", (key,)).fetchone()[0])
    return f"{n} session{'' if n == 1 else 's'}"
