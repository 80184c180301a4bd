"""Ranking knobs of the search service (from settings).

The defaults come from the sweep in bench/recall (BENCHMARKS.md, "Search recall"): LoCoMo's
development half through the real MCP server and the coding recall set, each against a plain
BM25 measured in the same run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchConfig:
    fts_weight: float = 1.0        # hybrid: weight of the BM25 score (relative to the best candidate's)
    vector_weight: float = 0.5     # hybrid: weight of the cosine similarity (0: keywords only)
    vector_depth: int = 50         # hybrid: the nearest rows added to the keyword candidates
    keyword_depth: int = 100       # hybrid: the best-scored keyword rows fused (every row is scored)
    recency_weight: float = 0.1    # a row from today scores up to this much more than an old one
    half_life_days: float = 30.0   # the recency boost halves every this many days
    min_similarity: float = 0.0    # vector hits below this cosine are not candidates
    trigram: bool = False          # also search the trigram index (substrings of words and identifiers)
    synonyms: bool = False         # a query word also matches the other words for it (k8s: Kubernetes)

    @classmethod
    def from_settings(cls, settings: Any) -> SearchConfig:
        """Build from a :class:`kenning.settings.Settings` (missing attributes keep the defaults)."""
        d = cls()
        return cls(
            fts_weight=float(getattr(settings, "search_fts_weight", d.fts_weight)),
            vector_weight=float(getattr(settings, "search_vector_weight", d.vector_weight)),
            vector_depth=int(getattr(settings, "search_vector_depth", d.vector_depth)),
            keyword_depth=int(getattr(settings, "search_keyword_depth", d.keyword_depth)),
            recency_weight=float(getattr(settings, "search_recency_weight", d.recency_weight)),
            half_life_days=float(getattr(settings, "search_recency_half_life_days", d.half_life_days)),
            min_similarity=float(getattr(settings, "search_min_similarity", d.min_similarity)),
            trigram=bool(getattr(settings, "search_trigram", d.trigram)),
        )


DEFAULT = SearchConfig()
