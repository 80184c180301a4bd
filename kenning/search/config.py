"""Ranking knobs of the search service (from settings).

The defaults are the best of the fusion sweep in bench/recall/run.py (BENCHMARKS.md, "Search
recall"): the highest recall@10 that keeps keyword queries at least as good as BM25 alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchConfig:
    fts_weight: float = 1.0        # weight of the BM25 list in the fusion
    vector_weight: float = 0.5     # weight of the embedding list in the fusion
    some_terms_weight: float = 0.1  # keyword hits holding only some of the words (OR tier): weak
    rrf_k: int = 20                # reciprocal-rank-fusion constant: weight / (k + rank)
    recency_weight: float = 0.1    # a row from today scores up to this much more than an old one
    half_life_days: float = 30.0   # the recency boost halves every this many days
    min_similarity: float = 0.0    # vector hits below this cosine are not candidates
    trigram: bool = False          # also search the trigram index (substrings, CJK)

    @classmethod
    def from_settings(cls, settings: Any) -> SearchConfig:
        """Build from a :class:`kenning.settings.Settings` (missing attributes keep the defaults)."""
        d = cls()
        return cls(
            fts_weight=float(getattr(settings, "search_fts_weight", d.fts_weight)),
            vector_weight=float(getattr(settings, "search_vector_weight", d.vector_weight)),
            some_terms_weight=float(getattr(settings, "search_some_terms_weight", d.some_terms_weight)),
            rrf_k=int(getattr(settings, "search_rrf_k", d.rrf_k)),
            recency_weight=float(getattr(settings, "search_recency_weight", d.recency_weight)),
            half_life_days=float(getattr(settings, "search_recency_half_life_days", d.half_life_days)),
            min_similarity=float(getattr(settings, "search_min_similarity", d.min_similarity)),
            trigram=bool(getattr(settings, "search_trigram", d.trigram)),
        )


DEFAULT = SearchConfig()
