"""The viewer's search results as a list a person reads: each memory once, counted, in the order asked for.

The search engine ranks hits; the viewer keeps those its memory view shows (kenning/viewer/items.py
``in_view``), folds near-duplicates onto one row (an observation's group, a prompt repeated word for
word by imported sessions), counts them (among the hits read: a lower bound while the engine has more)
and sorts them by relevance (the engine's order), newest or oldest first. Every page of a search reads the
same ranking to the same depth (``depth``), so scrolling neither skips nor repeats a row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

SORTS = ("relevance", "newest", "oldest")
DEPTHS = (400, 2_000, 10_000)  # hits read for a page: the first tier that reaches past it
SORT_DEPTH = 2_000             # hits read to sort by date: past them "newest first" is among the best 2,000


def depth(end: int, sort: str = "relevance") -> int:
    """How many hits to read for a page ending at row ``end``."""
    need = max(end + 1, SORT_DEPTH if sort != "relevance" else 0)
    return next((d for d in DEPTHS if d >= need), DEPTHS[-1])


@dataclass
class Found:
    items: list[dict[str, Any]] = field(default_factory=list)
    more: bool = False     # the engine had more hits than were read: the total is a lower bound
    merged: int = 0        # hits folded onto a row already listed (the same memory said again)


def _same(it: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two hits the same memory to a reader."""
    if it["kind"] == "observation":
        return ("observation", it.get("duplicate_of") or it["id"])
    if it["kind"] == "prompt":
        return ("prompt", it["project"], " ".join(str(it["title"]).lower().split()))
    return (it["kind"], it["id"])


def collect(hits: Sequence[Any], rows: Sequence[dict[str, Any]], keep: Callable[[dict[str, Any]], bool],
            sort: str = "relevance", *, more: bool = False) -> Found:
    """``rows`` (hydrated ``hits``, any order) kept, folded, scored and sorted."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    by_key = {(it["kind"], it["id"]): it for it in rows}
    out = Found(more=more)
    seen: set[tuple[Any, ...]] = set()
    for h in hits:
        it = by_key.get((h.kind, h.id))
        if it is None or not keep(it):
            continue
        same = _same(it)
        if same in seen:
            out.merged += 1
            continue
        seen.add(same)
        out.items.append({**it, "score": round(float(h.score), 4)})
    if sort != "relevance":
        out.items.sort(key=lambda it: (it["at"], it["id"]), reverse=sort == "newest")
    return out
