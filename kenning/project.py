"""Which project a working directory belongs to. Standard library only (runs in the hook).

A project is one repository, whatever its folder is called. ``find_root`` finds the main
checkout: a linked worktree resolves to the repository it belongs to, a subdirectory to its
repository, a symlink to its target; outside git the folder itself is the project. Its
*key* is the canonical path of that checkout (case-folded on a case-insensitive file
system), so two repositories that share a folder name never share memory. The folder name
stays the display name.

A Windows path (``C:\\Users\\me\\repo``, as agents on Windows record their folder) is never
looked up on this disk nor resolved against this process's folder: it is named by its last
folder and keyed by its normalised, lower-cased spelling (kenning/winpath.py), with the worktree
conventions of kenning/layouts.py.

What no path can tell (two clones of one remote are one project; a folder that was renamed)
the database joins: the worker records each checkout's remote and maps a new checkout of a
known remote onto that project's key (``project_aliases``); readers resolve a key through
:func:`resolve_key` before they read. Imported sessions whose folders are not on this machine
are joined by what their transcripts show (kenning/store/checkouts.py).
"""

from __future__ import annotations

import posix  # os costs a hook ~1 ms at import (see kenning.paths)

from kenning import winpath
from kenning.paths import SEP, basename, dirname, expanduser, isdir, isfile, join, normpath, realpath

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from collections.abc import Iterable
    from typing import Any


def find_root(cwd: str) -> tuple[str, str]:
    """Return ``(project_name, project_root)`` for ``cwd`` without running git."""
    if winpath.is_windows(cwd):
        from kenning.layouts import layout  # only for Windows paths: the hook's usual path stays short

        found = layout(cwd)
        return found.name, found.root
    try:
        start = realpath(cwd or posix.getcwd())
    except (OSError, ValueError):
        return "unknown", ""
    d = start
    while True:
        git = join(d, ".git")
        if isdir(git):
            return _name(d), d
        if isfile(git):
            main = _worktree_main(d, git)
            return _name(main), main
        parent = dirname(d)
        if parent == d:
            return _name(start), start
        d = parent


def _worktree_main(worktree: str, git_file: str) -> str:
    """For a linked worktree (``.git`` is a file) return the main checkout's root."""
    try:
        with open(git_file, encoding="utf-8", errors="replace") as fh:
            line = fh.readline().strip()
    except OSError:
        return worktree
    if not line.startswith("gitdir:"):
        return worktree
    gitdir = line[len("gitdir:"):].strip()
    if not gitdir.startswith(SEP):
        gitdir = normpath(join(worktree, gitdir))
    common = gitdir
    try:
        with open(join(gitdir, "commondir"), encoding="utf-8") as fh:
            rel = fh.read().strip()
        common = normpath(join(gitdir, rel))
    except OSError:
        # <repo>/.git/worktrees/<name> without a commondir file
        if basename(dirname(gitdir)) == "worktrees":
            common = dirname(dirname(gitdir))
    if basename(common) == ".git":
        return dirname(common)
    return worktree  # submodules and bare layouts: keep the checkout itself


class Project:
    """Where a working directory belongs: the key rows are filed under, the display name, the checkout."""

    __slots__ = ("key", "name", "root")

    def __init__(self, key: str, name: str, root: str) -> None:
        self.key = key
        self.name = name
        self.root = root

    def __repr__(self) -> str:
        return f"Project(key={self.key!r}, name={self.name!r}, root={self.root!r})"


def identify(cwd: str) -> Project:
    """The project of ``cwd``: its key (before any alias the database knows), name and root."""
    name, root = find_root(cwd)
    return Project(project_key(root, name), name, root)


def project_key(root: str, name: str = "") -> str:
    """The key of a checkout: its canonical path (the name alone when no path is known)."""
    return canonical(root) if root else (name or "unknown")


def canonical(path: str) -> str:
    """``path`` resolved (symlinks) and, on a case-insensitive file system, lower-cased.

    Two spellings of one folder (``~/Src/API`` and ``~/src/api`` on macOS) must give one key;
    the probe is one ``stat`` of the case-swapped path, which fails at once where case matters.
    A Windows path is never on this disk: its key is its normalised spelling in lower case.
    """
    if winpath.is_windows(path):
        return winpath.key(path)
    try:
        real = realpath(path)
    except (OSError, ValueError):
        return path
    swapped = real.swapcase()
    if swapped == real:
        return real
    try:
        a, b = posix.stat(real), posix.stat(swapped)
    except (OSError, ValueError):
        return real
    return real.lower() if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) else real


def resolve_key(conn: Any, key: str) -> str:
    """The key rows of ``key`` are filed under: itself, or the project an alias maps it to.

    ``conn`` is any DB-API connection (``sqlite3`` or the hook's ``_sqlite3``); a database
    without the table (older than migration 0008) answers ``key`` itself.
    """
    try:
        row = conn.execute("SELECT key FROM project_aliases WHERE alias = ?", (key,)).fetchone()
    except Exception:
        return key
    return str(row[0]) if row else key


