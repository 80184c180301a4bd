"""The user's request inside what an editor sends with it.

Codex's IDE extension and desktop app put what the editor attaches (the active file, open tabs, the selection,
comments left on a diff) in front of the user's words, and the words under "## My request for Codex:". Claude Code's
editor extensions put it in tags ("<ide_opened_file>The user opened the file … in the IDE. This may or may not be
related to the current task.</ide_opened_file>", "<ide_selection>…</ide_selection>") in front of the words. The
attached part is the editor's (a diff comment is often the agent's own review, forwarded): no rule, decision or
request of the user's. It stays in the record; the observer reads the request.
"""

from __future__ import annotations

import re

_REQUEST = re.compile(r"^#{1,3}[ \t]*my request for codex[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE)


_TAGGED = re.compile(r"<(ide_[a-z_]{1,40})>.*?</\1>\s*", re.DOTALL)


def request(prompt: str) -> str:
    """The user's own words of a prompt: after or outside the editor's attachments when it has them, else the
    whole."""
    m = _REQUEST.search(prompt)
    if m:
        return prompt[m.end():].strip()
    return _TAGGED.sub("", prompt).strip() if "<ide_" in prompt else prompt


def attached(prompt: str) -> str:
    """What the editor sent with the user's words ('' when it sent nothing)."""
    m = _REQUEST.search(prompt)
    if m:
        return prompt[:m.start()].strip()
    return "\n".join(t.group(0).strip() for t in _TAGGED.finditer(prompt)) if "<ide_" in prompt else ""
