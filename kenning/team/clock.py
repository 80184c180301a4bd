"""Hybrid logical clocks: ``<wall ms, 13 digits>.<counter, 5 digits>.<device>``, ordered as text.

A tick is never behind the last clock this device saw (its own or one pulled), so an operation made
after another one it knew of sorts after it, whatever the machines' wall clocks say.
"""

from __future__ import annotations


def parse(hlc: str) -> tuple[int, int]:
    try:
        wall, count, _device = hlc.split(".", 2)
        return int(wall), int(count)
    except ValueError:
        return 0, 0


def tick(last: str, device: str, now: float) -> str:
    wall, count = parse(last)
    ms = int(now * 1000)
    if ms > wall:
        wall, count = ms, 0
    else:
        count += 1
        if count > 99_999:
            wall, count = wall + 1, 0
    return f"{wall:013d}.{count:05d}.{device}"


def observe(last: str, seen: str) -> str:
    """The clock after seeing ``seen`` (the larger of the two; a tick then goes past it)."""
    return max(last, seen) if parse(seen) != (0, 0) else last


def at(when: float, device: str) -> str:
    """A clock fixed by a time (a tombstone's): the same every time it is asked."""
    return f"{int(when * 1000):013d}.00000.{device}"
