"""Decoding the encodings a tag can hide behind, one sequence at a time, for the fence.

HTML character references (``&lt;``, ``&#60``, ``&#x3C;``, ``&sopf;`` ...: only those that can spell
part of a tag, kenning/context/entities.py), percent-encoding (UTF-8 included: ``%EF%BC%9C`` is
``＜``), and backslash escapes (``\\u003c``, ``\\u{3c}``, ``\\U0000003C``, ``\\x3c``, ``\\/``). The
fence applies :func:`decode_text` until nothing changes, so ``&amp;lt;``, ``%253C`` and
``\\u0026lt;`` are found too. Plain string operations: the hook path loads no ``re`` for this.
"""

from __future__ import annotations

MARKS = "&%\\"
_HEX = frozenset("0123456789abcdefABCDEF")
_DEC = frozenset("0123456789")
_LONGEST_NAME = 32
_LEGACY_LONGEST = 6  # (the longest entity name HTML decodes without ";": "Ccedil")


def decode_one(s: str, i: int, patient: bool = False) -> tuple[str, int] | None:
    """The text the sequence at ``s[i]`` (one of ``& % \\``) stands for and where it ends, or None.

    ``patient``: the other reading of a numeric reference with no ";" that the next sequence may give more
    digits (``&#6\\u0032;``): HTML ends it there (U+0006, then "2;"), a reader that decodes the escape first
    sees ``&#62;``. The fence looks at the text in both readings."""
    c = s[i]
    if c == "&":
        return _reference(s, i, patient)
    if c == "%":
        return _percent(s, i)
    if c == "\\":
        return _backslash(s, i)
    return None


def _digits(s: str, j: int, allowed: frozenset[str], most: int) -> int:
    k = j
    while k < len(s) and k - j < most and s[k] in allowed:
        k += 1
    return k


def _char(number: int) -> str:
    return chr(number) if 0 < number <= 0x10FFFF else "\ufffd"


# What HTML makes of the numbers it does not take as they are (as ``html.unescape`` does): 0x80-0x9F
# as Windows-1252 (``&#139;`` is ``‹``), NUL, surrogates and numbers past Unicode as U+FFFD, carriage
# return for 0x0D, nothing at all for the other controls and the noncharacters.
_CP1252 = ("\u20ac\x81\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\x8d\u017d\x8f"
           "\x90\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\x9d\u017e\u0178")


def _numeric(n: int) -> str:
    if 0x80 <= n <= 0x9F:
        return _CP1252[n - 0x80]
    if n == 0x0D:
        return "\r"
    if n == 0 or 0xD800 <= n <= 0xDFFF or n > 0x10FFFF:
        return "\ufffd"
    if n < 0x09 or 0x0E <= n <= 0x1F or n in (0x0B, 0x7F) or 0xFDD0 <= n <= 0xFDEF or n & 0xFFFE == 0xFFFE:
        return ""
    return chr(n)


def _reference(s: str, i: int, patient: bool = False, ambiguous: list[int] | None = None) -> tuple[str, int] | None:
    if s.startswith("#", i + 1):
        j = i + 2
        hexa = s[j:j + 1] in ("x", "X")
        j += hexa
        allowed = _HEX if hexa else _DEC
        k = _digits(s, j, allowed, 1000)
        if k == j:
            return None
        if k < len(s) and s[k] in MARKS:
            more = decode_one(s, k, patient)
            if more is not None and more[0][:1] in allowed:
                if patient:
                    return None  # (left for the round after the one that gives the digit)
                if ambiguous is not None:
                    ambiguous.append(i)  # (the other reading differs: the caller may look at it too)
        number = int(s[j:k], 16 if hexa else 10) if k - j <= 8 else 0x110000  # (a longer number is out of range anyway)
        return _numeric(number), k + (s[k:k + 1] == ";")
    j = i + 1
    k = j
    while k < len(s) and k - j <= _LONGEST_NAME and s[k].isascii() and s[k].isalnum():
        k += 1
    if k == j:
        return None
    table = _names()
    if s[k:k + 1] == ";":
        value = table.get(s[j:k + 1])
        if value is not None:
            return value, k + 1
    for end in range(min(k, j + _LEGACY_LONGEST), j, -1):  # the longest legacy name that starts here
        value = table.get(s[j:end])
        if value is not None:
            return value, end
    return None


_entity_names: dict[str, str] = {}


def _names() -> dict[str, str]:
    if not _entity_names:
        from kenning.context.entities import names  # (only for a text with a named reference)

        _entity_names.update(names())
    return _entity_names


