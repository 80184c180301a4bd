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
# Cheap pre-check: a text naming none of these words needs no regular expression.
ANCHORS = ("context", "system", "persisted", "function")
_FORMAT = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff"
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
        folded = unicodedata.normalize("NFKC", text)
        if folded != text and _has_tag(folded):
            text = folded
    elif not any(a in text.lower() for a in ANCHORS):
        return text
    return _compiled().sub(_replace, text)


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
