"""A global cap on live observer conversations, with reservations.

A slot is taken *before* a conversation is opened (opening may take seconds: a subprocess
for the Claude Agent SDK) and given back only *after* it is closed, so simultaneous starts
cannot overshoot the limit and a closing conversation still counts until it is gone.
"""

from __future__ import annotations

import threading

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
