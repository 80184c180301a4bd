"""A global cap on live observer conversations, with reservations; the pool that runs the calls.

A slot is taken *before* a conversation is opened (opening may take seconds: a subprocess
for the Claude Agent SDK) and given back only *after* it is closed, so simultaneous starts
cannot overshoot the limit and a closing conversation still counts until it is gone.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

HARD_CAP = 10


class Slots:
    def __init__(self, limit: int) -> None:
        self.limit = max(1, min(HARD_CAP, limit))
        self._lock = threading.Lock()
        self.held = 0
        self.peak = 0

    def try_take(self) -> bool:
        with self._lock:
            if self.held >= self.limit:
                return False
            self.held += 1
            self.peak = max(self.peak, self.held)
            return True

    def give_back(self) -> None:
        with self._lock:
            self.held = max(0, self.held - 1)


class Pool:
    """A few daemon worker threads running submitted calls.

    Not ``ThreadPoolExecutor``: its threads are joined at interpreter exit, so a model call in
    flight (up to its 120 s timeout) would hold the worker's shutdown hostage.
    """

    def __init__(self, workers: int, name: str = "kenning-observer") -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._closed = False
        for i in range(workers):
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True).start()

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        if self._closed:
            raise RuntimeError("pool is shut down")
        self._queue.put(lambda: fn(*args))

    def shutdown(self) -> None:
        self._closed = True
        while True:  # drop what has not started; running calls end with the process
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._queue.put(None)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                self._queue.put(None)  # wake the next worker so it exits too
                return
            try:
                job()
            except Exception:  # a job reports its own errors; the thread must survive
                logging.getLogger("kenning.observer").exception("observer job failed")
