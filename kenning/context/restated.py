"""Key memories that say again what another one says, in other words: listed once, the newer.

Two sessions find the same trap ("main 브랜치 보호 규칙 때문에 직접 push 불가" and, a day later, "`main` 브랜치는 보호
규칙(3개 상태 체크 필수)으로 직접 푸시 불가"), or one turn keeps a cause twice, once with its fix; the store's
near-duplicate groups (kenning/memory/duplicates.py) ask for the same identifiers and most of the same words, which
other wording, code quotes and the particles of Korean or Japanese defeat. What a row says is read here as its longer
words by their first four letters and its Chinese, Japanese or Korean text by pairs of characters; two rows sharing
at least ``SAME`` of all that say the same thing. In the real sessions' contexts (development and extra projects),
6 pairs of key rows reach 0.4: five the same finding, or a later word that corrects an earlier one (the newer is
kept: "No more 'device flow is the right default' …" after "… still the right default"), one two settings of one
screen; none of the other pairs reaches 0.32.

Standard library only (the SessionStart hook may build the index itself).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.context.index import Row

SAME = 0.4
LOOKED_AT = 40  # the first rows by rank: more than the index lists (the rest keep their place)

_WORD = re.compile(r"[^\W\d_][\w-]{3,}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_PLAIN = frozenset(("that", "this", "with", "from", "when", "into", "only", "after", "before", "then", "than",
                    "have", "were", "does", "each", "every", "also", "still", "never", "always", "because", "there",
                    "which", "while", "they", "them", "their", "what", "where", "would", "should", "could", "must"))


def said(text: str) -> frozenset[str]:
    """What a text says, for telling a restatement: its longer words by their first four letters, and its runs of
    Chinese, Japanese or Korean by pairs of characters."""
    out = {w.lower()[:4] for w in _WORD.findall(text) if w.lower() not in _PLAIN and not _CJK.search(w)}
    for run in _CJK.findall(text):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(out)


def once(rows: list[Row], cache: dict[int, frozenset[str]] | None = None) -> list[Row]:
    """``rows`` (by rank) with each row among the first ``LOOKED_AT`` that another says again left out: the newer of
    the two stays, in the better ranked one's place; of one moment, the longer (a cause with its fix, not the cause
    alone). ``cache``: what each row (by id) says, kept between calls on the same rows."""
    cache = {} if cache is None else cache
    place: list[Row | None] = list(rows[:LOOKED_AT])
    what = [cache[r.id] if r.id in cache else cache.setdefault(r.id, said(r.title)) for r in rows[:LOOKED_AT]]
    for i in range(len(place)):
        for j in range(i + 1, len(place)):
            a, b = place[i], place[j]
            if a is None or b is None or not what[i] or not what[j] \
                    or len(what[i] & what[j]) / len(what[i] | what[j]) < SAME:
                continue
            if (b.created_at, len(b.title)) > (a.created_at, len(a.title)):
                place[i], what[i] = b, what[j]
            place[j] = None
    return [r for r in place if r is not None] + rows[LOOKED_AT:]
