"""Exponential back-off per provider after quota, rate-limit, auth or transient failures.

While a provider backs off no call is made and the events simply stay pending: nothing is
dropped, and a user who hit a usage limit is not hammered with retries. One success resets
it. The state is plain data so ``kenning doctor`` and ``/api/health`` can show it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# kind -> (first delay, longest delay) in seconds
DELAYS: dict[str, tuple[float, float]] = {
    "quota": (30.0, 3600.0),
    "auth": (60.0, 3600.0),
    "transient": (2.0, 300.0),
    "fatal": (2.0, 60.0),
}


@dataclass
class BackoffState:
    kind: str = ""
    failures: int = 0
    until: float = 0.0
    message: str = ""
    total_failures: int = 0


class Backoff:
    """Thread-safe back-off of one provider; ``clock`` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.time, scale: float = 1.0) -> None:
        self._clock = clock
        self._scale = scale
        self._lock = threading.Lock()
        self.state = BackoffState()

    def fail(self, kind: str, message: str, retry_after: float | None = None) -> float:
        """Record a failure; returns the delay before the next call."""
        first, longest = DELAYS.get(kind, DELAYS["transient"])
        with self._lock:
            s = self.state
            s.failures = s.failures + 1 if s.kind == kind else 1
            s.kind = kind
            s.total_failures += 1
            s.message = message[:300]
            delay = min(longest, first * 2 ** (s.failures - 1)) * self._scale
            if retry_after is not None and retry_after >= 0:
                # The server knows when it will take calls again: believe it, within our bounds.
                delay = min(longest * self._scale, max(retry_after, 0.05))
            s.until = self._clock() + delay
            return delay

    def succeed(self) -> None:
        with self._lock:
            self.state = BackoffState(total_failures=self.state.total_failures)

    def paused(self) -> bool:
        return self._clock() < self.state.until

    def remaining(self) -> float:
        return max(0.0, self.state.until - self._clock())

    def snapshot(self) -> dict[str, object]:
        s = self.state
        return {"active": self.paused(), "kind": s.kind, "failures": s.failures,
                "retry_in_s": round(self.remaining(), 1), "last_error": s.message,
                "total_failures": s.total_failures}
