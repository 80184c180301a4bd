"""A value a memory states that later memories state otherwise: a deadline raised "from 10s to 120s" in one
session and "the entire 60s deadline" a day later. The older memory still tells the cause it found; its
value is no longer how the code is, so the index says what the later one says.

A value is a number with its unit (time, size, share) tied to the noun it measures: "<noun> from A to B"
(the memory's own change: B), "a 60s deadline", "60-second deadline", "deadline of 60s", "timeout: 30s".
Only a value a memory says it changed is weighed against what later memories say; two memories speak of
the same thing when they name the same noun and share another word of substance.

The store has the other direction (kenning/memory/supersession.py ``changed_value``): a new memory that
says a value changed supersedes an older one stating the old value. A later memory that only states
another value in passing supersedes nothing; here it is said beside the change it puts in doubt.

Standard library only (the SessionStart hook may build the index itself).
"""

from __future__ import annotations

import re
from functools import lru_cache

# seconds, bytes or percent per unit
_UNITS = {"ms": ("t", 0.001), "millisecond": ("t", 0.001), "s": ("t", 1.0), "sec": ("t", 1.0), "second": ("t", 1.0),
          "m": ("t", 60.0), "min": ("t", 60.0), "minute": ("t", 60.0), "h": ("t", 3600.0), "hr": ("t", 3600.0),
          "hour": ("t", 3600.0), "d": ("t", 86400.0), "day": ("t", 86400.0), "kb": ("b", 1e3), "kib": ("b", 1024.0),
          "mb": ("b", 1e6), "mib": ("b", 1048576.0), "gb": ("b", 1e9), "gib": ("b", 1073741824.0), "%": ("p", 1.0)}
_UNIT = r"(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|kb|kib|mb|mib|gb|gib|%)"
_NUM = r"(\d+(?:\.\d+)?)"
_NOUN = r"([a-z][a-z_-]{2,30})"
# "deadline from 10s to 120s" (the value it was changed to)
_CHANGED = re.compile(rf"\b{_NOUN}\s+from\s+{_NUM}\s?{_UNIT}\s+to\s+{_NUM}\s?{_UNIT}(?![\w.])", re.IGNORECASE)
# "a 60s deadline", "60-second deadline", "the 120 s timeout"
_BEFORE = re.compile(rf"(?<![\w.]){_NUM}(?:\s|-)?{_UNIT}\s+(?:(?:hard|soft|total|overall|entire|whole|new|old)\s+)?"
                     rf"{_NOUN}\b", re.IGNORECASE)
# "deadline of 60s", "timeout: 30s", "limit is 64 MB", "timeout = 30s"
_AFTER = re.compile(rf"\b{_NOUN}\s*(?:of|is|was|=|:|at)\s+{_NUM}\s?{_UNIT}(?![\w.])", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9_-]{3,}")
_PLAIN = frozenset(("from", "with", "that", "this", "when", "into", "after", "before", "then", "than", "which",
                    "while", "also", "still", "every", "entire", "whole", "hard", "soft", "total", "because", "there",
                    "their", "them", "they", "have", "were", "does", "only", "fix", "fixed", "changes", "change"))


def _value(num: str, unit: str) -> tuple[str, float] | None:
    u = unit.lower().rstrip("s") if len(unit) > 2 else unit.lower()
    u = {"sec": "s", "min": "m", "hr": "h"}.get(u, u)
    if u not in _UNITS and unit.lower() in _UNITS:
        u = unit.lower()
    if u not in _UNITS:
        return None
    dim, scale = _UNITS[u]
    return dim, float(num) * scale


# Words that can follow or precede a value and measure nothing ("30s and …", "every 5s for …").
_NOT_NOUN = frozenset(("and", "or", "the", "for", "to", "of", "in", "on", "at", "by", "with", "per", "each", "than",
                       "then", "but", "so", "ago", "later", "earlier", "before", "after", "instead", "now", "only",
                       "more", "less", "long", "old", "max", "min", "from", "into", "while", "when", "which", "that"))


def _noun(word: str) -> str:
    w = word.lower()
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


@lru_cache(maxsize=4096)  # (its dict is shared between callers: read it, never change it)
def stated(text: str, *, changed_only: bool = False) -> dict[str, tuple[str, float, str]]:
    """noun -> (dimension, magnitude, as said) of the values ``text`` states, one each (a noun stated with two
    different values, neither as a change, is left out: which one holds is not said); ``changed_only``: only
    the values it says were changed to ("deadline from 10s to 120s")."""
    found: dict[str, set[tuple[str, float, str]]] = {}
    changed: dict[str, tuple[str, float, str]] = {}
    for m in _CHANGED.finditer(text):
        v = _value(m.group(4), m.group(5))
        if v is not None and m.group(1).lower() not in _NOT_NOUN:
            changed[_noun(m.group(1))] = (*v, text[m.start(4):m.end(5)])
    if changed_only:
        return changed
    for rx, n, num, unit in ((_BEFORE, 3, 1, 2), (_AFTER, 1, 2, 3)):
        for m in rx.finditer(text):
            v = _value(m.group(num), m.group(unit))
            if v is not None and m.group(n).lower() not in _NOT_NOUN:
                found.setdefault(_noun(m.group(n)), set()).add((*v, text[m.start(num):m.end(unit)]))
    out = {k: next(iter(v)) for k, v in found.items() if len({x[:2] for x in v}) == 1}
    out.update(changed)
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _PLAIN


def restated(text: str, later: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    """(the noun, its value as the later text says it, that text's reference) for the first of ``later``
    ((text, reference), oldest first) that states otherwise a value ``text`` says it changed, about the same
    thing. (A value said in passing is not weighed: two deadlines of one program may well differ.)"""
    mine = stated(text, changed_only=True)
    if not mine:
        return None
    words = _words(text)
    for other, ref in later:
        theirs = stated(other)
        for noun, (dim, size, _said) in mine.items():
            if noun not in theirs:
                continue
            odim, osize, osaid = theirs[noun]
            if odim == dim and abs(osize - size) > 1e-9 * max(size, osize, 1.0) \
                    and len((words & _words(other)) - {noun, noun + "s"}) >= 1:
                return noun, osaid, ref
    return None
