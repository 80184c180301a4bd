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

* :func:`sql` builds it as an SQL expression, a recursive walk over the characters (~1 µs a
  character), for text holding CJK only (``has_sql``: a cheap check first). Migration 0026 puts
  it once in the schema, in the view ``search_cjk_output`` over the scratch table
  ``search_cjk_input``; the triggers write a row's expanded columns through it into
  ``<table>_cjk`` when the row holds CJK, and the indexes read their text from there;
* :func:`expand` in Python, for the prompt context's relevance check, which tokenizes memories
  the way the index does.

Changing :data:`RANGES` or the expansion changes what the index holds: it needs a migration.
"""

from __future__ import annotations

import re
import sqlite3

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

# RANGES but the first two (ideographs, Hangul: compared as numbers, the common case) as a GLOB class
_GLOB = "[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in RANGES[2:]) + "]"


def has_sql(x: str) -> str:
    """SQL: whether the text ``x`` may hold a CJK letter. Pure ASCII (the byte and character
    lengths agree) is ruled out first, then a scan for any character in U+3005..U+D7A3. A CASE,
    not an AND: SQLite evaluates both sides of an AND in some places (a WHERE pushed into a
    compound subquery), and the scan costs ~25 µs a KB."""
    return f"(CASE WHEN length(CAST({x} AS BLOB)) != length({x}) THEN {x} GLOB '*[{chr(FIRST)}-{chr(LAST)}]*' END)"


def sql(x: str) -> str:
    """SQL: :func:`expand` of the text expression ``x`` (``x`` itself when it holds no CJK).

    One step per character, reading the text as bytes (a character offset would rescan it from
    the start): ``p`` bytes read before ``c``, the character just read (NULL before the first
    and after the last), ``q`` the one before and ``f`` whether ``q`` is CJK; a step emits what
    ``q``..``c`` add: a pair, a run's last character, or the character as it is. SQLite's
    ``unicode()`` of a NUL is NULL (a C string): a NUL before the end is read as 0. Kept short:
    SQLite parses the whole schema on every new connection."""
    b = f"CAST({x} AS BLOB)"
    w = "ifnull(1+(c>127)+(c>2047)+(c>65535),0)"  # UTF-8 bytes of c (0 for NULL)
    (h1, h2), (k1, k2) = RANGES[0], RANGES[1]
    g = (f"(c BETWEEN {h1} AND {h2} OR c BETWEEN {k1} AND {k2} OR "  # c is CJK (NULL: not)
         f"c BETWEEN {FIRST} AND {LAST} AND char(c) GLOB '{_GLOB}')")
    piece = (f"CASE WHEN {g} THEN iif(f,char(q,c)||' ',' ') ELSE iif(f,char(q)||' ','')||iif(c ISNULL,'',char(c)) END")
    walk = (f"(WITH RECURSIVE k(n,p,c,q,f,s) AS (SELECT 0,0,NULL,NULL,0,'' UNION ALL "
            f"SELECT n+1,p+{w},coalesce(unicode(CAST(substr({b},p+{w}+1,4) AS TEXT)),iif(p+{w}<length({b}),0,NULL)),"
            f"c,{g},{piece} FROM k WHERE n=0 OR c NOTNULL OR q NOTNULL) SELECT group_concat(s,'') FROM k)")
    return f"(CASE WHEN {has_sql(x)} THEN {walk} ELSE {x} END)"


# ------------------------------------------------------------------------- stored rows

# The tables whose text columns the indexes hold, each with its ``<table>_cjk`` (migration 0026).
TABLES = ("observations", "session_summaries", "user_prompts")


def refill(conn: sqlite3.Connection) -> int:
    """Recompute every ``<table>_cjk`` row from the stored rows (inside the caller's transaction),
    through the schema's own expansion (``search_cjk_output``), for the rows the triggers would
    give one: those whose text may hold CJK. Returns how many rows that is."""
    held = 0
    for table in TABLES:
        cols = [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table}_cjk)")][1:]
        conn.execute(f"DELETE FROM {table}_cjk")
        rows = conn.execute(f"SELECT id, {', '.join(cols)} FROM {table} WHERE "
                            + " OR ".join(f"CASE WHEN {has_sql(x)} THEN 1 ELSE 0 END" for x in cols)).fetchall()
        insert = f"INSERT INTO {table}_cjk (id, {', '.join(cols)}) VALUES (?{', ?' * len(cols)})"
        for row in rows:
            conn.executemany("INSERT INTO search_cjk_input (k, x) VALUES (?, ?)",
                             [(i + 1, v) for i, v in enumerate(tuple(row)[1:])])
            got = [r[0] for r in conn.execute("SELECT nullif(e, x) FROM search_cjk_output ORDER BY k")]
            conn.execute("DELETE FROM search_cjk_input WHERE k > 0")
            if any(v is not None for v in got):  # as the triggers: a row whose expansion changes something
                conn.execute(insert, (row[0], *got))
                held += 1
    return held

