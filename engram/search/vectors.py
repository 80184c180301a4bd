"""Placeholder replaced by the vector index (next commit)."""

from __future__ import annotations

from collections.abc import Sequence


class VectorIndex:
    def nearest(self, text: str, *, k: int, kinds: Sequence[str], project: str | None) -> list[tuple[str, int, float]]:
        return []
