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
        import unicodedata

        # Full-width or compatibility letters (ｓｙｓｔｅｍ) read as the ASCII name: match on their NFKC form.
        folded = text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)
        if folded is not text and may_hold_tag(folded) and _has_tag(folded):
            text = folded
        elif not may_hold_tag(text):
            return text
    elif not may_hold_tag(text):
        return text
    return _compiled().sub(_replace, text)


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
        low = low.lower()
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
