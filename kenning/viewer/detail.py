"""One observation in full, a session's story, and the corrections a user makes from the viewer."""

from __future__ import annotations

import sqlite3
from typing import Any

from kenning.memory.judged import judged
from kenning.store import edits, repo
from kenning.store.decisions import is_archived
from kenning.viewer import editing
from kenning.viewer.items import hydrate, json_list
from kenning.viewer.team import share_of

RELATED_LIMIT = 20


NotFound = edits.NotFound  # no such observation or session (the routes answer 404)


def _session(conn: sqlite3.Connection, sid: int) -> dict[str, Any] | None:
    r = conn.execute("SELECT id, agent_session_id, platform, project, project_root, cwd, started_at, ended_at, "
                     "end_reason, status, prompt_count FROM sessions WHERE id = ?", (sid,)).fetchone()
    return dict(r) if r else None


def observation(conn: sqlite3.Connection, oid: int, archive_before: float = 0.0) -> dict[str, Any]:
    obs = repo.get_observation(conn, oid)
    if obs is None:
        raise NotFound(f"no observation {oid}")
    obs["archived"] = is_archived(obs.get("layer"), obs.get("status"), float(obs["created_at"]), archive_before)
    obs["pinned"] = obs.get("user_layer") == "rule"
    obs["tokens"] = tokens(conn, oid)
    obs["share"] = share_of(conn, oid, obs.get("scope"))
    prompt = None
    if obs.get("prompt_number") is not None:
        r = conn.execute("SELECT prompt_number, prompt_text, created_at FROM user_prompts "
                         "WHERE session_id = ? AND prompt_number = ?",
                         (obs["session_id"], obs["prompt_number"])).fetchone()
        if r is not None and r[1] not in ("", "[forgotten]"):
            prompt = {"number": r[0], "text": r[1], "at": r[2]}
    return {"observation": obs, "session": _session(conn, obs["session_id"]), "prompt": prompt,
            "related": related(conn, oid, obs["project"], archive_before=archive_before),
            "memory": lineage(conn, obs, archive_before)}


def lineage(conn: sqlite3.Connection, obs: dict[str, Any], archive_before: float = 0.0) -> dict[str, Any]:
    """What replaced this memory and what it replaced (with the subjects they share: the cue the
    offline rule matched them on), its group, and its layer as derived and as decided."""
    oid = int(obs["id"])
    by = None
    if obs.get("superseded_by"):
        found = hydrate(conn, [("observation", int(obs["superseded_by"]))], archive_before)
        if found:
            by = {**found[0], "shared": shared_subjects(conn, oid, int(obs["superseded_by"]))}
    replaced_ids = [int(r[0]) for r in conn.execute(
        "SELECT id FROM observations WHERE superseded_by = ? AND duplicate_of IS NOT ? "
        "ORDER BY superseded_at DESC, id DESC LIMIT ?", (oid, oid, RELATED_LIMIT))]
    replaced = hydrate(conn, [("observation", i) for i in replaced_ids], archive_before)
    for it in replaced:
        it["shared"] = shared_subjects(conn, int(it["id"]), oid)
    head = obs.get("duplicate_of")
    group = int(head) if head else oid
    members = int(conn.execute("SELECT COUNT(*) FROM observations WHERE id = ? OR duplicate_of = ?",
                               (group, group)).fetchone()[0])
    return {"layer": obs.get("layer") or "log", "decided": obs.get("user_layer"),
            "decided_at": obs.get("user_layer_at"), "archived": obs["archived"], "judged": judged(obs),
            "superseded_by": by, "superseded_at": obs.get("superseded_at"), "replaced": replaced,
            "head": group, "occurrences": members}


def shared_subjects(conn: sqlite3.Connection, a: int, b: int) -> list[str]:
    """The subjects (cmd:pnpm, file:src/gen/, work:billing) two memories are both about."""
    return [str(r[0]) for r in conn.execute(
        "SELECT x.subject FROM observation_subjects x JOIN observation_subjects y "
        "ON y.subject = x.subject AND y.project = x.project AND y.observation_id = ? "
        "WHERE x.observation_id = ? ORDER BY x.subject LIMIT 8", (b, a))]


