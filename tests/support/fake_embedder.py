"""A deterministic stand-in embedding model for the search tests: bag of hashed words + synonyms.

Words listed in one SYNONYMS group map to the same dimension, so "automobile" is near "car"
without sharing a keyword: enough to test the semantic path without a real model.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from kenning.search.embedders import Embedder

DIM = 64
SYNONYMS = [("car", "automobile", "vehicle"), ("money", "cash", "currency", "invoice"),
            ("slow", "sluggish", "latency"), ("crash", "segfault", "panic")]
_GROUP = {w: g[0] for g in SYNONYMS for w in g}


def _dim(word: str) -> int:
    return int(hashlib.md5(_GROUP.get(word, word).encode()).hexdigest(), 16) % DIM


class FakeEmbedder(Embedder):
    backend = "fake"

    def __init__(self, model: str = "fake-64") -> None:
        super().__init__(model)
        self.calls: list[list[str]] = []

    def load(self) -> None:
        self.dim = DIM

    def embed(self, texts: list[str]) -> Any:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, _dim(w)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms
