"""The one door for every change to memory.

Capture, the observer's outcome, a memory saved by hand, import, forget, pin, supersede and the
viewer's edits all pass here, whichever surface asks (the worker's pipeline, the history importer,
the CLI, the HTTP routes and viewer, the MCP tools). Each change runs in one transaction with its row
in the operation log (:mod:`kenning.store.oplog`), so the log names every change and the surface it
came through. The surfaces stay thin callers; the store (``kenning.store``) knows nothing of them.
``tests/unit/test_one_door.py`` fails when a module outside this one and the store writes memory.

Scope is checked by the store functions called here (a pin or supersede names its project; a
supersede stays within one project; the agent cannot replace a standing rule) and, for the MCP
tools, by their project setting before they call in.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kenning.memory import order
from kenning.observer.base import ObservationDraft, Outcome
from kenning.store import (
    checkouts,
    decisions,
    edits,
    injections,
    manual,
    memory_index,
    oplog,
    projects,
    repo,
    supersede,
    transfer,
)
from kenning.store import evidence as evidence_store
from kenning.store import forget as fg
from kenning.store import team as tm

Surface = str  # one of kenning.store.oplog.SURFACES


class MemoryService:
    """Changes to the memory in ``conn``'s database, on behalf of ``surface``."""

    def __init__(self, conn: sqlite3.Connection, surface: Surface) -> None:
        if surface not in oplog.SURFACES:
            raise ValueError(f"unknown surface {surface!r}")
        self.conn = conn
        self.surface = surface

    def _log(self, op: str, ids: Iterable[int] = (), project: str = "") -> None:
        oplog.record(self.conn, surface=self.surface, op=op, ids=ids, project=project)

    def _project_of(self, oid: int) -> str:
        row = self.conn.execute("SELECT project FROM observations WHERE id = ?", (oid,)).fetchone()
        return str(row[0]) if row else ""

    # ------------------------------------------------------------------ capture and the observer

    def capture(self, rec: dict[str, Any]) -> bool:
        """Session / prompt / event rows for one spool record (a captured or imported event); False when
        its event is stored already. Call inside a transaction (the caller batches records)."""
        return _capture(self.conn, rec)

    def evidence(self, checkout: str, items: Iterable[tuple[str, str]]) -> None:
        """What an imported session showed about its repository (remote, commits): for joining checkouts."""
        checkouts.add_evidence(self.conn, checkout, items)

    def join_checkouts(self) -> None:
        """File checkouts of one repository under one project (after an import)."""
        with repo.transaction(self.conn):
            joined = checkouts.join_checkouts(self.conn, time.time())
            for j in joined:
                self._log("joined", project=j.into)

    def prune(self, now: float, *, payloads_before: float, events_before: float) -> None:
        """The ledgers' retention: captured payloads, handled events, the operation log, the injection ledger."""
        with repo.transaction(self.conn):
            repo.prune_payloads(self.conn, payloads_before)
            repo.prune_events(self.conn, events_before)
            oplog.prune(self.conn, now - oplog.RETENTION_S)
            injections.prune(self.conn, now - injections.RETENTION_S)

    def reindex(self) -> dict[str, int]:
        """Rebuild every memory's layer, subject and near-duplicate group (``kenning reindex``)."""
        with repo.transaction(self.conn):
            out = memory_index.rebuild(self.conn)
            self._log("reindexed")
        return out

    def observed(self, session_id: int, project: str, outcome: Outcome, producer: str) -> list[int]:
        """What an observer made of a session's events (inside the caller's transaction)."""
        ids = repo.store_outcome(self.conn, session_id, project, outcome, producer)
        if ids or outcome.summary is not None:
            self._log("observed", ids, project)
        return ids

    def evidence_checked(self, project: str, checked: Iterable[int], gone: dict[int, list[str]],
                         now: float | None = None, *, counts: dict[int, int] | None = None,
                         since: float | None = None) -> None:
        """What one session start's evidence check found (kenning/context/evidence_marks.py): the memories
        whose cited files, identifiers or commands are gone, counted for review (``counts``: sessions each
        was found gone in, when several are recorded at once; ``since``: the first). Not a change to a memory
        (nothing it says changes), so not in the operation log."""
        with repo.transaction(self.conn):
            evidence_store.record(self.conn, project, checked, gone, time.time() if now is None else now, counts,
                                  since)

    # ------------------------------------------------------------------ by hand

    def save(self, draft: ObservationDraft, *, project: str, project_root: str = "", cwd: str = "",
             name: str = "") -> manual.Saved:
        with repo.transaction(self.conn):
            saved = manual.save(self.conn, draft, project=project, project_root=project_root, cwd=cwd, name=name)
            if saved.created:
                self._log("saved", [saved.id], self._project_of(saved.id))
        return saved

    def edit(self, oid: int, changes: dict[str, Any]) -> None:
        """The viewer's edit of any field of a memory (kenning/viewer/editing.py checked the values)."""
        with repo.transaction(self.conn):
            if edits.apply(self.conn, oid, changes):
                self._log("edited", [oid], self._project_of(oid))

    def supersede(self, old_ids: Sequence[int], new_id: int, *, agent: bool = False) -> supersede.Result:
        with repo.transaction(self.conn):
            # A teammate's memory (pulled from the hub) replaced by one of this project: an edge the sync
            # pushes; the rest follow the ordinary rules (one project, the agent leaves rules alone).
            team_done, rest = ([], list(old_ids)) if agent else tm.team_superseded(
                self.conn, list(old_ids), new_id, time.time())
            res = supersede.by_hand(self.conn, rest, new_id, agent=agent) if rest or not team_done \
                else supersede.Result(by=new_id)
            res.superseded = [*team_done, *res.superseded]
            if res.superseded:
                self._log("superseded", [*res.superseded, new_id], self._project_of(new_id))
        return res

    def restore(self, ids: Sequence[int]) -> list[int]:
        with repo.transaction(self.conn):
            done = supersede.restore(self.conn, ids)
            if done:
                self._log("restored", done, self._project_of(done[0]))
        return done

    def pin(self, oid: int, *, project: str | None = None) -> dict[str, Any]:
        return self._decide("pinned", decisions.pin, oid, project=project)

    def confirm(self, oid: int, *, project: str | None = None) -> dict[str, Any]:
        """A standing rule the user confirmed (``kenning review``)."""
        return self._decide("confirmed", decisions.confirm, oid, project=project)

    def put_back(self, oid: int, *, layer: str, user_layer: str | None, project: str | None = None) -> dict[str, Any]:
        """Undo a pin or unpin (the viewer's bulk actions): the layer and decision it had before."""
        return self._decide("undone", decisions.put_back, oid, layer=layer, user_layer=user_layer, project=project)

    def unpin(self, oid: int, *, project: str | None = None) -> dict[str, Any]:
        return self._decide("unpinned", decisions.unpin, oid, project=project)

    def unarchive(self, oid: int, *, archive_after_days: int, project: str | None = None) -> dict[str, Any]:
        return self._decide("unarchived", decisions.unarchive, oid, project=project,
                            archive_after_days=archive_after_days)

    def _decide(self, op: str, fn: Callable[..., dict[str, Any]], oid: int, **kw: Any) -> dict[str, Any]:
        with repo.transaction(self.conn):
            out = fn(self.conn, oid, **kw)
            self._log(op, [oid], self._project_of(oid))
        return out

    # ------------------------------------------------------------------ import and forget

    def import_records(self, records: Iterable[tuple[int, dict[str, Any]]],
                       clean: Callable[[str], str] | None = None) -> dict[str, int]:
        with repo.transaction(self.conn):
            before = _high_water(self.conn)
            added = transfer.import_records(self.conn, records, clean)
            new = [int(r[0]) for r in self.conn.execute("SELECT id FROM observations WHERE id > ?", (before,))]
            if any(added.get(k) for k in ("sessions", "prompts", "observations", "summaries")):
                self._log("imported", new)
        return added

    def forget(self, db_path: str, filters: fg.Filters, *, dry_run: bool) -> dict[str, Any]:
        """Select, and unless ``dry_run`` delete and reclaim (HTTP, MCP)."""
        return fg.forget(self.conn, db_path, filters, dry_run=dry_run, log=self._forgotten)

    def forget_selected(self, sel: fg.Selection) -> dict[str, int]:
        """Delete exactly what ``sel`` names (the CLI shows the selection first; the viewer deletes one)."""
        return fg.apply(self.conn, sel, self._forgotten)

    def _forgotten(self, conn: sqlite3.Connection, sel: fg.Selection) -> None:
        # Ids only: the log must keep no word of what was forgotten.
        oplog.record(conn, surface=self.surface, op="forgotten", ids=[i.id for i in sel.observations])
        injections.forget(conn, [i.id for i in sel.observations])  # what it was given and used for goes too


    # ------------------------------------------------------------------ the team hub (kenning/team)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around several operations of the service (a pulled batch): each keeps its own
        savepoint and log row; the commit, the costly part of a small write, is paid once."""
        with repo.transaction(self.conn):
            yield

    def from_hub(self, m: tm.Pulled) -> int | None:
        """One approved memory pulled from the team hub (its text already neutralised and bounded by
        kenning/team/sync.py); None when it is here already or was forgotten here."""
        with repo.transaction(self.conn):
            oid = tm.insert_pulled(self.conn, m, time.time())
            if oid is not None:
                self._log("pulled", [oid], tm.project_key(m.remote))
        return oid

    def hub_forgotten(self, db_path: str, gid: str, team: str) -> bool:
        """A tombstone from the hub: the memory goes through the forget path (text erased from the file)
        and its gid is never taken back. True when a local row went."""
        with repo.transaction(self.conn):
            tm.tombstone(self.conn, gid, team, pushed=True)
        oid = tm.linked(self.conn, gid)
        if oid is None:
            return False
        self.forget(db_path, fg.Filters(ids=(oid,)), dry_run=False)
        return True

    def hub_superseded(self, gid: str, by_gid: str) -> bool:
        """An edge from the hub: ``gid`` is replaced by ``by_gid`` (never overwritten)."""
        oid = tm.linked(self.conn, gid)
        if oid is None:
            return False
        with repo.transaction(self.conn):
            tm.mark_edge(self.conn, gid, by_gid)  # known to the hub: not sent back
            done = tm.supersede_pulled(self.conn, oid, tm.linked(self.conn, by_gid), time.time())
            if done:
                self._log("superseded", [oid], self._project_of(oid))
        return done

    def team_links(self, links: Sequence[tuple[int, str, str, str, str]]) -> None:
        """Global ids for local memories about to be shared: (observation id, gid, team, clock, author)."""
        with repo.transaction(self.conn):
            for oid, gid, team, hlc, author in links:
                tm.link_local(self.conn, oid, gid, team, hlc, author)

    def team_pushed(self, created: Sequence[str] = (), edges: Sequence[tuple[str, str]] = (),
                    tombstones: Sequence[str] = (), changes: Sequence[tuple[str, str]] = ()) -> None:
        """What the hub acknowledged (``changes``: the (gid, clock) of edits and pins sent)."""
        with repo.transaction(self.conn):
            tm.mark_pushed(self.conn, list(created))
            for gid, by in edges:
                tm.mark_edge(self.conn, gid, by)
            tm.mark_tombstones_pushed(self.conn, list(tombstones))
            tm.mark_changes_pushed(self.conn, list(changes))
            if created or edges or tombstones or changes:
                self._log("pushed")

    def team_edit_clocks(self, clocks: Sequence[tuple[str, str]]) -> None:
        """The clocks of edits and pins about to be sent, fixed before the first try: a retry is the same op."""
        with repo.transaction(self.conn):
            for gid, hlc in clocks:
                tm.set_edit_clock(self.conn, gid, hlc)

    def hub_changed(self, gid: str, title: str, text: str, layer: str, *, hlc: str = "") -> bool:
        """A teammate's edit, pin or unpin of a shared memory, approved on the hub (``hlc``: its clock there):
        this machine's copy follows."""
        oid = tm.linked(self.conn, gid)
        if oid is None:
            return False
        with repo.transaction(self.conn):
            done = tm.apply_hub_change(self.conn, oid, title, text, layer, time.time(), hub_hlc=hlc)
            if done:
                self._log("edited", [oid], self._project_of(oid))
        return done

    def hub_layer(self, gid: str, layer: str) -> bool:
        """The pin state the hub resolved for a memory this machine shared (a teammate pinned or unpinned it)."""
        oid = tm.linked(self.conn, gid)
        if oid is None:
            return False
        with repo.transaction(self.conn):
            done = tm.apply_hub_layer(self.conn, oid, layer, time.time())
            if done:
                self._log("pinned" if layer == "rule" else "unpinned", [oid], self._project_of(oid))
        return done

    def team_reviewed(self, gid: str, review: str, reviewer: str, reviewed_at: float | None) -> bool:
        """The hub's review of a memory this machine shared (pending, approved, rejected: the viewer shows it)."""
        with repo.transaction(self.conn):
            done = tm.set_review(self.conn, gid, review, reviewer, reviewed_at)
            oid = tm.linked(self.conn, gid) if done else None
            if oid is not None:
                self._log("reviewed", [oid], self._project_of(oid))
        return done

    def team_cursor(self, team: str, *, rev: int | None = None, hlc: str | None = None) -> None:
        with repo.transaction(self.conn):
            tm.set_cursor(self.conn, team, rev=rev, hlc=hlc)

    def team_joined(self, team: str, key: str, *, name: str, root: str, remote: str) -> str:
        """A project shared with ``team`` from this checkout: registered with its remote (so its session start
        finds the team's memories before any session ran here) and pulled from the start. Returns its key."""
        with repo.transaction(self.conn):
            key = projects.attach(self.conn, key, name=name, root=root, at=time.time(), remote=remote)
            tm.forget_team(self.conn, team)
            self._log("team-joined", project=key)
        return key

    def team_left(self, team: str) -> None:
        with repo.transaction(self.conn):
            tm.forget_team(self.conn, team)
            self._log("left")


