"""Which project a past session belongs to, from what its transcript recorded.

The paths inside an imported transcript usually do not exist on this machine, so ``find_root``
cannot follow a worktree's ``.git`` file to its repository. What the transcript recorded stands
in for it:

* the path itself, read by the worktree conventions of kenning/layouts.py: Claude Code's
  ``<repo>/.claude/worktrees/<name>`` belongs to ``<repo>``; a folder in a store of worktrees
  (``~/.codex/worktrees/<id>/<repo>``, ``<anything>/worktrees/<name>/<repo>``) is a checkout called
  ``<repo>`` whose main checkout the import joins it to afterwards (kenning/store/checkouts.py);
  a Windows path (``C:\\Users\\me\\repo``) is read the same way, never as a folder of this machine;
* the repository's remote: Codex writes it (``session_meta.payload.git.repository_url``),
  Claude Code names the repository of a pull request the session opened (``pr-link`` lines).

The remote goes to ``kenning.store.projects.attach``, which files every checkout of one remote
under one project, as it does for live sessions. A remote only ever joins checkouts that name the
same repository; two repositories sharing a folder name stay apart unless what their sessions did
shows they are one (kenning/store/checkouts.py).
"""

from __future__ import annotations

import os

from kenning import winpath
from kenning.layouts import layout
from kenning.project import find_root, normalize_remote


def checkout(cwd: str) -> tuple[str, str]:
    """``(name, root)`` of the checkout ``cwd`` was in: ``find_root`` where the folder exists here,
    else what its path says (kenning/layouts.py). A POSIX path still goes through ``find_root``: a
    main checkout the path locates, or a folder above it, may be on this disk."""
    if not cwd or (not winpath.is_windows(cwd) and os.path.isdir(cwd)):
        return find_root(cwd)
    found = layout(cwd)
    if winpath.is_windows(cwd):
        return found.name, found.root
    real = os.path.realpath(found.root)
    name, root = find_root(real)
    return (found.name, root) if root == real else (name, root)


def remote_of_url(url: object) -> str:
    """A recorded repository URL as ``kenning.project`` spells remotes ('' when there is none)."""
    return normalize_remote(url) if isinstance(url, str) and url.strip() else ""


def remote_of_pr(pr_url: object, pr_repository: object, name: str) -> str:
    """The remote a Claude Code ``pr-link`` line names, when that repository is called ``name``.

    A session may open a pull request in another repository than its own (a dependency, an
    upstream): only a repository of the checkout's own name is taken as its remote.
    """
    if not isinstance(pr_repository, str) or pr_repository.count("/") != 1:
        return ""
    repo = pr_repository.rsplit("/", 1)[1]
    if not name or repo.lower().removesuffix(".git") != name.lower():
        return ""
    host = "github.com"
    if isinstance(pr_url, str) and "://" in pr_url:
        host = pr_url.split("://", 1)[1].split("/", 1)[0] or host
    return normalize_remote(f"https://{host}/{pr_repository}")
