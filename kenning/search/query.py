"""Turning user text into safe FTS5 queries.

User text never reaches ``MATCH`` raw: every term becomes a quoted phrase (``settings.json``
unquoted is a syntax error; ``NEAR``, ``-``, ``*`` and parentheses are operators). Stopwords
are dropped (very common terms make ``ORDER BY rank`` score most of the table), identifiers get
a prefix match, and the result is one AND query plus an OR fallback.

A run of CJK letters is its own term (a word glued to Latin text, ``用redis缓存``, is three) and
is looked up as the phrase of its character pairs the index holds (:mod:`kenning.search.cjk`):
``数据库`` finds "我们把数据库迁移到了新的服务器". With ``synonyms``, a word of the table in
:mod:`kenning.search.synonyms` matches any word of its group (``k8s`` finds "Kubernetes").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from kenning.search import cjk
from kenning.search import synonyms as synonym_table

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
# Function words of the other languages users write prompts in (French, German, Spanish, Portuguese,
# Italian), so they do not dilute a prompt's subject. Not those that are also words of code or
# English ("die", "es", "du", "del", "os", "su", "em", "di", "non", "comment", "come", "son", "hat", "par", "al").
_OTHER_STOPWORD_TEXT = """
le la les un une des de au aux et ou où est sont ce cette ces se sa ses il elle nous vous ne pas dans
avec sur qui que quoi quand pourquoi mais leur
der dem des ein eine einen einem einer und oder ist sind nicht wie warum wo wer ich sie wir ihr zu zum
zur im vom auf aus bei für von nach über dass auch noch schon wenn aber kann muss soll wird werden
el los las una unos y que qué en por para con está están como cómo dónde donde cuando cuándo pero
porque mi mis
um uma das no na nos é onde mas seu sua também
il lo gli della dei delle dal che perché sono
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split()) | frozenset(_OTHER_STOPWORD_TEXT.split())

_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a letter or digit: "___" tokenizes to nothing
_RUN = re.compile(r"[^\W_]+", re.UNICODE)  # what unicode61 keeps as one token
MIN_PREFIX_CHARS = 4
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# FTS5 operators and brackets split words; ``. _ / - :`` stay inside (paths, identifiers).
_SPLIT = re.compile(r"[\s()\[\]{}\"'`,;<>|!?=+*^&~$#@\u3000-\u3004\u3008-\u3020\u3030\u303d-\u303f"
                    r"\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+")  # and CJK punctuation
_EDGE = re.compile(r"^[^\w]+|[^\w]+$", re.UNICODE)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class Term:
    text: str       # the user's term, edge punctuation stripped
    prefix: bool    # match as a prefix (identifiers, a single CJK character)
    # Other words for it (synonyms), each matched as a phrase. Not hashed: the hash of a term is
    # computed at every dict lookup of the ranking, and the text tells terms apart.
    alts: tuple[str, ...] = field(default=(), hash=False)

    @property
    def indexed(self) -> str:
        """The text as the index holds it: CJK runs as their character pairs (see :func:`phrase_of`)."""
        return self.text if self.text.isascii() else phrase_of(self.text)[0]

    @property
    def is_cjk(self) -> bool:
        return not self.text.isascii() and cjk.has_cjk(self.text)

    def phrase(self) -> str:
        if self.text.isascii() and not self.alts:  # the common case, first
            quoted = '"' + self.text.replace('"', '""') + '"'
            return quoted + " *" if self.prefix else quoted
        return _phrase(self.text, self.prefix, self.alts)


@functools.lru_cache(maxsize=4096)
def _phrase(text: str, prefix: bool, alts: tuple[str, ...]) -> str:
    own = _quoted(phrase_of(text)[0]) + (" *" if prefix else "")
    if not alts:
        return own
    return "(" + " OR ".join([own, *(_quoted(phrase_of(a)[0]) for a in alts)]) + ")"


@functools.lru_cache(maxsize=4096)
def phrase_of(text: str) -> tuple[str, bool]:
    """What the index is asked for ``text``: its CJK runs as their pairs (and the run's last
    character where other text follows it in ``text``, as in the index), and whether the last
    one is a prefix (a single CJK character ending ``text``)."""
    if not cjk.has_cjk(text):
        return text, False
    runs = list(cjk.RUN.finditer(text))
    last = runs[-1]
    out = cjk.expand(text).strip()
    if last.end() < len(text.rstrip()):
        return out, False
    if len(last.group()) == 1:
        return out, True
    return out[:out.rfind(" ")].rstrip(), False  # the run's last character alone: not where it goes on


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
    """Identifiers match as prefixes, unless their last token is short: ``db.py`` as a prefix
    would also walk every indexed word starting with "py" (slow, and not what was meant). A CJK
    word is a phrase of pairs, a single character a prefix (the pairs starting with it)."""
    if not word.isascii() and cjk.has_cjk(word):
        return phrase_of(word)[1]
    runs = _RUN.findall(word)
    return is_identifier(word) and bool(runs) and len(runs[-1]) >= MIN_PREFIX_CHARS


# "what kind of art": the noun before "of" only says a category follows.
_FILLERS = frozenset({"kind", "kinds", "sort", "sorts"})


