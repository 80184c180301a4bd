"""Which of two memories came first, when a clock may lie.

A memory's ``created_at`` is when its event happened by the clock of the machine that captured it:
a clock that ran two days fast, or a transcript whose lines claim a future date, makes a stale
memory look newer than everything said after it. Its ``id`` is the store's order of arrival (an
autoincrement that never goes back). So: times decide while both are believable (an imported
transcript of last month is older than today's rule even though it arrived later); as soon as
either claims a time beyond ``now`` plus a small tolerance, arrival decides.

Rows are also clamped when they are stored (``kenning.store.repo.insert_observation``): a time
from the future becomes the arrival time, the claim is kept in ``claimed_at``. This module covers
the rows stored while the worker's own clock was the one running fast.
"""

from __future__ import annotations

import time

FUTURE_TOLERANCE_S = 300.0  # clocks of one machine's processes, or an NTP step: minutes, not days


def cutoff(now: float | None = None) -> float:
    """The latest believable time now: anything after it is from the future."""
    return (time.time() if now is None else now) + FUTURE_TOLERANCE_S


def clamp(claimed: float, arrived: float) -> tuple[float, float | None]:
    """(the time to store, the claimed time kept when it was from the future, else None)."""
    if claimed > arrived + FUTURE_TOLERANCE_S:
        return arrived, claimed
    return claimed, None


def earlier(old_at: float, old_id: int, new_at: float, new_id: int, now: float | None = None) -> bool:
    """Whether ``old`` came strictly before ``new``: by the clock while both times are believable
    (equal times: neither), by arrival when either is from the future."""
    limit = cutoff(now)
    if old_at > limit or new_at > limit:
        return old_id < new_id
    return old_at < new_at


def precedes(old_at: float, old_id: int, new_at: float, new_id: int, now: float | None = None) -> bool:
    """A total order for "which is newer": :func:`earlier`, equal times broken by arrival."""
    limit = cutoff(now)
    if old_at > limit or new_at > limit:
        return old_id < new_id
    return (old_at, old_id) < (new_at, new_id)


def earlier_sql(alias: str, new_at: float, new_id: int, now: float | None = None) -> tuple[str, tuple[object, ...]]:
    """:func:`earlier` (``alias`` the old row, ``new_*`` the new one) as an SQL condition and its arguments."""
    limit = cutoff(now)
    if new_at > limit:
        return f"{alias}.id < ?", (new_id,)
    return f"({alias}.created_at < ? OR ({alias}.created_at > ? AND {alias}.id < ?))", (new_at, limit, new_id)
