"""One round of team sync: push this machine's shareable memories as operations, pull the team's by cursor.

Runs in the worker's sync thread (kenning/team/worker.py) and behind ``kenning team push|pull|sync``;
never on a hook path. Every local write goes through :class:`kenning.memory_service.MemoryService`
(surface ``team``). What is shared: active standing rules and key memories (the layers the team chose)
of the projects the team joined, never a preference of the user (scope ``user``), an agent's unconfirmed
proposal, raw events, prompts or transcripts. Each is scanned for secrets again at this promotion: one
that holds a secret is refused, named, and never sent.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.memory_service import MemoryService
from kenning.paths import Paths
from kenning.project import resolve_key
from kenning.store import team as tm
from kenning.team import clock, hub
from kenning.team.config import TeamConfig, TeamError, load_all, password
from kenning.team.config import load as load_config

SHARED_LAYERS = ("rule", "key")
MINE = "~"  # the hub project of the user's own memories: every project
PUSH_BATCH = 200


@dataclass
class Report:
    pushed: int = 0
    pulled: int = 0
    forgotten: int = 0
    superseded: int = 0
    refused: list[str] = field(default_factory=list)  # why a memory was not shared
    granted: list[str] | None = None  # the projects the hub restricts this member to; None: the whole team

    def as_dict(self) -> dict[str, Any]:
        return {"pushed": self.pushed, "pulled": self.pulled, "forgotten": self.forgotten,
                "superseded": self.superseded, "refused": self.refused, "granted": self.granted}


def secret_in(text: str) -> str:
    """The name of the first secret detector that fires on ``text``; '' when none does."""
    from kenning.privacy.redact import Redactor

    spans = Redactor().spans(text)
    return spans[0][2] if spans else ""


@dataclass
class Space:
    """Where on the hub memories go: the team (its projects' rules and key memories), or the user's own
    space (``mine``: their preferences for all their work, on every machine they join it from)."""

    team: str
    mine: bool = False


def spaces(cfg: TeamConfig) -> list[Space]:
    return [Space(cfg.team)] + ([Space(cfg.mine, mine=True)] if cfg.mine else [])


def _local_keys(conn: sqlite3.Connection, cfg: TeamConfig) -> dict[str, str]:
    return {resolve_key(conn, key): remote for remote, key in cfg.projects.items()}


_NEW = ("AND o.duplicate_of IS NULL AND COALESCE(o.kind, '') != 'proposed' "
        "AND NOT EXISTS (SELECT 1 FROM team_links l WHERE l.observation_id = o.id) ORDER BY o.id")


def candidates(conn: sqlite3.Connection, cfg: TeamConfig, space: Space | None = None) -> list[tuple[Any, ...]]:
    """(id, hub project) of the local memories to share that have no global id yet: the team's (a project
    scope rule or key memory of a joined project), or, for the user's own space, their preferences."""
    if space is not None and space.mine:
        return [(int(r[0]), MINE) for r in conn.execute(
            "SELECT o.id FROM observations o WHERE o.scope = 'user' AND o.status = 'active' AND o.layer = 'rule' "
            + _NEW)]
    out: list[tuple[Any, ...]] = []
    marks = ",".join("?" * len(SHARED_LAYERS))
    for key, remote in _local_keys(conn, cfg).items():
        out += [(int(r[0]), remote) for r in conn.execute(
            "SELECT o.id FROM observations o WHERE o.project = ? AND o.status = 'active' AND o.scope = 'project' "
            f"AND o.layer IN ({marks}) {_NEW}", (key, *SHARED_LAYERS))]
    return out


