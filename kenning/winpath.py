"""Windows paths as agents running on Windows record them, read on a POSIX machine. No imports (the hook uses it).

Claude Code and Codex on Windows write their working directory as ``C:\\Users\\me\\repo`` (or
``C:/Users/me/repo``, ``\\\\server\\share\\repo``, ``\\\\?\\C:\\...``). To POSIX path functions
that is a relative path, so ``realpath`` would file it under whatever folder the importing
process runs in. Here such a path is recognised as absolute, normalised without the disk (this
machine cannot look at it), and given a key folded to lower case, since Windows file systems
ignore case: ``C:\\Users\\Me\\Repo`` and ``c:/users/me/repo/`` are one folder.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (no ``typing`` import at run time)
if TYPE_CHECKING:
    from collections.abc import Iterable

SEP = "\\"


def is_windows(path: str) -> bool:
    """A drive path (``C:\\``, ``C:/``, ``C:``), a UNC or device path (``\\\\server\\share``,
    ``\\\\?\\C:\\``), or a path rooted at a backslash (``\\Users\\me``): never a POSIX path."""
    if len(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha():
        return len(path) == 2 or path[2] in "\\/"
    return path.startswith("\\")


def split(path: str) -> tuple[str, list[str]]:
    """``(anchor, parts)``: the drive (``C:``) or share (``\\\\server\\share``), '' for a path rooted
    without one, and the folders below it with ``.`` and ``..`` folded away."""
    p = path.replace("/", SEP)
    if p.startswith(("\\\\?\\", "\\\\.\\")):  # device and long-path prefixes name the same folder
        p = p[4:]
        if p[:4].upper() == "UNC\\":
            p = SEP * 2 + p[4:]
    if p.startswith(SEP * 2):
        bits = [b for b in p[2:].split(SEP) if b]
        anchor, rest = SEP * 2 + SEP.join(bits[:2]), bits[2:]
    elif len(p) >= 2 and p[1] == ":":
        anchor, rest = p[0].upper() + ":", p[2:].split(SEP)
    else:
        anchor, rest = "", p.split(SEP)
    # Windows drops trailing dots and spaces of a name.
    return anchor, folded(b.rstrip(" .") if b not in (".", "..") else b for b in rest)


def folded(names: Iterable[str]) -> list[str]:
    """Folder names with the empty ones and ``.`` dropped and each ``..`` taking back the one before
    (POSIX and Windows paths alike)."""
    parts: list[str] = []
    for b in names:
        if not b or b == ".":
            continue
        if b == "..":
            if parts:
                parts.pop()
            continue
        parts.append(b)
    return parts


def build(anchor: str, parts: list[str]) -> str:
    """The path of ``anchor`` and ``parts``, backslashes between them."""
    return anchor + SEP + SEP.join(parts)


def normalise(path: str) -> str:
    """One spelling of a Windows path, its case kept: ``c:/Users/me/./repo/`` → ``C:\\Users\\me\\repo``."""
    return build(*split(path))


def key(path: str) -> str:
    """The key of a Windows folder: its normalised path in lower case (Windows ignores case)."""
    return normalise(path).lower()


def name(path: str) -> str:
    """The folder's own name (its last component; the drive or share itself for a root)."""
    anchor, parts = split(path)
    return parts[-1] if parts else (anchor or SEP)


def relative(path: str, root: str) -> str | None:
    """``path`` relative to the folder ``root`` with ``/`` between names (as POSIX checkouts spell
    it), or None when it is not inside ``root``. Case is ignored, as Windows ignores it."""
    if not is_windows(path):
        return None
    a, p = split(path)
    b, r = split(root)
    if a.lower() != b.lower() or len(p) <= len(r) or [x.lower() for x in p[:len(r)]] != [x.lower() for x in r]:
        return None
    return "/".join(p[len(r):])
