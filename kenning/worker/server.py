"""The worker process: singleton lock, pid file, HTTP server, pipeline thread, clean shutdown."""

from __future__ import annotations

import fcntl
import json
import logging
import logging.handlers
import os
import socket
import sqlite3
import stat
import sys
import threading
import time

from kenning import allocator, losses
from kenning.daemon import lock_until, release_start_lock
from kenning.hook.client import EMBED_DATAGRAM, POKE_DATAGRAM
from kenning.observer.registry import choose
from kenning.paths import FILE_MODE, Paths, ensure_token, write_private
from kenning.service import Memory
from kenning.settings import load
from kenning.store.db import open_db
from kenning.store.identity import ForeignDatabase, check
from kenning.worker.app import VERSION, WorkerState, create_app
from kenning.worker.pipeline import Pipeline, PipelineThread

log = logging.getLogger("kenning.worker")


def setup_logging(paths: Paths, level: str, max_bytes: int, backups: int) -> None:
    handler = logging.handlers.RotatingFileHandler(paths.worker_log, maxBytes=max_bytes, backupCount=backups,
                                                   encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("kenning")
    root.handlers[:] = [handler]
    root.setLevel(level)
    try:
        os.chmod(paths.worker_log, FILE_MODE)
    except OSError:
        pass


def run(paths: Paths | None = None) -> int:
    """Run the worker in the foreground until SIGTERM/SIGINT. Returns the exit code."""
    paths = paths or Paths()
    allocator.limit_arenas()  # before any thread: see kenning/allocator.py
    # Every file the worker creates is private, including those made later by libraries
    # (a log file re-created at rotation, SQLite's -wal/-shm): not only those we chmod.
    os.umask(0o077)
    paths.ensure()
    losses.prepare(paths)  # while there is room: the count of lost captures must survive a full disk
    settings, problems = load(paths, create=True)
    setup_logging(paths, settings.log_level, settings.log_max_bytes, settings.log_backups)
    lock_fd = os.open(paths.worker_lock, os.O_RDWR | os.O_CREAT, FILE_MODE)
    if not _take_worker_lock(lock_fd):
        release_start_lock()
        log.info("another worker holds %s; exiting", paths.worker_lock)
        os.close(lock_fd)
        return 0
    release_start_lock()  # we are the worker now: later starters will see worker.lock held
    conn = None
    thread = None
    fifo = None
    lock: _Lock | None = None
    fifo_stop = threading.Event()
    start_token = os.urandom(16).hex()
    try:
        for p in problems:
            log.warning("settings: %s", p)
        ensure_token(paths)
        try:
            check(paths.db)
        except ForeignDatabase as e:
            log.error("%s", e)
            print(f"kenning worker: {e}", file=sys.stderr)  # worker.stdout.log, for whoever started it
            return 2
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", settings.port))
        except OSError as e:
            sock.close()
            from kenning.worker.port import in_use_message

            return _fail(paths, in_use_message(settings.port) or f"cannot listen on 127.0.0.1:{settings.port}: {e} "
                                                                  "(set `port` in settings.json, or KENNING_PORT)")
        # Accepted sockets inherit it: without it a response on a kept-alive connection (the
        # viewer's fetches) waits ~40 ms for the client's delayed ACK (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.listen(128)
        udp = _bind_poke_socket(settings.port)
        try:
            conn = open_db(paths.db)
        except (sqlite3.Error, OSError) as e:
            sock.close()
            if udp is not None:
                udp.close()
            from kenning.store.health import explain

            return _fail(paths, explain(paths.db, e))
        observer, note = choose(settings)
        pipeline = Pipeline(paths, conn, observer)
        thread = PipelineThread(pipeline)
        state = WorkerState(paths=paths, memory=Memory(paths, settings, pooled=True), thread=thread, port=settings.port,
                            start_token=start_token, started_at=time.time(), observer_note=note,
                            settings_problems=problems)
        write_private(paths.pid_file, json.dumps({
            "pid": os.getpid(), "port": settings.port, "start_token": start_token,
            "started_at": state.started_at, "version": VERSION}).encode())
        _clear_failure(paths)
        thread.start()
        from kenning.team.worker import SyncThread

        SyncThread(paths, settings.team_sync_seconds).start()  # idle until this machine joins a team
        thread.poke()  # drain whatever the spool gathered while no worker ran
        if udp is not None:
            threading.Thread(target=_poke_listener, args=(udp, thread), name="kenning-poke", daemon=True).start()
        lock = _Lock(paths.worker_lock, lock_fd)
        threading.Thread(target=lock.watch, name="kenning-lock-watch", daemon=True).start()
        fifo = _open_poke_fifo(paths)
        if fifo is not None:
            threading.Thread(target=_fifo_listener, args=(fifo, thread, fifo_stop), name="kenning-poke-fifo",
                             daemon=True).start()
        state.ready = True
        log.info("worker %s listening on 127.0.0.1:%s (observer: %s)", os.getpid(), settings.port, note)

        import signal

        import uvicorn

        # uvicorn shuts down gracefully on SIGTERM/SIGINT, restores the previous handlers and then
        # re-raises the signal: with the default handler that kills the process before the
        # `finally` below (pid file left behind, pipeline not stopped). Ours turns it into a
        # normal exit instead.
        def _exit(signum: int, frame: object) -> None:
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, _exit)
        signal.signal(signal.SIGINT, _exit)
        from kenning.worker.protocol import HEADER_TIMEOUT_S, deadline_protocol

        # No proxy sits in front of a loopback worker: X-Forwarded-* are never trusted (and not
        # parsed on every request), and no Server header names the stack to whoever asks.
        config = uvicorn.Config(create_app(state), log_config=None, access_log=False, lifespan="off",
                                timeout_graceful_shutdown=3, http=deadline_protocol(),
                                timeout_keep_alive=int(HEADER_TIMEOUT_S), proxy_headers=False,
                                server_header=False)
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except SystemExit:
            pass
        log.info("worker %s stopping", os.getpid())
        return 0
    finally:
        if fifo is not None:
            fifo_stop.set()
            try:
                os.write(fifo, b"!")  # wakes its listener, which closes it
            except OSError:
                pass
        if thread is not None:
            thread.stop()
            thread.join(timeout=10)
        _remove_pid_file(paths, start_token)
        if thread is not None:
            conn = thread.pipeline.conn  # a new one when the database file was replaced meanwhile
        if conn is not None:
            conn.close()
        if lock is not None:
            lock.close()
        else:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)


