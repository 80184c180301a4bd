"""Strip ``<private>`` blocks and echo tags. Standard library only (runs in the hook).

Echo tags are text that Kenning or the agent framework injected into the conversation
(our own context block, ``<system-reminder>`` …). Capturing them again would make memory
remember itself, so they are removed with their content before anything is spooled.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and re cost ~5 ms each at import; the hook cannot afford them
    import re
    from typing import Any

PRIVATE_TAG = "private"
ECHO_TAGS = (
    "kenning-context",
    "system-reminder",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "claude-mem-context",
)
_LOWER_OPENERS = tuple("<" + t for t in (PRIVATE_TAG, *ECHO_TAGS))
_LOWER_OPENER_BYTES = tuple(o.encode() for o in _LOWER_OPENERS)
_block: re.Pattern[str] | None = None
_innermost: re.Pattern[str] | None = None
_unclosed: re.Pattern[str] | None = None
_opener: re.Pattern[str] | None = None


def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    # Compiled on first need: most hook payloads carry no tag at all.
    global _block, _innermost, _unclosed, _opener
    import re

    if _block is None or _innermost is None or _unclosed is None or _opener is None:
        names = "|".join(re.escape(t) for t in (PRIVATE_TAG, *ECHO_TAGS))
        # A closed block, non-greedy, attributes allowed, case-insensitive.
        _block = re.compile(rf"<({names})(?:\s[^>]*)?>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
        # The same, holding no opener of its own kind: removes nested blocks from the inside
        # out (about 7x slower, so only used when a block does hold one).
        _innermost = re.compile(rf"<({names})(?:\s[^>]*)?>(?:(?!<\1[\s>]).)*?</\1\s*>",
                                re.IGNORECASE | re.DOTALL)
        # An opening <private> that is never closed hides everything after it: fail closed.
        _unclosed = re.compile(r"<private(?:\s[^>]*)?>.*\Z", re.IGNORECASE | re.DOTALL)
        _opener = re.compile(rf"<(?:{names})[\s>]", re.IGNORECASE)
    return _block, _innermost, _unclosed, _opener


def strip_text(text: str) -> str:
    """Remove private and echo blocks from one string."""
    if "<" not in text:
        return text
    if text.isascii() or "\u0130" in text or "\u212a" in text:
        lower = text.lower()
        if not any(o in lower for o in _LOWER_OPENERS):
            return text
    else:
        # The same test, ~10x faster on non-ASCII text: the openers are ASCII, and only İ and the
        # Kelvin sign lower to ASCII letters, so lowering the ASCII bytes alone finds the same ones.
        data = text.encode("utf-8", "surrogatepass").lower()
        if not any(o in data for o in _LOWER_OPENER_BYTES):
            return text
    block, innermost, unclosed, opener = _patterns()
    out, removed = block.subn("", text)
    if len(opener.findall(text)) == removed + len(opener.findall(out)):
        return unclosed.sub("", out)  # every vanished opener was a block of its own: no nesting
    # A block holding an opener of its own kind is nested (<private>a<private>b</private>c</private>):
    # its first closer must not end the outer block and leak "c". Peel one level per pass.
    while True:
        stripped = innermost.sub("", text)
        if stripped == text:
            return unclosed.sub("", text)
        text = stripped


def strip_value(value: Any) -> Any:
    """Apply :func:`strip_text` to every string inside a JSON-like value."""
    if isinstance(value, str):
        return strip_text(value)
    if isinstance(value, dict):
        return {k: strip_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_value(v) for v in value]
    return value


def is_entirely_private(text: str) -> bool:
    """True when a non-empty text has nothing left once private blocks are removed."""
    return bool(text.strip()) and not strip_text(text).strip()
