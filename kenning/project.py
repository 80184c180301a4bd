"""Which project a working directory belongs to. Standard library only (runs in the hook).

A project is named after its git repository's root folder; a linked worktree resolves to
the repository it belongs to, so all worktrees share one memory. Outside git the folder
itself is the project.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from collections.abc import Iterable


def find_root(cwd: str) -> tuple[str, str]:
    """Return ``(project_name, project_root)`` for ``cwd`` without running git."""
    try:
        start = os.path.realpath(cwd or os.getcwd())
    except (OSError, ValueError):
        return "unknown", ""
    d = start
    while True:
        git = os.path.join(d, ".git")
        if os.path.isdir(git):
            return _name(d), d
        if os.path.isfile(git):
            main = _worktree_main(d, git)
            return _name(main), main
        parent = os.path.dirname(d)
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
    if not os.path.isabs(gitdir):
        gitdir = os.path.normpath(os.path.join(worktree, gitdir))
    common = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            rel = fh.read().strip()
        common = os.path.normpath(os.path.join(gitdir, rel))
    except OSError:
        # <repo>/.git/worktrees/<name> without a commondir file
        if os.path.basename(os.path.dirname(gitdir)) == "worktrees":
            common = os.path.dirname(os.path.dirname(gitdir))
    if os.path.basename(common) == ".git":
        return os.path.dirname(common)
    return worktree  # submodules and bare layouts: keep the checkout itself


def _name(root: str) -> str:
    return os.path.basename(root.rstrip(os.sep)) or root or "unknown"


def is_excluded(name: str, root: str, cwd: str, globs: Iterable[str]) -> bool:
    """True when any glob matches the project name, its root or the cwd (``~`` expanded)."""
    for pattern in globs:
        p = os.path.expanduser(pattern.strip())
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
    """A file path relative to the project root when inside it, else unchanged."""
    if not path or not root:
        return path
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path
