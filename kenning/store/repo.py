"""Repository functions: every SQL statement of the application lives here.

Callers own transactions (``with transaction(conn):``); functions only run statements.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kenning.memory.order import clamp as clamp_future
from kenning.records import Event, ObservationDraft, Outcome, SessionInfo, SummaryDraft
from kenning.store import memory_index, supersede
from kenning.store.projects import attach as attach_project
from kenning.store.projects import names as project_names

JSON_LIST_FIELDS = ("facts", "concepts", "files_read", "files_modified")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any exception. Inside another transaction (the memory
    service wraps a store call and its log row in one) it is a savepoint of that one."""
    if conn.in_transaction:
        conn.execute("SAVEPOINT kenning_nested")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO kenning_nested")
                conn.execute("RELEASE kenning_nested")
            raise
        conn.execute("RELEASE kenning_nested")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Read the schema once under the write lock, before anything is prepared: when another
        # process VACUUMed since this connection last read it (`kenning forget` does), the first
        # statement of the transaction otherwise failed with "no such table: observations" (seen
        # with SQLite 3.40, ~1 in 5 concurrent forgets). Under the lock it cannot change again.
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite already rolled back on some errors (full disk, I/O): keep the cause
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# ------------------------------------------------------------------------------ sessions

def upsert_session(conn: sqlite3.Connection, *, platform: str, agent_session_id: str, project: str,
                   project_root: str, cwd: str, at: float, name: str = "", remote: str | None = None) -> int:
    """The session's id, inserting it when new. ``project`` is the project key (kenning.project);
    a new session is filed under the key the project's aliases resolve it to (see store.projects).
    ``remote``: the checkout's remote when known otherwise than from its git config (an imported
    session's transcript); None reads the config."""
    row = conn.execute("SELECT id FROM sessions WHERE platform = ? AND agent_session_id = ?",
                       (platform, agent_session_id)).fetchone()
    if row:
        return int(row[0])
    key = attach_project(conn, project, name=name, root=project_root, at=at, remote=remote)
    cur = conn.execute(
        "INSERT INTO sessions (platform, agent_session_id, project, project_root, cwd, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?)", (platform, agent_session_id, key, project_root, cwd, at))
    return int(cur.lastrowid or 0)


