"""What a turn's last ``git status`` says is not committed, brought forward by what the turn did after it.

Edits the agent made are tracked by its tools; a file changed another way (by the user, by an earlier
session, by a script, or stashed and restored) is known only from git's own words. The last status of a
turn is the working tree as it stood then: later commits, ``git add``, stashes and discards of the same
turn move files out of it. A ``stash pop`` or ``apply`` brings back what we cannot see: the status no
longer says anything.

Untracked directories ("?? .cache/") are left out: they are most often tool state or build output, and a
directory the agent made of new work is known from its edits. Untracked files are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.observer.evidence import Command

_GIT = r"(?:^|[\s'\"])git\s+"  # (also as a shell's argument: bash -lc 'git status --short')
_STATUS = re.compile(_GIT + r"status\b([^|;&\n]*)")
_SHORT = re.compile(r"(?:^|\s)(?:-s|--short|--porcelain(?:=v1)?|-[a-z]*s[a-z]*)(?=\s|$)")
_BRANCH_ONLY = re.compile(r"^##\s")
# A short-format line: two status letters (index, worktree), a space, the path ("R  old -> new")
_SHORT_LINE = re.compile(r"^([MADRCUT?! ][MADRCUT?! ]) (\S.*)$")
# ... and the first line of an output that was stripped: " M a.py" arrives as "M a.py" (one space after)
_STRIPPED_FIRST = re.compile(r"^([MADRCUT]) (\S.*)$")
# A long-format entry: "\tmodified:   a.py", "\t수정함:        a.py", "\t修改：     a.py"; untracked: "\ta.py"
_LONG_ENTRY = re.compile(r"^\t([^\t:：]{1,30})[:：]\s+(\S.*)$")
_LONG_UNTRACKED = re.compile(r"^\t(\S.*)$")
_UNTRACKED_HEAD = re.compile(r"^(?:Untracked files|추적하지 않는 파일|未跟踪的文件|追跡されていないファイル|"
                             r"Fichiers non suivis|Unversionierte Dateien|Archivos sin seguimiento)", re.IGNORECASE)
_STAGED_HEAD = re.compile(r"^(?:Changes to be committed|커밋할 변경 사항|要提交的变更|コミット予定の変更|"
                          r"Modifications qui seront validées|Zum Commit vorgemerkte Änderungen|"
                          r"Cambios a ser confirmados)", re.IGNORECASE)
_SEGMENTS = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
# A command that works elsewhere: ``cd`` or ``git -C`` (the project's own root is fine), another git dir
_OTHER_TREE = re.compile(r"(?:(?:^|[;&|]\s*)cd|\bgit\s+-C)\s+(\"[^\"]*\"|'[^']*'|\S+)|--git-dir|--work-tree")


@dataclass
class Entry:
    path: str
    staged: bool      # in the index (a commit without -a takes it)
    unstaged: bool    # changed in the working tree beyond the index
    untracked: bool


@dataclass
class Tree:
    files: list[str]  # not committed, as the status listed them (tracked changes first)
    at: float         # when the status ran


def after(commands: list[Command], root: str = "") -> Tree | None:
    """The files the turn's last ``git status`` listed, less what the turn committed, stashed or threw away
    after it; None when the turn ran no status we can read (or a stash came back after it)."""
    for i in range(len(commands) - 1, -1, -1):
        c = commands[i]
        if not (c.ok and c.finished and _whole(_SEGMENTS.split(c.command.strip())[-1]) and _here(c.command, root)):
            continue  # (the status must be the last thing the command printed: what follows is not git's)
        entries = parse(c.command, c.output)
        if entries is None:
            continue  # "git status" said in a commit message, or another format: an earlier one may tell
        for later in commands[i + 1:]:
            if not later.finished and re.search(_GIT, later.command):
                return None  # a git command still running when the record ends: what it did is not known
            if later.ok and _here(later.command, root):
                entries = _apply(later.command, entries, root)
                if entries is None:
                    return None
        tracked = [e.path for e in entries if not e.untracked]
        return Tree(tracked + [e.path for e in entries if e.untracked], c.at)
    return None


def _whole(segment: str) -> bool:
    """A status of the whole tree, printed as git printed it: not one of some paths (``git status src/``),
    not one a pipe filtered or cut (``| grep '^??'``, ``| head``)."""
    m = _STATUS.search(segment)
    if m is None or "|" in segment[m.end():]:
        return False
    return not [a for a in _unquoted(m.group(1)).split() if not a.startswith("-")]


def _here(command: str, root: str) -> bool:
    """The command works on the project's own tree: no ``cd`` elsewhere, no ``git -C`` another one."""
    for m in _OTHER_TREE.finditer(command):
        target = m.group(1)
        if target is None or not root or target.strip("'\"").rstrip("/") != root.rstrip("/"):
            return False
    return True


def parse(command: str, output: str) -> list[Entry] | None:
    """The entries of a status's output (short or long format), None when it printed no status."""
    m = _STATUS.search(command)
    if m is None:
        return None
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return _short(lines) if _SHORT.search(_unquoted(m.group(1))) else _long(lines)


def _unquoted(args: str) -> str:
    """A status's arguments without the quotes of a shell around it (``bash -lc 'git status --short'``)."""
    return args.replace("'", " ").replace('"', " ")


