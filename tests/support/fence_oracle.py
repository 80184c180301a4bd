"""What a model may read as a fence or system tag, judged without the fence's own code.

The standard library's decoders (``html.unescape``, ``urllib.parse.unquote``, backslash escapes),
``unicodedata`` (NFKD; every format, default-ignorable and combining character dropped) and brackets,
slashes and dashes found by their Unicode names or category, applied until nothing changes; then a
regular expression for a tag's opener and name. Tables are enumerated over the whole code space on
first use (~2 s).
"""

from __future__ import annotations

import html
import re
import unicodedata
import urllib.parse
from functools import cache

from kenning.context import invisible

# Unicode's PropList.txt (not in unicodedata): Other_Default_Ignorable_Code_Point and Variation_Selector.
OTHER_DEFAULT_IGNORABLE = {0x34F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2065, 0x3164, 0xFFA0, *range(0xFFF0, 0xFFF9),
                           0xE0000, *range(0xE0002, 0xE0020), *range(0xE0080, 0xE0100), *range(0xE01F0, 0xE1000)}
VARIATION_SELECTORS = {*range(0x180B, 0x180E), 0x180F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
PREPENDED_CONCATENATION = {*range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2, 0x110BD, 0x110CD}
TAG_BLOCK = [chr(cp) for cp in range(0xE0000, 0xE0080)]

_GAP = r"[\s\-_.:]*"
TAGLIKE = re.compile(rf"<\s*/?\s*(kenning{_GAP}context|claude{_GAP}mem{_GAP}context|persisted{_GAP}output|"
                     rf"function{_GAP}(results|calls)|system({_GAP}(reminder|instructions?|message|prompt))?)"
                     r"(?![a-z0-9])", re.IGNORECASE)


@cache
def every() -> list[str]:
    return [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


@cache
def category() -> dict[str, str]:
    return {c: unicodedata.category(c) for c in every()}


@cache
def formats() -> list[str]:
    return [c for c in every() if category()[c] == "Cf"]


@cache
def default_ignorable() -> list[str]:
    """Default_Ignorable_Code_Point as DerivedCoreProperties.txt derives it."""
    visible = PREPENDED_CONCATENATION | {0xFFF9, 0xFFFA, 0xFFFB} | set(range(0x13430, 0x13440))
    return sorted(({*formats()} | {chr(cp) for cp in OTHER_DEFAULT_IGNORABLE | VARIATION_SELECTORS})
                  - {chr(cp) for cp in visible} - {c for c in every() if c.isspace()})


@cache
def invisible_chars() -> list[str]:
    return sorted(set(formats()) | set(default_ignorable()))


@cache
def marks() -> list[str]:
    return [c for c in every() if category()[c] in ("Mn", "Me")]


def named(pattern: str) -> list[str]:
    return [c for c in every()[0x80:] if re.search(pattern, unicodedata.name(c, ""))]


@cache
def lt_like() -> list[str]:
    return ["<", *named(r"(LESS-THAN SIGN|LEFT-POINTING ANGLE (BRACKET|QUOTATION MARK)|LEFT ANGLE BRACKET|"
                        r"LEFT ARROWHEAD|LEFT-POINTING ANGLE (BRACKET|QUOTATION MARK) ORNAMENT)$")]


@cache
def gt_like() -> list[str]:
    return [">", *named(r"(GREATER-THAN SIGN|RIGHT-POINTING ANGLE (BRACKET|QUOTATION MARK)|RIGHT ANGLE BRACKET|"
                        r"RIGHT ARROWHEAD|RIGHT-POINTING ANGLE (BRACKET|QUOTATION MARK) ORNAMENT)$")]


@cache
def slash_like() -> list[str]:
    return ["/", *named(r"^(FRACTION SLASH|DIVISION SLASH|BIG SOLIDUS|FULLWIDTH SOLIDUS|DOTTED SOLIDUS|"
                        r"VERY HEAVY SOLIDUS)$")]


@cache
def dashes() -> list[str]:
    return [c for c in every() if category()[c] == "Pd"] + ["\u2212"]


@cache
def _fold() -> tuple[dict[str, str], frozenset[str]]:
    fold = {**dict.fromkeys(lt_like(), "<"), **dict.fromkeys(gt_like(), ">"), **dict.fromkeys(slash_like(), "/"),
            **dict.fromkeys(dashes(), "-")}
    # Letters of other scripts the fence promises to fold (Unicode's confusables are not in the
    # standard library): each must read as its Latin letter.
    fold.update({c: to for to, spec in invisible.LOOKALIKES.items() if to.isalpha() for c in invisible.chars_of(spec)})
    return fold, frozenset(invisible_chars()) | frozenset(marks())


_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]{1,6})\}|\\[uU]([0-9a-fA-F]{8}|[0-9a-fA-F]{4})|\\[xX]([0-9a-fA-F]{2})|\\(/)")


def oracle(text: str) -> str:
    """What a model may read ``text`` as, every encoding undone until nothing changes."""
    fold, drop = _fold()
    for _ in range(60):
        s = unicodedata.normalize("NFKD", text)
        s = "".join(fold.get(c, c) for c in s if c not in drop)
        s = html.unescape(s)
        s = urllib.parse.unquote(s, errors="replace")
        s = _ESCAPE.sub(lambda m: m.group(4) or chr(min(int(m.group(1) or m.group(2) or m.group(3), 16), 0x10FFFF)), s)
        if s == text:
            return s
        text = s
    raise AssertionError("the oracle never settled")


def tags_in(text: str) -> list[str]:
    return [m.group(0) for m in TAGLIKE.finditer(oracle(text))]


def fence_count(rendered: str) -> tuple[int, int, int]:
    """(our openers, our closers, tags of any kind) a model may read in ``rendered``."""
    found = [re.sub(r"\s", "", t.lower()) for t in tags_in(rendered)]
    return (sum(t.startswith("<kenning") for t in found), sum(t.startswith("</kenning") for t in found), len(found))
