"""Which project a past session belongs to, from what its transcript recorded.

The paths inside an imported transcript usually do not exist on this machine, so ``find_root``
cannot follow a worktree's ``.git`` file to its repository. What the transcript recorded stands
in for it:

* a folder of a known worktree convention: Claude Code's ``<repo>/.claude/worktrees/<name>``
  belongs to ``<repo>``; Codex's ``~/.codex/worktrees/<id>/<repo>`` is a checkout called ``<repo>``
  (where the repository lives is not in the path: its remote joins it to the others);
* the repository's remote: Codex writes it (``session_meta.payload.git.repository_url``),
  Claude Code names the repository of a pull request the session opened (``pr-link`` lines).

The remote goes to ``kenning.store.projects.attach``, which files every checkout of one remote
under one project, as it does for live sessions. A remote only ever joins checkouts that name the
same repository; two repositories sharing a folder name stay apart.
"""

from __future__ import annotations

import os

from kenning.project import find_root, normalize_remote

CLAUDE_WORKTREES = "/.claude/worktrees/"
CODEX_WORKTREES = "/.codex/worktrees/"


def checkout(cwd: str) -> tuple[str, str]:
    """``(name, root)`` of the checkout ``cwd`` was in: ``find_root`` where the folder exists here,
    else the worktree conventions above, else the folder itself."""
    if not cwd or os.path.isdir(cwd):
        return find_root(cwd)
    path = cwd.rstrip("/")
    i = path.find(CLAUDE_WORKTREES)
    if i > 0:
        return find_root(path[:i])
    i = path.find(CODEX_WORKTREES)
    if i >= 0:
        parts = path[i + len(CODEX_WORKTREES):].split("/")
        if len(parts) >= 2 and parts[0] and parts[1]:  # <id>/<repo>[/sub/dir]
            return find_root(path[:i + len(CODEX_WORKTREES)] + parts[0] + "/" + parts[1])
    return find_root(cwd)


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
