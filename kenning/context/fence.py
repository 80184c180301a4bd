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
    characters that carry words nobody sees (kenning/context/invisible.py: ``strip_hidden``). A tag is
    looked for in both readings of a numeric reference that a later escape may give more digits
    (kenning/context/unescape.py: ``decode_one``)."""
    if not text:
        return text
    chars = None
    if not text.isascii():
        from kenning.context.invisible import nonascii, strip_hidden

        chars = nonascii(text)
        text = strip_hidden(text, chars)
    ambiguous: list[int] = []
    form = probe(text, chars, ambiguous=ambiguous)
    if form is not None and _compiled().search(form) is not None:
        text = _splice(text)
    if ambiguous:  # (rare: only then is the text read the other way too)
        form = probe(text, patient=True)
        if form is not None and _compiled().search(form) is not None:
            text = _splice(text, patient=True)
    return text


def probe(text: str, chars: set[str] | None = None, *, patient: bool = False,
          ambiguous: list[int] | None = None) -> str | None:
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
    if text.isascii():
        form = text
    else:
        from kenning.context.invisible import fold_text

        form = fold_text(text)
    for _ in range(_PASSES):
        decoded = False
        for kind in MARKS:  # (decode_text's order, each kind over the folded form the last one left)
            if kind in form:
                from kenning.context.unescape import decode_kind

                after = decode_kind(form, kind, skip_ideographs=True, patient=patient, ambiguous=ambiguous)
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


class Pieces:
    """The folded, decoded form in pieces, each with the span of the original text it came from. A
    run of ASCII without an escape is one piece standing for itself ("exact": its characters map
    one to one); any other piece (a folded character, a decoded sequence) stands for its whole span."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.exact: list[bool] = []

    def add(self, piece: str, start: int, end: int, exact: bool) -> None:
        if piece:
            self.pieces.append(piece)
            self.starts.append(start)
            self.ends.append(end)
            self.exact.append(exact)

    def copy(self, src: Pieces, lo: int, hi: int) -> None:
        self.pieces += src.pieces[lo:hi]
        self.starts += src.starts[lo:hi]
        self.ends += src.ends[lo:hi]
        self.exact += src.exact[lo:hi]

    def offsets(self) -> list[int]:
        offset = [0] * (len(self.pieces) + 1)
        for u, p in enumerate(self.pieces):
            offset[u + 1] = offset[u] + len(p)
        return offset

    def at(self, offset: list[int], f: int) -> tuple[int, int, int]:
        """The piece holding form index ``f``, and the span of the text that character came from."""
        import bisect

        u = bisect.bisect_right(offset, f) - 1
        if self.exact[u]:
            k = self.starts[u] + f - offset[u]
            return u, k, k + 1
        return u, self.starts[u], self.ends[u]


def _units(text: str, patient: bool = False) -> Pieces:
    """The form :func:`probe` gives (its pattern matches are the same), in pieces."""
    from kenning.context.invisible import fold_char, nonascii

    form = Pieces()
    where: list[int] = []
    for c in nonascii(text):
        k = text.find(c)
        while k != -1:
            where.append(k)
            k = text.find(c, k + 1)
    pos = 0
    for k in sorted(where):
        form.add(text[pos:k], pos, k, True)
        form.add(fold_char(text[k]), k, k + 1, False)
        pos = k + 1
    form.add(text[pos:], pos, len(text), True)
    for _ in range(_PASSES):
        changed = False
        for kind in MARKS:  # (in decode_text's order)
            form, done = _decode_pieces(form, kind, patient)
            changed = changed or done
        if not changed:
            break
    return form


def _decode_pieces(form: Pieces, kind: str, patient: bool = False) -> tuple[Pieces, bool]:
    """One round of :func:`decode_kind` over the pieces: a decoded sequence becomes one piece with the
    span it was spelled over; exact pieces it cuts keep their rest as exact pieces."""
    from kenning.context.invisible import fold_char
    from kenning.context.unescape import decode_one, marks

    text = "".join(form.pieces)
    found = marks(text, kind)
    if not found:
        return form, False
    offset = form.offsets()
    out = Pieces()
    done = 0  # the pieces before this one are copied
    cut = 0  # the form index up to which piece ``done`` is copied (an exact piece cut before)
    decoded_any = False
    for i in found:
        if i < max(offset[done], cut):
            continue
        got = decode_one(text, i, patient)
        if got is None:
            continue
        decoded_any = True
        value, end = got
        first, a, _b = form.at(offset, i)
        last, _a, b = form.at(offset, end - 1)
        if first > done and cut > offset[done]:  # the rest of an exact piece cut before
            out.add(text[cut:offset[done + 1]], form.starts[done] + cut - offset[done], form.ends[done], True)
            done += 1
        out.copy(form, done, first)
        head = max(offset[first], cut)
        if form.exact[first] and i > head:  # the exact piece's part before the sequence stays exact
            out.add(text[head:i], form.starts[first] + head - offset[first], a, True)
            head = i
        start = a if head == i else form.starts[first]  # (head < i: a folded piece, whole)
        decoded = text[head:i] + "".join(map(fold_char, value))
        if form.exact[last]:
            out.add(decoded, start, b, False)
            done, cut = last, end  # the rest of that exact piece: copied from ``cut`` later
        else:
            out.add(decoded + text[end:offset[last + 1]], start, form.ends[last], False)
            done, cut = last + 1, offset[last + 1]
    if not decoded_any:
        return form, False
    if done < len(form.pieces) and cut > offset[done]:  # the cut exact piece's rest
        out.add(text[cut:offset[done + 1]], form.starts[done] + cut - offset[done], form.ends[done], True)
        done += 1
    out.copy(form, done, len(form.pieces))
    return out, True


def _splice(text: str, patient: bool = False) -> str:
    """Every tag the pattern finds in the form replaced, in ``text`` itself, by its bracketed words;
    what lies between tags is left exactly as it was."""
    for _ in range(4):  # a replacement can never make a tag; checked again all the same
        form = _units(text, patient)
        offset = form.offsets()
        out: list[str] = []
        pos = 0
        for m in _compiled().finditer("".join(form.pieces)):
            a = form.at(offset, m.start())[1]
            b = form.at(offset, m.end() - 1)[2]
            out += [text[pos:max(a, pos)], _replace(m)]
            pos = max(pos, b)
        if not out:
            return text
        text = "".join(out) + text[pos:]
        probed = probe(text, patient=patient)
        if probed is None or _compiled().search(probed) is None:
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
