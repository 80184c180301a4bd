"""Words inside Chinese, Japanese and Korean text: overlapping character pairs (bigrams).

``unicode61`` keeps a run of CJK letters as one token ("我们把数据库迁移到了新的服务器" is one
"word"), so no word inside it can be found, and Chinese words are mostly two characters (too short
for a trigram index). The full-text indexes see instead each CJK run as its overlapping pairs
followed by its last character alone: ``数据库迁移`` → ``数据 据库 库迁 迁移 移``. Every word
inside the run is then a phrase of consecutive pairs (``数据库`` = ``"数据 据库"``, ``上线`` =
``"上线"``); a single character is the prefix ``"库" *`` (the pairs starting with it, or the
run's last character). Korean joins particles to words (``데이터베이스를``) and is found the
same way. The text around the runs is left as it is, so English is indexed exactly as before.

The same expansion exists twice and must stay equal (a test compares them):

* :func:`sql` builds it as an SQL expression (migration 0025: the indexes' content views and the
  triggers of the indexes and of the term statistics): a recursive walk over the characters,
  ~1.3 µs a character, for columns holding CJK only (``has_sql``: a cheap check first);
* :func:`expand` in Python, for the prompt context's relevance check, which tokenizes memories
  the way the index does.

Changing :data:`RANGES` or the expansion changes what the index holds: it needs a migration.
"""

from __future__ import annotations

import re

# CJK letters, by code point: letters for unicode61 (it keeps them in tokens, unfolded) and for
# Python. All between U+3005 and U+D7A3, the range ``has_sql`` looks for. Most frequent first.
RANGES: tuple[tuple[int, int], ...] = (
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0x3041, 0x3096),  # Hiragana
    (0x30A1, 0x30FA),  # Katakana
    (0x30FC, 0x30FF),  # ー ヽ ヾ ヿ
    (0x3400, 0x4DBF),  # CJK extension A
    (0x3005, 0x3007),  # 々 〆 〇
    (0x309D, 0x309F),  # ゝ ゞ ゟ
    (0x3105, 0x312F),  # Bopomofo
    (0x3131, 0x318E),  # Hangul compatibility jamo
    (0x31A0, 0x31BF),  # Bopomofo extended
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0xA960, 0xA97C),  # Hangul jamo extended A
)
FIRST, LAST = 0x3005, 0xD7A3

_CLASS = "".join(f"{chr(a)}-{chr(b)}" for a, b in sorted(RANGES))
CHAR = re.compile(f"[{_CLASS}]")
RUN = re.compile(f"[{_CLASS}]+")
_SPAN = re.compile(f"[{chr(FIRST)}-{chr(LAST)}]")


def has_cjk(text: str) -> bool:
    return not text.isascii() and CHAR.search(text) is not None


def expand(text: str) -> str:
    """``text`` with every CJK run replaced by its pairs and last character (see the module)."""
    if text.isascii() or not _SPAN.search(text.split("\x00", 1)[0]):  # as ``has_sql``: it reads up to a NUL
        return text
    out: list[str] = []
    prev = ""
    for ch in text:
        if CHAR.match(ch):
            out.append(prev + ch + " " if prev else " ")
            prev = ch
        else:
            if prev:
                out.append(prev + " ")
            out.append(ch)
            prev = ""
    if prev:
        out.append(prev + " ")
    return "".join(out)


def pairs(run: str) -> list[str]:
    """The overlapping pairs of a CJK run (the run itself when it is one character)."""
    return [run[i:i + 2] for i in range(len(run) - 1)] or [run]


# ------------------------------------------------------------------------------- SQL

def _is(v: str) -> str:
    return "(" + " OR ".join(f"{v} BETWEEN {a} AND {b}" for a, b in RANGES) + ")"


def has_sql(x: str) -> str:
    """SQL: whether the text ``x`` may hold a CJK letter. Pure ASCII (the byte and character
    lengths agree) is ruled out first, then a scan for any character in U+3005..U+D7A3."""
    return f"(length(CAST({x} AS BLOB)) != length({x}) AND {x} GLOB '*[{chr(FIRST)}-{chr(LAST)}]*')"


def _width(v: str) -> str:
    """UTF-8 bytes of the code point ``v`` (0 for NULL)."""
    return (f"(CASE WHEN {v} IS NULL THEN 0 WHEN {v} < 128 THEN 1 WHEN {v} < 2048 THEN 2 "
            f"WHEN {v} < 65536 THEN 3 ELSE 4 END)")


def sql(x: str) -> str:
    """SQL: :func:`expand` of the text expression ``x`` (``x`` itself when it holds no CJK).

    One step per character: ``p`` bytes read, ``cp`` the character just read, ``pcp`` the one
    before; a step emits what ``pcp``..``cp`` add (a pair, a run's last character, or the
    character as it is), reading the text as bytes (a character offset would rescan it)."""
    cur, prev = _is("cp"), _is("pcp")
    piece = (f"CASE WHEN {cur} THEN (CASE WHEN {prev} THEN char(pcp, cp) || ' ' ELSE ' ' END) "
             f"WHEN {prev} THEN char(pcp) || ' ' || CASE WHEN cp IS NULL THEN '' ELSE char(cp) END "
             "WHEN cp IS NULL THEN '' ELSE char(cp) END")
    at = f"p + {_width('cp')}"  # where the next character starts
    # unicode() of a NUL is NULL (a C string): a NUL before the end is the character 0
    walk = (f"(WITH RECURSIVE k(n, p, cp, pcp, s) AS (SELECT 0, 0, NULL, NULL, '' UNION ALL "
            f"SELECT n + 1, {at}, coalesce(unicode(CAST(substr(CAST({x} AS BLOB), {at} + 1, 4) AS TEXT)), "
            f"CASE WHEN {at} < length(CAST({x} AS BLOB)) THEN 0 END), cp, {piece} "
            "FROM k WHERE n = 0 OR cp IS NOT NULL OR pcp IS NOT NULL) "
            "SELECT group_concat(s, '') FROM k)")
    return f"(CASE WHEN {has_sql(x)} THEN {walk} ELSE {x} END)"
