"""Text helpers shared by the observers and the memory index: sentences, words, case.

Sentences split where a sentence ends, not at every full stop: abbreviations ("e.g.", "i.e.",
"etc.", "vs."), decimals and versions ("1.5", "v2.1"), file names ("README.md") and anything
inside backticks or quotes stay in their sentence; a sentence may end inside the bracket it closes
("… (it used to be lazy.) The lock …"); a Chinese or Japanese sentence ends at its own full stop, with no
space after it. Identifiers keep their case: a sentence is
capitalised only when it starts with an ordinary English word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet


def words(text: str) -> frozenset[str]:
    """A set of words written as one block of text."""
    return frozenset(text.split())


ABBREVIATIONS = words("""
e.g i.e etc vs cf approx incl excl esp resp viz al fig no nos vol ca mr mrs ms dr prof sr jr st
""")
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_PROTECT = re.compile(r"`[^`\n]*`|\"[^\"\n]{0,300}\"|\u201c[^\u201d\n]{0,300}\u201d|"
                      r"「[^」\n]{0,300}」|『[^』\n]{0,300}』")
# A full stop, "!" or "?" followed by space, where a new sentence can start (not ";": "`make test`
# is gone; run `just test`" is one statement); or the full stop of Chinese and Japanese, which no space
# follows, with the closing quote or bracket after it ("原因是缓存键。修复：…" is two sentences). A sentence may end
# inside the bracket it closes ("… (it used to be lazy.) The lock is …"): see _closes_a_sentence.
_END = re.compile(r"([.!?])([)\]]+)?(\s+)|([。！？]+[」』）)”’]*)(\s*)(?=\S)")
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_'\-]*")
# A letter or digit of a script written with spaces (Latin with its accents, Cyrillic, Greek …): Chinese, Japanese
# and Korean go by character pairs (tokens()).
_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, ideographs, Hangul
_LETTER = rf"[^\W{_CJK_RANGES}]"
_TOKEN = re.compile(rf"{_LETTER}+(?:[./\-]{_LETTER}+)*")

# Words that start an ordinary sentence: only these are capitalised.
_PLAIN_STARTERS = words("""
a an the we i you they it this that these those our my your its there here
always never use using run running prefer avoid keep stick do don't dont does did please make
be is are was were has have had will would should must can could may might
no not new old all any each every some most when while if after before since because so
from to in on at for with without by of as and or but also then now
add added fix fixed change changed remove removed rename renamed move moved switch switched
note remember important stop start started pause paused resume resumed continue
""")

STOPWORDS = words("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
once only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself please let lets let's us ok okay
""")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (code blocks removed), keeping abbreviations and code together."""
    text = _CODE_BLOCK.sub(" ", text or "")
    out: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•>]|\d+[.)])\s)", text):
        out.extend(_split_block(block))
    return [s for s in (_tidy(s) for s in out) if s]


def _split_block(block: str) -> list[str]:
    # Mask protected spans so their full stops cannot end a sentence.
    masks: list[str] = []

    def mask(m: re.Match[str]) -> str:
        masks.append(m.group(0))
        return f"\x00{len(masks) - 1}\x00"

    masked = _PROTECT.sub(mask, block)
    pieces: list[str] = []
    start = 0
    for m in _END.finditer(masked):
        if m.group(4):  # (no abbreviation ends with these)
            pieces.append(masked[start:m.end(4)])
            start = m.end()
            continue
        end = m.start(1)
        if m.group(1) == "." and _no_end(masked, end):
            continue
        if m.group(2) and not _closes_a_sentence(masked[start:end], masked[m.end():m.end() + 1]):
            continue
        pieces.append(masked[start:m.end(2) if m.group(2) else end + 1])
        start = m.end()
    pieces.append(masked[start:])
    lines: list[str] = []
    for p in pieces:
        lines.extend(p.split("\n"))

    def unmask(s: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: masks[int(m.group(1))], s)

    return [unmask(s) for s in lines]


def _closes_a_sentence(before: str, following: str) -> bool:
    """Whether a full stop before a closing bracket ends the sentence: the bracket closes one opened after some words
    of this sentence ("It is rebuilt on start (it used to be lazy.) The lock …"), and what follows does not go on in
    lower case ("(e.g. `x`.) and then …")."""
    opened = max(before.rfind("("), before.rfind("["))
    return (opened > 0 and before.count("(") + before.count("[") > before.count(")") + before.count("]")
            and any(c.isalpha() for c in before[:opened]) and not following.islower())


_IN_LINE = re.compile(r"[^\W\d_][^\n]*\s$")  # words before it on its line
_LOWER_NEXT = re.compile(r"\s+[a-z]")


def _no_end(text: str, dot: int) -> bool:
    """A full stop at ``dot`` that does not end a sentence (abbreviation, initial)."""
    i = dot
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "."):
        i -= 1
    word = text[i:dot].lower().rstrip(".")
    if word in ABBREVIATIONS:
        return True
    if word.isdigit() and len(word) <= 2 and _IN_LINE.search(text[:i]) and _LOWER_NEXT.match(text, dot + 1):
        return True  # an item it refers to, in the line ("Yes, but for 2. we need …"), not a numbered line
    return len(word) == 1 and word.isalpha() and (i == 0 or not text[i - 1].isalnum())  # an initial: "J. Smith"


def _tidy(s: str) -> str:
    return " ".join(s.strip(" \t-*•>").split()).strip()


def capitalised(s: str) -> str:
    """``s`` with its first letter upper-cased when it starts with an ordinary word (never an identifier)."""
    m = _WORD.match(s)
    if not m:
        return s
    word = m.group(0)
    if word.lower() == word and word.replace("'", "").isalpha() and word.lower() in _PLAIN_STARTERS:
        return s[0].upper() + s[1:]
    return s


_CJK_RUN = re.compile(rf"[{_CJK_RANGES}]+")
# One character of text written without spaces: kana, CJK ideographs, Hangul (a word is about two of these)
CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Lower-cased tokens; paths, versions and identifiers stay one token (``src/app.py``, ``v1.2``).
    A run of Chinese, Japanese or Korean characters (no spaces between words) gives its character
    pairs: 数据库迁移 → 数据 据库 库迁 迁移, so two texts about the same thing share words."""
    t = text or ""
    out = [w.lower() for w in _TOKEN.findall(t)]
    if not t.isascii():
        for run in _CJK_RUN.findall(t):
            out += [run[i:i + 2] for i in range(len(run) - 1)] if len(run) > 1 else [run]
    return out


def stem(word: str) -> str:
    """A crude English stem, enough to match "fails" / "failing" / "failed"."""
    w = word.lower()
    if len(w) <= 4 or not w.isalpha():
        return w
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiousl":
                base = base[:-1]  # "stopped" -> "stop"
            return base
    return w


def content_words(text: str) -> set[str]:
    """Stemmed words that carry meaning: no stopwords, no numbers on their own."""
    return {stem(t) for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and len(t) > 1}


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def clip(text: str, limit: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def unique(items: Iterable[str]) -> list[str]:
    """The non-empty texts of ``items``, each once, in their first order."""
    return list(dict.fromkeys(i for i in items if i))


def strings(value: object) -> list[str]:
    """A stored JSON list as texts ([] for anything else: a row from before the field existed)."""
    return [str(x) for x in value] if isinstance(value, list) else []
