"""Data-dir layout, and the path operations of the hook. Standard library only: the hook imports this.

Everything Kenning keeps lives under one directory (``~/.kenning`` unless
``KENNING_DATA_DIR`` says otherwise), created 0700 with files 0600 so other local
users cannot read captured work.

The hook's path operations are built on ``posix``, the interpreter's own built-in module,
instead of ``os``: importing ``os`` (with ``_collections_abc``, ``stat`` and ``posixpath``)
costs a hook process ~1 ms, a tenth of the bare interpreter's start. Each function here
answers exactly what its ``os`` / ``os.path`` namesake answers (tests compare them on
symlink trees, odd spellings and every environment case); where an answer needs more than a
few system calls (a symlink met twice, ``~user``) it asks ``os`` itself.
"""

from __future__ import annotations

import posix
import sys

from kenning import winpath

DIR_MODE = 0o700
FILE_MODE = 0o600
SEP = "/"
_FS_ENCODING = sys.getfilesystemencoding()  # os.environ's own codec (with surrogateescape)
_S_IFMT, _S_IFDIR, _S_IFREG, _S_IFLNK = 0o170000, 0o040000, 0o100000, 0o120000


def env(name: str) -> str | None:
    """``os.environ.get(name)``: ``posix.environ`` holds the same bytes (os.environ writes through to it)."""
    raw = posix.environ.get(name.encode(_FS_ENCODING, "surrogateescape"))
    return None if raw is None else raw.decode(_FS_ENCODING, "surrogateescape")


def env_with_prefix(prefix: str) -> dict[str, str]:
    """The variables whose name starts with ``prefix``, decoded as ``os.environ`` decodes them."""
    head = prefix.encode(_FS_ENCODING, "surrogateescape")
    return {k.decode(_FS_ENCODING, "surrogateescape"): v.decode(_FS_ENCODING, "surrogateescape")
            for k, v in posix.environ.items() if k.startswith(head)}


def join(path: str, *names: str) -> str:
    """``os.path.join``: each name after a separator; an absolute one starts again."""
    for name in names:
        if name.startswith(SEP):
            path = name
        elif not path or path.endswith(SEP):
            path += name
        else:
            path += SEP + name
    return path


def dirname(path: str) -> str:
    """``os.path.dirname``: everything up to the last separator, trailing separators dropped (not a root's)."""
    head = path[:path.rfind(SEP) + 1]
    return head.rstrip(SEP) or head


def basename(path: str) -> str:
    return path[path.rfind(SEP) + 1:]


def normpath(path: str) -> str:
    """``os.path.normpath``: ``.``, ``..`` and repeated separators folded away, without looking at the disk.
    POSIX leaves exactly two leading separators alone, as os.path does."""
    if not path:
        return "."
    lead = len(path) - len(path.lstrip(SEP))
    lead = 2 if lead == 2 else min(lead, 1)
    parts: list[str] = []
    for part in path.split(SEP):
        if not part or part == ".":
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part != ".." or not lead:  # ".." above the root is the root
            parts.append(part)
    return SEP * lead + SEP.join(parts) or "."


def _mode(path: str) -> int:
    try:
        return posix.stat(path).st_mode
    except (OSError, ValueError):  # missing, unreadable, or a NUL in the name: as os.path says False
        return 0


def exists(path: str) -> bool:
    return _mode(path) != 0


def isdir(path: str) -> bool:
    return _mode(path) & _S_IFMT == _S_IFDIR


def isfile(path: str) -> bool:
    return _mode(path) & _S_IFMT == _S_IFREG


def expanduser(path: str) -> str:
    """``os.path.expanduser`` for ``~`` and ``~/…`` from ``HOME``; ``~user`` (and no ``HOME``) by os itself."""
    if not path.startswith("~"):
        return path
    home = env("HOME") if path == "~" or path.startswith("~/") else None
    if home is None:
        import os

        return os.path.expanduser(path)
    return (home.rstrip(SEP) + path[1:]) or SEP


def realpath(path: str) -> str:
    """``os.path.realpath``: absolute, every symlink resolved one component at a time, as it does
    (a missing component is kept as written and the walk goes on).

    A link met a second time (a loop, or a path that runs through one link twice) and a link that
    cannot be read go to ``os.path.realpath`` itself, whose answer for those is its own.
    """
    if not path.startswith(SEP):
        path = join(posix.getcwd(), path)
    done: list[str] = []
    todo = path.split(SEP)
    todo.reverse()  # the next component last
    links: set[str] = set()
    while todo:
        name = todo.pop()
        if not name or name == ".":
            continue
        if name == "..":
            if done:
                done.pop()
            continue
        done.append(name)
        here = SEP + SEP.join(done)
        try:
            if posix.lstat(here).st_mode & _S_IFMT != _S_IFLNK:
                continue
        except OSError:  # missing (or unreadable): kept as written; a NUL raises ValueError, as in os
            continue
        if here in links:
            return _os_realpath(path)
        links.add(here)
        try:
            target = posix.readlink(here)
        except OSError:
            return _os_realpath(path)
        done.pop()
        if target.startswith(SEP):
            done.clear()
        more = target.split(SEP)
        more.reverse()
        todo += more
    return SEP + SEP.join(done)


