"""The new worker's take of worker.lock survives a starter's momentary probe (daemon.lock_held)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from kenning.worker import server


def _hold(path: Path, seconds: float, taken: threading.Event) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        taken.set()
        time.sleep(seconds)
    finally:
        os.close(fd)  # releases the flock


def test_a_probe_holding_the_lock_for_an_instant_does_not_turn_a_new_worker_away(tmp_path: Path) -> None:
    lock = tmp_path / "worker.lock"
    taken = threading.Event()
    t = threading.Thread(target=_hold, args=(lock, 0.05, taken))
    t.start()
    assert taken.wait(5)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        assert server._take_worker_lock(fd)  # a single LOCK_NB attempt here would have failed
    finally:
        os.close(fd)
        t.join()


def test_a_worker_that_holds_the_lock_for_good_still_turns_a_spare_away(tmp_path: Path) -> None:
    lock = tmp_path / "worker.lock"
    taken = threading.Event()
    t = threading.Thread(target=_hold, args=(lock, server.LOCK_PROBE_GRACE_S + 1.0, taken))
    t.start()
    assert taken.wait(5)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        started = time.monotonic()
        assert not server._take_worker_lock(fd)
        assert time.monotonic() - started < server.LOCK_PROBE_GRACE_S + 0.5
    finally:
        os.close(fd)
        t.join()