LOCK_WATCH_S = 2.0


class _Lock:
    """The worker's hold on ``worker.lock``, kept when the file is deleted under it.

    Starters and hooks know a worker runs because someone holds that file's flock; after
    ``rm worker.lock`` the worker would still hold the deleted file's lock, the path would say
    nobody runs, and a second worker could start. So the worker looks every ``LOCK_WATCH_S`` and
    puts a lock file back at the path, holding it. Should another worker hold the file now at the
    path, this one says so in its log (``kenning worker stop`` finds both: kenning/worker/processes.py)."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.warned = False
        self.failed = ""
        self.mutex = threading.Lock()
        self.stopped = threading.Event()

    def watch(self) -> None:
        while not self.stopped.wait(LOCK_WATCH_S):
            try:
                with self.mutex:
                    if not self.stopped.is_set():
                        self.check()
            except OSError as e:
                if str(e) != self.failed:  # once per cause, not every 2 s (a deleted data dir)
                    log.warning("cannot restore %s: %s", self.path, e)
                self.failed = str(e)

    def close(self) -> None:
        with self.mutex:
            self.stopped.set()
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)

    def check(self) -> None:
        held = os.fstat(self.fd)
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
                return
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            if not self.warned:
                log.warning("%s was replaced and another process holds it: two workers may run; "
                            "`kenning worker stop` stops both", self.path)
                self.warned = True
            return
        old, self.fd = self.fd, fd
        os.close(old)  # the deleted file's lock goes with it
        log.warning("%s was deleted while the worker ran: put back and held", self.path)


def _fail(paths: Paths, reason: str) -> int:
    """A start that cannot succeed: log it, and leave the reason where ``kenning worker start`` reads it."""
    log.error("worker cannot start: %s", reason)
    try:
        write_private(paths.worker_failed, (reason + "\n").encode("utf-8", "replace"))
    except OSError:
        pass  # a full or read-only disk: the starter says so itself
    return 1


def _clear_failure(paths: Paths) -> None:
    try:
        os.unlink(paths.worker_failed)
    except OSError:
        pass


def _bind_poke_socket(port: int) -> socket.socket | None:
    """The UDP socket hooks poke (same port number as the HTTP API, loopback only)."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind(("127.0.0.1", port))
    except OSError as e:
        log.warning("no UDP poke socket on 127.0.0.1:%s (%s); the spool is still drained every 2 s", port, e)
        udp.close()
        return None
    return udp


