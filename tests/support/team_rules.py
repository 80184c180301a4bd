"""Distinct standing rules to share through a team hub (tests and bench/team_scale.py).

Each is its own words (drawn from a few thousand made-up identifiers), so the store's near-duplicate grouping
keeps every one as a memory of its own, as distinct rules a team writes down would be.
"""

from __future__ import annotations

import random

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "fa", "gu", "hi", "ja", "xo")


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n)]


def rules(n: int, seed: int = 0, who: str = "") -> list[tuple[str, str]]:
    """``n`` (title, text) pairs, different from each other and from another ``seed``'s."""
    rng = random.Random(f"{seed}:{who}")
    out = []
    for i in range(n):
        w = _words(rng, 14)
        out.append((f"Rule {who}{i}: the {w[0]} service calls {w[1]} before {w[2]} and {w[3]} {w[4]}",
                    f"Always run {w[5]} {w[6]} ahead of {w[7]}; {w[8]} {w[9]} breaks {w[10]} {w[11]} "
                    f"when {w[12]} {w[13]} is skipped."))
    return out
