"""Key memories that say again what another one says, in other words: listed once, the newer.

Two sessions find the same trap ("main 브랜치 보호 규칙 때문에 직접 push 불가" and, a day later, "`main` 브랜치는 보호
규칙(3개 상태 체크 필수)으로 직접 푸시 불가"), or one turn keeps a cause twice, once with its fix; the store's
near-duplicate groups (kenning/memory/duplicates.py) ask for the same identifiers and most of the same words, which
other wording, code quotes and the particles of Korean or Japanese defeat. What a row says is read here as its longer
words by their first four letters and its Chinese, Japanese or Korean text by pairs of characters; two rows sharing
at least ``SAME`` of all that, and naming the same code if both name any (every name of one in the other), say the
same thing. Of the first 30 key rows of each project of the real sessions (the development set and 12 projects of
the extra sessions), 7 are left out this way: 6 say what a newer row says again; 1 is another setting of the same
settings page ("Workflow permissions" of the repository, beside the organisation's). No two rows about different
code were joined; templated rows that name different functions ("render_invoice in src/auth/schema.py …", "… in
src/notify/models.py …") stay apart. A row whose words are nearly all in another's (``WITHIN``) is its sentence
alone: one turn of an unseen project kept a paragraph on a release tool's snapshot mode and, apart, its first
sentence; of the same rows nothing else is joined that way (at three quarters, two rows about other code would be).

A cause that a later fix of its own session is about is history too (:func:`fixed_later`).

Standard library only (the SessionStart hook may build the index itself).
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.context.index import Row

SAME = 0.4
WITHIN = 0.9  # or nearly all of one row's words (at least FEW of them) are in the other: its sentence alone
FEW = 4
LOOKED_AT = 30  # the first rows by rank: more than the index lists (the rest keep their place)

_WORD = re.compile(r"[^\W\d_][\w-]{3,}")
# A name of the code: in code quotes, or with a path's or an identifier's marks ("src/storage/config.py",
# "resolve_webhook", "RotateWALFiles")
_NAME = re.compile(r"`([^`]{2,80})`|"
                   r"(?<![\w/.-])((?:[\w-]+[/.])+[\w-]+|[A-Za-z]+_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_PLAIN = frozenset(("that", "this", "with", "from", "when", "into", "only", "after", "before", "then", "than",
                    "have", "were", "does", "each", "every", "also", "still", "never", "always", "because", "there",
                    "which", "while", "they", "them", "their", "what", "where", "would", "should", "could", "must"))


@functools.lru_cache(maxsize=8192)  # the worker builds the index again and again from mostly the same titles
def said(text: str) -> frozenset[str]:
    """What a text says, for telling a restatement: its longer words by their first four letters, and its runs of
    Chinese, Japanese or Korean by pairs of characters."""
    if text.isascii():  # (most rows: one pass)
        return frozenset(w[:4] for w in _WORD.findall(text.lower()) if w not in _PLAIN)
    out = {w[:4] for w in _WORD.findall(text.lower()) if w not in _PLAIN and not _CJK.search(w)}
    for run in _CJK.findall(text):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def names(text: str) -> frozenset[str]:
    """The names of the code a text gives (lower case)."""
    return frozenset((m.group(1) or m.group(2)).lower() for m in _NAME.finditer(text))


def once(rows: list[Row]) -> list[Row]:
    """``rows`` (by rank) with each group of rows among the first ``LOOKED_AT`` that say the same thing listed once:
    its newest row, in the place of its best ranked; of one moment, the longest (a cause with its fix, not the cause
    alone)."""
    head = rows[:LOOKED_AT]
    what = [said(r.title) for r in head]
    group = list(range(len(head)))  # each row's group, by the group's first (best ranked) row
    size = [len(w) for w in what]
    for j in range(1, len(head)):
        y, ny = what[j], size[j]
        for i in range(j):  # |x ∩ y| / |x ∪ y| ≥ SAME or |x ∩ y| ≥ WITHIN · the smaller, and the names of the
            n = len(what[i] & y)  # code of one all in the other
            if n and (n >= SAME * (size[i] + ny - n) or n >= max(FEW, WITHIN * min(size[i], ny))):
                mine, theirs = names(head[j].title), names(head[i].title)
                if mine <= theirs or theirs <= mine:
                    group[j] = group[i]
                    break
    keep: dict[int, Row] = {}
    for k, r in enumerate(head):
        g, best = group[k], keep.get(group[k])
        if best is None or (r.created_at, len(r.title)) > (best.created_at, len(best.title)):
            keep[g] = r
    return [keep[k] for k in range(len(head)) if group[k] == k] + rows[LOOKED_AT:]


def fixed_later(rows: list[Row]) -> set[int]:
    """The causes among ``rows`` that a later fix of their own session is about: "`RotateWALFiles` … blocks forever on
    `<-done` — proposed fix: add a …", then "Periodic checkpoint rotation deadlock — fix: `RotateWALFiles` now returns
    at once …"; "No-ship: the new loopback flow still leaks its live callback `state` through `Flow.String()` …", then
    "Added `redactedAuthorizationURL()` which masks the `state` query param …". What the cause says of the code no
    longer holds, and the fix's row says what was done: the cause is history (searchable, not listed). About the same
    thing: a name of the code and at least two more words in common."""
    fixes: dict[int, list[Row]] = {}
    for r in rows:
        if r.kind == "fix":
            fixes.setdefault(r.session, []).append(r)
    out: set[int] = set()
    for r in rows:
        if r.kind != "rootcause" or r.session not in fixes or "— fix:" in r.title or " — fixed in " in r.title:
            continue
        mine, words = _bare(names(r.title)), said(r.title)
        if mine and any(f.created_at > r.created_at and mine & _bare(names(f.title)) and len(words & said(f.title)) >= 2
                        for f in fixes[r.session]):
            out.add(r.id)
    return out


def _bare(found: frozenset[str]) -> set[str]:
    """Names without call parentheses or a trailing slash (`String()` is `String`)."""
    return {n.removesuffix("()").rstrip("/") for n in found}
