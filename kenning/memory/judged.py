"""What the observer judged a stored memory to be, and on whose words (migration 0025's ``kind``,
``scope``, ``tentative`` and ``why``), as ``kenning show`` and the viewer both say it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# Who said the sentence, as the user reads it.
WHO = {"user": "you", "agent": "the agent", "plan": "the accepted plan"}


def said_by_user(kind: object, why: object) -> bool:
    """Whether a memory rests on the user's own words (or is from before roles were judged, and says
    nothing of whose words it rests on). Only such a memory replaces a standing rule, or stands for one
    as its duplicate: the agent's conclusions, its plans, what it read or ran, what it saved with the MCP
    tools never do (DESIGN.md §9)."""
    text = str(why or "")
    if '"by": "user"' in text:
        return True
    return not kind and '"by": ' not in text


def judged(obs: Mapping[str, Any]) -> dict[str, Any] | None:
    """Its role, whether it holds for all of the user's projects, whether it is provisional, and the
    sentence it rests on, who said it and where; None for a memory stored before roles were judged."""
    if not obs.get("kind"):
        return None
    try:
        why = json.loads(obs.get("why") or "{}")
    except ValueError:
        why = {}
    why = why if isinstance(why, dict) else {}
    out = {"kind": obs["kind"], "scope": obs.get("scope") or "project", "tentative": bool(obs.get("tentative")),
           **{k: str(why[k]) for k in ("said", "by", "origin", "where", "how") if why.get(k)}}
    if out.get("said"):
        out["who"] = WHO.get(str(out.get("by")), str(out.get("by") or "someone"))
    return out