def next_prompt_number(conn: sqlite3.Connection, session_id: int) -> int:
    conn.execute("UPDATE sessions SET prompt_count = prompt_count + 1, status = 'active', ended_at = NULL "
                 "WHERE id = ?", (session_id,))
    row = conn.execute("SELECT prompt_count FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return int(row[0])


def current_prompt_number(conn: sqlite3.Connection, session_id: int) -> int:
    row = conn.execute("SELECT prompt_count FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return int(row[0]) if row else 0


def next_id(table: str) -> str:
    """An SQL expression for the id of a new row of ``table``: above every id it ever held.

    Deleted ids are remembered in ``id_high_water`` (migration 0028), so forgetting the newest
    memory never hands its number to the next one. One statement: atomic with its INSERT.
    """
    return (f"(SELECT MAX(IFNULL((SELECT MAX(id) FROM {table}), 0), "
            f"IFNULL((SELECT n FROM id_high_water WHERE name = '{table}'), 0)) + 1)")


def insert(conn: sqlite3.Connection, table: str, sql: str, params: Sequence[object]) -> sqlite3.Cursor:
    """Run an INSERT whose id is ``next_id(table)``. A database not yet at migration 0028 (a test's
    old schema, a reader's view of a file another process has not upgraded) has no high-water
    table: its rows take SQLite's own next id, as before."""
    try:
        return conn.execute(sql, params)
    except sqlite3.OperationalError as e:
        if "id_high_water" not in str(e):
            raise
        return conn.execute(sql.replace(next_id(table), "NULL"), params)


def add_prompt(conn: sqlite3.Connection, session_id: int, number: int, text: str, at: float) -> None:
    insert(conn, "user_prompts", "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_number, prompt_text, "
           f"created_at) VALUES ({next_id('user_prompts')}, ?, ?, ?, ?)", (session_id, number, text, at))


def prompt_is_private(conn: sqlite3.Connection, session_id: int, number: int) -> bool:
    """A prompt stored empty was entirely private: its whole turn is private."""
    if number <= 0:
        return False
    row = conn.execute("SELECT prompt_text FROM user_prompts WHERE session_id = ? AND prompt_number = ?",
                       (session_id, number)).fetchone()
    return row is not None and row[0] == ""


def end_session(conn: sqlite3.Connection, session_id: int, at: float, reason: str) -> None:
    conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ?, status = 'completed' WHERE id = ?",
                 (at, reason, session_id))


# -------------------------------------------------------------------------------- events

def insert_event(conn: sqlite3.Connection, *, session_id: int, event_key: str, kind: str,
                 tool_name: str | None, prompt_number: int, agent_id: str | None,
                 agent_type: str | None, occurred_at: float, payload: str, status: str = "pending",
                 claimed_at: float | None = None) -> bool:
    """Store one event; False when it was already stored (a replayed spool file). ``claimed_at``: the
    time it claimed when that was in the future (``occurred_at`` is then its arrival)."""
    cur = conn.execute(
        "INSERT INTO events (session_id, event_key, kind, tool_name, prompt_number, agent_id, agent_type, "
        "occurred_at, payload, size_chars, status, processed_at, claimed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, event_key) DO NOTHING",
        (session_id, event_key, kind, tool_name, prompt_number, agent_id, agent_type, occurred_at, payload,
         len(payload), status, time.time() if status != "pending" else None, claimed_at))
    return cur.rowcount > 0


def event_exists(conn: sqlite3.Connection, session_id: int, event_key: str) -> bool:
    return conn.execute("SELECT 1 FROM events WHERE session_id = ? AND event_key = ?",
                        (session_id, event_key)).fetchone() is not None


def sessions_with_pending(conn: sqlite3.Connection) -> list[int]:
    return [int(r[0]) for r in conn.execute(
        "SELECT DISTINCT session_id FROM events WHERE status = 'pending' ORDER BY session_id")]


def sessions_with_closed_turns(conn: sqlite3.Connection, idle_before: float) -> list[int]:
    """Sessions whose pending events hold something a turn-by-turn observer can act on, decided
    in SQL without decoding a payload: a session start (consumed at once), a Stop or SessionEnd,
    a prompt that follows other pending events (it closes the turn before it), an ended session,
    or a last event older than ``idle_before``. A session with an open turn is left out: its
    events would be decoded every cycle only to wait for the next one.
    """
    return [int(r[0]) for r in conn.execute(
        "SELECT e.session_id FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.status = 'pending' "
        "GROUP BY e.session_id HAVING MAX(s.status = 'completed') "
        "OR MAX(e.kind IN ('SessionStart', 'Stop', 'SessionEnd')) "
        "OR MAX(CASE WHEN e.kind != 'SessionStart' THEN e.occurred_at END) <= ? "
        "OR EXISTS (SELECT 1 FROM events p WHERE p.session_id = e.session_id AND p.status = 'pending' "
        "AND p.kind = 'UserPromptSubmit' AND p.id != (SELECT f.id FROM events f WHERE f.session_id = e.session_id "
        "AND f.status = 'pending' AND f.kind != 'SessionStart' ORDER BY f.occurred_at, f.id LIMIT 1)) "
        "ORDER BY e.session_id", (idle_before,))]


def pending_events(conn: sqlite3.Connection, session_id: int, limit: int = 2000) -> list[Event]:
    out = []
    for r in conn.execute(
            "SELECT id, kind, occurred_at, payload, tool_name, prompt_number, agent_id, agent_type, size_chars "
            "FROM events WHERE session_id = ? AND status = 'pending' ORDER BY occurred_at, id LIMIT ?",
            (session_id, limit)):
        try:
            payload = json.loads(r["payload"] or "{}")
        except ValueError:
            payload = {}
        out.append(Event(id=r["id"], kind=r["kind"], occurred_at=r["occurred_at"],
                         payload=payload if isinstance(payload, dict) else {}, tool_name=r["tool_name"],
                         prompt_number=r["prompt_number"], agent_id=r["agent_id"], agent_type=r["agent_type"],
                         size_chars=r["size_chars"]))
    return out


def pending_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])


def prune_events(conn: sqlite3.Connection, older_than: float) -> int:
    """Forget the ledger rows of long-processed events (their payloads went days before).

    A row only serves to recognise a spool file replayed after a crash, which happens within
    minutes; kept forever, a million events would be a hundred megabytes that say nothing.
    """
    cur = conn.execute("DELETE FROM events WHERE status != 'pending' AND payload IS NULL AND processed_at < ?",
                       (older_than,))
    return cur.rowcount