def _os_realpath(path: str) -> str:
    import os

    return os.path.realpath(path)


def data_dir() -> str:
    """The data directory, from ``KENNING_DATA_DIR`` or ``~/.kenning`` (absolute, normalised)."""
    raw = env("KENNING_DATA_DIR") or join(expanduser("~"), ".kenning")
    return realpath(expanduser(raw))


class Paths:
    """Where each file lives inside one data directory."""

    def __init__(self, root: str | None = None) -> None:
        self.root = realpath(root) if root else data_dir()

    @property
    def settings(self) -> str:
        return join(self.root, "settings.json")

    @property
    def db(self) -> str:
        return join(self.root, "kenning.db")

    @property
    def spool(self) -> str:
        return join(self.root, "spool")

    @property
    def spool_tmp(self) -> str:
        return join(self.root, "spool", "tmp")

    @property
    def spool_corrupt(self) -> str:
        return join(self.root, "spool", "corrupt")

    @property
    def logs(self) -> str:
        return join(self.root, "logs")

    @property
    def worker_log(self) -> str:
        return join(self.root, "logs", "worker.log")

    @property
    def hook_log(self) -> str:
        return join(self.root, "logs", "hook.log")

    @property
    def pid_file(self) -> str:
        return join(self.root, "worker.pid")

    @property
    def poke_fifo(self) -> str:
        """The worker's wake-up pipe: a capture hook writes a byte, no socket, no pid file to read."""
        return join(self.root, "worker.poke")

    @property
    def worker_failed(self) -> str:
        """Why the last worker could not start (one line, removed by a worker that starts)."""
        return join(self.root, "worker.failed")

    @property
    def worker_lock(self) -> str:
        return join(self.root, "worker.lock")

    @property
    def start_lock(self) -> str:
        return join(self.root, "worker-start.lock")

    @property
    def token(self) -> str:
        return join(self.root, "token")

    @property
    def optout(self) -> str:
        return join(self.root, "optout")

    @property
    def modes(self) -> str:
        return join(self.root, "modes")

    @property
    def backups(self) -> str:
        return join(self.root, "backups")

    def ensure(self) -> None:
        """Create the tree with private permissions; tighten a root that is too open."""
        import os  # (first run, or a data dir deleted under a running hook)

        for d in (self.root, self.spool, self.spool_tmp, self.spool_corrupt, self.logs):
            os.makedirs(d, mode=DIR_MODE, exist_ok=True)
        try:
            if os.stat(self.root).st_mode & 0o077:
                os.chmod(self.root, DIR_MODE)
        except OSError:
            pass

    def contains(self, path: str) -> bool:
        """True when ``path`` is the data dir or inside it (the recursion guard)."""
        if winpath.is_windows(path):
            return False  # another machine's folder (realpath would resolve it against our own cwd)
        try:
            real = realpath(path)
        except (OSError, ValueError):
            return False
        return real == self.root or real.startswith(self.root + SEP)


def write_private(path: str, data: bytes) -> None:
    """Atomically write ``data`` to ``path`` as a 0600 file (temp file, fsync, rename)."""
    _replace(path, data, FILE_MODE)


def _replace(path: str, data: bytes, mode: int, *, exact: bool = False) -> None:
    """Write ``data`` to a temp file next to ``path`` (created with ``mode``; ``exact``: that mode
    whatever the umask), fsync it and rename it over ``path``; the temp file never stays behind."""
    tmp = f"{path}.{posix.getpid()}.{posix.urandom(4).hex()}.tmp"  # unique per writer, threads included
    fd = posix.open(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, mode)
    try:
        try:
            if exact:
                posix.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[posix.write(fd, view):]
            posix.fsync(fd)
        finally:
            posix.close(fd)
        posix.replace(tmp, path)
    except BaseException:
        try:
            posix.unlink(tmp)
        except OSError:
            pass
        raise


def write_through(path: str, data: bytes, new_mode: int = FILE_MODE) -> str:
    """Atomically replace the file ``path`` names, through its symlinks; returns that file's path.

    A config file kept as a symlink (dotfiles) must stay one: the temp file is written next to
    the link's final target and renamed over the target, so the link is kept and points to the
    new content. The target's mode is kept (``new_mode`` for a file that does not exist yet).
    """
    import os

    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    _replace(target, data, mode, exact=True)  # the umask must not narrow (or the default widen) what the file had
    return target


def read_token(paths: Paths) -> str:
    """The per-user API token, or '' when it does not exist yet."""
    try:
        with open(paths.token, "rb") as fh:  # binary: a text-mode "ascii" file imports its codec (~0.4 ms)
            return fh.read().decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def ensure_token(paths: Paths) -> str:
    """Return the API token, creating a random one (0600) on first use."""
    tok = read_token(paths)
    if tok:
        return tok
    paths.ensure()
    tok = posix.urandom(24).hex()
    try:
        # O_EXCL: when two processes race, exactly one token wins and both read it.
        fd = posix.open(paths.token, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, FILE_MODE)
        try:
            posix.write(fd, tok.encode())
            posix.fsync(fd)
        finally:
            posix.close(fd)
    except FileExistsError:
        for _ in range(50):
            existing = read_token(paths)
            if existing:
                return existing
            import time

            time.sleep(0.01)
    return read_token(paths) or tok
