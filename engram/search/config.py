"""Ranking knobs of the search service (from settings; the defaults were tuned on bench/recall)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchConfig:
    fts_weight: float = 1.0        # weight of the BM25 list in the fusion
    vector_weight: float = 0.5     # weight of the embedding list in the fusion
    rrf_k: int = 60                # reciprocal-rank-fusion constant: 1 / (k + rank)
    recency_weight: float = 0.1    # a row from today scores up to this much more than an old one
    half_life_days: float = 30.0   # the recency boost halves every this many days
    min_similarity: float = 0.25   # vector hits below this cosine are noise, not candidates
    trigram: bool = False          # also search the trigram index (substrings, CJK)

    @classmethod
    def from_settings(cls, settings: Any) -> SearchConfig:
        """Build from a :class:`engram.settings.Settings` (missing attributes keep the defaults)."""
        d = cls()
        return cls(
            fts_weight=float(getattr(settings, "search_fts_weight", d.fts_weight)),
            vector_weight=float(getattr(settings, "search_vector_weight", d.vector_weight)),
            rrf_k=int(getattr(settings, "search_rrf_k", d.rrf_k)),
            recency_weight=float(getattr(settings, "search_recency_weight", d.recency_weight)),
            half_life_days=float(getattr(settings, "search_recency_half_life_days", d.half_life_days)),
            min_similarity=float(getattr(settings, "search_min_similarity", d.min_similarity)),
            trigram=bool(getattr(settings, "search_trigram", d.trigram)),
        )


DEFAULT = SearchConfig()
