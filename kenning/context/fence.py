"""The fence around what Kenning injects, and the neutraliser that keeps stored text from breaking it.

Everything Kenning tells the agent sits inside ``<kenning-context>…</kenning-context>``, and
Claude Code wraps hook text in ``<system-reminder>``. Stored text comes from tool output, files
and model replies: a lone ``</kenning-context>`` or ``<system-reminder>`` in it would end the
fence early or open a block that reads as the harness speaking. So every tag-like mention of a
fence or system tag, opening or closing, in any case, with any spacing, zero-width characters,
full-width letters or entity/percent/escape encoding, becomes plain bracketed text
(``</kenning-context>`` → ``[/kenning-context]``). It runs at capture (the hook) and again at
render (every context builder), so text stored by any path, or by an older version, is covered.

Standard library only; ``re`` and ``unicodedata`` are loaded on first need (the hook path).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

OPEN = "<kenning-context>"
CLOSE = "</kenning-context>"

# Tag names (word lists) whose mention is neutralised: our fences (and the reference system's),
# the harness's system blocks, and the tool-call framing a model reads as structure.
NAMES = (
    ("kenning", "context"), ("claude", "mem", "context"), ("system", "reminder"), ("system", "instruction"),
    ("system", "instructions"), ("system", "message"), ("system", "prompt"), ("persisted", "output"),
    ("function", "results"), ("function", "calls"), ("system",),
)
_FORMAT = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff"
# The pre-check (may_hold_tag) in plain string operations; tests check each table against ``re``
# and ``unicodedata`` over every code point.
FIRST_WORDS = tuple(sorted({n[0] for n in NAMES}))
_LONGEST_FIRST = max(map(len, FIRST_WORDS))
FORMAT_CHARS = ("\u00ad\u034f\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                "\u2060\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufeff")
# What ``\s`` matches (str.isspace, the same set in CPython).
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_GAP = WHITESPACE + FORMAT_CHARS
_NO_FORMAT = dict.fromkeys(map(ord, FORMAT_CHARS))
# Letters other than ASCII that the pattern's IGNORECASE matches with a name's letter (İ ı ſ K).
CASE_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_CASE_FOLDS = tuple(CASE_FOLDS.items())
FULL_OPENERS = ("\uff1c", "\ufe64")  # ＜ ﹤
# The opener's spellings besides ``<`` (lower case; the numeric ones are read by _numeric_openers).
_OPENERS = ("&lt", "\\x3c", "%3c")
_SLASHES = ("/", "\uff0f", "&sol;", "\\/", "%2f")
_GAP_OR_NAME = frozenset(_GAP + "".join(w[0] for w in FIRST_WORDS) + "/\uff0f&\\%;")
_WINDOW = 512
_pattern: re.Pattern[str] | None = None


def _compiled() -> re.Pattern[str]:
    global _pattern
    if _pattern is None:
        import re

        fmt = f"[{_FORMAT}]*"
        gap = f"(?:[\\s\\-_.:{_FORMAT}]|&#0*45;|&#x0*2d;|&dash;|&hyphen;|%2d)*"

        def word(w: str) -> str:
            return fmt.join(re.escape(c) for c in w)

        names = sorted(NAMES, key=lambda n: -sum(map(len, n)))  # longest first: system-reminder before system
        name = "(?:" + "|".join(gap.join(word(w) for w in n) for n in names) + ")"
        lt = r"(?:<|＜|﹤|&lt;?|&#0*60;?|&#x0*3c;?|\\u0*3c|\\x3c|%3c)"
        slash = r"(?:/|／|&#0*47;?|&#x0*2f;?|&sol;|\\u0*2f|\\/|%2f)"
        gt = r"(?:>|＞|﹥|&gt;?|&#0*62;?|&#x0*3e;?|\\u0*3e|\\x3e|%3e)"
        # The opener, an optional slash, the name not followed by more of a word, then (optionally)
        # whatever attributes run up to the tag's own closer on the same line.
        _pattern = re.compile(
            rf"{lt}{fmt}\s*(?P<slash>{slash})?{fmt}\s*(?P<name>{name})(?![A-Za-z0-9])"
            rf"(?P<rest>[^<>\n]{{0,200}}?{gt}|{fmt}\s*(?P<selfclose>{slash})?\s*{gt})?",
            re.IGNORECASE)
    return _pattern


def _replace(m: re.Match[str]) -> str:
    import re

    name = re.sub("[^A-Za-z]+", "-", re.sub(f"[{_FORMAT}]", "", m.group("name"))).strip("-").lower()
    return f"[{'/' if m.group('slash') else ''}{name}]"


def neutralise(text: str) -> str:
    """``text`` with every fence or system tag turned into inert bracketed words."""
    if not text:
        return text
    if not text.isascii():
        # Full-width or compatibility letters (ｓｙｓｔｅｍ) read as the ASCII name: match on their NFKC form.
        folded = known_fold(text)
        if folded is None:
            import unicodedata

            folded = text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)
        if folded is not text and may_hold_tag(folded) and _has_tag(folded):
            text = folded
        elif not may_hold_tag(text):
            return text
    elif not may_hold_tag(text):
        return text
    return _compiled().sub(_replace, text)


# Non-ASCII characters whose NFKC form is known without ``unicodedata`` (loading it and normalising
# 20 KB costs a hook ~0.9 ms): the typography, arrows, symbols and emoji of ordinary code and output.
# Each of NFKC_INERT has no decomposition, no combining class and is no second element of a canonical
# composition; each of NFKC_ASCII decomposes to the ASCII text given. In a text made of ASCII and these,
# nothing reorders or composes, so its NFKC form is the text with NFKC_ASCII replaced (tests check each
# entry and the whole against unicodedata).
NFKC_INERT = (
    "a1-a7 a9 ab-ae b0-b1 b6-b7 bb bf 2010 2012-2016 2018-2023 2027 2030-2032 2035 2038-203b 203d 203f-2046 "
    "204a-2056 2058-205e 2190-2199 219c-21ad 21af-21cc 21d0-2203 2205-2208 220a-220b 220d-2223 2225 2227-222b "
    "222e 2231-2240 2242-2243 2245-2246 2248 224a-225f 2261 2263-226c 2272-2273 2276-2277 227a-227f 2282-2283 "
    "2286-2287 228a-22ab 22b0-22df 22e4-22e9 22ee-2328 232b-2426 2440-244a 24eb-27bf 1f300-1f6d7 1f6dd-1f6ec "
    "1f6f0-1f6fc 1f700-1f773 1f780-1f7d8 1f7e0-1f7eb 1f7f0 1f800-1f80b 1f810-1f847 1f850-1f859 1f860-1f887 "
    "1f890-1f8ad 1f8b0-1f8b1 1f900-1fa53 1fa60-1fa6d 1fa70-1fa74 1fa78-1fa7c 1fa80-1fa86 1fa90-1faac 1fab0-1faba "
    "1fac0-1fac5 1fad0-1fad9 1fae0-1fae7 1faf0-1faf6")
NFKC_ASCII = {"\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
              "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ",
              "\u2024": ".", "\u2025": "..", "\u2026": "...", "\u2122": "TM", "\u00b2": "2", "\u00b3": "3",
              "\u00b9": "1"}
_ASCII_BYTES = bytes(range(128))
_inert: tuple[tuple[int, int], ...] = ()


def known_fold(text: str) -> str | None:
    """The NFKC form of ``text`` when each of its non-ASCII characters is in the tables above, else None."""
    global _inert
    # The non-ASCII characters in a few C passes: UTF-8 without its ASCII bytes is their own UTF-8.
    chars = set(text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"))
    if len(chars) > 64:
        return None  # text in another script: unicodedata decides
    if not _inert:
        _inert = tuple((int(a, 16), int(b or a, 16)) for a, _sep, b in (r.partition("-") for r in NFKC_INERT.split()))
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


def may_hold_tag(text: str) -> bool:
    """False when no fence or system tag can stand in ``text``: a few C passes, no ``re``.

    Conservative by construction (True whenever the pattern could match, and sometimes when it
    cannot): every match starts with an opener (``<`` in any of its spellings), then gap characters,
    maybe a slash, gap again, and the first word of a name, its letters perhaps split by format
    characters. Ordinary code is full of ``<`` (``a < b``, ``List<T>``) but rarely has a name's first
    word right after one, so it is decided here instead of compiling the pattern (~20 ms on the hook path).
    """
    if text.isascii():
        low = text.lower()
        if not any(w in low for w in FIRST_WORDS):
            return False
    else:  # (replace, not translate: a mapping translate costs ~0.1 µs a character)
        low = text
        for c, to in _CASE_FOLDS:
            if c in low:
                low = low.replace(c, to)
        # Lower-case the ASCII letters only (str.lower is ~10x slower on non-ASCII text): the names,
        # openers and slashes are ASCII or caseless, and the only other letters that lower to ASCII
        # (İ and the Kelvin sign) were folded just above.
        low = low.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
        for c in FULL_OPENERS:
            if c in low:
                low = low.replace(c, "<")
        if not any(w in low for w in FIRST_WORDS) and not (
                any(c in low for c in FORMAT_CHARS) and any(w in low.translate(_NO_FORMAT) for w in FIRST_WORDS)):
            return False
    for spelling in _OPENERS:
        if spelling in low:
            low = low.replace(spelling, "<")
    if "&#" in low or "\\u" in low:
        low = _numeric_openers(low)
    return any(part[:1] in _GAP_OR_NAME and _names_follow(part) for part in low.split("<")[1:])


def _numeric_openers(low: str) -> str:
    """``&#0060;``, ``&#x003c;``, ``\\u003c`` (any number of zeros) spelled ``<``."""
    for head, forms in (("&#", (("x", "3c"), ("", "60"))), ("\\u", (("", "3c"),))):
        out: list[str] = []
        pos = 0
        i = low.find(head)
        while i != -1:
            for mark, number in forms:
                k = i + len(head)
                if not low.startswith(mark, k):
                    continue
                k += len(mark)
                while low.startswith("0", k):
                    k += 1
                if low.startswith(number, k):
                    out += [low[pos:i], "<"]
                    pos = k + len(number)
                    break
            i = low.find(head, max(i + 1, pos))
        low = "".join(out) + low[pos:]
    return low


