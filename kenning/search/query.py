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

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours yourself please find show tell me anything something
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


def terms(text: str) -> list[Term]:
    """The searchable terms of ``text``, in order, without duplicates or stopwords."""
    out: list[Term] = []
    seen: set[str] = set()
    words = [_EDGE.sub("", w) for w in _SPLIT.split(clean(text))]
    words = [w[:MAX_TERM_CHARS] for w in words if w and _WORD.search(w)]
    # Single letters are mostly split contractions ("don't" → don, t): noise in an AND query.
    kept = [w for w in words if w.lower() not in STOPWORDS and not (len(w) == 1 and w.isascii() and w.isalpha())]
    # A query made only of stopwords ("how does this work") still means something: keep it.
    for w in kept or words:
        key = w.lower()
        if key in seen:
            continue
        seen.add(key)
        out.append(Term(w, prefix=_wants_prefix(w)))
        if len(out) >= MAX_TERMS:
            break
    return out


def parse(text: str) -> FtsQuery:
    return FtsQuery(tuple(terms(text or "")))
