"""Export memory as JSON Lines and import it back, idempotently.

One record per line, ``{"kind": "session" | "prompt" | "observation" | "summary", ...}``.
Sessions are keyed by (platform, agent session id); the other records name their session
that way, so an export can be imported into any database. Importing the same file twice
changes nothing the second time (prompts by number, observations by content hash,
summaries by session).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import Any

from engram.observer.base import ObservationDraft, SummaryDraft
from engram.store import repo

FORMAT_VERSION = 1
OBS_FIELDS = ("type", "title", "subtitle", "facts", "narrative", "concepts", "files_read", "files_modified",
              "prompt_number", "tokens_spent", "source_tokens", "created_at", "agent_id", "agent_type",
              "observer", "status")
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes", "files_read",
                  "files_modified", "prompt_number", "tokens_spent", "source_tokens", "created_at", "observer")


def export(conn: sqlite3.Connection, *, project: str | None = None, since: float | None = None,
           until: float | None = None, include_sensitive: bool = False) -> Iterator[dict[str, Any]]:
    """Yield export records (sessions first, then their prompts, observations, summaries)."""
    clauses: list[str] = ["1"]
    params: list[object] = []
    if project:
        clauses.append("project = ?")
        params.append(project)
    if since is not None:
        clauses.append("started_at >= ?")
        params.append(since)
    if until is not None:
        clauses.append("started_at < ?")
        params.append(until)
    yield {"kind": "header", "format": FORMAT_VERSION, "exported_at": time.time()}
    sessions = conn.execute(f"SELECT * FROM sessions WHERE {' AND '.join(clauses)} ORDER BY id", params).fetchall()
    for s in sessions:
        key = {"platform": s["platform"], "agent_session_id": s["agent_session_id"]}
        yield {"kind": "session", **key, "project": s["project"], "project_root": s["project_root"],
               "cwd": s["cwd"], "started_at": s["started_at"], "ended_at": s["ended_at"],
               "end_reason": s["end_reason"], "status": s["status"]}
        for p in conn.execute("SELECT * FROM user_prompts WHERE session_id = ? ORDER BY prompt_number", (s["id"],)):
            yield {"kind": "prompt", "session": key, "prompt_number": p["prompt_number"],
                   "prompt_text": p["prompt_text"], "created_at": p["created_at"]}
        for o in conn.execute("SELECT * FROM observations WHERE session_id = ? ORDER BY id", (s["id"],)):
            if o["type"] == "sensitive" and not include_sensitive:
                continue
            rec = {"kind": "observation", "session": key}
            for f in OBS_FIELDS:
                rec[f] = json.loads(o[f]) if f in repo.JSON_LIST_FIELDS else o[f]
            yield rec
        for m in conn.execute("SELECT * FROM session_summaries WHERE session_id = ?", (s["id"],)):
            rec = {"kind": "summary", "session": key}
            for f in SUMMARY_FIELDS:
                rec[f] = json.loads(m[f]) if f in ("files_read", "files_modified") else m[f]
            yield rec


def import_records(conn: sqlite3.Connection, records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Insert what is not there yet; returns counts of what was added. Raises ValueError on bad input."""
    added = {"sessions": 0, "prompts": 0, "observations": 0, "summaries": 0, "skipped": 0}
    sessions: dict[tuple[str, str], int] = {}

    def session_id(key: Any, line: int) -> int:
        if not isinstance(key, dict):
            raise ValueError(f"record {line}: missing session key")
        k = (str(key.get("platform") or "claude-code"), str(key.get("agent_session_id") or ""))
        if not k[1]:
            raise ValueError(f"record {line}: session key without agent_session_id")
        if k not in sessions:
            row = conn.execute("SELECT id FROM sessions WHERE platform = ? AND agent_session_id = ?", k).fetchone()
            if row is None:
                raise ValueError(f"record {line}: its session is not in the file before it")
            sessions[k] = int(row[0])
        return sessions[k]

    with repo.transaction(conn):
        for line, rec in enumerate(records, 1):
            if not isinstance(rec, dict):
                raise ValueError(f"record {line}: not an object")
            kind = rec.get("kind")
            if kind == "header":
                if rec.get("format") != FORMAT_VERSION:
                    raise ValueError(f"unsupported export format {rec.get('format')!r}")
            elif kind == "session":
                k = (str(rec.get("platform") or "claude-code"), str(rec.get("agent_session_id") or ""))
                if not k[1] or not isinstance(rec.get("project"), str):
                    raise ValueError(f"record {line}: session needs agent_session_id and project")
                exists = conn.execute("SELECT id FROM sessions WHERE platform = ? AND agent_session_id = ?",
                                      k).fetchone()
                sid = repo.upsert_session(conn, platform=k[0], agent_session_id=k[1], project=rec["project"],
                                          project_root=str(rec.get("project_root") or ""),
                                          cwd=str(rec.get("cwd") or ""), at=float(rec.get("started_at") or 0))
                if not exists:
                    added["sessions"] += 1
                    conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ?, status = ? WHERE id = ?",
                                 (rec.get("ended_at"), rec.get("end_reason"),
                                  rec.get("status") if rec.get("status") in ("active", "completed", "abandoned")
                                  else "completed", sid))
                sessions[k] = sid
            elif kind == "prompt":
                sid = session_id(rec.get("session"), line)
                n = int(rec.get("prompt_number") or 0)
                cur = conn.execute(
                    "INSERT OR IGNORE INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (sid, n, str(rec.get("prompt_text") or ""), float(rec.get("created_at") or 0)))
                added["prompts" if cur.rowcount else "skipped"] += 1
                conn.execute("UPDATE sessions SET prompt_count = MAX(prompt_count, ?) WHERE id = ?", (n, sid))
            elif kind == "observation":
                sid = session_id(rec.get("session"), line)
                project = conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
                d = ObservationDraft(
                    type=str(rec.get("type") or "discovery"), title=str(rec.get("title") or ""),
                    created_at=float(rec.get("created_at") or 0), subtitle=str(rec.get("subtitle") or ""),
                    facts=_strs(rec.get("facts")), narrative=str(rec.get("narrative") or ""),
                    concepts=_strs(rec.get("concepts")), files_read=_strs(rec.get("files_read")),
                    files_modified=_strs(rec.get("files_modified")), prompt_number=rec.get("prompt_number"),
                    tokens_spent=int(rec.get("tokens_spent") or 0), source_tokens=int(rec.get("source_tokens") or 0),
                    agent_id=rec.get("agent_id"), agent_type=rec.get("agent_type"))
                if not d.title:
                    raise ValueError(f"record {line}: observation without a title")
                oid = repo.insert_observation(conn, sid, project, d, str(rec.get("observer") or "import"))
                if oid and rec.get("status") in ("superseded", "retracted"):
                    conn.execute("UPDATE observations SET status = ? WHERE id = ?", (rec["status"], oid))
                added["observations" if oid else "skipped"] += 1
            elif kind == "summary":
                sid = session_id(rec.get("session"), line)
                if conn.execute("SELECT 1 FROM session_summaries WHERE session_id = ?", (sid,)).fetchone():
                    added["skipped"] += 1
                    continue
                project = conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
                s = SummaryDraft(created_at=float(rec.get("created_at") or 0),
                                 **{f: str(rec.get(f) or "") for f in ("request", "investigated", "learned",
                                                                       "completed", "next_steps", "notes")},
                                 files_read=_strs(rec.get("files_read")),
                                 files_modified=_strs(rec.get("files_modified")),
                                 prompt_number=rec.get("prompt_number"), tokens_spent=int(rec.get("tokens_spent") or 0),
                                 source_tokens=int(rec.get("source_tokens") or 0))
                repo.upsert_summary(conn, sid, project, s, str(rec.get("observer") or "import"), time.time())
                added["summaries"] += 1
            else:
                raise ValueError(f"record {line}: unknown kind {kind!r}")
    return added


def _strs(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def read_jsonl(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise ValueError(f"line {n}: not JSON ({e})") from None
        yield rec
