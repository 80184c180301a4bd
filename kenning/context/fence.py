"""The fence around what Kenning injects, and the neutraliser that keeps stored text from breaking it.

Everything Kenning tells the agent sits inside ``<kenning-context>…</kenning-context>``, and
Claude Code wraps hook text in ``<system-reminder>``. Stored text comes from tool output, files
and model replies: a lone ``</kenning-context>`` or ``<system-reminder>`` in it would end the
fence early or open a block that reads as the harness speaking. So every tag-like mention of a
fence or system tag, opening or closing, becomes plain bracketed text (``</kenning-context>`` →
``[/kenning-context]``), however it is disguised: tags are looked for in a folded form of the text
(NFKD, invisible characters and marks dropped, look-alike brackets, dashes and letters folded:
kenning/context/invisible.py) decoded until nothing changes (entities, percent-encoding, escapes:
kenning/context/unescape.py), and each one found is replaced in the text itself. Characters that
carry words nobody sees (the Unicode tag block ...) are removed first. It runs at capture (the
hook) and again at render (every context builder), so text stored by any path, or by an older
version, is covered.

Standard library only; ``re``, ``unicodedata`` and the fold's modules are loaded on first need (the
hook path): a pre-check in plain string operations decides most texts without them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

__all__ = ["CLOSE", "OPEN", "neutralise", "neutralise_value", "probe", "wrap"]

OPEN = "<kenning-context>"
CLOSE = "</kenning-context>"

# Tag names (word lists) whose mention is neutralised: our fences (and the reference system's),
# the harness's system blocks, and the tool-call framing a model reads as structure.
NAMES = (
    ("kenning", "context"), ("claude", "mem", "context"), ("system", "reminder"), ("system", "instruction"),
    ("system", "instructions"), ("system", "message"), ("system", "prompt"), ("persisted", "output"),
    ("function", "results"), ("function", "calls"), ("system",),
)
FIRST_WORDS = tuple(sorted({n[0] for n in NAMES}))
_LONGEST_FIRST = max(map(len, FIRST_WORDS))
# What ``\s`` matches (str.isspace, the same set in CPython).
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
              "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_GAP_OR_NAME = frozenset(WHITESPACE + "".join(w[0] for w in FIRST_WORDS) + "/")
# Non-ASCII characters that fold to an opener or to the start of an encoding (tests derive it from
# fold_char over every code point): without one of them, or ``<`` and the MARKS, no tag can stand.
OPENERS = "".join(map(chr, (0x2C2, 0x2F1, 0x1438, 0x2039, 0x226E, 0x2329, 0x276C, 0x276E, 0x2770, 0x27E8, 0x3008,
                            0xFE3F, 0xFE60, 0xFE64, 0xFE68, 0xFE6A, 0xFF05, 0xFF06, 0xFF1C, 0xFF3C)))
_OPENERS = frozenset(OPENERS)
MARKS = "&%\\"  # (kenning.context.unescape.MARKS: the modules of the fold are loaded only for a text that needs them)
_PASSES = 16  # decoding rounds; an encoding nested deeper than this is handed to the pattern as it stands
_WINDOW = 512
_pattern: re.Pattern[str] | None = None


def _compiled() -> re.Pattern[str]:
    """The tag, as it stands in the folded, decoded form (kenning/context/invisible.py, unescape.py)."""
    global _pattern
    if _pattern is None:
        import re

        gap = r"[\s\-_.:]*"
        names = sorted(NAMES, key=lambda n: -sum(map(len, n)))  # longest first: system-reminder before system
        name = "(?:" + "|".join(gap.join(re.escape(w) for w in n) for n in names) + ")"
        # The opener, an optional slash, the name not followed by more of a word, then (optionally)
        # whatever attributes run up to the tag's own closer on the same line.
        _pattern = re.compile(
            rf"<\s*(?P<slash>/)?\s*(?P<name>{name})(?![A-Za-z0-9])(?P<rest>[^<>\n]{{0,200}}?>|\s*(?P<selfclose>/)?\s*>)?",
            re.IGNORECASE)
    return _pattern


def _replace(m: re.Match[str]) -> str:
    import re

    name = re.sub("[^A-Za-z]+", "-", m.group("name")).strip("-").lower()
    return f"[{'/' if m.group('slash') else ''}{name}]"


def neutralise(text: str) -> str:
    """``text`` with every fence or system tag turned into inert bracketed words, and without the
    characters that carry words nobody sees (kenning/context/invisible.py: ``strip_hidden``)."""
    if not text:
        return text
    chars = None
    if not text.isascii():
        from kenning.context.invisible import nonascii, strip_hidden

        chars = nonascii(text)
        text = strip_hidden(text, chars)
    form = probe(text, chars)
    if form is None or _compiled().search(form) is None:
        return text
    return _splice(text)


def probe(text: str, chars: set[str] | None = None) -> str | None:
    """None when no fence or system tag can stand in ``text``; else the form the pattern is run on.

    The form: the text folded (NFKD, invisible characters and marks dropped, look-alikes of ``< > / -``
    and of the names' letters made ASCII) and decoded (entities, percent-encoding, backslash escapes)
    until nothing changes. Decided in plain string operations, no ``re`` (~20 ms to compile the
    pattern on the hook path): ordinary code is full of ``<`` but rarely has a name's first word
    right after one.
    """
    if text.isascii():
        if "<" not in text and not any(m in text for m in MARKS):
            return None
    else:
        from kenning.context.invisible import nonascii

        if chars is None:
            chars = nonascii(text)
        if "<" not in text and not any(m in text for m in MARKS) and not chars & _OPENERS:
            return None
    from kenning.context.unescape import decode_kind

    if text.isascii():
        form = text
    else:
        from kenning.context.invisible import fold_text

        form = fold_text(text)
    for _ in range(_PASSES):
        decoded = False
        for kind in MARKS:  # (decode_text's order, each kind over the folded form the last one left)
            if kind in form:
                after = decode_kind(form, kind, skip_ideographs=True)
                if after is not form:
                    decoded = True
                    if not after.isascii():
                        from kenning.context.invisible import fold_text

                        after = fold_text(after)
                    form = after
        if not decoded:
            break
    else:
        return form
    return form if _may_hold_tag(form) else None


def _may_hold_tag(form: str) -> bool:
    """A name's first word right after an opener (and perhaps a slash) in the folded, decoded form."""
    low = form.lower() if form.isascii() else form.encode("utf-8", "surrogatepass").lower().decode(
        "utf-8", "surrogatepass")  # (the names are ASCII: lower-casing only ASCII is ~10x faster)
    if "<" not in low or not any(w in low for w in FIRST_WORDS):
        return False
    return any(part[:1] in _GAP_OR_NAME and _names_follow(part) for part in low.split("<")[1:])


def _names_follow(part: str) -> bool:
    window = part[:_WINDOW]
    rest = window.lstrip(WHITESPACE)
    if rest.startswith("/"):
        rest = rest[1:].lstrip(WHITESPACE)
    if len(rest) < _LONGEST_FIRST and len(part) > _WINDOW:
        return True  # a long run of white space: let the pattern decide
    return rest.startswith(FIRST_WORDS)


def _units(text: str) -> tuple[list[str], list[int], list[int]]:
    """The form :func:`probe` gives, in pieces, each with the span of ``text`` it came from."""
    from kenning.context.invisible import fold_char
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, c in enumerate(text):
        piece = c if c.isascii() else fold_char(c)
        if piece:
            pieces.append(piece)
            starts.append(i)
            ends.append(i + 1)
    for _ in range(_PASSES):
        changed = False
        for kind in MARKS:  # (in decode_text's order)
            pieces, starts, ends, done = _decode_pieces(pieces, starts, ends, kind)
            changed = changed or done
        if not changed:
            break
    return pieces, starts, ends


def _decode_pieces(pieces: list[str], starts: list[int], ends: list[int],
                   kind: str) -> tuple[list[str], list[int], list[int], bool]:
    """One round of :func:`decode_kind` over the pieces: a decoded sequence becomes one piece, with
    the span of every piece it was made of."""
    from kenning.context.invisible import fold_char
    from kenning.context.unescape import decode_one, marks
    form = "".join(pieces)
    found = marks(form, kind)
    if not found:
        return pieces, starts, ends, False
    owner = [u for u, p in enumerate(pieces) for _c in p]
    offset = [0] * (len(pieces) + 1)
    for u, p in enumerate(pieces):
        offset[u + 1] = offset[u] + len(p)
    out_p: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    done = 0  # the pieces before this one are copied
    for i in found:
        if i < offset[done]:
            continue
        got = decode_one(form, i)
        if got is None:
            continue
        value, end = got
        first, last = owner[i], owner[end - 1]
        out_p += pieces[done:first]
        out_s += starts[done:first]
        out_e += ends[done:first]
        out_p.append(form[offset[first]:i] + "".join(map(fold_char, value)) + form[end:offset[last + 1]])
        out_s.append(starts[first])
        out_e.append(ends[last])
        done = last + 1
    if not out_p:
        return pieces, starts, ends, False
    out_p += pieces[done:]
    out_s += starts[done:]
    out_e += ends[done:]
    keep = [u for u, p in enumerate(out_p) if p]
    return [out_p[u] for u in keep], [out_s[u] for u in keep], [out_e[u] for u in keep], True


def _splice(text: str) -> str:
    """Every tag the pattern finds in the form replaced, in ``text`` itself, by its bracketed words;
    what lies between tags is left exactly as it was."""
    for _ in range(4):  # a replacement can never make a tag; checked again all the same
        pieces, starts, ends = _units(text)
        owner = [u for u, p in enumerate(pieces) for _c in p]
        out: list[str] = []
        pos = 0
        for m in _compiled().finditer("".join(pieces)):
            a, b = starts[owner[m.start()]], ends[owner[m.end() - 1]]
            if a < pos:
                a = pos
            out += [text[pos:a], _replace(m)]
            pos = max(pos, b)
        if not out:
            return text
        text = "".join(out) + text[pos:]
        form = probe(text)
        if form is None or _compiled().search(form) is None:
            return text
    return text


def __getattr__(name: str) -> Any:
    """The fold's tables, as this module's (``fence.known_fold``), loaded on first use."""
    if name in ("NFKC_ASCII", "NFKC_INERT", "known_fold"):
        from kenning.context import invisible

        return getattr(invisible, name)
    raise AttributeError(name)


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