def _percent(s: str, i: int) -> tuple[str, int] | None:
    if _digits(s, i + 1, _HEX, 2) != i + 3:
        return None
    first = int(s[i + 1:i + 3], 16)
    if first < 0x80:
        return chr(first), i + 3
    size = 2 if 0xC0 <= first < 0xE0 else 3 if 0xE0 <= first < 0xF0 else 4 if 0xF0 <= first < 0xF8 else 1
    raw = [first]
    k = i + 3
    while len(raw) < size and s[k:k + 1] == "%" and _digits(s, k + 1, _HEX, 2) == k + 3:
        raw.append(int(s[k + 1:k + 3], 16))
        k += 3
    try:
        return bytes(raw).decode("utf-8"), k
    except UnicodeDecodeError:
        # Not (yet) UTF-8: left as it is, for a later round may complete it (``&#37;E1%B4%B7``).
        return None


def _backslash(s: str, i: int) -> tuple[str, int] | None:
    kind = s[i + 1:i + 2]
    if kind == "u":  # the common case first (JSON's escapes): four hex digits
        h = s[i + 2:i + 6]
        if len(h) == 4 and h.isascii() and h.isalnum():
            try:
                return _char(int(h, 16)), i + 6
            except ValueError:
                pass
    if kind == "/":
        return "/", i + 2
    if kind in ("u", "U"):
        if s[i + 2:i + 3] == "{":  # \u{3c}
            k = _digits(s, i + 3, _HEX, 8)
            if k > i + 3 and s[k:k + 1] == "}":
                return _char(int(s[i + 3:k], 16)), k + 1
            return None
        k = _digits(s, i + 2, _HEX, 8 if kind == "U" else 4)
        n = k - (i + 2)
        # Short forms (``\u3c``) are read too, unless what follows may complete them in a later
        # round (``\u00&#97;d`` is ``\u00ad`` once the entity is decoded).
        if n < 2 or (n < (8 if kind == "U" else 4) and k < len(s) and s[k] in MARKS):
            return None
        value = _char(int(s[i + 2:k], 16))
        if n < (8 if kind == "U" else 4) and value.isalnum() and i and s[i - 1].isalnum():
            # A short form read as a letter or digit (of any script: ``\U00010e`` is "Ď") that would run on a
            # word (``<system\u30…``: a strict reader sees the tag ``<system`` end at the backslash) is left
            # as it stands.
            return None
        return value, k
    if kind in ("x", "X"):
        k = _digits(s, i + 2, _HEX, 2)
        return (chr(int(s[i + 2:k], 16)), k) if k == i + 4 else None
    return None


def marks(s: str, kinds: str = MARKS) -> list[int]:
    """Where ``s`` holds one of ``kinds`` (``&``, ``%``, ``\\``), in order."""
    found: list[int] = []
    for m in kinds:
        k = s.find(m)
        while k != -1:
            found.append(k)
            k = s.find(m, k + 1)
    found.sort()
    return found


def decode_text(s: str) -> str:
    """``s`` with every sequence it holds decoded once: HTML references, then percent-encoding, then
    backslash escapes, each over what the one before left (as the standard library's decoders would
    be applied one after the other); ``s`` itself when none is."""
    for kind in MARKS:
        s = decode_kind(s, kind)
    return s


def decode_kind(s: str, kind: str, *, skip_ideographs: bool = False, patient: bool = False,
                ambiguous: list[int] | None = None) -> str:
    """``s`` with the sequences of one kind (``&``, ``%`` or ``\\``) decoded once.

    ``patient``, ``ambiguous``: see :func:`decode_one`; where a reference of the other reading would differ
    is appended to ``ambiguous``.

    ``skip_ideographs``: leave ``\\u`` escapes of CJK ideographs and Hangul syllables (JSON's usual
    escapes) as they are. Such a character is never part of a tag, and neither is its escape: it
    starts with a backslash, which no tag holds before its closer, and it ends in itself. So a
    tag stands in the text decoded with them skipped exactly when it stands in the text decoded in
    full; the pre-check uses this to spare its loop most of a JSON document's escapes.
    """
    one = _reference if kind == "&" else _percent if kind == "%" else _backslash
    out: list[str] = []
    pos = 0
    for i in marks(s, kind):
        if i < pos:
            continue
        if kind == "\\" and s[i + 1:i + 2] == "u":  # JSON's \uXXXX, inline: the bulk of a document's marks
            h = s[i + 2:i + 6]
            if len(h) == 4 and h.isascii() and h.isalnum():
                try:
                    cp = int(h, 16)
                except ValueError:
                    cp = -1
                if cp >= 0:
                    if not (skip_ideographs and (0x3400 <= cp <= 0x9FFF or 0xAC00 <= cp <= 0xD7AF)):
                        out += [s[pos:i], _char(cp)]
                        pos = i + 6
                    continue
        elif kind == "&" and not (s[i + 1:i + 2].isalpha() or s[i + 1:i + 2] == "#"):
            continue  # (``&&``, ``& ``: no reference)
        got = _reference(s, i, patient, ambiguous) if kind == "&" else one(s, i)
        if got is not None:
            value, end = got
            out += [s[pos:i], value]
            pos = end
    if not out:
        return s
    return "".join(out) + s[pos:]
