"""The features the role model reads from one unit: hashed character n-grams and words of its text
and heading, cue signals (any language), and where it stands (who said it, in which message).

Character n-grams work across languages and spellings ("root cause", "root-caused", 根因); the cue
signals carry what English taught the model over to languages it saw little of. Everything is
hashed into ``BUCKETS`` slots with CRC-32 (stable across runs and machines, unlike ``hash``).
Standard library only.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib

from kenning.memory.cues import signals

BUCKETS = 1 << 17
# Signals the observer reads but the shipped weights were not trained on (retraining may add them).
NOT_FEATURES = frozenset({"proposal"})
_CODE = re.compile(r"`[^`\n]{1,200}`")
_URL = re.compile(r"https?://\S+|www\.\S+")
_PATH = re.compile(r"(?<![\w])(?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:go|rs|py|ts|tsx|js|md|json|toml|yml|yaml|sql|sh|pkl)\b")
_DIGITS = re.compile(r"\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W\d_]+(?:'[^\W\d_]+)?|\S", re.UNICODE)


def normalise(text: str) -> str:
    """Lower case; code spans, URLs, paths and numbers stood in by markers (their words are the project's,
    not the role's)."""
    t = _URL.sub(" ⟨u⟩ ", text or "")
    t = _CODE.sub(" ⟨c⟩ ", t)
    t = _PATH.sub(" ⟨p⟩ ", t)
    t = _DIGITS.sub("0", t)
    return " ".join(t.lower().split())


def _h(s: str) -> int:
    return zlib.crc32(s.encode("utf-8")) & (BUCKETS - 1)


def _ngrams(text: str, prefix: str) -> list[str]:
    out: list[str] = []
    for word in text.split():
        if _CJK.search(word):
            chars = [c for c in word]
            for n in (1, 2, 3):
                out += [prefix + "".join(chars[i:i + n]) for i in range(len(chars) - n + 1)]
            continue
        w = f" {word} "
        for n in (3, 4, 5):
            if len(w) >= n:
                out += [prefix + w[i:i + n] for i in range(len(w) - n + 1)]
    return out


def _words(text: str, prefix: str) -> list[str]:
    toks = [t for t in _TOKEN.findall(text) if t.isalnum() or t in "⟨⟩?？!"]
    out = [prefix + t for t in toks]
    out += [f"{prefix}{a}_{b}" for a, b in itertools.pairwise(toks)]
    if toks:
        out.append(f"{prefix}^{toks[0]}")  # how it opens ("let", "fix", "we", "root")
    return out


def features(text: str, heading: str = "", *, speaker: str = "agent", origin: str = "",
             bullet: bool = False, label: bool = False, first: bool = False, last: bool = False) -> dict[int, float]:
    """Hashed feature index → value for one unit."""
    norm = normalise(text)
    head = normalise(heading)
    feats: dict[int, float] = {}

    def add(names: list[str], weight: float) -> None:
        for n in names:
            i = _h(n)
            feats[i] = feats.get(i, 0.0) + weight

    grams = _ngrams(norm, "g:")
    add(grams, 1.0 / math.sqrt(max(1, len(grams))))
    words = _words(norm, "w:")
    add(words, 1.0 / math.sqrt(max(1, len(words))))
    if head:
        hg = _ngrams(head, "hg:") + _words(head, "hw:")
        add(hg, 1.0 / math.sqrt(max(1, len(hg))))
    else:
        add(["nohead"], 1.0)
    meta = [f"spk:{speaker}", f"org:{speaker}:{origin}", f"len:{min(6, len(norm) // 40)}"]
    sig, hsig = signals(text) - NOT_FEATURES, signals(heading) - NOT_FEATURES
    meta += [f"sig:{s}" for s in sig] + [f"hsig:{s}" for s in hsig]
    meta += [f"sig:{speaker}:{s}" for s in sig]
    if bullet:
        meta.append("bullet")
    if label:
        meta.append("label")
    if first:
        meta.append("first")
    if last:
        meta.append("lastmsg")
    if "⟨c⟩" in norm:
        meta.append("code")
    add(meta, 1.0)
    return feats