def _words(text: str, whole_runs: bool = False) -> list[str]:
    """The words of ``text`` as the index sees them: a hyphenated compound of plain words
    ("dairy-free", "dry-run") is its words, as unicode61 indexes it (a memory saying "free of
    dairy" holds them too); identifiers, paths and words with digits stay whole (``utf-8``). A
    CJK run of ``LONG_RUN`` characters or more is several words (:func:`cjk_words`), unless
    ``whole_runs``."""
    out: list[str] = []
    for word in _SPLIT.split(clean(text)):
        for w in (word,) if word.isascii() else _scripts(word):
            w = _EDGE.sub("", w)
            if not w or not _WORD.search(w):
                continue
            if not whole_runs and len(w) >= LONG_RUN and not w.isascii() and cjk.RUN.fullmatch(w):
                out.extend(cjk_words(w))
                continue
            parts = w.split("-")
            if len(parts) > 1 and all(p.isalpha() for p in parts):
                out.extend(parts)
            else:
                out.append(w[:MAX_TERM_CHARS])
    return out


LONG_RUN = 5  # Chinese words are 1-4 characters: a longer run typed without spaces is several


def cjk_words(run: str) -> list[str]:
    """The words a CJK run is looked up by when it says more than one: the synonym table's words
    inside it (``数据库迁移失败`` holds 数据库 and 迁移) and the character pairs of the rest (失败);
    a single character left over is mostly a particle (了, 的), left out. A row holding the run
    as written holds them all; one saying the same in another order holds them too."""
    out: list[str] = []
    at = 0
    for off, word in synonym_table.in_run(run):
        if off - at > 1:
            out += cjk.pairs(run[at:off])
        out.append(word)
        at = off + len(word)
    if len(run) - at > 1:
        out += cjk.pairs(run[at:])
    return out


def _scripts(word: str) -> list[str]:
    """``word`` cut where CJK letters meet other text: ``用redis缓存`` is 用, redis, 缓存."""
    out: list[str] = []
    at = 0
    for m in cjk.RUN.finditer(word):
        out += [word[at:m.start()], m.group()]
        at = m.end()
    out.append(word[at:])
    return [w for w in out if w]


def _dropped(words: list[str], i: int) -> bool:
    w = words[i].lower()
    if w in STOPWORDS or (len(w) == 1 and w.isascii() and w.isalpha()):
        return True  # single letters are mostly split contractions ("don't" → don, t)
    if len(w) == 1 and not w.isascii() and cjk.has_cjk(w):
        return True  # a CJK character alone between other words: mostly a particle (用, 的, 把)
    return w in _FILLERS and i + 1 < len(words) and words[i + 1].lower() == "of"


def _split_terms(text: str, synonyms: bool = False,
                 whole_runs: bool = False) -> tuple[list[Term], list[tuple[Term, Term]]]:
    out: list[Term] = []
    by_key: dict[str, Term] = {}
    if synonyms:  # the table's words of several words ("base de données") are one term each
        listed_phrases, text = synonym_table.phrases(text)
        for p in listed_phrases[:MAX_TERMS]:
            by_key[p] = Term(p, False, synonym_table.alternatives(p))
            out.append(by_key[p])
    words = _words(text, whole_runs)
    keep = [not _dropped(words, i) for i in range(len(words))]
    if not any(keep):  # a query made only of stopwords ("how does this work") still means something
        keep = [True] * len(words)
    pairs: list[tuple[Term, Term]] = []
    prev: Term | None = None
    for w, k in zip(words, keep, strict=True):
        if not k:
            prev = None
            continue
        # With synonyms, the words of one group are one term ("db" and "database" alike).
        listed, alts = synonym_table.group(w) if synonyms else (None, ())
        key = listed or w.lower()
        t = by_key.get(key)
        if t is None:
            if len(out) >= MAX_TERMS:
                break
            t = by_key[key] = Term(w, _wants_prefix(w), alts)
            out.append(t)
        # Adjacent words also score as a phrase; not CJK runs (a run is a word of its own, its
        # neighbour in the query rarely its neighbour in the text).
        if prev is not None and prev != t and (prev, t) not in pairs and len(pairs) < MAX_PAIRS \
                and not (prev.is_cjk or t.is_cjk):
            pairs.append((prev, t))
        prev = t
    return out, pairs


def terms(text: str, synonyms: bool = False) -> list[Term]:
    """The searchable terms of ``text``, in order, without duplicates or stopwords."""
    return _split_terms(text, synonyms)[0]


def parse(text: str, synonyms: bool = False) -> FtsQuery:
    found, pairs = _split_terms(text or "", synonyms)
    return FtsQuery(tuple(found), tuple(pairs))


MAX_RECALL_TERMS = 64  # a long CJK prompt is many pairs; more only cost lookups


def recall_terms(text: str) -> list[Term]:
    """The terms of a prompt for prompt-time recall, each with its synonyms.

    A CJK run in a prompt is a sentence, not a word, whatever its length: it gives
    :func:`cjk_words` (``数据库`` and the pairs of the rest in ``把数据库迁移到新服务器``). Other words
    are those of :func:`terms`."""
    out: list[Term] = []
    seen: set[str] = set()

    def add(word: str, term: Term | None = None) -> None:  # each word a phrase (no prefix), as counted
        listed, alts = synonym_table.group(word)
        key = listed or word.lower()
        if key not in seen and len(out) < MAX_RECALL_TERMS:
            seen.add(key)
            out.append(term if term is not None and not alts and not term.prefix else Term(word, False, alts))

    listed_phrases, text = synonym_table.phrases(text)
    for p in listed_phrases:
        add(p)
    for t in _split_terms(text, whole_runs=True)[0]:
        if t.is_cjk:
            for word in cjk_words(t.text):
                add(word)
        else:
            add(t.text, t)
    return out

