"""Checkouts of one repository that no ``.git`` and no remote join: imported sessions from folders
that are not on this machine.

Live, a project is found by following the checkout's ``.git`` (kenning/project.py) and joined by
its remote (kenning/store/projects.py). An imported session's folder may be on another machine
or gone, and Claude Code records no remote, so after an import the same repository can stand as
several projects: ``/Users/alice/work/git-sync`` and ``/home/coder/git-sync``, or a worktree
``~/dev/worktrees/kind-canyon/flutter-docker-image`` beside ``~/dev/flutter-docker-image``. Two
rules join them, and only checkouts whose folder is not on this disk are ever moved (a folder
that is here keeps its live identity; others may join it):

* **a worktree** whose path does not say where its main checkout is (kenning/layouts.py) joins
  the one checkout named like its repository; where several share that name, the evidence below
  must pick exactly one;
* **checkouts with the same folder name**, or a folder beside another and named after it
  (``~/src/api-fix-login`` by ``~/src/api``, or ``~/src/wt/api-fix-login`` in a folder beside it), join
  when their sessions show they are one repository: a commit in common, or files in common (relative to
  each checkout, leaving out names every repository has, like ``README.md`` or ``package.json``): at
  least :data:`MIN_SHARED_FILES` and :data:`MIN_SHARED_FRACTION` of the smaller side's, or a branch
  other than the usual ones plus a file. Two repositories that are both called ``api`` and share
  nothing of the kind stay apart, and so do checkouts of two different known remotes.

:func:`join_checkouts` runs after each import, inside one transaction, until nothing more
joins; joins go through ``projects.merge`` with the reason, which ``kenning doctor`` and the
import summary show. The evidence is fixed when the sessions are stored, so running it twice
joins nothing more: importing twice changes nothing.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from kenning import winpath
from kenning.layouts import Layout, layout
from kenning.store.projects import merge

MIN_SHARED_FILES = 3
MIN_SHARED_FRACTION = 0.2
SHOWN_FILES = 3  # files named in a reason
# Files every repository of a kind has: sharing them says nothing about being one repository.
COMMON_NAMES = frozenset({
    "readme", "readme.md", "readme.rst", "readme.txt", "changelog.md", "contributing.md", "license", "license.md",
    "license.txt", "notice", "authors", "code_of_conduct.md", "security.md", "claude.md", "agents.md", "gemini.md",
    ".gitignore", ".gitattributes", ".editorconfig", ".env", ".env.example", ".env.local", ".dockerignore",
    ".prettierrc", ".eslintrc.js", ".eslintrc.json", "eslint.config.js", "eslint.config.mjs",
    "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
    "tsconfig.json", "jsconfig.json", "vite.config.ts", "vite.config.js", "next.config.js", "next.config.mjs",
    "cargo.toml", "cargo.lock", "go.mod", "go.sum", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
    "uv.lock", "poetry.lock", "pipfile", "pipfile.lock", "tox.ini", "pytest.ini", "gemfile", "gemfile.lock",
    "makefile", "justfile", "dockerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
    "index.ts", "index.tsx", "index.js", "index.html", "main.ts", "main.js", "app.ts", "app.tsx", "app.js",
    "main.go", "main.rs", "lib.rs", "mod.rs", "build.rs", "__init__.py", "__main__.py", "main.py", "app.py",
    "conftest.py", "manage.py", "settings.py", "program.cs", "pom.xml", "build.gradle", "settings.gradle",
    "mise.toml", ".mise.toml", ".tool-versions", ".nvmrc", ".python-version", "renovate.json", "biome.json",
    ".pre-commit-config.yaml", "lefthook.yml", "turbo.json", "vitest.config.ts", "jest.config.js",
})
COMMON_DIRS = ("node_modules/", ".git/", ".github/", ".vscode/", ".idea/", ".claude/", ".cursor/", "vendor/",
               "target/", "dist/", "build/", ".venv/", "venv/", "__pycache__/", ".next/", "coverage/")
USUAL_BRANCHES = frozenset({"main", "master", "develop", "development", "dev", "trunk", "head", "staging",
                            "production", "prod", "release", "gh-pages"})
COMMIT_PREFIX = 7  # commits are compared by their short form: a log's `1a2b3c4` is the session_meta's full id


@dataclass(frozen=True)
class Join:
    """One checkout filed under another project, and why."""

    checkout: str  # the key merged away (its rows now carry ``into``)
    into: str
    reason: str
    at: float | None = None

    def line(self) -> str:
        return f"{_short(self.checkout)} → {_short(self.into)}: {self.reason}"


@dataclass
class _Evidence:
    files: set[str] = field(default_factory=set)  # specific files, lower case
    commits: set[str] = field(default_factory=set)  # short ids
    branches: set[str] = field(default_factory=set)  # other than the usual ones


@dataclass
class _Project:
    key: str
    name: str
    root: str
    remote: str
    first_seen: float
    here: bool  # the checkout is on this disk: it keeps its live identity
    layout: Layout


def add_evidence(conn: sqlite3.Connection, checkout: str, items: Iterable[tuple[str, str]]) -> None:
    """Record what a session of ``checkout`` (its own key, before aliases) showed. Inside a transaction."""
    conn.executemany("INSERT OR IGNORE INTO checkout_evidence (checkout, kind, value) VALUES (?, ?, ?)",
                     [(checkout, kind, value) for kind, value in items])


def forget_evidence(conn: sqlite3.Connection, project: str) -> None:
    """Drop what the sessions of every checkout filed under ``project`` showed (a forgotten project)."""
    conn.execute("DELETE FROM checkout_evidence WHERE checkout = ? "
                 "OR checkout IN (SELECT alias FROM project_aliases WHERE key = ?)", (project, project))


def join_checkouts(conn: sqlite3.Connection, at: float) -> list[Join]:
    """Join every checkout the rules above join, one at a time until none is left; the joins made.
    Inside a transaction."""
    made: list[Join] = []
    while True:
        step = _next(conn)
        if step is None:
            return made
        merge(conn, step.checkout, step.into, reason=step.reason, at=at)
        made.append(Join(step.checkout, step.into, step.reason, at))


def joins(conn: sqlite3.Connection, limit: int = 50, since: float | None = None) -> list[Join]:
    """The joins recorded with a reason (those made at ``since`` or later), newest first."""
    try:
        rows = conn.execute("SELECT alias, key, reason, joined_at FROM project_aliases WHERE reason != '' "
                            "AND joined_at >= ? ORDER BY joined_at DESC, alias LIMIT ?",
                            (since if since is not None else float("-inf"), limit)).fetchall()
    except sqlite3.OperationalError:  # before migration 0027
        return []
    return [Join(str(a), str(k), str(r), j) for a, k, r, j in rows]


def _next(conn: sqlite3.Connection) -> Join | None:
    """The first join the rules make among the projects as they stand (a deterministic order)."""
    projects = _projects(conn)
    by_name: dict[str, list[_Project]] = {}
    for p in projects:
        by_name.setdefault(p.name.lower(), []).append(p)
    cache: dict[str, _Evidence] = {}

    def evidence(p: _Project) -> _Evidence:
        if p.key not in cache:
            cache[p.key] = _evidence_of(conn, p.key)
        return cache[p.key]

    for p in projects:  # worktrees first: a name is enough when it names one checkout
        if p.here or not p.layout.worktree:
            continue
        for name in p.layout.names:
            mains = [q for q in by_name.get(name.lower(), []) if q.key != p.key and not q.layout.worktree
                     and _compatible(p, q)]
            if not mains:
                continue
            where = f"a worktree ({p.layout.rule})"
            if len(mains) == 1:
                return Join(p.key, mains[0].key, f"{where} of the only checkout named {name}")
            chosen = [(q, why) for q in mains if (why := same_repository(evidence(p), evidence(q)))]
            if len(chosen) == 1:
                return Join(p.key, chosen[0][0].key, f"{where} of {name}, {chosen[0][1]}")
            break  # several checkouts of that name and nothing to tell them apart: it stays apart
    for name in sorted(by_name):
        group = sorted(by_name[name], key=lambda q: (not q.here, q.layout.worktree, q.first_seen, q.key))
        for i, p in enumerate(group):
            if p.here:
                continue
            found = [(q, why) for q in group[:i]
                     if _compatible(p, q) and (why := same_repository(evidence(p), evidence(q)))]
            if len(found) == 1:  # two or more: wait until they are one, or stay apart
                return Join(p.key, found[0][0].key, f"same folder name {p.name}, {found[0][1]}")
    for p in projects:  # a worktree beside its repository, named after it: ~/src/api-fix-login by ~/src/api
        if p.here:
            continue
        found = [(q, why) for q in projects if q.key != p.key and _beside(p, q) and _compatible(p, q)
                 and (why := same_repository(evidence(p), evidence(q)))]
        if len(found) == 1:
            q, why = found[0]
            return Join(p.key, q.key, f"a checkout beside {q.name} named after it ({p.name}), {why}")
    return None


def _beside(p: _Project, q: _Project) -> bool:
    """``p``'s folder is named after ``q``'s and sits next to it (``~/src/api-fix-login`` by ``~/src/api``) or in
    a folder next to it (``~/src/wt/api-fix-login``, ``~/src/api-trees/api-fix-login``: a folder of worktrees)."""
    name, other = p.name.lower(), q.name.lower()
    if q.layout.worktree or len(name) <= len(other) + 1 or not name.startswith(other) or name[len(other)] not in "-_.":
        return False
    return _parent(q.root) in (_parent(p.root), _parent(_parent(p.root)))


def _parent(root: str) -> str:
    if winpath.is_windows(root):
        return winpath.key(root).rpartition("\\")[0]
    return root.rstrip("/").rpartition("/")[0]


def same_repository(a: _Evidence, b: _Evidence) -> str:
    """Why two checkouts' sessions show one repository ('' when they do not)."""
    files = sorted(a.files & b.files)
    shown = ", ".join(files[:SHOWN_FILES]) + (", …" if len(files) > SHOWN_FILES else "")
    with_files = f"; {len(files)} file(s) in common: {shown}" if files else ""
    commits = sorted(a.commits & b.commits)
    if commits:
        return f"commit {commits[0]} in both" + with_files
    smaller = min(len(a.files), len(b.files))
    if len(files) >= MIN_SHARED_FILES and len(files) >= MIN_SHARED_FRACTION * smaller:
        return f"{len(files)} file(s) in common: {shown}"
    branches = sorted(a.branches & b.branches)
    if branches and files:
        return f"branch {branches[0]} in both" + with_files
    return ""


