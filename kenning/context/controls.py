"""Characters that drive a terminal rather than show text: taken out of every text written to memory.

An escape sequence in a memory would act when ``kenning team review``, ``show`` or ``search`` prints it:
clear the screen so a fake prompt stands alone, move the cursor over what was written, or set the
clipboard (OSC 52) for the next paste. A memory never needs one: escape sequences go whole (CSI, OSC,
DCS and the two-character ones), then every other C0 and C1 control but tab and line breaks.
Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# Compiled on first need: the hook imports this module (through kenning/privacy/ingress.py) and must not
# pay for `re` on ordinary text.
_patterns: tuple[re.Pattern[str], re.Pattern[str]] | None = None
_LINE_BREAKS = str.maketrans("", "", "\t\n\r")


def _compiled() -> tuple[re.Pattern[str], re.Pattern[str]]:
    global _patterns
    if _patterns is None:
        import re

        _patterns = (re.compile(
            r"\x1b\[[0-?]*[ -/]*[@-~]"                            # CSI: colours, cursor moves, erase
            r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"      # OSC, DCS, SOS, PM, APC up to their end
            r"|\x1b[ -/]*[0-~]"                                   # the two-character ones (and charset choices)
            r"|\x9b[0-?]*[ -/]*[@-~]|[\x90\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"),  # their C1 forms
            re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"))
    return _patterns


def strip_controls(text: str) -> str:
    """``text`` without escape sequences and control characters (tab, newline and carriage return stay)."""
    if text.isprintable() or text.translate(_LINE_BREAKS).isprintable():
        return text  # the usual case, without a pattern (str methods in C)
    escapes, controls = _compiled()
    if not controls.search(text):
        return text  # not printable for another reason (a format character, a separator): not ours to drop
    return controls.sub("", escapes.sub("", text))
