"""Turning user text into safe FTS5 queries.

User text never reaches ``MATCH`` raw: every term becomes a quoted phrase (``settings.json``
unquoted is a syntax error; ``NEAR``, ``-``, ``*`` and parentheses are operators). Stopwords
are dropped (very common terms make ``ORDER BY rank`` score most of the table), identifiers
and CJK runs get a prefix match, and the result is one AND query plus an OR fallback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_INPUT_CHARS = 2000   # 10 KB pasted into the search box: the head says what it is about
MAX_TERMS = 24           # more terms only slow the OR fallback down
MAX_TERM_CHARS = 64
MAX_PAIRS = 6            # adjacent-word phrases scored per query

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours yourself please find show tell me anything something
us myself yourselves himself herself ourselves themselves whose whether whatever within without upon
else ever yet might must shall ought much many also either etc
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a letter or digit: "___" tokenizes to nothing
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_RUN = re.compile(r"[^\W_]+", re.UNICODE)  # what unicode61 keeps as one token
MIN_PREFIX_CHARS = 4
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# FTS5 operators and brackets split words; ``. _ / - :`` stay inside (paths, identifiers).
_SPLIT = re.compile(r"[\s()\[\]{}\"'`,;<>|!?=+*^&~$#@]+")
_EDGE = re.compile(r"^[^\w]+|[^\w]+$", re.UNICODE)


@dataclass(frozen=True)
class Term:
    text: str       # the user's term, edge punctuation stripped
    prefix: bool    # match as a prefix (identifiers, CJK)

    def phrase(self) -> str:
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + " *" if self.prefix else quoted


@dataclass(frozen=True)
class FtsQuery:
    terms: tuple[Term, ...]
    # Terms written next to each other ("ice cream", "dairy-free"): a row holding them as a
    # phrase scores a little more (see kenning.search.bm25).
    pairs: tuple[tuple[Term, Term], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    def all_terms(self) -> str:
        """Every term must match (implicit AND)."""
        return " AND ".join(t.phrase() for t in self.terms)

    def any_term(self) -> str:
        """At least one term matches; BM25 still ranks documents with more terms higher."""
        return " OR ".join(t.phrase() for t in self.terms)


def clean(text: str) -> str:
    """Bounded, NUL- and control-free text (SQLite strings cannot hold NUL in FTS5 quotes)."""
    return _CONTROL.sub(" ", str(text)[:MAX_INPUT_CHARS])


def is_identifier(word: str) -> bool:
    """Code-ish words: snake_case, dotted.names, paths, camelCase, words with digits."""
    if any(c in word for c in "_./\\:") or any(c.isdigit() for c in word):
        return True
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def _wants_prefix(word: str) -> bool:
    """Identifiers and CJK match as prefixes, unless their last token is short: ``db.py`` as a
    prefix would also walk every indexed word starting with "py" (slow, and not what was meant)."""
    if _CJK.search(word):
        return True
    runs = _RUN.findall(word)
    return is_identifier(word) and bool(runs) and len(runs[-1]) >= MIN_PREFIX_CHARS


# "what kind of art": the noun before "of" only says a category follows.
_FILLERS = frozenset({"kind", "kinds", "sort", "sorts"})


def _words(text: str) -> list[str]:
    """The words of ``text`` as the index sees them: a hyphenated compound of plain words
    ("dairy-free", "dry-run") is its words, as unicode61 indexes it (a memory saying "free of
    dairy" holds them too); identifiers, paths and words with digits stay whole (``utf-8``)."""
    out: list[str] = []
    for w in _SPLIT.split(clean(text)):
        w = _EDGE.sub("", w)
        if not w or not _WORD.search(w):
            continue
        parts = w.split("-")
        if len(parts) > 1 and all(p.isalpha() for p in parts):
            out.extend(parts)
        else:
            out.append(w[:MAX_TERM_CHARS])
    return out


def _dropped(words: list[str], i: int) -> bool:
    w = words[i].lower()
    if w in STOPWORDS or (len(w) == 1 and w.isascii() and w.isalpha()):
        return True  # single letters are mostly split contractions ("don't" → don, t)
    return w in _FILLERS and i + 1 < len(words) and words[i + 1].lower() == "of"


def _split_terms(text: str) -> tuple[list[Term], list[tuple[Term, Term]]]:
    words = _words(text)
    keep = [not _dropped(words, i) for i in range(len(words))]
    if not any(keep):  # a query made only of stopwords ("how does this work") still means something
        keep = [True] * len(words)
    out: list[Term] = []
    by_key: dict[str, Term] = {}
    pairs: list[tuple[Term, Term]] = []
    prev: Term | None = None
    for w, k in zip(words, keep, strict=True):
        if not k:
            prev = None
            continue
        key = w.lower()
        t = by_key.get(key)
        if t is None:
            if len(out) >= MAX_TERMS:
                break
            t = by_key[key] = Term(w, prefix=_wants_prefix(w))
            out.append(t)
        if prev is not None and prev != t and (prev, t) not in pairs and len(pairs) < MAX_PAIRS:
            pairs.append((prev, t))
        prev = t
    return out, pairs


def terms(text: str) -> list[Term]:
    """The searchable terms of ``text``, in order, without duplicates or stopwords."""
    return _split_terms(text)[0]


def parse(text: str) -> FtsQuery:
    found, pairs = _split_terms(text or "")
    return FtsQuery(tuple(found), tuple(pairs))
