"""A worker whose ``worker.lock`` was deleted is still found: stopped for real, never doubled.

Through the real CLI and a real worker. The processes of this data dir are counted independently
of the code under test: every ``kenning worker run`` on the machine whose environment names this
data dir (``KENNING_DATA_DIR``, as ``kenning.daemon.spawn`` sets it); other helpers' workers run
beside it and must be left alone.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time

from tests.conftest import Home


def _our_workers(home: Home) -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            with open(f"/proc/{p}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            with open(f"/proc/{p}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if b"worker" in argv and b"run" in argv and state != b"Z" \
                and f"KENNING_DATA_DIR={home.data}".encode() in env:
            out.append(int(p))
    return out


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


def _lock_is_held(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
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


def test_a_worker_whose_lock_was_deleted_puts_it_back_and_is_stopped_for_real(home: Home) -> None:
    pid = home.start_worker()["pid"]
    assert _our_workers(home) == [pid]
    os.unlink(home.paths.worker_lock)

    # start finds the one running and starts no second beside it.
    r = home.kenning("worker", "start", "--wait", "5")
    assert r.returncode == 0 and f"pid {pid}" in r.stdout, r.stdout + r.stderr
    assert _our_workers(home) == [pid]
    # The worker puts its lock file back and holds it, so every starter sees it again.
    deadline = time.monotonic() + 10
    while not _lock_is_held(home.paths.worker_lock) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _lock_is_held(home.paths.worker_lock), "worker.lock was not put back"

    r = home.kenning("worker", "stop", timeout=60)
    assert _gone(pid), f"`worker stop` said {r.stdout.strip()!r} but the worker still runs"
    assert r.returncode == 0 and f"worker stopped (pid {pid})" in r.stdout, r.stdout + r.stderr
    assert _our_workers(home) == []


def test_a_hung_worker_without_its_lock_and_pid_file_is_never_doubled_and_still_stopped(home: Home) -> None:
    pid = home.start_worker()["pid"]
    os.unlink(home.paths.worker_lock)
    os.unlink(home.paths.pid_file)
    os.kill(pid, signal.SIGSTOP)  # hung: it holds the port and answers nothing
    try:
        # Neither the CLI nor a SessionStart hook starts a second worker next to it; the CLI says why.
        r = home.kenning("worker", "start", "--wait", "5")
        assert r.returncode == 1, r.stdout + r.stderr
        assert f"Kenning's worker (pid {pid}) runs without its lock file" in r.stderr, r.stderr
        h = home.hook("SessionStart", {"session_id": "s-orphan", "hook_event_name": "SessionStart",
                                       "cwd": str(home.project), "source": "startup"})
        assert h.returncode == 0
        time.sleep(1.0)
        assert _our_workers(home) == [pid], "a second worker was started next to the orphan"

        started = time.monotonic()
        r = home.kenning("worker", "stop", timeout=60)
        assert r.returncode == 0 and f"worker stopped (pid {pid})" in r.stdout, r.stdout + r.stderr
        assert _gone(pid)
        assert time.monotonic() - started < 30
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)
    # The data dir is usable again at once.
    new = home.start_worker()["pid"]
    assert new != pid and _our_workers(home) == [new]


def test_a_worker_whose_lock_and_pid_file_were_deleted_is_stopped(home: Home) -> None:
    pid = home.start_worker()["pid"]
    os.unlink(home.paths.worker_lock)
    os.unlink(home.paths.pid_file)
    r = home.kenning("worker", "stop", timeout=60)
    assert _gone(pid), f"`worker stop` said {r.stdout.strip()!r} but the worker still runs"
    assert r.returncode == 0 and f"worker stopped (pid {pid})" in r.stdout, r.stdout + r.stderr
