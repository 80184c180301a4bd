"""What an imported session shows about the repository it worked in: the files it read or changed,
the commits and branches it named.

Claude Code records no remote, and a checkout on another machine (or a deleted worktree) has no
``.git`` here to follow, so two folders called ``git-sync`` may be one repository on two machines or
two repositories that share a name. What their sessions did tells them apart: one repository's
sessions touch the same files (relative to the checkout: ``src/sync.rs`` on both machines) and name
the same commits. kenning/store/checkouts.py compares what is collected here; the importer stores
it per checkout (``checkout_evidence``) as it stores the events.

Only what the tool calls prove is taken, from the cleaned payloads (the same ones stored as
events): file arguments of the file tools, the files of a patch, file names in a shell command,
commit hashes that git printed, and the branch the agent recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kenning import winpath
from kenning.observer.evidence import READ_TOOLS, SEARCH_TOOLS, SHELL_TOOLS, WRITE_TOOLS

FILE_KEYS = ("file_path", "notebook_path", "filePath", "path")
MAX_PATH = 300
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ b/(.+)$", re.M)
# Words of a shell command that may be a file: no quotes, operators or redirections.
_WORD = re.compile(r"[^\s'\"`;|&<>()]+")
# A file name: folders, then a name with a letter-led extension (not a version number like 1.2.3).
_FILE = re.compile(r"(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,9}")
# Lines git starts with a commit: `git log` (`commit <sha>`, `--oneline`), `rev-parse`, `blame`,
# and what `git commit` prints (`[branch 1a2b3c4] message`).
# Words of a command shaped like a file that are none: an address ("Co-Authored-By: … <noreply@example.com>"
# in a commit message), a range of git revisions ("origin/main...HEAD", "v1.2..v1.3").
_NOT_FILE = re.compile(r"@[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|app|co|me|edu|gov|info|email|xyz|[a-z]{2})$|"
                       r"\.\.", re.IGNORECASE)  # (not "icon@2x.png": a retina image is a file)
_GIT_HASH = re.compile(r"^(?:commit )?([0-9a-f]{7,40})\b|^\[[^\]\s]+(?: \(root-commit\))? ([0-9a-f]{7,40})\]", re.M)
_GIT = re.compile(r"(?:^|[\s;&|(])git\s")


def of_record(rec: dict[str, Any]) -> set[tuple[str, str]]:
    """``(kind, value)`` pairs one stored record shows: ``file``, ``commit``, ``branch``."""
    return set(_items(rec))


def _items(rec: dict[str, Any]) -> Iterator[tuple[str, str]]:
    p = rec.get("payload")
    if not isinstance(p, dict):
        return
    root = str(rec.get("project_root") or "")
    event = rec.get("event")
    if event == "SessionStart":
        branch = p.get("git_branch")
        if isinstance(branch, str) and branch.strip():
            yield "branch", branch.strip()
        commit = p.get("git_commit")
        if isinstance(commit, str) and _is_hash(commit.strip().lower()):
            yield "commit", commit.strip().lower()
        return
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return
    tool = p.get("tool_name")
    raw = p.get("tool_input")
    inp: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if tool in READ_TOOLS or tool in WRITE_TOOLS or tool in SEARCH_TOOLS:
        for key in FILE_KEYS:
            if isinstance(inp.get(key), str):
                yield from _file(inp[key], root)
    if tool == "apply_patch":
        text = inp.get("patch") or inp.get("input") or inp.get("command") or ""
        for m in _PATCH_FILE.finditer(str(text)):
            yield from _file(next(g for g in m.groups() if g), root)
    if tool in SHELL_TOOLS:
        command = inp.get("command")
        command = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        for word in _WORD.findall(command):
            yield from _file(word, root, strict=True)
        if event == "PostToolUse" and _GIT.search(command):
            for m in _GIT_HASH.finditer(_output(p.get("tool_response"))):
                sha = m.group(1) or m.group(2)
                if _is_hash(sha):
                    yield "commit", sha


def _file(path: str, root: str, *, strict: bool = False) -> Iterator[tuple[str, str]]:
    """The file relative to the checkout (``/`` between names), when it is inside it."""
    rel = inside(path.strip(), root)
    if rel is None or not rel or len(rel) > MAX_PATH:
        return
    if strict and (not _FILE.fullmatch(rel) or _NOT_FILE.search(rel)):  # a word of a command: only a file
        return
    yield "file", rel


def inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` with ``/`` between names; None when it is elsewhere or not a path."""
    if not path or "://" in path or any(c in path for c in "*?$~{}\n"):
        return None
    if winpath.is_windows(path):
        return winpath.relative(path, root) if winpath.is_windows(root) else None
    if winpath.is_windows(root):
        path = path.replace("\\", "/")
    if path.startswith("/"):
        base = root.rstrip("/") + "/"
        if not root or not path.startswith(base):
            return None
        path = path[len(base):]
    parts = [b for b in path.split("/") if b and b != "."]
    if not parts or ".." in parts or parts[0].startswith("-"):
        return None
    return "/".join(parts)


def _output(resp: Any) -> str:
    if isinstance(resp, dict):
        return str(resp.get("stdout") or "")
    return resp if isinstance(resp, str) else ""


def _is_hash(s: str) -> bool:
    """A git commit id: 7 to 40 hex digits, with a digit in it (a word like ``deadbeef`` is no commit)."""
    return 7 <= len(s) <= 40 and all(c in "0123456789abcdef" for c in s) and any(c.isdigit() for c in s)
