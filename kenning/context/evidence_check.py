"""Whether what a memory cites still exists in the working tree the agent is in.

For each citation (kenning/memory/citations.py) one of three answers: it holds, it is gone, or
the check cannot tell (no working tree, a file that is not a regular file, unreadable, binary,
past the read cap or the time budget, a Makefile that includes others). Only "gone" is ever
told to the agent: a check that cannot decide says nothing.

- a file: exists under the project root (a stat). Renames are not followed: ``git`` in a
  subprocess costs more than the hook's whole budget, so a renamed file reads as gone from
  its old path, which is what the memory says.
- an identifier: appears (as a whole word) in at least one cited file that exists, reading at
  most ``READ_CAP`` bytes of each; found nowhere though every such file was read whole: gone.
- a target: ``make``/``just`` targets in the root's Makefile/justfile, ``npm``/``pnpm``/``yarn``/
  ``bun`` scripts in its package.json; no such file at the root: cannot tell.

Results are kept per file by (mtime, size, inode): a warm check costs one ``stat`` per file.
Standard library only: the SessionStart hook's fallback and the Read hook run it.
"""

from __future__ import annotations

import _thread
import os
import re
import stat
import time

from kenning.memory.citations import Citations

READ_CAP = 256 * 1024   # bytes of one file read to look for identifiers (never more)
BUDGET_S = 0.15         # one context's checks; past it, what is left is "cannot tell"
KEPT_FILES = 4096       # files whose answers are kept (per process)
HOLDS, GONE, UNKNOWN = "holds", "gone", "unknown"

_lock = _thread.allocate_lock()  # (``threading`` is more than a hook should import)
# path -> (stat signature, {identifier: found in what was read?}, whole file read?)
_seen: dict[str, tuple[tuple[int, int, int], dict[str, bool], bool]] = {}
_targets: dict[str, tuple[tuple[int, int, int], frozenset[str] | None]] = {}
_resolved: dict[tuple[str, str], str | None] = {}  # (root, cited path) -> the path in the tree (pure string work)
reads = 0  # files read to look for identifiers or targets (the bench and tests count them)
bytes_read = 0
largest_read = 0  # the most bytes one read took (never past READ_CAP)


