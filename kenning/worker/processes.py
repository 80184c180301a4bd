"""This data dir's worker processes, found by what the kernel says they are, not by our files.

``worker.lock`` and the pid file are files anyone can delete (``rm worker.lock``, a cleanup
script). A worker whose lock file is gone still runs: it holds the port and writes the database,
and a ``stop`` that only asks the files would call it stopped, a ``start`` would start a second.
Here a process is this data dir's worker when its command line is ``kenning worker run`` and it
holds this data dir's ``worker.lock`` open (the file at the path, or the one deleted from it), or
runs in the data dir (the worker's cwd, as ``kenning.daemon.spawn`` starts it). Linux's ``/proc``
tells both; where there is no ``/proc`` nothing is found here and callers keep to the pid file.

Standard library only: ``kenning.daemon`` imports it when no worker answers.
"""

from __future__ import annotations

import os

from kenning.paths import Paths

_DELETED = " (deleted)"


def workers(paths: Paths) -> list[int]:
    """Pids of the live workers of this data dir (zombies and this process left out)."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    root = os.path.realpath(paths.root)
    lock = os.path.join(root, os.path.basename(paths.worker_lock))
    me = os.getpid()
    out = []
    for pid in sorted(pids):
        if pid == me or not _is_worker(_argv(pid)) or _zombie(pid):
            continue
        if _link(f"/proc/{pid}/cwd") in (root, root + _DELETED) or _holds(pid, lock):
            out.append(pid)
    return out


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its parent counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _zombie(pid)


def _is_worker(argv: list[str]) -> bool:
    # ``python -I -m kenning worker run`` (spawned), ``kenning worker run`` (the script), ``python -m kenning …``
    return len(argv) >= 3 and argv[-2:] == ["worker", "run"] and any("kenning" in a for a in argv[:-2])


def _argv(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(8192)
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0")] if raw else []


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read(512)
    except OSError:
        return False  # no /proc: kill(0) said it lives
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _holds(pid: int, path: str) -> bool:
    """``pid`` has ``path`` open (or the file that was deleted from it)."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    return any(_link(f"{fd_dir}/{fd}") in (path, path + _DELETED) for fd in fds)