def _names_follow(part: str) -> bool:
    """After an opener (already removed): gap, a slash perhaps, gap, then the first word of a name."""
    window = part[:_WINDOW]
    rest = (window[1:] if window.startswith(";") else window).lstrip(_GAP)  # ``&lt;``: its own semicolon
    for slash in _SLASHES:
        if rest.startswith(slash):
            rest = rest[len(slash):]
            break
    else:
        if rest.startswith(("&#", "\\u")):
            return True  # a numeric slash: not worth spelling out here, let the pattern decide
    rest = rest.lstrip(_GAP)
    if not rest[:_LONGEST_FIRST].isascii():
        rest = rest.translate(_NO_FORMAT)  # (format characters are never ASCII)
    if len(rest) < _LONGEST_FIRST and len(part) > _WINDOW:
        return True  # a long run of gap or format characters: let the pattern decide
    return rest.startswith(FIRST_WORDS)


def _has_tag(text: str) -> bool:
    return _compiled().search(text) is not None


def neutralise_value(value: Any) -> Any:
    """:func:`neutralise` every string inside a JSON-like value (keys too: they are text the agent reads)."""
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, dict):
        return {neutralise(k) if isinstance(k, str) else k: neutralise_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [neutralise_value(v) for v in value]
    return value


def wrap(body: str) -> str:
    """The fence around ``body``, with nothing inside able to close or imitate it."""
    return f"{OPEN}\n{neutralise(body)}\n{CLOSE}"