def _sig(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_mtime_ns, st.st_size, st.st_ino


class Checker:
    """The checks of one context (one root, one time budget)."""

    def __init__(self, root: str, *, budget_s: float = BUDGET_S, cap: int = READ_CAP) -> None:
        self.root = os.path.realpath(root) if root else ""
        self.deadline = time.monotonic() + budget_s
        self.cap = cap
        self._stats: dict[str, os.stat_result | str] = {}  # per context: one stat per file
        self._answers: dict[tuple[str, str], tuple[str, str]] = {}

    def usable(self) -> bool:
        return bool(self.root) and os.path.isdir(self.root)

    def _abs(self, path: str) -> str | None:
        """``path`` (as the memory wrote it) in this working tree; None: not in it, or not checkable."""
        key = (self.root, path)
        full = _resolved.get(key, "")
        if full == "":
            full = self._resolve(path)
            if len(_resolved) >= KEPT_FILES * 4:
                _resolved.clear()
            _resolved[key] = full
        return full

    def _resolve(self, path: str) -> str | None:
        p = path.replace("\\", "/")
        if p.startswith("~") or "\x00" in p or len(p) > 1024:
            return None
        if os.path.isabs(p):
            real = os.path.normpath(p)
            return real if real == self.root or real.startswith(self.root + os.sep) else None
        full = os.path.normpath(os.path.join(self.root, p))
        return full if full.startswith(self.root + os.sep) else None

    def _stat(self, full: str) -> os.stat_result | str:
        """The file's stat, GONE (nothing at the path), or UNKNOWN (a loop, no permission...)."""
        got = self._stats.get(full)
        if got is not None:
            return got
        try:
            res: os.stat_result | str = os.stat(full)
        except FileNotFoundError:
            try:
                os.lstat(full)  # a dangling link is something at the path: cannot tell
                res = UNKNOWN
            except OSError:
                res = GONE
        except (OSError, ValueError):
            res = UNKNOWN
        self._stats[full] = res
        return res

    def file(self, path: str) -> str:
        full = self._abs(path)
        if full is None:
            return UNKNOWN
        st = self._stat(full)
        if st == GONE and "/" not in path.replace("\\", "/"):
            return UNKNOWN  # a bare name ("totals.py") may live in any folder: not found at the root proves nothing
        return st if isinstance(st, str) else HOLDS

    def names_in(self, names: tuple[str, ...], path: str) -> dict[str, str]:
        """Whether each identifier of ``names`` appears in the cited file ``path`` (answers are kept
        while the file is unchanged; a name not asked before costs one bounded read)."""
        unknown = dict.fromkeys(names, UNKNOWN)
        full = self._abs(path)
        if full is None:
            return unknown
        st = self._stat(full)
        if isinstance(st, str) or not stat.S_ISREG(st.st_mode):
            return unknown  # gone (said by the file's own check), a FIFO, a device, a folder
        sig = _sig(st)
        with _lock:
            kept = _seen.get(full)
        if kept is not None and kept[0] != sig:
            kept = None
        todo = [n for n in names if kept is None or n not in kept[1]]
        if todo:
            if time.monotonic() > self.deadline:
                return unknown if kept is None else {**unknown, **_answers(kept, names)}
            found, whole = _search(full, todo, self.cap)
            if found is None:
                return unknown
            with _lock:
                kept = _seen.get(full)
                if kept is None or kept[0] != sig:
                    kept = (sig, {}, whole)
                    if len(_seen) >= KEPT_FILES:
                        _seen.pop(next(iter(_seen)))
                    _seen[full] = kept
                kept[1].update(found)
        assert kept is not None
        return _answers(kept, names)

    def target(self, runner: str, name: str) -> tuple[str, str]:
        """(answer, the file it was looked up in)."""
        got = self._answers.get((runner, name))
        if got is None:
            got = self._answers[(runner, name)] = self._target(runner, name)
        return got

    def _target(self, runner: str, name: str) -> tuple[str, str]:
        if time.monotonic() > self.deadline:
            return UNKNOWN, ""
        for fname in _FILES_OF.get(runner, ()):
            full = os.path.join(self.root, fname)
            st = self._stat(full)
            if isinstance(st, str):
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size > self.cap:
                return UNKNOWN, fname
            sig = _sig(st)
            with _lock:
                kept = _targets.get(full)
            names = kept[1] if kept is not None and kept[0] == sig else None
            if kept is None or kept[0] != sig:
                names = _read_targets(full, runner, self.cap)
                with _lock:
                    _targets[full] = (sig, names)
            if names is None:
                return UNKNOWN, fname
            return (HOLDS if name in names else GONE), fname
        return UNKNOWN, ""


_FILES_OF = {"make": ("GNUmakefile", "makefile", "Makefile"), "just": ("justfile", "Justfile", ".justfile"),
             "npm": ("package.json",), "pnpm": ("package.json",), "yarn": ("package.json",),
             "bun": ("package.json",)}


def _open_regular(full: str) -> tuple[int, int] | None:
    """(a descriptor, the size) of ``full`` if it is a regular file (never blocks on a FIFO)."""
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st.st_size


def _read(full: str, cap: int) -> tuple[bytes, bool] | None:
    """At most ``cap`` bytes of a regular file (never more), and whether that is all of it; None: unreadable."""
    global reads, bytes_read, largest_read
    opened = _open_regular(full)
    if opened is None:
        return None
    fd, size = opened
    try:
        data = os.read(fd, cap)
    except OSError:
        return None
    finally:
        os.close(fd)
    reads += 1
    bytes_read += len(data)
    largest_read = max(largest_read, len(data))
    return data, size <= cap and len(data) == size


def _answers(kept: tuple[tuple[int, int, int], dict[str, bool], bool], names: tuple[str, ...]) -> dict[str, str]:
    return {n: (HOLDS if kept[1][n] else (GONE if kept[2] else UNKNOWN)) if n in kept[1] else UNKNOWN
            for n in names}


def _has_word(data: bytes, word: bytes) -> bool:
    """``word`` in ``data`` with no identifier character either side (``bytes.find``: a regex with
    look-arounds costs ten times as much)."""
    start = data.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or data[start - 1] not in _IDENT) and (end >= len(data) or data[end] not in _IDENT):
            return True
        start = data.find(word, start + 1)
    return False


