"""Reviewing the team's waiting memories: the one path behind ``kenning team review`` and the viewer's Team tab.

A decision is the hub's (``kenning.review``: membership checked, nobody reviews their own, the audit log
written); an approval scans the memory for secrets once more first. A reviewer may approve with their own
wording (``kenning.review_edited``: an ``edited`` op of the reviewer, then the approval, audited); the new
wording is scanned and bounded first. The approved memory reaches every machine, the author's included,
like every other, through the next pull.
"""

from __future__ import annotations

import time
from typing import Any

from kenning.paths import Paths
from kenning.team import clock, config, hub
from kenning.team.config import TeamError
from kenning.team.diff import word_diff
from kenning.team.sync import bounded, digest, secret_in

DECISIONS = ("approved", "rejected")


def _membership(paths: Paths, team: str | None = None) -> config.TeamConfig:
    cfg = config.load(paths, team)
    if cfg is None:
        raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` (docs/team.md)")
    return cfg


def _holding(paths: Paths, gid: str, team: str | None) -> config.TeamConfig:
    """The membership whose hub has ``gid`` waiting: ``team``'s, the only one, or the one of several that has it."""
    teams = config.load_all(paths)
    if team or len(teams) < 2:
        return _membership(paths, team)
    unreachable = []
    for cfg in teams:
        try:
            conn = hub.connect(cfg.dsn, config.password(paths, cfg.team))
        except TeamError:
            unreachable.append(cfg.team)
            continue
        try:
            if any(m["gid"] == gid for m in hub.pending(conn, cfg.team)):
                return cfg
        finally:
            conn.close()
    raise TeamError(f"memory {gid} is not waiting for review in your teams ({config.names(teams)})"
                    + (f"; the hub of {', '.join(unreachable)} cannot be reached" if unreachable else ""))


def shown(m: dict[str, Any]) -> dict[str, Any]:
    """A waiting memory as a reviewer sees it: hub text treated like captured text (secrets redacted, hidden
    characters dropped, fence tags inert, bounded), and for each memory it replaces, the word diff of the
    title and the text (kept, removed, added runs)."""
    title, body = bounded(m["title"], hub.MAX_TITLE), bounded(m["body"], hub.MAX_TEXT)
    replaces = []
    for old in m["replaces"]:
        old_title, old_body = bounded(old["title"], hub.MAX_TITLE), bounded(old["body"], hub.MAX_TEXT)
        replaces.append({"gid": old["gid"], "title": old_title, "body": old_body,
                         "title_diff": word_diff(old_title, title), "body_diff": word_diff(old_body, body)})
    return {"gid": m["gid"], "author": m["author"], "created_at": m["created_at"], "layer": m["layer"],
            "title": title, "body": body, "replaces": replaces}


def waiting(paths: Paths, team: str | None = None) -> tuple[config.TeamConfig, list[dict[str, Any]]]:
    """The membership (``team``, or the only one) and the memories waiting for review, each with what it replaces
    and the diff (``shown``)."""
    return _waiting(paths, _membership(paths, team))


def _waiting(paths: Paths, cfg: config.TeamConfig) -> tuple[config.TeamConfig, list[dict[str, Any]]]:
    conn = hub.connect(cfg.dsn, config.password(paths, cfg.team))
    try:
        return cfg, [shown(m) for m in hub.pending(conn, cfg.team)]
    finally:
        conn.close()


def waiting_each(paths: Paths, team: str | None = None) -> list[tuple[config.TeamConfig, list[dict[str, Any]] | str]]:
    """Each membership (or ``team``'s) with its waiting memories, or why its hub could not be read: one hub down
    leaves the others' lists."""
    teams = [c for c in config.load_all(paths) if team is None or c.team == team]
    if team and not teams:
        _membership(paths, team)  # says this machine is not in it
    out: list[tuple[config.TeamConfig, list[dict[str, Any]] | str]] = []
    for cfg in teams:
        try:
            out.append(_waiting(paths, cfg))
        except TeamError as e:
            out.append((cfg, str(e)))
    return out


def check_edit(gid: str, title: str, text: str) -> tuple[str, str]:
    """The reviewer's wording, trimmed; TeamError when it is empty, too long or holds a secret."""
    title, text = (title or "").strip(), (text or "").strip()
    if not title:
        raise TeamError("an edited memory needs a title")
    if len(title) > hub.MAX_TITLE or len(text) > hub.MAX_TEXT:
        raise TeamError(f"an edited memory holds at most {hub.MAX_TITLE} characters of title and {hub.MAX_TEXT} "
                        f"of text (this one: {len(title)} and {len(text)})")
    leak = secret_in(f"{title}\n{text}")
    if leak:
        raise TeamError(f"the edit of memory {gid} holds a secret ({leak}): refused, nothing was approved; "
                        "take the secret out of the text")
    return title, text


def decide(paths: Paths, gid: str, decision: str, *, title: str | None = None, text: str | None = None,
           team: str | None = None) -> str:
    """Approve or reject ``gid`` (waiting in ``team``, or in whichever of this machine's teams has it), or approve
    it with the reviewer's ``title`` and ``text`` (both given: what the team is then told); TeamError with why
    when the hub or the secret scan refuses."""
    if decision not in DECISIONS:
        raise TeamError(f"a review is approved or rejected, not {decision!r}")
    edit = title is not None or text is not None
    if edit and decision != "approved":
        raise TeamError("only an approval carries an edit")
    cfg = _holding(paths, gid, team)
    conn = hub.connect(cfg.dsn, config.password(paths, cfg.team))
    try:
        found = next((m for m in hub.pending(conn, cfg.team) if m["gid"] == gid), None)
        if edit:
            if found is None:
                raise TeamError(f"memory {gid} is not waiting for review in team {cfg.team}")
            new_title, new_text = check_edit(gid, found["title"] if title is None else title,
                                             found["body"] if text is None else text)
            # The edit's clock goes past the memory's own: the hub orders it after the author's wording.
            hlc = clock.tick(str(found["hlc"] or ""), cfg.device, time.time())
            return hub.review_edited(conn, gid, new_title, new_text, hlc, cfg.device, digest(new_title, new_text))
        if decision == "approved":
            leak = secret_in(f"{found['title']}\n{found['body']}") if found else ""
            if leak:
                raise TeamError(f"memory {gid} holds a secret ({leak}): refused; reject it and ask its author to "
                                "forget it, or approve it with an edit that takes the secret out")
        return hub.review(conn, gid, decision)
    finally:
        conn.close()
