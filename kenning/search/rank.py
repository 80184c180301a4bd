"""Ranking: recency boost, the BM25 score squash, and weighted reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

DAY = 86400.0


def recency(created_at: float, now: float, weight: float, half_life_days: float) -> float:
    """1 + weight for a row from now, decaying by half every ``half_life_days`` (mild on purpose:
    an old exact answer must still beat a fresh vague one)."""
    if weight <= 0 or half_life_days <= 0:
        return 1.0
    age_days = max(0.0, now - created_at) / DAY
    return 1.0 + weight * 0.5 ** (age_days / half_life_days)


def squash(bm25: float) -> float:
    """FTS5's bm25() (negative, unbounded) as a score in [0, 1): higher is better."""
    s = max(0.0, -bm25)
    return s / (1.0 + s)


def rrf(lists: Sequence[tuple[float, Sequence[Hashable]]], k: int) -> dict[Hashable, float]:
    """Weighted reciprocal-rank fusion: sum over lists of weight / (k + rank), rank from 1."""
    out: dict[Hashable, float] = {}
    for weight, keys in lists:
        if weight <= 0:
            continue
        for rank, key in enumerate(keys, 1):
            out[key] = out.get(key, 0.0) + weight / (k + rank)
    return out