def _poke_listener(udp: socket.socket, thread: PipelineThread) -> None:
    # A datagram carries no data worth trusting: it only wakes the pipeline early.
    while True:
        try:
            data, _addr = udp.recvfrom(64)
        except OSError:
            return
        if data == POKE_DATAGRAM:
            thread.poke()
        elif data == EMBED_DATAGRAM:  # an MCP save or a CLI import wrote rows: embed them now
            from kenning.search.runtime import current

            runtime = current()
            if runtime is not None:
                runtime.notify()


LOCK_PROBE_GRACE_S = 0.25  # a starter's probe (daemon.lock_held) holds worker.lock for microseconds


def _take_worker_lock(fd: int) -> bool:
    """The exclusive flock on worker.lock; False when another worker holds it.

    Starters and hooks test whether a worker runs by taking that lock for an instant
    (kenning.daemon.lock_held): a new worker that tried at that very instant would take the
    probe for a running worker and exit, leaving none. So it tries again for a moment; a worker
    that really runs holds the lock for good, and the spare then exits as before."""
    return lock_until(fd, time.monotonic() + LOCK_PROBE_GRACE_S)


def _open_poke_fifo(paths: Paths) -> int | None:
    """The named pipe capture hooks poke: a byte each, so a hook needs neither a socket nor the pid
    file (~1 ms of its start-up). Opened read-write: it never reads as closed between two hooks, and
    a hook finds a reader exactly while a worker runs. None (UDP pokes only) where it cannot be made."""
    path = paths.poke_fifo
    try:
        st = os.lstat(path)
        if not stat.S_ISFIFO(st.st_mode) or st.st_uid != os.getuid():
            os.unlink(path)
        elif st.st_mode & 0o077:
            os.chmod(path, 0o600)
    except FileNotFoundError:
        pass
    except OSError as e:
        log.warning("no poke pipe at %s (%s); hooks poke over UDP", path, e)
        return None
    try:
        try:
            os.mkfifo(path, 0o600)
        except FileExistsError:
            pass
        return os.open(path, os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, AttributeError) as e:  # AttributeError: no mkfifo on this platform
        log.warning("no poke pipe at %s (%s); hooks poke over UDP", path, e)
        return None


def _fifo_listener(fd: int, thread: PipelineThread, stop: threading.Event) -> None:
    # Like a datagram, a byte carries nothing worth trusting: it only wakes the pipeline early.
    try:
        while not stop.is_set():
            if not os.read(fd, 4096) or stop.is_set():
                break
            thread.poke()
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_pid_file(paths: Paths, start_token: str) -> None:
    try:
        with open(paths.pid_file, encoding="utf-8") as fh:
            info = json.load(fh)
        if info.get("start_token") == start_token:
            os.unlink(paths.pid_file)
    except (OSError, ValueError):
        pass
