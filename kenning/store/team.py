"""Team memory in the local database (migration 0033): links to the hub, tombstones, cursors, pulled rows.

Only :mod:`kenning.memory_service` calls the writers here. A memory pulled from the hub is an ordinary
observation, filed under the project key ``team:<remote>`` (so the project's own index, search by
project and supersession among the user's memories never mix it with theirs) in one synthetic session
per team and remote; its link row says who wrote it and who approved it.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from kenning.records import ObservationDraft
from kenning.store import repo

PLATFORM = "team"
OBSERVER = "team"
PREFIX = "team:"


def project_key(remote: str) -> str:
    """The local project key of memories pulled for the project whose git remote is ``remote``."""
    return PREFIX + remote


@dataclass
class Pulled:
    gid: str
    team: str
    remote: str
    layer: str        # rule | key
    type: str
    title: str
    text: str
    author: str
    reviewer: str
    reviewed_at: float
    created_at: float
    scope: str = "project"  # "user": the user's own preference, from another of their machines


def linked(conn: sqlite3.Connection, gid: str) -> int | None:
    row = conn.execute("SELECT observation_id FROM team_links WHERE gid = ?", (gid,)).fetchone()
    return int(row[0]) if row else None


def tombstoned(conn: sqlite3.Connection, gid: str) -> bool:
    return conn.execute("SELECT 1 FROM team_tombstones WHERE gid = ?", (gid,)).fetchone() is not None


def insert_pulled(conn: sqlite3.Connection, m: Pulled, now: float) -> int | None:
    """Store one approved memory from the hub (inside the caller's transaction); None when it is here
    already or was forgotten here."""
    if linked(conn, m.gid) is not None or tombstoned(conn, m.gid):
        return None
    key = project_key(m.remote)
    sid = repo.upsert_session(conn, platform=PLATFORM, agent_session_id=f"{m.team}:{m.remote}", project=key,
                              project_root="", cwd="", at=m.created_at, name=m.remote.rsplit("/", 1)[-1],
                              remote="")
    conn.execute("UPDATE sessions SET status = 'completed', ended_at = ? WHERE id = ? AND status = 'active'",
                 (now, sid))
    draft = ObservationDraft(type=m.type or "discovery", title=m.title, narrative=m.text, created_at=m.created_at,
                             kind="rule" if m.layer == "rule" else "", scope=m.scope,
                             why={"by": "team", "origin": "hub", "how": f"approved team memory of {m.team}"
                                  if m.scope != "user" else "your preference, said on another of your machines"})
    oid = repo.insert_observation(conn, sid, key, draft, OBSERVER, now, group=False)
    if oid is None:
        return None
    # The team's layer holds, whatever the local rules would derive (like a pin: kept by `reindex`).
    conn.execute("UPDATE observations SET layer = ?, user_layer = ?, user_layer_at = ? WHERE id = ?",
                 (m.layer, m.layer, now, oid))
    conn.execute("INSERT INTO team_links (observation_id, gid, team, origin, author, reviewer, reviewed_at, pushed, "
                 "review) VALUES (?, ?, ?, 'hub', ?, ?, ?, 1, 'approved')",
                 (oid, m.gid, m.team, m.author, m.reviewer, m.reviewed_at))
    # Memories an edge said it replaces, before it was here: now they link to it.
    conn.execute("UPDATE observations SET superseded_by = ? WHERE superseded_by IS NULL AND status = 'superseded' "
                 "AND id IN (SELECT observation_id FROM team_links WHERE edge = ? AND edge != '')", (oid, m.gid))
    return oid


def link_local(conn: sqlite3.Connection, oid: int, gid: str, team: str, hlc: str, author: str) -> None:
    """Name a local memory by its global id before its first push (a re-push sends the very same op)."""
    conn.execute("INSERT OR IGNORE INTO team_links (observation_id, gid, team, origin, hlc, author) "
                 "VALUES (?, ?, ?, 'local', ?, ?)", (oid, gid, team, hlc, author))


def mark_pushed(conn: sqlite3.Connection, gids: list[str]) -> None:
    conn.executemany("UPDATE team_links SET pushed = 1 WHERE gid = ?", [(g,) for g in gids])


def set_review(conn: sqlite3.Connection, gid: str, review: str, reviewer: str, reviewed_at: float | None) -> bool:
    """The hub's review of a memory this machine shared; True when it changed here."""
    return conn.execute("UPDATE team_links SET review = ?, reviewer = ?, reviewed_at = ? WHERE gid = ? "
                        "AND origin = 'local' AND (review, reviewer) IS NOT (?, ?)",
                        (review, reviewer, reviewed_at, gid, review, reviewer)).rowcount > 0


def mark_edge(conn: sqlite3.Connection, gid: str, by: str) -> None:
    conn.execute("UPDATE team_links SET edge = ? WHERE gid = ?", (by, gid))


def mark_tombstones_pushed(conn: sqlite3.Connection, gids: list[str]) -> None:
    conn.executemany("UPDATE team_tombstones SET pushed = 1 WHERE gid = ?", [(g,) for g in gids])


def tombstone(conn: sqlite3.Connection, gid: str, team: str, *, pushed: bool) -> None:
    """Record a forgotten gid (``pushed``: the hub told us, nothing to send back)."""
    conn.execute("INSERT OR IGNORE INTO team_tombstones (gid, team, at, pushed) VALUES (?, ?, ?, ?)",
                 (gid, team, time.time(), int(pushed)))


def supersede_pulled(conn: sqlite3.Connection, oid: int, by_oid: int | None, now: float) -> bool:
    """An edge: the shared memory ``oid`` is no longer current (its text stays, searchable); ``by_oid`` is
    its successor when that is here already (else the link is made when it arrives: ``insert_pulled``)."""
    return conn.execute("UPDATE observations SET status = 'superseded', superseded_by = ?, superseded_at = ? "
                        "WHERE id = ? AND status = 'active'", (by_oid, now, oid)).rowcount > 0


def team_superseded(conn: sqlite3.Connection, old_ids: list[int], new_id: int, now: float) -> tuple[list[int],
                                                                                                     list[int]]:
    """The user's supersession of memories pulled from the hub by a memory of their own project (the same
    repository: its remote names the pulled rows' key). Returns (superseded, the ids left for the ordinary
    rules)."""
    row = conn.execute("SELECT p.remote FROM observations o JOIN projects p ON p.key = o.project WHERE o.id = ?",
                       (new_id,)).fetchone()
    key = project_key(str(row[0])) if row and row[0] else None
    done: list[int] = []
    rest: list[int] = []
    for oid in old_ids:
        hit = conn.execute("SELECT 1 FROM observations o JOIN team_links l ON l.observation_id = o.id "
                           "WHERE o.id = ? AND o.project = ? AND l.origin = 'hub'", (oid, key)).fetchone()
        if key is None or hit is None:
            rest.append(oid)
        elif supersede_pulled(conn, oid, new_id, now):
            done.append(oid)
        else:
            rest.append(oid)  # not active: the ordinary check says why
    return done, rest


def cursor(conn: sqlite3.Connection, team: str) -> tuple[int, str]:
    row = conn.execute("SELECT rev, hlc FROM team_cursors WHERE team = ?", (team,)).fetchone()
    return (int(row[0]), str(row[1])) if row else (0, "")


def set_cursor(conn: sqlite3.Connection, team: str, *, rev: int | None = None, hlc: str | None = None) -> None:
    conn.execute("INSERT OR IGNORE INTO team_cursors (team) VALUES (?)", (team,))
    if rev is not None:
        conn.execute("UPDATE team_cursors SET rev = MAX(rev, ?) WHERE team = ?", (rev, team))
    if hlc is not None:
        conn.execute("UPDATE team_cursors SET hlc = MAX(hlc, ?) WHERE team = ?", (hlc, team))


def forget_team(conn: sqlite3.Connection, team: str) -> None:
    """Leaving a team: its cursor goes (links and tombstones stay, so nothing forgotten returns on a rejoin)."""
    conn.execute("DELETE FROM team_cursors WHERE team = ?", (team,))


def changed_links(conn: sqlite3.Connection, team: str, limit: int) -> list[tuple[Any, ...]]:
    """Shared memories edited, pinned or unpinned here since the hub knew them: (gid, project, title, text, layer,
    edited, pin state changed, edit clock, when changed, the latest clock seen then), oldest link first."""
    return [tuple(r) for r in conn.execute(
        "SELECT l.gid, o.project, o.title, o.narrative, o.layer, l.edited, l.pinned, l.edit_hlc, l.changed_at, "
        "l.seen_hlc FROM team_links l "
        "JOIN observations o ON o.id = l.observation_id WHERE l.team = ? AND l.pushed = 1 AND o.status = 'active' "
        "AND (l.edited = 1 OR l.pinned = 1) ORDER BY l.observation_id LIMIT ?", (team, limit)).fetchall()]


def set_edit_clock(conn: sqlite3.Connection, gid: str, hlc: str) -> None:
    conn.execute("UPDATE team_links SET edit_hlc = ? WHERE gid = ?", (hlc, gid))


def mark_changes_pushed(conn: sqlite3.Connection, sent: list[tuple[str, str]]) -> None:
    """The hub acknowledged these (gid, clock) changes: unflag them, unless a newer change came meanwhile (its
    trigger cleared the clock, so the next round sends it)."""
    conn.executemany("UPDATE team_links SET edited = 0, pinned = 0, edit_hlc = '' WHERE gid = ? AND edit_hlc = ?",
                     sent)


def _pending(conn: sqlite3.Connection, oid: int) -> bool:
    return conn.execute("SELECT 1 FROM team_links WHERE observation_id = ? AND (edited = 1 OR pinned = 1)",
                        (oid,)).fetchone() is not None


def _follow_layer(conn: sqlite3.Connection, oid: int, layer: str, now: float) -> bool:
    """The hub's pin state, kept as the user's decision (a rebuild of the index keeps it): a rule, or a key
    memory once a teammate unpinned it. A layer that agrees (a routine memory the hub calls key) stays."""
    here = conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0]
    if (here == "rule") == (layer == "rule"):
        return False
    conn.execute("UPDATE observations SET layer = ?, user_layer = ?, user_layer_at = ? WHERE id = ?",
                 (layer, layer, now, oid))
    return True


