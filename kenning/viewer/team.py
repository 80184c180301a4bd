"""Where a memory lives and who vouches for it, as the viewer shows it (kenning/team, docs/team.md).

``personal``: on this machine only. ``mine``: the user's own preference, on every machine they joined their
own space from. ``team``: shared with the team hub: written here (``origin`` local) or pulled (``hub``), with its
author, and its review (``unsent`` not acknowledged by the hub yet, ``pending``, ``approved``, ``rejected``)
and reviewer.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# One row's link to the hub as a JSON array (NULL when it has none), for a column list: ``{oid}`` is the row id.
SHARE_SQL = ("SELECT json_array(l.origin, l.team, l.author, l.reviewer, l.reviewed_at, l.pushed, l.review) "
             "FROM team_links l WHERE l.observation_id = {oid}")


def share(scope: object, link: object) -> dict[str, Any]:
    if not link:
        return {"scope": "personal"}
    try:
        origin, team, author, reviewer, reviewed_at, pushed, review = json.loads(str(link))
    except (ValueError, TypeError):
        return {"scope": "personal"}
    if origin == "hub":
        review = "approved"
    elif not review:
        review = "pending" if pushed else "unsent"
    return {"scope": "mine" if scope == "user" else "team", "team": team, "origin": origin, "author": author,
            "reviewer": reviewer if review in ("approved", "rejected") else "", "reviewed_at": reviewed_at,
            "review": review}


def share_of(conn: sqlite3.Connection, oid: int, scope: object) -> dict[str, Any]:
    try:
        row = conn.execute(SHARE_SQL.format(oid="?"), (oid,)).fetchone()
    except sqlite3.OperationalError:  # a file from before migration 0034
        return {"scope": "personal"}
    return share(scope, row[0] if row else None)
