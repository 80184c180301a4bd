"""Characters that drive a terminal rather than show text: taken out of text from elsewhere (a team hub).

An escape sequence in a memory would act when ``kenning team review``, ``show`` or ``search`` prints it:
clear the screen so a fake prompt stands alone, move the cursor over what was written, or set the
clipboard (OSC 52) for the next paste. A memory never needs one: escape sequences go whole (CSI, OSC,
DCS and the two-character ones), then every other C0 and C1 control but tab and line breaks.
Standard library only.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"                       # CSI: colours, cursor moves, erase
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC up to their end
    r"|\x1b[ -/]*[0-~]"                              # the two-character ones (and charset choices)
    r"|\x9b[0-?]*[ -/]*[@-~]|[\x90\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?")  # their C1 forms
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """``text`` without escape sequences and control characters (tab, newline and carriage return stay)."""
    if text.isprintable() or not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