def push(conn: sqlite3.Connection, hubconn: Any, cfg: TeamConfig, report: Report, space: Space | None = None) -> int:
    """One batch (at most PUSH_BATCH memories, with the edges and tombstones waiting): one transaction on the
    hub, marked sent here only once it is acknowledged. Returns how many memories the batch carried."""
    space = space or Space(cfg.team)
    door = MemoryService(conn, "team")
    remotes: dict[str, str] = {} if space.mine else _local_keys(conn, cfg)
    blocked = hub.not_granted(hubconn, space.team, sorted(set(remotes.values())))
    for remote in sorted(blocked):
        report.refused.append(f"project {remote} is not granted to you in {space.team} (the admin runs `kenning "
                              "team grant`): its memories stay here")
    remotes = {k: r for k, r in remotes.items() if r not in blocked}
    last = tm.cursor(conn, space.team)[1]
    links = []
    for oid, remote in candidates(conn, cfg, space):
        if remote in blocked:
            continue
        row = conn.execute("SELECT title, narrative FROM observations WHERE id = ?", (oid,)).fetchone()
        found = secret_in(f"{row[0]}\n{row[1]}")
        if found:
            report.refused.append(f"memory #{oid} holds a secret ({found}): not shared with {space.team}; "
                                  "edit or forget it")
            continue
        last = clock.tick(last, cfg.device, time.time())
        links.append((oid, f"{cfg.device}:{oid}", space.team, last, cfg.user))
    if links:
        door.team_links(links)
        door.team_cursor(space.team, hlc=last)
    ops: list[hub.Op] = []
    created: list[str] = []
    for gid, hlc, project, typ, title, text, layer, chash in conn.execute(
            "SELECT l.gid, l.hlc, o.project, o.type, o.title, o.narrative, o.layer, o.content_hash "
            "FROM team_links l JOIN observations o ON o.id = l.observation_id "
            "WHERE l.team = ? AND l.origin = 'local' AND l.pushed = 0 ORDER BY l.observation_id LIMIT ?",
            (space.team, PUSH_BATCH)).fetchall():
        target = MINE if space.mine else remotes.get(project)
        if target is None or secret_in(f"{title}\n{text}"):  # moved out of a joined project, or edited since
            continue
        ops.append(hub.Op(gid, "created", target, cfg.device, hlc, chash,
                          {"title": title[:hub.MAX_TITLE], "text": text[:hub.MAX_TEXT], "type": typ, "layer": layer}))
        created.append(gid)
    changes, last = _changes(conn, cfg, space, remotes, report, ops, last)
    edges: list[tuple[str, str]] = []
    for gid, project, by, at in conn.execute(
            "SELECT l.gid, o.project, nl.gid, o.superseded_at FROM team_links l "
            "JOIN observations o ON o.id = l.observation_id "
            "JOIN team_links nl ON nl.observation_id = o.superseded_by AND nl.team = l.team "
            "WHERE l.team = ? AND l.pushed = 1 AND o.status = 'superseded' AND l.edge = '' "
            "AND nl.pushed = 1", (space.team,)).fetchall():
        remote = _hub_project(project, space, remotes) or "unknown"
        # Its clock derives from when it was superseded: a retry after a lost answer is the same op.
        ops.append(hub.Op(gid, "superseded", remote, cfg.device, clock.at(float(at or 0), cfg.device), "",
                          {"by": by}))
        edges.append((gid, by))
    tombs: list[str] = []
    for gid, at in conn.execute("SELECT gid, at FROM team_tombstones WHERE team = ? AND pushed = 0",
                                (space.team,)).fetchall():
        # The clock of a tombstone derives from when it was made: a retry sends the very same op.
        ops.append(hub.Op(gid, "forgotten", "unknown", cfg.device, clock.at(at, cfg.device)))
        tombs.append(gid)
    if ops:
        refused: list[hub.Op] = []
        report.pushed += hub.push(hubconn, space.team, ops, refused)
        if refused:
            created, edges, changes = _not_refused(refused, space, report, created, edges, changes)
        door.team_pushed(created, edges, tombs, changes)
    return len(created)


