"""The user's request inside what an editor sends with it.

Codex's IDE extension and desktop app put what the editor attaches (the active file, open tabs, the selection,
comments left on a diff) in front of the user's words, and the words under "## My request for Codex:". The attached
part is the editor's (a diff comment is often the agent's own review, forwarded): no rule, decision or request of
the user's. It stays in the record; the observer reads the request.
"""

from __future__ import annotations

import re

_REQUEST = re.compile(r"^#{1,3}[ \t]*my request for codex[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE)


def request(prompt: str) -> str:
    """The user's own words of a prompt: after the editor's attachments when it has them, else the whole."""
    m = _REQUEST.search(prompt)
    return prompt[m.end():].strip() if m else prompt


def attached(prompt: str) -> str:
    """What the editor sent before the user's words ('' when it sent nothing)."""
    m = _REQUEST.search(prompt)
    return prompt[:m.start()].strip() if m else ""
