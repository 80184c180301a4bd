"""Decoding the encodings a tag can hide behind, one sequence at a time, for the fence.

HTML character references (``&lt;``, ``&#60``, ``&#x3C;``, ``&sopf;`` ...: only those that can spell
part of a tag, kenning/context/entities.py), percent-encoding (UTF-8 included: ``%EF%BC%9C`` is
``＜``), and backslash escapes (``\\u003c``, ``\\u{3c}``, ``\\U0000003C``, ``\\x3c``, ``\\/``). The
fence applies :func:`decode_text` until nothing changes, so ``&amp;lt;``, ``%253C`` and
``\\u0026lt;`` are found too. Plain string operations: the hook path loads no ``re`` for this.
"""

from __future__ import annotations

from kenning.context.entities import names

MARKS = "&%\\"
_HEX = frozenset("0123456789abcdefABCDEF")
_DEC = frozenset("0123456789")
_LONGEST_NAME = 32
_LEGACY_LONGEST = 6  # (the longest entity name HTML decodes without ";": "Ccedil")


def decode_one(s: str, i: int) -> tuple[str, int] | None:
    """The text the sequence at ``s[i]`` (one of ``& % \\``) stands for and where it ends, or None."""
    c = s[i]
    if c == "&":
        return _reference(s, i)
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


def _reference(s: str, i: int) -> tuple[str, int] | None:
    if s.startswith("#", i + 1):
        j = i + 2
        hexa = s[j:j + 1] in ("x", "X")
        j += hexa
        k = _digits(s, j, _HEX if hexa else _DEC, 1000)
        if k == j:
            return None
        number = int(s[j:k], 16 if hexa else 10) if k - j <= 8 else 0x110000  # (a longer number is out of range anyway)
        return _char(number), k + (s[k:k + 1] == ";")
    j = i + 1
    k = j
    while k < len(s) and k - j <= _LONGEST_NAME and s[k].isascii() and s[k].isalnum():
        k += 1
    table = names()
    if s[k:k + 1] == ";":
        value = table.get(s[j:k + 1])
        if value is not None:
            return value, k + 1
    for end in range(min(k, j + _LEGACY_LONGEST), j, -1):  # the longest legacy name that starts here
        value = table.get(s[j:end])
        if value is not None:
            return value, end
    return None


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
        return "\ufffd", i + 3


def _backslash(s: str, i: int) -> tuple[str, int] | None:
    kind = s[i + 1:i + 2]
    if kind == "/":
        return "/", i + 2
    if kind in ("u", "U"):
        if s[i + 2:i + 3] == "{":  # \u{3c}
            k = _digits(s, i + 3, _HEX, 8)
            if k > i + 3 and s[k:k + 1] == "}":
                return _char(int(s[i + 3:k], 16)), k + 1
            return None
        k = _digits(s, i + 2, _HEX, 8 if kind == "U" else 4)
        if k - (i + 2) < 2:
            return None
        return _char(int(s[i + 2:k], 16)), k
    if kind in ("x", "X"):
        k = _digits(s, i + 2, _HEX, 2)
        return (chr(int(s[i + 2:k], 16)), k) if k == i + 4 else None
    return None


def marks(s: str) -> list[int]:
    """Where ``s`` holds a ``&``, ``%`` or ``\\``, in order."""
    found: list[int] = []
    for m in MARKS:
        k = s.find(m)
        while k != -1:
            found.append(k)
            k = s.find(m, k + 1)
    found.sort()
    return found


def decode_text(s: str) -> str:
    """``s`` with every sequence it holds decoded once (``s`` itself when none is)."""
    out: list[str] = []
    pos = 0
    for i in marks(s):
        if i < pos:
            continue
        got = decode_one(s, i)
        if got is not None:
            value, end = got
            out += [s[pos:i], value]
            pos = end
    if not out:
        return s
    return "".join(out) + s[pos:]
