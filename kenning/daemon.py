"""Starting, finding and stopping the worker. Standard library only (SessionStart uses it).

Singleton rules: the worker holds an exclusive ``flock`` on ``worker.lock`` for its whole
life, so a second worker can never run; starters serialise on ``worker-start.lock`` so ten
hooks calling ``start`` at once spawn at most one process. The pid file carries a random
start token that only the worker knows: ``/api/health`` answers a client's nonce with its HMAC,
so a recycled PID or a stranger on our port is never mistaken for the worker. A port held by
another process is named at once (``start_problem``) instead of waiting for a worker that
cannot listen.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from kenning.hook import client
from kenning.hook.client import pid_alive, read_pid_file, worker_health
from kenning.paths import FILE_MODE, Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any


START_LOCK_FD_ENV = "KENNING_START_LOCK_FD"


def running(paths: Paths, timeout: float = 0.3) -> dict[str, Any] | None:
    """Health of the live worker, or None."""
    info = read_pid_file(paths)
    if not info:
        return None
    return worker_health(paths, info["port"], timeout=timeout)


def lock_held(paths: Paths) -> bool:
    """True when some process (a live or starting worker) holds ``worker.lock``."""
    return _held(paths.worker_lock)


def spawn(paths: Paths, extra_env: dict[str, str] | None = None, start_lock_fd: int | None = None) -> Any:
    """Start a detached worker process; returns its ``Popen``. Its output goes to the worker log.

    ``start_lock_fd`` (a descriptor holding the flock on ``worker-start.lock``) is inherited by
    the worker, which closes it once it holds ``worker.lock``: until then no other starter can
    spawn a second worker, even after this starter has returned.
    """
    import subprocess  # only paid when a worker must be started

    paths.ensure()
    env = dict(os.environ)
    env["KENNING_DATA_DIR"] = paths.root
    env.pop("KENNING_INTERNAL", None)
    env.pop(START_LOCK_FD_ENV, None)
    if start_lock_fd is not None:
        env[START_LOCK_FD_ENV] = str(start_lock_fd)
    if extra_env:
        env.update(extra_env)
    try:
        os.unlink(paths.worker_failed)  # the new worker says afresh whether it could start
    except OSError:
        pass
    log = os.open(os.path.join(paths.logs, "worker.stdout.log"),
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "kenning", "worker", "run"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=paths.root, env=env,
            start_new_session=True, close_fds=True,
            pass_fds=(start_lock_fd,) if start_lock_fd is not None else (),
        )
    finally:
        os.close(log)
    return proc


def ensure(paths: Paths, *, wait: float = 10.0, blocking_lock: bool = True) -> dict[str, Any] | None:
    """Make sure a worker runs; wait up to ``wait`` seconds for it to answer.

    Raises :class:`~kenning.store.identity.ForeignDatabase` (starting nothing) when the file at
    the database path is not Kenning's.

    With ``blocking_lock=False`` (hooks) a starter that finds another start in progress does
    not queue behind it: it only waits for the health answer within its own budget. No worker
    is spawned while another process listens on the port (it could not bind), and the wait
    ends as soon as the spawned worker exits: :func:`start_problem` says why.
    """
    health = running(paths)
    if health:
        return health
    import _sqlite3  # (loaded by kenning.store.identity anyway: the C module, not the package)

    from kenning.store.identity import ForeignDatabase, check

    try:
        check(paths.db)  # a worker would refuse this file at once: say why now, not after ``wait`` seconds
    except ForeignDatabase:
        raise
    except _sqlite3.DatabaseError:
        pass  # ours, but damaged: the worker started below says how (worker.failed, its status), never this
    deadline = time.monotonic() + wait
    try:
        paths.ensure()
        fd = os.open(paths.start_lock, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError:
        return None  # a read-only or full data dir: no worker can start (start_problem says why)
    handed_over = False
    proc = None
    try:
        got = lock_until(fd, deadline if blocking_lock else time.monotonic())
        if got:
            health = running(paths)
            if health:
                return health
            if not lock_held(paths):
                if client.listeners(port_of(paths)):
                    return None  # a stranger holds our port: a worker could not listen there
                if orphans(paths, holding_start_lock=True):
                    return None  # a worker whose lock was deleted runs: a second must not (start_problem says)
                # The new worker keeps the start lock until it holds worker.lock (it takes
                # a moment to import): a starter coming after us must not spawn another.
                try:
                    proc = spawn(paths, start_lock_fd=fd)
                except OSError:
                    return None  # e.g. its log cannot be created (a full disk)
                handed_over = True
        while time.monotonic() < deadline:
            health = running(paths, timeout=min(0.3, max(0.05, deadline - time.monotonic())))
            if health:
                return health
            if proc is not None and proc.poll() is not None and not lock_held(paths):
                return None  # it exited (a fatal start error, in the worker log) and no other runs
            time.sleep(0.03)
        return None
    finally:
        try:
            if not handed_over:  # LOCK_UN would also release the worker's inherited copy
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def port_of(paths: Paths) -> int:
    """The port the worker of this data dir listens on (settings and KENNING_PORT)."""
    from kenning.settings import load

    return load(paths)[0].port


def port_blocker(paths: Paths) -> str | None:
    """Why a worker cannot start at all, when it is known before trying: a read-only data dir, or
    'port N is in use by pid M (name)…' when another process holds the worker's port."""
    if running(paths) or lock_held(paths):
        return None
    lost = orphans(paths)
    if lost:
        return orphan_message(lost)
    if os.path.isdir(paths.root) and not os.access(paths.root, os.W_OK):
        return (f"the data dir {paths.root} is read-only: the worker cannot run there (remount it read-write, "
                "or set KENNING_DATA_DIR to a writable folder); the hooks still give what memory it holds")
    port = port_of(paths)
    if client.listeners(port) == []:
        return None  # nobody listens (None: the kernel cannot say, so ask by binding)
    from kenning.worker.port import in_use_message

    return in_use_message(port)


