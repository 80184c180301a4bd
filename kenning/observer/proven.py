"""A gotcha the record proves (the shell's words, a tool's refusal, the remote's, a run that passed after one that
failed), as a memory: its title the finding, its facts what showed it, and why it was kept. Every observer module
that finds one builds it here, so they read and supersede alike (kenning/observer/taken_back.py: one says another
again only when it is about the same program, its first code span)."""

from __future__ import annotations

from kenning.memory.text import clip
from kenning.records import ObservationDraft

TITLE = 240


def gotcha(said: str, *, proved_by: str, facts: list[str], narrative: str, at: float, how: str,
           gist: str = "") -> ObservationDraft:
    """``said``: the finding; ``proved_by``: "the commands", "the tool", "the remote"; ``how``: why it is one."""
    return ObservationDraft(
        type="discovery", title=clip(said, TITLE), subtitle=f"gotcha proved by {proved_by}", facts=facts,
        narrative=(f"While working on: {gist}. " if gist else "") + narrative, concepts=["gotcha"], created_at=at,
        kind="gotcha", why={"said": said, "by": "commands", "origin": "", "where": "", "how": how})