def specific(path: str) -> bool:
    """A file that says which repository it is in (not one every repository of a kind has)."""
    p = path.lower()
    return not p.startswith(COMMON_DIRS) and p.rsplit("/", 1)[-1] not in COMMON_NAMES


def _compatible(a: _Project, b: _Project) -> bool:
    """Checkouts of two different known remotes are two repositories, whatever they share."""
    return not (a.remote and b.remote and a.remote != b.remote)


def _projects(conn: sqlite3.Connection) -> list[_Project]:
    out = []
    for key, name, root, remote, first in conn.execute(
            "SELECT key, name, root, remote, first_seen FROM projects WHERE root != '' ORDER BY first_seen, key"):
        root = str(root)
        here = not winpath.is_windows(root) and os.path.isdir(root)
        out.append(_Project(str(key), str(name), root, str(remote or ""), float(first), here, layout(root)))
    return out


def _evidence_of(conn: sqlite3.Connection, key: str) -> _Evidence:
    """What the sessions of every checkout filed under project ``key`` showed."""
    ev = _Evidence()
    for kind, value in conn.execute(
            "SELECT kind, value FROM checkout_evidence WHERE checkout = ? "
            "OR checkout IN (SELECT alias FROM project_aliases WHERE key = ?)", (key, key)):
        v = str(value)
        if kind == "file" and specific(v):
            ev.files.add(v.lower())
        elif kind == "commit" and len(v) >= COMMIT_PREFIX:
            ev.commits.add(v[:COMMIT_PREFIX].lower())
        elif kind == "branch" and v.lower() not in USUAL_BRANCHES:
            ev.branches.add(v)
    return ev


def _short(key: str) -> str:
    home = os.path.expanduser("~").rstrip("/")
    return "~" + key[len(home):] if home and key.startswith(home + "/") else key