def prune_payloads(conn: sqlite3.Connection, older_than: float) -> int:
    """Drop the raw payload of long-processed events (the key stays, for idempotent ingest)."""
    cur = conn.execute("UPDATE events SET payload = NULL WHERE status != 'pending' AND payload IS NOT NULL "
                       "AND processed_at < ?", (older_than,))
    return cur.rowcount


# ----------------------------------------------------------------------- observer inputs

def session_info(conn: sqlite3.Connection, session_id: int) -> SessionInfo:
    s = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    prompts = [r[0] for r in conn.execute(
        "SELECT prompt_text FROM user_prompts WHERE session_id = ? ORDER BY prompt_number", (session_id,))]
    prior = [_obs_dict(r) for r in conn.execute(
        "SELECT * FROM observations WHERE session_id = ? ORDER BY created_at, id", (session_id,))]
    summary = conn.execute("SELECT * FROM session_summaries WHERE session_id = ?", (session_id,)).fetchone()
    return SessionInfo(id=session_id, agent_session_id=s["agent_session_id"], project=s["project"],
                       project_root=s["project_root"], prompts=prompts, prior_observations=prior,
                       prior_summary=_summary_dict(summary) if summary else None,
                       ended=s["status"] == "completed", memories=current_memories(conn, s["project"]),
                       forgotten_at=float(s["forgotten_at"] or 0) if "forgotten_at" in list(s.keys()) else 0.0)


def current_memories(conn: sqlite3.Connection, project: str, limit: int = 40) -> list[dict[str, Any]]:
    """The project's active standing rules (newest first) and key memories (most important first)."""
    out: list[dict[str, Any]] = []
    for layer, order in (("rule", "created_at DESC"), ("key", "importance DESC, created_at DESC")):
        out += [dict(r) for r in conn.execute(
            "SELECT id, type, layer, title FROM observations WHERE project = ? AND layer = ? AND status = 'active' "
            f"AND duplicate_of IS NULL ORDER BY {order} LIMIT ?", (project, layer, limit))]
    return out


def store_outcome(conn: sqlite3.Connection, session_id: int, project: str, outcome: Outcome,
                  observer: str, skipped: list[int] | None = None) -> list[int]:
    """Insert observations and the summary, mark events handled. Call inside a transaction."""
    now = time.time()
    # The session's project as it is now: a join (a clone's remote, an import's checkouts) may have
    # re-filed the session since the observer read it, and its memory must follow it.
    row = conn.execute("SELECT project FROM sessions WHERE id = ?", (session_id,)).fetchone()
    project = str(row[0]) if row is not None else project
    ids: list[int] = []
    for d in outcome.observations:
        oid = insert_observation(conn, session_id, project, d, observer, now, group=False)
        if oid:
            ids.append(oid)
            if d.supersedes:
                supersede.named(conn, oid, d.supersedes, at=now)
    # What the new rows make no longer true goes first; then they join their near-duplicates.
    supersede.automatic(conn, ids, at=now)
    memory_index.assign_all(conn, ids)
    if outcome.summary is not None:
        upsert_summary(conn, session_id, project, outcome.summary, observer, now)
    if outcome.done:
        conn.executemany("UPDATE events SET status = 'done', processed_at = ? WHERE id = ? AND status = 'pending'",
                         [(now, i) for i in outcome.done])
    if skipped:
        conn.executemany("UPDATE events SET status = 'skipped', processed_at = ? WHERE id = ?",
                         [(now, i) for i in skipped])
    if outcome.tokens_in or outcome.tokens_out:
        record_usage(conn, observer, outcome.model, outcome.tokens_in, outcome.tokens_out)
    return ids