def start_problem(paths: Paths) -> str | None:
    """Why no worker answers, in one line with the fix, when it is not simply stopped.

    The port held by another process (named), or the fatal error the last worker recorded when
    it could not start (``worker.failed``: a corrupt database, an unwritable data dir …).
    """
    blocker = port_blocker(paths)
    if blocker or running(paths) or lock_held(paths):
        return blocker
    try:
        with open(paths.worker_failed, encoding="utf-8", errors="replace") as fh:
            return fh.read(2000).strip() or None
    except OSError:
        return None


def not_started(paths: Paths) -> str:
    """The line a command prints when :func:`ensure` gave up: the cause when it is known."""
    problem = start_problem(paths)
    if problem:
        return f"the worker did not start: {problem}"
    return "the worker did not start in time; see `kenning worker logs`"


def release_start_lock() -> None:
    """In the worker: drop the start lock a starter handed over (see :func:`spawn`)."""
    raw = os.environ.pop(START_LOCK_FD_ENV, "")
    if raw.isdigit():
        try:
            os.close(int(raw))
        except OSError:
            pass


def lock_until(fd: int, deadline: float) -> bool:
    """The exclusive flock on ``fd``, tried until ``deadline`` (monotonic); False if it stays taken."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def stop(paths: Paths, timeout: float = 10.0) -> bool:
    """Stop the worker (SIGTERM, then SIGKILL after ``timeout``). True if none runs afterwards."""
    return not stop_workers(paths, timeout)[1]


def stop_workers(paths: Paths, timeout: float = 10.0) -> tuple[list[int], list[int]]:
    """Stop every worker of this data dir: (pids stopped, pids still running).

    A worker that is still starting (a starter holds the start lock, or the worker holds its
    lock but has not written its pid file yet) is waited for, then stopped: a stop issued
    right after a SessionStart hook spawned one must not leave it running. A worker whose
    ``worker.lock`` or pid file was deleted is found by what it holds (kenning/worker/processes.py),
    and a worker counts as stopped only when its process is gone, not when a file says so.
    """
    from kenning.worker import processes

    deadline = time.monotonic() + timeout
    pids: set[int] = set()
    while True:
        health = running(paths)
        if health and isinstance(health.get("pid"), int):
            pids.add(health["pid"])
            break
        held = lock_held(paths)
        if not held and not _held(paths.start_lock):
            break  # nothing starting; any worker left is found below
        if time.monotonic() >= deadline:
            info = read_pid_file(paths)
            # Only trust the pid file's process while someone holds the worker lock.
            if info and held and isinstance(info.get("pid"), int):
                pids.add(info["pid"])
            break
        time.sleep(0.05)
    pids.update(processes.workers(paths))
    pids = {p for p in pids if pid_alive(p) and not processes.gone(p)}
    if not pids:
        return [], ([-1] if lock_held(paths) else [])  # a lock holder that /proc cannot name
    import signal  # here, not at the top: it pulls in enum (~10 ms for SessionStart, which imports this module)

    refused: set[int] = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGCONT)  # a stopped (SIGSTOP) worker handles it now, not when resumed
        except ProcessLookupError:
            pass
        except PermissionError:
            refused.add(pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(processes.gone(p) for p in pids - refused):
        time.sleep(0.05)
    for pid in pids - refused:
        if not processes.gone(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and not all(processes.gone(p) for p in pids - refused):
        time.sleep(0.05)
    left = sorted(p for p in pids if not processes.gone(p))
    return sorted(pids - set(left)), left


def orphans(paths: Paths, *, holding_start_lock: bool = False) -> list[int]:
    """Workers of this data dir that run although nobody holds ``worker.lock`` (it was deleted).

    A worker still starting holds the start lock its starter handed over until it holds
    ``worker.lock``: while someone else holds the start lock, no worker is taken for an orphan.
    The start lock is asked first: a worker takes ``worker.lock`` before it lets go of the start
    lock, so one of the two answers "held" however its start falls between them (asked the other
    way round, a worker that took the one between the two questions looked like an orphan)."""
    if (not holding_start_lock and _held(paths.start_lock)) or lock_held(paths):
        return []
    from kenning.worker import processes

    return processes.workers(paths)


def orphan_message(pids: list[int]) -> str:
    listed = ", ".join(str(p) for p in pids)
    # Not answering as ours: hung, or its pid file (with the start token that proves it) is gone too.
    return (f"Kenning's worker (pid {listed}) runs without its lock file (worker.lock was deleted) and cannot "
            "be used: `kenning worker stop` stops it, then start again")


def _held(lock_path: str) -> bool:
    """True when another process holds an exclusive flock on ``lock_path`` (a missing file: no)."""
    try:
        fd = os.open(lock_path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
