"""Near-duplicates: the same fix recorded twice, the same question explored eleven times.

Two observations of a project are duplicates when they have the same type and say the same
thing: their titles' content words (stemmed, numbers and hashes dropped) are the same set
(the *signature*), or name the same identifiers (``cache.py``, ``test_cache_key``, ``m39``:
what tells two otherwise alike titles apart) and overlap by at least ``SIMILAR`` (Jaccard)
with a recent one. The
grouping is a pure function of the rows in time order, so building it incrementally and
rebuilding it from scratch give the same groups.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from kenning.memory.text import content_words

SIMILAR = 0.7
WINDOW = 64  # recent group heads of the same (project, type) a new row is compared with
MIN_WORDS = 2  # a title of fewer content words says too little to call another one its duplicate
_NOISE = re.compile(r"\b(?:[0-9a-f]{7,40}|\d+(?:\.\d+)*|#\d+)\b", re.IGNORECASE)


_TOKEN = re.compile(r"`[^`]+`|[A-Za-z0-9_]+(?:[./-][A-Za-z0-9_]+)*")
ID_MARK = "="  # identifiers are kept in the word set with this prefix


_IDENT_SHAPE = re.compile(r"[0-9_./]|^[a-z][a-z0-9]*[A-Z]")
_NUMBER = re.compile(r"[0-9.-]+|[0-9a-f]{7,40}")


def _is_ident(token: str) -> bool:
    """A name of something (``m39``, ``test_cache_key``, ``cache.py``, ``parseDate``, a backticked span)."""
    if token[0] == "`":
        return True
    # a number, a version or a commit hash: they vary where the meaning does not
    return _IDENT_SHAPE.search(token) is not None and _NUMBER.fullmatch(token) is None


@lru_cache(maxsize=2048)  # a pure function of the title: consolidation compares each new row with many heads
def words_of(title: str) -> frozenset[str]:
    """What a title says, for comparison: stemmed content words without numbers or hashes, and
    its identifiers (marked with ``ID_MARK``)."""
    text = _NOISE.sub(" ", title or "")
    ids = {ID_MARK + t.strip("`").lower() for t in _TOKEN.findall(title or "") if _is_ident(t)}
    return frozenset(content_words(text) | ids)


def signature(type_: str, title: str) -> str | None:
    """Equal for titles that say the same thing in any order, with any numbers (None: too short to tell)."""
    return signature_of(type_, words_of(title))


def signature_of(type_: str, words: frozenset[str]) -> str | None:
    if len(words) < MIN_WORDS:
        return None
    raw = type_ + "\x00" + " ".join(sorted(words))
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:16]


def idents(words: frozenset[str]) -> frozenset[str]:
    """The identifiers among a title's words: only titles naming the same ones can be near-duplicates."""
    return frozenset(w for w in words if w[0] == ID_MARK)


def similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """Same identifiers, and mostly the same words."""
    if len(a) < MIN_WORDS or len(b) < MIN_WORDS:
        return False
    if idents(a) != idents(b):
        return False
    return len(a & b) / len(a | b) >= SIMILAR
