"""Data-dir layout. Standard library only: the hook imports this.

Everything Kenning keeps lives under one directory (``~/.kenning`` unless
``KENNING_DATA_DIR`` says otherwise), created 0700 with files 0600 so other local
users cannot read captured work.
"""

from __future__ import annotations

import os

DIR_MODE = 0o700
FILE_MODE = 0o600


def data_dir() -> str:
    """The data directory, from ``KENNING_DATA_DIR`` or ``~/.kenning`` (absolute, normalised)."""
    raw = os.environ.get("KENNING_DATA_DIR") or os.path.join(os.path.expanduser("~"), ".kenning")
    return os.path.realpath(os.path.expanduser(raw))


class Paths:
    """Where each file lives inside one data directory."""

    def __init__(self, root: str | None = None) -> None:
        self.root = os.path.realpath(root) if root else data_dir()

    @property
    def settings(self) -> str:
        return os.path.join(self.root, "settings.json")

    @property
    def db(self) -> str:
        return os.path.join(self.root, "kenning.db")

    @property
    def spool(self) -> str:
        return os.path.join(self.root, "spool")

    @property
    def spool_tmp(self) -> str:
        return os.path.join(self.root, "spool", "tmp")

    @property
    def spool_corrupt(self) -> str:
        return os.path.join(self.root, "spool", "corrupt")

    @property
    def logs(self) -> str:
        return os.path.join(self.root, "logs")

    @property
    def worker_log(self) -> str:
        return os.path.join(self.root, "logs", "worker.log")

    @property
    def hook_log(self) -> str:
        return os.path.join(self.root, "logs", "hook.log")

    @property
    def pid_file(self) -> str:
        return os.path.join(self.root, "worker.pid")

    @property
    def poke_fifo(self) -> str:
        """The worker's wake-up pipe: a capture hook writes a byte, no socket, no pid file to read."""
        return os.path.join(self.root, "worker.poke")

    @property
    def worker_failed(self) -> str:
        """Why the last worker could not start (one line, removed by a worker that starts)."""
        return os.path.join(self.root, "worker.failed")

    @property
    def worker_lock(self) -> str:
        return os.path.join(self.root, "worker.lock")

    @property
    def start_lock(self) -> str:
        return os.path.join(self.root, "worker-start.lock")

    @property
    def token(self) -> str:
        return os.path.join(self.root, "token")

    @property
    def optout(self) -> str:
        return os.path.join(self.root, "optout")

    @property
    def modes(self) -> str:
        return os.path.join(self.root, "modes")

    @property
    def backups(self) -> str:
        return os.path.join(self.root, "backups")

    def ensure(self) -> None:
        """Create the tree with private permissions; tighten a root that is too open."""
        for d in (self.root, self.spool, self.spool_tmp, self.spool_corrupt, self.logs):
            os.makedirs(d, mode=DIR_MODE, exist_ok=True)
        try:
            if os.stat(self.root).st_mode & 0o077:
                os.chmod(self.root, DIR_MODE)
        except OSError:
            pass

    def contains(self, path: str) -> bool:
        """True when ``path`` is the data dir or inside it (the recursion guard)."""
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return False
        return real == self.root or real.startswith(self.root + os.sep)


def write_private(path: str, data: bytes) -> None:
    """Atomically write ``data`` to ``path`` as a 0600 file (temp file, fsync, rename)."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"  # unique per writer, threads included
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
    tok = os.urandom(24).hex()
    try:
        # O_EXCL: when two processes race, exactly one token wins and both read it.
        fd = os.open(paths.token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            os.write(fd, tok.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    except FileExistsError:
        for _ in range(50):
            existing = read_token(paths)
            if existing:
                return existing
            import time

            time.sleep(0.01)
    return read_token(paths) or tok
