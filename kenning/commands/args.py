"""Argument types for the CLI: every value is checked where it is parsed, with a clear error.

An id beyond SQLite's 64-bit integers, a count of 10**30, ``nan`` seconds or bytes that are
not UTF-8 are the user's mistakes, not reasons for a traceback.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_ID = 2**63 - 1  # SQLite's INTEGER


def row_id(raw: str) -> int:
    """A database id: a positive integer SQLite can hold."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_show(raw)} is not a whole number") from None
    if not 1 <= value <= MAX_ID:
        raise argparse.ArgumentTypeError(f"{_show(raw)} is not an id (1 to {MAX_ID})")
    return value


def shown_id(raw: str) -> tuple[str, int]:
    """An id as search and the context print it: ``12`` or ``#12`` (an observation), ``S1`` (a
    session summary), ``P6`` (a prompt)."""
    text = raw.strip()
    kind = {"s": "summary", "p": "prompt", "#": "observation"}.get(text[:1].lower(), "")
    try:
        return kind or "observation", row_id(text[1:] if kind else text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{_show(raw)} is not an id: use one search or the context prints "
                                         "(12 or #12 for an observation, S1 for a session summary, P6 for a "
                                         "prompt)") from None


def count(lo: int, hi: int) -> Callable[[str], int]:
    """A whole number from ``lo`` to ``hi``."""
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_show(raw)} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{_show(raw)} is out of range ({lo} to {hi})")
        return value
    parse.__name__ = "count"
    return parse


def seconds(raw: str) -> float:
    """A duration from 0 to an hour."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_show(raw)} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{_show(raw)} is out of range (0 to 3600 seconds)")
    return value


def undecodable(value: object) -> bool:
    """True for text holding bytes that were not UTF-8 (decoded by Python as lone surrogates)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, (list, tuple)):
        return any(undecodable(v) for v in value)
    return False


def _show(raw: str) -> str:
    text = raw.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")
