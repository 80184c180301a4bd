"""Reviewing the team's waiting memories: the one path behind ``kenning team review`` and the viewer's Team tab.

A decision is the hub's (``kenning.review``: membership checked, nobody reviews their own, the audit log
written); an approval scans the memory for secrets once more first. The approved memory reaches this
machine, like every other, through the next pull.
"""

from __future__ import annotations

from typing import Any

from kenning.paths import Paths
from kenning.team import config, hub
from kenning.team.config import TeamError
from kenning.team.sync import secret_in

DECISIONS = ("approved", "rejected")


def _membership(paths: Paths) -> config.TeamConfig:
    cfg = config.load(paths)
    if cfg is None:
        raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` (docs/team.md)")
    return cfg


def waiting(paths: Paths) -> tuple[config.TeamConfig, list[dict[str, Any]]]:
    """The membership and the memories waiting for review, each with what it replaces."""
    cfg = _membership(paths)
    conn = hub.connect(cfg.dsn, config.password(paths))
    try:
        return cfg, hub.pending(conn, cfg.team)
    finally:
        conn.close()


def decide(paths: Paths, gid: str, decision: str) -> str:
    """Approve or reject ``gid``; TeamError with why when the hub or the secret scan refuses."""
    if decision not in DECISIONS:
        raise TeamError(f"a review is approved or rejected, not {decision!r}")
    cfg = _membership(paths)
    conn = hub.connect(cfg.dsn, config.password(paths))
    try:
        if decision == "approved":
            found = next((m for m in hub.pending(conn, cfg.team) if m["gid"] == gid), None)
            leak = secret_in(f"{found['title']}\n{found['body']}") if found else ""
            if leak:
                raise TeamError(f"memory {gid} holds a secret ({leak}): refused; reject it and ask its author to "
                                "forget it")
        return hub.review(conn, gid, decision)
    finally:
        conn.close()