def tokens(conn: sqlite3.Connection, oid: int) -> int:
    """The same measure as the feed's (stored text, facts as their JSON): one number per record."""
    r = conn.execute("SELECT (LENGTH(title) + LENGTH(subtitle) + LENGTH(narrative) + LENGTH(facts) + 3) / 4 "
                     "FROM observations WHERE id = ?", (oid,)).fetchone()
    return int(r[0]) if r else 0


def related(conn: sqlite3.Connection, oid: int, project: str, limit: int = RELATED_LIMIT, *,
            archive_before: float = 0.0) -> list[dict[str, Any]]:
    """Other observations on the files this one touched, newest first, each with the shared file."""
    rows = conn.execute(
        "SELECT other.observation_id, MIN(other.path) FROM observation_files mine "
        "JOIN observation_files other ON other.path = mine.path AND other.project = mine.project "
        "WHERE mine.observation_id = ? AND mine.project = ? AND other.observation_id != ? "
        "GROUP BY other.observation_id ORDER BY MAX(other.created_at) DESC, other.observation_id DESC LIMIT ?",
        (oid, project, oid, limit)).fetchall()
    items = hydrate(conn, [("observation", r[0]) for r in rows], archive_before)
    via = {r[0]: r[1] for r in rows}
    for it in items:
        it["via"] = via.get(it["id"], "")
    return items


def session(conn: sqlite3.Connection, sid: int, archive_before: float = 0.0) -> dict[str, Any]:
    """A session as it happened: each prompt with the observations of its turn, then the summary."""
    s = _session(conn, sid)
    if s is None:
        raise NotFound(f"no session {sid}")
    turns: dict[int, dict[str, Any]] = {}
    for r in conn.execute("SELECT prompt_number, prompt_text, created_at FROM user_prompts WHERE session_id = ? "
                          "ORDER BY prompt_number", (sid,)):
        private = r[1] in ("", "[forgotten]")
        turns[r[0]] = {"number": r[0], "prompt": "" if private else r[1], "private": private, "at": r[2],
                       "observations": []}
    obs = conn.execute("SELECT id, COALESCE(prompt_number, 0) FROM observations WHERE session_id = ? "
                       "ORDER BY created_at, id", (sid,)).fetchall()
    found = hydrate(conn, [("observation", r[0]) for r in obs], archive_before)
    for item, (_oid, number) in zip(found, obs, strict=False):
        turn = turns.setdefault(number, {"number": number, "prompt": "", "private": False, "at": item["at"],
                                         "observations": []})
        turn["observations"].append(item)
    summary = None
    r = conn.execute("SELECT id, request, investigated, learned, completed, next_steps, notes, files_read, "
                     "files_modified, created_at, observer FROM session_summaries WHERE session_id = ?",
                     (sid,)).fetchone()
    if r is not None:
        summary = dict(r)
        summary["at"] = summary.pop("created_at")
        for k in ("files_read", "files_modified"):
            summary[k] = json_list(summary[k])
    return {"session": s, "turns": [turns[k] for k in sorted(turns)], "summary": summary}


def check_edit(body: Any, types: list[str]) -> dict[str, Any]:
    """The validated changes of a PATCH body (kenning/viewer/editing.py)."""
    return editing.check(body, types)


def edit(conn: sqlite3.Connection, oid: int, changes: dict[str, Any]) -> dict[str, Any]:
    """Apply checked changes through the memory service, in one transaction; the memory as it is now."""
    from kenning.memory_service import MemoryService

    MemoryService(conn, "viewer").edit(oid, changes)
    obs = repo.get_observation(conn, oid)
    assert obs is not None
    obs["tokens"] = tokens(conn, oid)
    return obs