def _followed(conn: sqlite3.Connection, oid: int) -> None:
    # The flags the change raised here are cleared, so it is not sent back.
    conn.execute("UPDATE team_links SET edited = 0, pinned = 0, edit_hlc = '' WHERE observation_id = ?", (oid,))


def apply_hub_change(conn: sqlite3.Connection, oid: int, title: str, text: str, layer: str, now: float,
                     hub_hlc: str = "") -> bool:
    """A teammate's edit, pin or unpin of a shared memory, approved on the hub (inside the caller's
    transaction): the text and layer here follow; the flags the change raised are cleared, so it is not sent
    back. True when something changed.

    An edit made here and not sent yet wins (docs/team.md): its clock comes after every clock this machine
    had seen, so the hub takes it (back to review) and every machine follows. Only an edit whose clock was
    already fixed before ``hub_hlc`` (the hub's change) loses: the hub will ignore it, so this copy follows
    the hub now rather than keep a wording no other machine has."""
    from kenning.store import edits

    flags = conn.execute("SELECT edited, pinned, edit_hlc FROM team_links WHERE observation_id = ?",
                         (oid,)).fetchone()
    if flags and (flags[0] or flags[1]):
        older = bool(flags[0]) and not flags[1] and bool(flags[2]) and bool(hub_hlc) and str(flags[2]) < hub_hlc
        if not older:
            return False  # changed here too, not yet sent: the hub orders the two by their clocks, then we follow
    changed = edits.apply(conn, oid, {"title": title, "narrative": text})
    changed = _follow_layer(conn, oid, layer, now) or changed
    _followed(conn, oid)
    return changed


def apply_hub_layer(conn: sqlite3.Connection, oid: int, layer: str, now: float) -> bool:
    """The pin state the hub resolved for one of this machine's own shared memories (a teammate pinned or
    unpinned it; its text is ours already). Not while a change made here waits to be sent."""
    if _pending(conn, oid) or not _follow_layer(conn, oid, layer, now):
        return False  # nothing waits to be sent, so nothing to clear either
    _followed(conn, oid)
    return True