def git_remote(root: str) -> str:
    """The normalised URL of the checkout's ``origin`` (else first) remote; '' when there is none.

    Read from the repository's ``config`` file, never by running git. Credentials in the URL
    are dropped: the remote is stored, and a token in it must never be.
    """
    gitdir = _git_dir(root)
    if not gitdir:
        return ""
    try:
        with open(join(gitdir, "config"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(262_144)
    except OSError:
        return ""
    remotes: dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = line[1:line.find("]")] if "]" in line else line[1:]
            kind, _, sub = head.partition(" ")
            section = sub.strip().strip('"') if kind.strip().lower() == "remote" else ""
            continue
        if section and "=" in line:
            k, _, v = line.partition("=")
            if k.strip().lower() == "url" and section not in remotes:
                remotes[section] = v.strip().strip('"')
    url = remotes.get("origin") or next(iter(remotes.values()), "")
    return normalize_remote(url, root) if url else ""


def normalize_remote(url: str, root: str = "") -> str:
    """One spelling per remote: ``git@host:a/b.git``, ``https://u:tok@Host/a/b`` → ``host/a/b``.

    Scheme, user, password and port go; case is folded (hosts ignore it, and so do the big
    forges for paths); a local remote becomes its canonical path.
    """
    u = url.strip()
    if not u:
        return ""
    if u.startswith("file://"):
        u = u[len("file://"):]
    elif "://" in u:
        u = u.split("://", 1)[1]
        host, _, path = u.partition("/")
        host = host.rpartition("@")[2].partition(":")[0]
        return _strip_git(f"{host}/{path}").lower()
    elif ":" in u and "/" not in u.split(":", 1)[0] and not u.startswith("/") and not winpath.is_windows(u):
        host, _, path = u.partition(":")  # scp-like user@host:path
        return _strip_git(f"{host.rpartition('@')[2]}/{path.lstrip('/')}").lower()
    if winpath.is_windows(u):  # a remote on a Windows disk or share: never this machine's folder
        return _strip_git(winpath.key(u))
    if not u.startswith(SEP):
        u = join(root or posix.getcwd(), u)
    return _strip_git(canonical(normpath(u)))


def _strip_git(s: str) -> str:
    s = s.rstrip("/")
    return s[:-4] if s.endswith(".git") else s


def _git_dir(root: str) -> str:
    """The git directory holding the checkout's ``config`` ('' outside git, or on a Windows machine)."""
    if not root or winpath.is_windows(root):
        return ""
    dot = join(root, ".git")
    if isdir(dot):
        return dot
    if not isfile(dot):
        return ""
    try:
        with open(dot, encoding="utf-8", errors="replace") as fh:
            line = fh.readline().strip()
    except OSError:
        return ""
    if not line.startswith("gitdir:"):
        return ""
    gitdir = line[len("gitdir:"):].strip()
    if not gitdir.startswith(SEP):
        gitdir = normpath(join(root, gitdir))
    try:
        with open(join(gitdir, "commondir"), encoding="utf-8") as fh:
            gitdir = normpath(join(gitdir, fh.read().strip()))
    except OSError:
        pass
    return gitdir


def _name(root: str) -> str:
    return basename(root.rstrip(SEP)) or root or "unknown"


def is_excluded(name: str, root: str, cwd: str, globs: Iterable[str]) -> bool:
    """True when any glob matches the project name, its root or the cwd (``~`` expanded)."""
    for pattern in globs:
        p = expanduser(pattern.strip())
        if not p:
            continue
        if glob_match(name, p):
            return True
        # "~/clients/acme/*" means the folder and everything in it, the folder itself included.
        base = p[:-2] if p.endswith("/*") else p.rstrip("/")
        for path in (root, cwd):
            if path and (glob_match(path, p) or path == base or glob_match(path, base + "/*")):
                return True
    return False


def glob_match(text: str, pattern: str) -> bool:
    """Shell-style match with ``*`` and ``?`` (case-sensitive; ``*`` also crosses ``/``).

    ``fnmatch`` would import ``re`` (~5 ms in every hook); classes like ``[ab]`` still go to it.
    """
    if "[" in pattern:
        from fnmatch import fnmatchcase

        return fnmatchcase(text, pattern)
    t = p = 0
    star = -1
    mark = 0
    while t < len(text):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == text[t]):
            t += 1
            p += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def relative(path: str, root: str) -> str:
    """A file path relative to the project root when inside it, else unchanged. Inside a Windows
    checkout the answer uses ``/`` (``src/Program.cs``), as a POSIX checkout of the same repository
    spells it."""
    if not path or not root:
        return path
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    if winpath.is_windows(root):
        inside = winpath.relative(path, root)
        if inside is not None:
            return inside
    return path