def _high_water(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM observations").fetchone()[0])


def _capture(conn: sqlite3.Connection, rec: dict[str, Any]) -> bool:
    p: dict[str, Any] = rec["payload"]
    event: str = rec["event"]
    arrived = time.time()
    # A time from the future (a fast clock, a transcript dated ahead) is not believed: the event is
    # stored at its arrival and the claim kept, so it can neither outrank what comes after it nor
    # leave its turn open until that date (kenning/memory/order.py).
    at, claimed = order.clamp(float(rec.get("at") or arrived), arrived)
    sid = repo.upsert_session(
        conn, platform=str(rec.get("agent") or "claude-code"), agent_session_id=p["session_id"],
        project=projects.key_for_record(rec), project_root=str(rec.get("project_root") or ""),
        cwd=str(p.get("cwd") or ""), at=at, name=str(rec.get("project") or ""),
        remote=rec["project_remote"] if isinstance(rec.get("project_remote"), str) else None)
    tool_use_id = p.get("tool_use_id")
    key = f"{event}:{tool_use_id}" if isinstance(tool_use_id, str) and tool_use_id else str(rec["id"])
    if repo.event_exists(conn, sid, key):
        return False
    status = "pending"
    if event == "UserPromptSubmit":
        number = repo.next_prompt_number(conn, sid)
        raw_prompt = p.get("prompt")
        prompt = raw_prompt if isinstance(raw_prompt, str) else ""
        # The hook sends "" for a prompt that was entirely <private>: its turn stays private.
        repo.add_prompt(conn, sid, number, "" if rec.get("private") else prompt, at)
        if rec.get("private"):
            status = "skipped"
    else:
        number = repo.current_prompt_number(conn, sid)
        # Everything of a private turn, its Stop too (the last answer would reach the summary).
        if event in ("PostToolUse", "PostToolUseFailure", "Stop") and repo.prompt_is_private(
                conn, sid, number):
            status = "skipped"
    if event == "SessionEnd":
        repo.end_session(conn, sid, at, str(p.get("reason") or ""))
    agent_id = p.get("agent_id") if isinstance(p.get("agent_id"), str) else None
    agent_type = p.get("agent_type") if isinstance(p.get("agent_type"), str) else None
    tool = p.get("tool_name") if isinstance(p.get("tool_name"), str) else None
    return repo.insert_event(
        conn, session_id=sid, event_key=key, kind=event, tool_name=tool, prompt_number=number,
        agent_id=agent_id, agent_type=agent_type, occurred_at=at, claimed_at=claimed,
        # A private turn's events keep their key (idempotent ingest) but not their content.
        payload=json.dumps(p, ensure_ascii=False) if status == "pending" else "{}", status=status)