def _not_refused(refused: list[hub.Op], space: Space, report: Report, created: list[str],
                 edges: list[tuple[str, str]], changes: list[tuple[str, str]]) -> tuple[
                     list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    """What the hub took, once it refused ``refused`` (this member is restricted to other projects of the
    team: `kenning team grant`). Those wait, and go when the project is granted; a tombstone it refused is
    done (the member may not erase that memory, or the hub never had it)."""
    no = {(op.gid, op.kind) for op in refused}
    for op in refused:
        if op.kind != "forgotten":
            report.refused.append(f"the hub refused the {op.kind} op of team memory {op.gid}: its project is not "
                                  f"granted to you in {space.team} (the admin runs `kenning team grant`); it waits")
    return ([g for g in created if (g, "created") not in no],
            [e for e in edges if (e[0], "superseded") not in no],
            [c for c in changes if not {(c[0], "edited"), (c[0], "pinned"), (c[0], "unpinned")} & no])


def _hub_project(project: str, space: Space, remotes: dict[str, str]) -> str | None:
    if space.mine:
        return MINE
    return remotes.get(project) or (project[len(tm.PREFIX):] if project.startswith(tm.PREFIX) else None)


def _changes(conn: sqlite3.Connection, cfg: TeamConfig, space: Space, remotes: dict[str, str], report: Report,
             ops: list[hub.Op], last: str) -> tuple[list[tuple[str, str]], str]:
    """The edits, pins and unpins made here to memories the hub knows, as ``edited`` / ``pinned`` / ``unpinned``
    ops (appended to ``ops``) under clocks fixed before the first try; returns their (gid, clock) and this
    device's clock."""
    door = MemoryService(conn, "team")
    changes: list[tuple[str, str]] = []
    clocks: list[tuple[str, str]] = []
    for gid, project, title, text, layer, edited, pinned, hlc, changed_at, seen in tm.changed_links(
            conn, space.team, PUSH_BATCH):
        remote = _hub_project(str(project), space, remotes)
        if remote is None:
            continue
        found = secret_in(f"{title}\n{text}")
        if found:
            report.refused.append(f"the edit of team memory {gid} holds a secret ({found}): not shared with "
                                  f"{space.team}; edit or forget it")
            continue
        if not hlc:
            hlc = change_clock(str(seen or ""), cfg.device, changed_at, last)
            last = max(last, hlc)
            clocks.append((gid, hlc))
        pin = pin_op(bool(pinned), str(layer))
        if edited:
            ops.append(hub.Op(gid, "edited", remote, cfg.device, hlc, digest(title, text),
                              {"title": title[:hub.MAX_TITLE], "text": (text or "")[:hub.MAX_TEXT]}))
        if pin is not None:
            ops.append(hub.Op(gid, pin, remote, cfg.device, hlc))
        changes.append((gid, hlc))
    if clocks:
        door.team_edit_clocks(clocks)
        door.team_cursor(space.team, hlc=last)
    return changes, last


def pin_op(changed: bool, layer: str) -> str | None:
    """The op that tells the hub this machine's pin state once it changed here: ``pinned`` or ``unpinned`` as
    the memory is now. A pin taken back before it was sent is an ``unpinned`` too: a teammate may have pinned
    the memory meanwhile, and this later change must win over theirs (the hub orders them by clock)."""
    if not changed:
        return None
    return "pinned" if layer == "rule" else "unpinned"


def change_clock(seen: str, device: str, changed_at: float | None, last: str) -> str:
    """The clock of a change made here: past every clock this machine had seen when it was made (``seen``),
    at the time it was made, so last-writer-wins orders changes by when they were made, not by when they
    were sent. A change flagged before migration 0038 recorded no time: it is clocked now, past ``last``."""
    if changed_at is None:
        return clock.tick(last, device, time.time())
    return clock.tick(seen, device, float(changed_at))


def digest(title: str, text: str | None) -> str:
    """The content hash an edit carries (the hub keeps it; nothing reads the text back from it)."""
    import hashlib

    return hashlib.sha256(f"{title}\0{text or ''}".encode()).hexdigest()[:32]


def bounded(text: str | None, limit: int) -> str:
    """Hub text as captured text is treated: private blocks stripped, secrets redacted, hidden characters
    dropped, fence and system tags made inert, and no escape sequence left to drive a terminal that prints it;
    then cut to ``limit``."""
    from kenning.context.fence import neutralise
    from kenning.privacy.ingress import Cleaner
    from kenning.privacy.redact import Redactor

    out = neutralise(Cleaner(Redactor()).text((text or "")[: limit * 2]))
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _name(value: object) -> str:
    s = "".join(c for c in str(value or "") if c.isalnum() or c in "._-@")[:40]
    return s or "unknown"


def pull(conn: sqlite3.Connection, hubconn: Any, cfg: TeamConfig, db_path: str, report: Report,
         space: Space | None = None) -> None:
    space = space or Space(cfg.team)
    door = MemoryService(conn, "team")
    rev = tm.cursor(conn, space.team)[0]

    def ours(project: object) -> bool:
        return project == MINE if space.mine else project in cfg.projects
    while True:
        rows = hub.pull(hubconn, space.team, rev)
        if not rows:
            return
        gone: list[str] = []
        hlc = tm.cursor(conn, space.team)[1]
        with door.batch():  # one commit per batch, not two per row
            for r in rows:
                gid = str(r["gid"])
                if r["forgotten"]:
                    gone.append(gid)  # forgetting erases the file's free pages: outside the batch
                elif r["superseded_by"]:
                    report.superseded += int(door.hub_superseded(gid, str(r["superseded_by"])))
                elif gid.startswith(cfg.device + ":") and str(r["hlc"] or "").endswith("." + cfg.device):
                    # One of ours, as we last wrote it, back with its review state and the pin state the hub
                    # resolved (a teammate may have pinned or unpinned it).
                    door.team_reviewed(gid, str(r["review"]), _name(r["reviewer"]) if r["reviewer"] else "",
                                       float(r["reviewed_at"]) if r["reviewed_at"] else None)
                    report.pulled += int(door.hub_layer(gid, "rule" if r["layer"] == "rule" else "key"))
                elif r["review"] == "approved" and tm.linked(conn, gid) is not None:
                    # Here already: a teammate's approved edit or pin of it (ours included, and a reviewer's
                    # edit at approval: then the review of ours is learnt too) is followed.
                    report.pulled += int(door.hub_changed(
                        gid, bounded(r["title"], hub.MAX_TITLE) or bounded(r["body"], 80),
                        bounded(r["body"], hub.MAX_TEXT), "rule" if r["layer"] == "rule" else "key",
                        hlc=str(r["hlc"] or "")))
                    door.team_reviewed(gid, "approved", _name(r["reviewer"]) if r["reviewer"] else "",
                                       float(r["reviewed_at"]) if r["reviewed_at"] else None)
                elif r["review"] == "approved" and ours(r["project"]) and (r["title"] or r["body"]):
                    got = door.from_hub(tm.Pulled(
                        gid=gid, team=space.team, remote=str(r["project"]),
                        layer="rule" if r["layer"] == "rule" else "key",
                        type=_name(r["type"]) if r["type"] else "discovery",
                        title=bounded(r["title"], hub.MAX_TITLE) or bounded(r["body"], 80),
                        text=bounded(r["body"], hub.MAX_TEXT), author=_name(r["author"]),
                        reviewer=_name(r["reviewer"]), reviewed_at=float(r["reviewed_at"] or 0),
                        created_at=float(r["created_at"] or time.time()), scope="user" if space.mine else "project"))
                    report.pulled += int(got is not None)
                if r["hlc"]:
                    hlc = clock.observe(hlc, str(r["hlc"]))
            door.team_cursor(space.team, hlc=hlc)
        for gid in gone:
            report.forgotten += int(door.hub_forgotten(db_path, gid, space.team))
        rev = int(rows[-1]["rev"])
        door.team_cursor(space.team, rev=rev)
        if len(rows) < hub.PULL_BATCH:
            return


def once(paths: Paths, conn: sqlite3.Connection, *, do_push: bool = True, do_pull: bool = True,
         team: str | None = None) -> Report:
    """Push then pull with one membership (``team``; without it, the only one); raises TeamError when this
    machine is in no team, or in several and ``team`` names none, or the hub cannot be reached (nothing is lost:
    what was not acknowledged is sent again next time)."""
    cfg = load_config(paths, team)
    if cfg is None:
        raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` in a repository")
    return round_for(paths, conn, cfg, do_push=do_push, do_pull=do_pull)


def round_for(paths: Paths, conn: sqlite3.Connection, cfg: TeamConfig, *, do_push: bool = True,
              do_pull: bool = True) -> Report:
    """One membership's round on its own hub, with its own credential: its spaces (the team, and the user's own
    space when this membership has it) and nothing of another membership's."""
    report = Report()
    hubconn = hub.connect(cfg.dsn, password(paths, cfg.team))
    try:
        report.granted = hub.restriction(hubconn, cfg.team, sorted(cfg.projects))
        for space in spaces(cfg):
            while do_push and push(conn, hubconn, cfg, report, space) >= PUSH_BATCH:
                pass  # batch after batch, each acknowledged on its own, until what waits is sent
            if do_pull:
                pull(conn, hubconn, cfg, paths.db, report, space)
    finally:
        hubconn.close()
    return report


def every(paths: Paths, conn: sqlite3.Connection, *, do_push: bool = True, do_pull: bool = True,
          team: str | None = None) -> dict[str, Report | TeamError]:
    """A round with each membership (or ``team`` only), one after the other: a hub that cannot be reached is
    that team's error and the others go on."""
    teams = [c for c in load_all(paths) if team is None or c.team == team]
    if not teams:
        load_config(paths, team)  # says why: no team, or not this one
        raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` in a repository")
    out: dict[str, Report | TeamError] = {}
    for cfg in teams:
        try:
            out[cfg.team] = round_for(paths, conn, cfg, do_push=do_push, do_pull=do_pull)
        except TeamError as e:
            out[cfg.team] = e
        except Exception as e:  # a driver error mid-round (the hub died): this team's, retried next time
            out[cfg.team] = TeamError(f"{type(e).__name__}: {str(e).strip()[:300]}")
    return out