_IDENT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _search(full: str, names: list[str], cap: int) -> tuple[dict[str, bool] | None, bool]:
    """Which of ``names`` appear as whole words in the first ``cap`` bytes of ``full`` (None: cannot tell)."""
    got = _read(full, cap)
    if got is None:
        return None, False
    data, whole = got
    if b"\x00" in data[:8192]:
        return None, whole  # binary: an identifier in it is nothing to judge by
    out: dict[str, bool] = {}
    for name in names:
        word = name.lstrip("-").encode("ascii", "ignore")
        forms = [word] + ([word.replace(b"-", b"_")] if name.startswith("--") else [])  # --dry-run: dry_run
        out[name] = bool(word) and any(_has_word(data, w) for w in forms)
    return out, whole


_MAKE_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)", re.MULTILINE)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9_][\w-]*)(?:\s+[^:=\n]*)?:(?!=)", re.MULTILINE)


def _read_targets(full: str, runner: str, cap: int) -> frozenset[str] | None:
    """The targets a Makefile/justfile defines, or package.json's scripts; None: cannot tell."""
    got = _read(full, cap)
    if got is None or not got[1]:
        return None
    text = got[0].decode("utf-8", "replace")
    if runner in ("make", "just"):
        if re.search(r"^\s*-?(?:include|sinclude|import|mod)\s", text, re.MULTILINE):
            return None  # targets may come from another file
        rule = _MAKE_RULE if runner == "make" else _JUST_RECIPE
        names: set[str] = set()
        for m in rule.finditer(text):
            names.update(m.group(1).split())
        if runner == "make" and re.search(r"^[^\s#]*%[^:]*:", text, re.MULTILINE):
            return None  # pattern rules: any name may be a target
        return frozenset(names)
    from kenning.fastjson import loads

    try:
        scripts = loads(text).get("scripts")
    except (ValueError, TypeError, AttributeError):
        return None
    return frozenset(str(k) for k in scripts) if isinstance(scripts, dict) else frozenset()


def signature(checker: Checker, cited: list[Citations]) -> tuple[object, ...]:
    """What every answer about ``cited`` in the checker's working tree rests on: a stat of each
    cited file and of each runner's file. Equal signatures, equal answers (one stat per file)."""
    files = sorted({f for c in cited for f in c.files})
    runners = sorted({r for c in cited for r, _t in c.targets})
    extra = [name for r in runners for name in _FILES_OF.get(r, ())]
    out: list[object] = []
    for f in files:
        full = checker._abs(f)
        st = checker._stat(full) if full is not None else UNKNOWN
        out.append(st if isinstance(st, str) else _sig(st))
    for name in extra:
        st = checker._stat(os.path.join(checker.root, name))
        out.append(st if isinstance(st, str) else _sig(st))
    return (checker.root, tuple(files), tuple(extra), tuple(out))


def gone(checker: Checker, cit: Citations) -> list[str]:
    """What ``cit`` names that is gone from the working tree, each as a short note
    ("`src/totals.py` no longer exists"); empty when everything holds or cannot be told."""
    notes: list[str] = []
    present: list[str] = []
    for f in cit.files:
        answer = checker.file(f)
        if answer == GONE:
            notes.append(f"`{f}` no longer exists")
        elif answer == HOLDS:
            present.append(f)
    if present and cit.names:
        per_file = [checker.names_in(cit.names, f) for f in present[:6]]
        for name in cit.names:
            answers = [got[name] for got in per_file]
            if answers and all(a == GONE for a in answers):
                where = present[0] if len(present) == 1 else f"{len(present)} cited files"
                notes.append(f"`{name}` not found in `{where}`" if len(present) == 1
                             else f"`{name}` not found in {where}")
    for runner, target in cit.targets:
        answer, fname = checker.target(runner, target)
        if answer == GONE:
            notes.append(f"`{runner} {target}`: no such target in {fname}" if runner in ("make", "just")
                         else f"`{runner} {target}`: no such script in {fname}")
    return notes


def note(notes: list[str]) -> str:
    """The mark a line carries: `` (`totals.py` no longer exists)``, the first note and how many more."""
    if not notes:
        return ""
    more = f"; +{len(notes) - 1} more" if len(notes) > 1 else ""
    return f" (possibly stale: {notes[0]}{more})"


def forget_cache() -> None:
    """Drop every kept answer (tests; a bench's cold run)."""
    global reads, bytes_read, largest_read
    with _lock:
        _seen.clear()
        _targets.clear()
        _resolved.clear()
    reads = bytes_read = largest_read = 0