def insert_observation(conn: sqlite3.Connection, session_id: int, project: str, d: ObservationDraft,
                       observer: str, recorded_at: float | None = None, *, group: bool = True) -> int | None:
    """Insert one observation (and its memory index); None when the same content is already stored
    for the session. ``group=False`` leaves grouping with near-duplicates to the caller."""
    recorded = recorded_at or time.time()
    created, claimed = clamp_future(d.created_at, recorded)  # a time from the future: its arrival, flagged
    cur = insert(
        conn, "observations",
        "INSERT INTO observations (id, session_id, project, type, title, subtitle, facts, narrative, concepts, "
        "files_read, files_modified, prompt_number, tokens_spent, source_tokens, created_at, recorded_at, "
        "content_hash, agent_id, agent_type, observer, kind, scope, tentative, why, claimed_at) "
        f"VALUES ({next_id('observations')}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, content_hash) DO NOTHING",
        (session_id, project, d.type, d.title, d.subtitle, _j(d.facts), d.narrative, _j(d.concepts),
         _j(d.files_read), _j(d.files_modified), d.prompt_number, d.tokens_spent, d.source_tokens,
         created, recorded, d.content_hash(), d.agent_id, d.agent_type, observer,
         d.kind or None, d.scope if d.scope in ("project", "user") else "project", int(bool(d.tentative)),
         json.dumps(d.why, ensure_ascii=False) if d.why else "", claimed))
    if not (cur.rowcount and cur.lastrowid):
        return None
    oid = int(cur.lastrowid)
    memory_index.index(conn, [oid], group=group)
    return oid


def upsert_summary(conn: sqlite3.Connection, session_id: int, project: str, s: SummaryDraft, observer: str,
                   recorded_at: float) -> None:
    created, claimed = clamp_future(s.created_at, recorded_at)
    insert(
        conn, "session_summaries",
        "INSERT INTO session_summaries (id, session_id, project, prompt_number, request, investigated, learned, "
        "completed, next_steps, notes, files_read, files_modified, tokens_spent, source_tokens, created_at, "
        f"recorded_at, observer, claimed_at) VALUES ({next_id('session_summaries')}, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET prompt_number = excluded.prompt_number, "
        "request = excluded.request, investigated = excluded.investigated, learned = excluded.learned, "
        "completed = excluded.completed, next_steps = excluded.next_steps, notes = excluded.notes, "
        "files_read = excluded.files_read, files_modified = excluded.files_modified, "
        "tokens_spent = session_summaries.tokens_spent + excluded.tokens_spent, "
        "source_tokens = excluded.source_tokens, created_at = excluded.created_at, "
        "recorded_at = excluded.recorded_at, observer = excluded.observer, claimed_at = excluded.claimed_at",
        (session_id, project, s.prompt_number, s.request, s.investigated, s.learned, s.completed, s.next_steps,
         s.notes, _j(s.files_read), _j(s.files_modified), s.tokens_spent, s.source_tokens, created,
         recorded_at, observer, claimed))


def record_usage(conn: sqlite3.Connection, provider: str, model: str, tokens_in: int, tokens_out: int) -> None:
    day = time.strftime("%Y-%m-%d")
    conn.execute(
        "INSERT INTO observer_usage (day, provider, model, calls, tokens_in, tokens_out) VALUES (?, ?, ?, 1, ?, ?) "
        "ON CONFLICT (day, provider, model) DO UPDATE SET calls = calls + 1, "
        "tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out",
        (day, provider, model, tokens_in, tokens_out))


# ------------------------------------------------------------------------------- queries

def get_observation(conn: sqlite3.Connection, oid: int) -> dict[str, Any] | None:
    r = conn.execute(
        "SELECT o.*, s.agent_session_id, s.platform FROM observations o JOIN sessions s ON s.id = o.session_id "
        "WHERE o.id = ?", (oid,)).fetchone()
    return _obs_dict(r) if r else None


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = {}
    for table in ("sessions", "user_prompts", "observations", "session_summaries", "events"):
        out[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    out["pending_events"] = pending_count(conn)
    return out


def projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Projects with observations, newest first: ``project`` is the key, ``name`` what to call it."""
    rows = [dict(r) for r in conn.execute(
        "SELECT project, COUNT(*) AS observations, MAX(created_at) AS last_at FROM observations "
        "GROUP BY project ORDER BY last_at DESC")]
    shown = project_names(conn, [r["project"] for r in rows])
    for r in rows:
        r["name"] = shown[r["project"]]
    return rows


def _j(v: list[str]) -> str:
    return json.dumps(v, ensure_ascii=False)


def _obs_dict(r: sqlite3.Row) -> dict[str, Any]:
    d = dict(r)
    for k in JSON_LIST_FIELDS:
        if k in d:
            try:
                d[k] = json.loads(d[k] or "[]")
            except ValueError:
                d[k] = []
    return d


def _summary_dict(r: sqlite3.Row) -> dict[str, Any]:
    d = dict(r)
    for k in ("files_read", "files_modified"):
        try:
            d[k] = json.loads(d[k] or "[]")
        except ValueError:
            d[k] = []
    return d