def _short(lines: list[str]) -> list[Entry] | None:
    out: list[Entry] = []
    begun = False  # the status's own lines have begun: what came before was printed by earlier commands
    for n, ln in enumerate(lines):
        if _BRANCH_ONLY.match(ln):
            begun = True
            continue
        m = _SHORT_LINE.match(ln)
        if m and m.group(1) != "  ":
            x, y = m.group(1)[0], m.group(1)[1]
        else:
            first = _STRIPPED_FIRST.match(ln) if n == 0 or all(_BRANCH_ONLY.match(p) for p in lines[:n]) else None
            if first is None:
                if begun:
                    return None  # something else printed among git's lines: it cannot be read
                continue  # an earlier command's output (a commit's summary)
            x, y = " ", first.group(1)
            m = first
        begun = True
        path = _path(m.group(2))
        if x == "?" or y == "?":
            if not path.endswith("/"):
                out.append(Entry(path, False, False, True))
        elif x != "!":
            out.append(Entry(path, x not in " ?", y not in " ?", False))
    return out


def _long(lines: list[str]) -> list[Entry] | None:
    if not any(_STAGED_HEAD.match(ln) or ln.startswith("\t") for ln in lines) and \
            not any(re.search(r"working tree clean|nothing to commit|작업 폴더 깨끗함|干净的工作区|"
                              r"コミットするものはありません", ln) for ln in lines):
        return None
    out: list[Entry] = []
    section = ""
    for ln in lines:
        if _UNTRACKED_HEAD.match(ln):
            section = "untracked"
        elif _STAGED_HEAD.match(ln):
            section = "staged"
        elif not ln.startswith("\t") and ln.rstrip().endswith(":"):
            section = "unstaged"  # "Changes not staged for commit:", "Unmerged paths:", in any language
        elif ln.startswith("\t"):
            entry = _LONG_ENTRY.match(ln) if section != "untracked" else None
            if entry is not None:
                path = _path(entry.group(2).split(" (")[0] if entry.group(2).endswith(")") else entry.group(2))
                found = next((e for e in out if e.path == path), None)
                if found is None:
                    out.append(Entry(path, section == "staged", section != "staged", False))
                elif section == "staged":
                    found.staged = True
                else:
                    found.unstaged = True
            elif section == "untracked":
                u = _LONG_UNTRACKED.match(ln)
                if u and not u.group(1).endswith("/"):
                    out.append(Entry(_path(u.group(1)), False, False, True))
    return out


def _path(text: str) -> str:
    """A path as git printed it: the new name of a rename, without the quotes of an unusual name."""
    text = text.strip()
    if " -> " in text:
        text = text.split(" -> ", 1)[1]
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return text


def _apply(command: str, entries: list[Entry], root: str = "") -> list[Entry] | None:
    """``entries`` after a later command of the turn; None when what the tree holds can no longer be told."""
    for seg in _SEGMENTS.split(command):
        g = re.search(_GIT + r"(\w[\w-]*)\s*(.*)", seg.strip(), re.DOTALL)
        if g is None:
            continue
        verb, rest = g.group(1), g.group(2)
        # (paths given absolute, as agents often do, are read from the project's root)
        args = [a[len(root.rstrip("/")) + 1:] if root and a.startswith(root.rstrip("/") + "/") else a
                for a in rest.split()]
        if verb == "add":
            named = [a for a in args if not a.startswith("-")]
            if {"-u", "--update"} & set(args) and not named:
                for e in entries:
                    if not e.untracked:
                        e.staged, e.unstaged = True, False
            elif ({"-A", "--all"} & set(args) and not named) or {".", ":/"} & set(named):
                for e in entries:
                    e.staged, e.unstaged, e.untracked = True, False, False
            else:
                for e in entries:
                    if any(_under(e.path, a) for a in named):
                        e.staged, e.unstaged, e.untracked = True, False, False
        elif verb == "commit":
            every = re.search(r"(?:^|\s)(?:--all|-(?!-)[A-Za-z]*a[A-Za-z]*)(?=\s|$)", rest.split(" -m")[0]) is not None
            entries = [e for e in entries if not (
                (every and not e.untracked) or (e.staged and not e.unstaged) or e.path in rest)]
            for e in entries:
                e.staged = False
        elif verb == "stash":
            sub = args[0] if args and not args[0].startswith("-") else "push"
            if sub in ("pop", "apply"):
                return None
            if sub in ("push", "save"):
                everything = bool({"-u", "--include-untracked", "-a", "--all"} & set(args))
                entries = [e for e in entries if e.untracked and not everything]
        elif verb in ("checkout", "restore") and (verb == "restore" or "--" in args):
            # changes thrown away (``restore --staged`` only unstages; ``checkout <branch>`` keeps them)
            if verb == "restore" and {"--staged", "-S"} & set(args) and not {"--worktree", "-W"} & set(args):
                continue
            named = [a for a in args if not a.startswith("-")]
            entries = [e for e in entries if e.untracked or not any(_under(e.path, a) for a in named)]
        elif verb == "reset" and "--hard" in args:
            entries = [e for e in entries if e.untracked]
        elif verb == "clean" and any(a.startswith("-") and "f" in a for a in args):
            entries = [e for e in entries if not e.untracked]
    return entries


def _under(path: str, named: str) -> bool:
    named = named.strip("'\"").rstrip("/")
    if named in (".", ":/"):
        return True
    return bool(named) and (path == named or path.startswith(named + "/"))
