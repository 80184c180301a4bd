"""Characters a reader does not see, and the folded form the fence looks for tags in.

Two jobs, both for the fence (kenning/context/fence.py):

* :func:`strip_hidden` takes out of stored and rendered text what carries words nobody sees: the
  Unicode tag characters (U+E0000 block: an instruction spelled in them is invisible on screen but
  read by models), the other default-ignorable code points (zero-width spaces, fillers, invisible
  operators, supplementary variation selectors ...) and long runs of joiners and selectors. What
  has a visible job stays: one or two joiners or selectors between visible characters (emoji ZWJ
  sequences, ❤️, Persian ZWNJ, Mongolian variants), bidi controls (they only reorder what is
  shown), the emoji flags of subdivisions (🏴 + tag letters + cancel tag).
* :func:`fold_text` / :func:`fold_char` give the form tags are searched in: compatibility
  decomposition (NFKD), every ignorable, format or combining mark dropped, and look-alikes of
  ``< > / -`` and of the tag names' letters (Cyrillic ``е``, Greek ``ο``, small capitals) folded
  to ASCII. That form is only looked at, never stored.

The tables are code point ranges; tests/unit/test_fence_unicode.py derives each one from
``unicodedata`` over the whole code space. Standard library only (the hook path); ``unicodedata``
is loaded only when a text holds characters outside the known tables.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# Default_Ignorable_Code_Point (Cf, Other_Default_Ignorable_Code_Point and Variation_Selector, less
# the prepended concatenation marks and the other visible format characters) plus every other Cf:
# all of it is dropped where tags are looked for.
IGNORABLE = ("ad 34f 600-605 61c 6dd 70f 890-891 8e2 115f-1160 17b4-17b5 180b-180f 200b-200f 202a-202e "
             "2060-206f 3164 fe00-fe0f feff ffa0 fff0-fffb 110bd 110cd 13430-13438 1bca0-1bca3 1d173-1d17a "
             "e0000-e0fff")
# Default-ignorables kept in stored text when they stand alone or in pairs: joiners, selectors and
# bidi controls have a visible job (ZWJ emoji, Persian ZWNJ, ❤️, Mongolian variants, RTL text).
KEPT = "61c 180b-180f 200c-200f 202a-202e 2066-2069 fe00-fe0f"
# Every other default-ignorable is taken out of stored text (the tag block, fillers, zero-width space ...).
STRIPPED = ("ad 34f 115f-1160 17b4-17b5 200b 2060-2065 206a-206f 3164 feff ffa0 fff0-fff8 1bca0-1bca3 "
            "1d173-1d17a e0000-e0fff")
FLAG = "\U0001f3f4"  # 🏴 + 2-7 tag letters or digits + CANCEL TAG: a subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿)
CANCEL_TAG = "\U000e007f"
MAX_KEPT_RUN = 2

# Look-alikes folded where tags are looked for: brackets and slashes (by name: LESS-THAN SIGN,
# LEFT-POINTING ANGLE BRACKET, ... SOLIDUS), dashes (Pd, minus signs), blank-looking characters,
# and letters of other scripts that read as the tag names' Latin letters.
LOOKALIKES = {
    "<": "2c2 2f1 1438 2039 2329 276c 276e 2770 27e8 3008 fe3f fe64 ff1c",
    ">": "2c3 2f2 1433 203a 232a 276d 276f 2771 27e9 3009 fe40 fe65 ff1e",
    "/": "2044 2215 2571 27cb 29f8 2e4a ff0f 1f67c",
    "-": "2d7 58a 5be 1400 1806 2010-2015 2043 2212 2796 2e17 2e1a 2e3a 2e3b 2e40 2e5d 301c 3030 30a0 fe31 fe32 "
         "fe58 fe63 ff0d 10ead",
    " ": "2800",
    # Cyrillic, Greek, Armenian and Latin small capitals that read as a letter of a tag name.
    "a": "251 430 410 3b1 391 1d00", "c": "441 421 3f2 1d04", "d": "501 1d05", "e": "435 415 3b5 395 1d07",
    "f": "a730", "g": "261 262 581", "h": "4bb 41d 397 570 29c", "i": "131 456 406 3b9 399 269 26a",
    "k": "43a 41a 3ba 39a 1d0b", "l": "4cf 29f", "m": "43c 41c 39c 1d0d", "n": "578 274 39d",
    "o": "43e 41e 3bf 39f 585 1d0f", "p": "440 420 3c1 3a1 1d18", "r": "280", "s": "455 405 a731",
    "t": "442 422 3c4 3a4 1d1b", "u": "57d 3c5 1d1c", "x": "445 425 3c7 3a7", "y": "443 423 3b3 28f",
}


def ranges(spec: str) -> list[tuple[int, int]]:
    """``"ad 200b-200f"`` → ``[(0xad, 0xad), (0x200b, 0x200f)]``."""
    return [(int(a, 16), int(b or a, 16)) for a, _sep, b in (r.partition("-") for r in spec.split())]


def chars_of(spec: str) -> Iterable[str]:
    return (chr(cp) for a, b in ranges(spec) for cp in range(a, b + 1))


_tables: dict[str, frozenset[str] | dict[str, str]] = {}


def _table(name: str) -> frozenset[str]:
    t = _tables.get(name)
    if t is None:
        spec = {"ignorable_bmp": " ".join(r for r in IGNORABLE.split() if len(r.split("-")[0]) <= 4), "kept": KEPT,
                "stripped_bmp": " ".join(r for r in STRIPPED.split() if len(r.split("-")[0]) <= 4)}[name]
        t = _tables[name] = frozenset(chars_of(spec))
    return t  # type: ignore[return-value]


def lookalikes() -> dict[str, str]:
    t = _tables.get("lookalikes")
    if t is None:
        t = _tables["lookalikes"] = {c: to for to, spec in LOOKALIKES.items() for c in chars_of(spec)}
    return t  # type: ignore[return-value]


def nonascii(text: str) -> set[str]:
    """The distinct non-ASCII characters of ``text``, in a few C passes (UTF-8 without its ASCII bytes)."""
    return set(text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"))


_ASCII_BYTES = bytes(range(128))


_IGNORABLE_HIGH: tuple[tuple[str, str], ...] = tuple(
    (chr(a), chr(b)) for a, b in ranges(" ".join(r for r in IGNORABLE.split() if len(r.split("-")[0]) > 4)))


def ignorable(c: str) -> bool:
    """``c`` is in IGNORABLE (a set for the BMP, ranges above it: the tag block alone is 4,096)."""
    if c < "\U00010000":
        return c in _table("ignorable_bmp")
    return any(a <= c <= b for a, b in _IGNORABLE_HIGH)


def _tag_block(c: str) -> bool:
    return "\U000e0000" <= c <= "\U000e0fff"


def strip_hidden(text: str, chars: set[str] | None = None) -> str:
    """``text`` without the characters that carry unseen words (see the module's doc); visible text unchanged.

    ``chars``: ``text``'s non-ASCII characters when the caller has them already.
    """
    if text.isascii():
        return text
    if chars is None:
        chars = nonascii(text)
    stripped = {c for c in chars if c in _table("stripped_bmp") or (c >= "\U0001bca0" and _stripped_high(c))}
    kept = chars & _table("kept")
    if not stripped and not kept:
        return text
    if FLAG in chars and any(map(_tag_block, stripped)):
        text = _keep_flags(text)  # (subdivision flags keep their tag letters; every other tag character goes)
    else:
        for c in stripped:  # (replace: C speed)
            text = text.replace(c, "")
    if not kept:
        return text
    if len(kept) <= 4 and not any(a + b + c in text for a in kept for b in kept for c in kept):
        return text  # joiners and selectors, alone or in pairs between visible characters
    return _drop_long_runs(text, kept)


def _stripped_high(c: str) -> bool:
    return _tag_block(c) or "\U0001bca0" <= c <= "\U0001bca3" or "\U0001d173" <= c <= "\U0001d17a"


def _keep_flags(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == FLAG:
            j = i + 1
            while j < n and ("\U000e0030" <= text[j] <= "\U000e0039" or "\U000e0061" <= text[j] <= "\U000e007a"):
                j += 1
            if 2 <= j - i - 1 <= 7 and j < n and text[j] == CANCEL_TAG:
                out.append(text[i:j + 1])
                i = j + 1
                continue
        if not (c in _table("stripped_bmp") or _stripped_high(c)):
            out.append(c)
        i += 1
    return "".join(out)


def _drop_long_runs(text: str, kept: set[str]) -> str:
    """Runs of more than MAX_KEPT_RUN joiners, selectors or bidi controls: a carrier, not a job."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] in kept:
            j += 1
        if j == i:
            out.append(text[i])
            i += 1
            continue
        if j - i <= MAX_KEPT_RUN:
            out.append(text[i:j])
        i = j
    return "".join(out)


def fold_char(c: str) -> str:
    """One character as tags are looked for: NFKD, ignorables and marks dropped, look-alikes folded."""
    if c.isascii():
        return c
    import unicodedata

    return "".join(_fold_one(x, unicodedata) for x in unicodedata.normalize("NFKD", c))


def _fold_one(x: str, unicodedata: object) -> str:
    if x.isascii():
        return x
    to = lookalikes().get(x)
    if to is not None:
        return to
    if ignorable(x):
        return ""
    if unicodedata.category(x) in ("Mn", "Me"):  # type: ignore[attr-defined]
        return ""
    return x


def fold_text(text: str) -> str:
    """:func:`fold_char` over ``text`` at C speed: one NFKD of the whole text (from the tables below
    when they know every character), then each distinct non-ASCII character replaced or dropped."""
    chars = nonascii(text)
    plain = [c for c in chars if _plain(c)] if len(chars) <= 64 else []
    if plain:  # (a few ideographs or Hangul syllables, as code's escapes decode to: no unicodedata for them)
        for c in plain:
            text = text.replace(c, PLAIN_STAND_IN)
        chars = chars.difference(plain) | {PLAIN_STAND_IN}
    decomposed = known_fold(text, chars)
    known = decomposed is not None
    if decomposed is None:
        import unicodedata

        decomposed = unicodedata.normalize("NFKD", text)
    chars = nonascii(decomposed)
    folds = lookalikes()
    swap = folds.keys() & chars
    drop = {c for c in chars if ignorable(c)}
    rest = chars - swap - drop
    if rest and not known:  # (the known characters are no marks)
        import unicodedata

        drop |= {c for c in rest if unicodedata.category(c) in ("Mn", "Me")}
    for c in swap:
        decomposed = decomposed.replace(c, folds[c])
    for c in drop:
        decomposed = decomposed.replace(c, "")
    return decomposed


# Kana and Hangul syllables (and the code points between them, as code's character classes name
# them): their fold is letters, never part of a tag. Where tags are looked for, an ideograph (in
# NFKC_INERT) stands in for a few of them, sparing ``unicodedata``.
PLAIN = "3040-3098 309d-309f 30a1-30ff ac00-d7af"
PLAIN_STAND_IN = "\u4e00"
_PLAIN = tuple(ranges(PLAIN))


def _plain(c: str) -> bool:
    n = ord(c)
    return any(a <= n <= b for a, b in _PLAIN)


# Non-ASCII characters whose NFKD form is known without ``unicodedata`` (loading it and normalising
# 20 KB costs a hook ~0.9 ms): the typography, arrows, symbols and emoji of ordinary code and output,
# and the CJK ideographs and Yi syllables code's escapes name in its character classes.
# Each of NFKC_INERT has no decomposition, no combining class, is no mark and no second element of a
# canonical composition; each of NFKC_ASCII decomposes to the ASCII text given. In a text made of ASCII
# and these, nothing reorders or composes, so its NFKD (and NFKC) form is the text with NFKC_ASCII
# replaced (tests check each entry and the whole against unicodedata).
NFKC_INERT = (
    "a1-a7 a9 ab-ae b0-b1 b6-b7 bb bf 2010 2012-2016 2018-2023 2027 2030-2032 2035 2038-203b 203d 203f-2046 "
    "204a-2056 2058-205e 2190-2199 219c-21ad 21af-21cc 21d0-2203 2205-2208 220a-220b 220d-2223 2225 2227-222b "
    "222e 2231-2240 2242-2243 2245-2246 2248 224a-225f 2261 2263-226c 2272-2273 2276-2277 227a-227f 2282-2283 "
    "2286-2287 228a-22ab 22b0-22df 22e4-22e9 22ee-2328 232b-2426 2440-244a 24eb-27bf 1f300-1f6d7 1f6dd-1f6ec "
    "1f6f0-1f6fc 1f700-1f773 1f780-1f7d8 1f7e0-1f7eb 1f7f0 1f800-1f80b 1f810-1f847 1f850-1f859 1f860-1f887 "
    "1f890-1f8ad 1f8b0-1f8b1 1f900-1fa53 1fa60-1fa6d 1fa70-1fa74 1fa78-1fa7c 1fa80-1fa86 1fa90-1faac 1fab0-1faba "
    "1fac0-1fac5 1fad0-1fad9 1fae0-1fae7 1faf0-1faf6 3400-4dbf 4e00-9fff a000-a48c")
NFKC_ASCII = {"\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
              "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ",
              "\u2024": ".", "\u2025": "..", "\u2026": "...", "\u2122": "TM", "\u00b2": "2", "\u00b3": "3",
              "\u00b9": "1"}
_inert: tuple[tuple[int, int], ...] = ()


def known_fold(text: str, chars: set[str] | None = None) -> str | None:
    """The NFKD (and NFKC) form of ``text`` when each of its non-ASCII characters is in the tables
    above, else None. ``chars``: its non-ASCII characters, when known."""
    global _inert
    if chars is None:
        chars = nonascii(text)
    if len(chars) > 64:
        return None  # text in another script: unicodedata decides
    if not _inert:
        _inert = tuple(ranges(NFKC_INERT))
    folded = text
    for c in chars:
        to = NFKC_ASCII.get(c)
        if to is not None:
            folded = folded.replace(c, to)
            continue
        n = ord(c)
        if not any(a <= n <= b for a, b in _inert):
            return None
    return folded
