"""A word-level diff for the reviewer: what a waiting team memory changes in the one it replaces.

Pure (standard library only). Text is cut into words, runs of whitespace and single punctuation marks;
Chinese, Japanese and Korean characters are one token each (those scripts do not separate words with
spaces, so a whole sentence would otherwise be one "word" and every change would repaint all of it).
"""

from __future__ import annotations

import difflib
import re

# CJK ideographs (with extensions A and the compatibility block), kana, Hangul, CJK and full-width punctuation.
_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s\W{_CJK}]+|\s+|[^\s\w]", re.UNICODE)

Diff = list[tuple[str, str]]  # ("=" kept | "-" removed | "+" added, text), in reading order


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def word_diff(old: str, new: str) -> Diff:
    """``old`` → ``new`` as kept, removed and added runs; removed comes before added at each change, and
    joining the kept and added runs gives ``new`` back (kept and removed: ``old``)."""
    a, b = tokens(old or ""), tokens(new or "")
    chunks: list[tuple[str, list[str], list[str]]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        chunks.append(("=" if tag == "equal" else "~", a[i1:i2], b[j1:j2]))
    # A lone space kept between two changes reads as noise ("[-a-]{+x+} [-b-]{+y+}"): fold it into the change.
    for k in range(1, len(chunks) - 1):
        op, left, _ = chunks[k]
        if op == "=" and "".join(left).isspace() and chunks[k - 1][0] == "~" and chunks[k + 1][0] == "~":
            chunks[k] = ("~", left, chunks[k][2])
    out: Diff = []
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        if removed:
            out.append(("-", "".join(removed)))
        if added:
            out.append(("+", "".join(added)))
        removed.clear()
        added.clear()

    for op, left, right in chunks:
        if op == "=":
            flush()
            if out and out[-1][0] == "=":
                out[-1] = ("=", out[-1][1] + "".join(left))
            else:
                out.append(("=", "".join(left)))
        else:
            removed += left
            added += right
    flush()
    return out


def changed(diff: Diff) -> bool:
    return any(op != "=" for op, _ in diff)


_RED, _GREEN, _RESET = "\x1b[31;9m", "\x1b[32m", "\x1b[0m"


def marked(diff: Diff, *, colour: bool = False) -> str:
    """The diff as one line of terminal text: ``[-removed-]{+added+}``, or red struck / green when ``colour``
    (only on a terminal; the marks survive a pipe, a log and a screen reader)."""
    parts = []
    for op, text in diff:
        if op == "=":
            parts.append(text)
        elif colour:
            parts.append(f"{_RED if op == '-' else _GREEN}{text}{_RESET}")
        else:
            parts.append(f"[-{text}-]" if op == "-" else f"{{+{text}+}}")
    return "".join(parts)
