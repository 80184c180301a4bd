"""``kenning import-history``: past sessions of Claude Code, Codex and Copilot CLI into memory.

Every past event goes the way a live one goes: the same cleaning (``<private>`` blocks stripped,
secrets redacted, fields capped) and the same gates (excluded projects, skipped tools, the opt-out
marker) as the hook, then the same ingest into session / prompt / event rows, with the time it
happened, and the worker's observer turns them into observations and summaries. Idempotent: each
event has a stable key, a file is remembered with its size and mtime (unchanged: not read again),
and a session the hooks captured live is never imported a second time. A Claude Code message is
stored once whatever file holds it (``history_messages``: a resumed session's file repeats the
earlier one's lines), and files are read oldest first so a message lands in the session it began in.

A session is filed under its repository's project: the checkout its folder belongs to, joined to
the other checkouts of the same remote (kenning/history/identity.py), as live sessions are. What
each session showed about its repository (files, commits, branches: kenning/history/evidence.py)
is stored with its events, and after the whole import checkouts whose folders are not on this
machine are joined when that evidence, or a worktree's path, says they are one repository
(kenning/store/checkouts.py); the summary lists each join and why.

Memory stays bounded: files are streamed line by line and rows are written in batches.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kenning.history import Event, SessionFile
from kenning.history.source import Problems
from kenning.paths import Paths
from kenning.settings import Settings

BATCH = 500
READERS = ("claude-code", "codex", "copilot")
# Agents whose event keys name a message wherever it is written (Claude Code's uuids); a Codex
# rollout numbers some of its items by line, so its keys only hold within one file.
GLOBAL_KEYS = ("claude-code",)


@dataclass
class Totals:
    files: int = 0
    unchanged: int = 0
    sessions: int = 0
    events: int = 0  # new rows
    already: int = 0  # events found stored already
    live: int = 0  # sessions the hooks captured: not imported
    excluded: int = 0
    filtered: int = 0  # outside --project / --since
    per_agent: dict[str, int] = field(default_factory=dict)  # sessions imported per agent
    joined: list[str] = field(default_factory=list)  # checkouts filed under another project, and why
    seconds: float = 0.0
    not_read: list[tuple[str, str]] = field(default_factory=list)  # (path, why): no regular file, unreadable
    bad_lines: dict[str, int] = field(default_factory=dict)  # why -> lines skipped (too long, too deep, not JSON)
    cut_deep: int = 0  # lines nested deeper than source.MAX_DEPTH (kept to that depth)

    def add(self, problems: Problems) -> None:
        self.not_read.extend(p for p in problems.files if p not in self.not_read)
        for why, n in problems.lines.items():
            self.bad_lines[why] = self.bad_lines.get(why, 0) + n
        self.cut_deep += problems.cut


def _reader(agent: str) -> Any:
    if agent == "claude-code":
        from kenning.history import claude_code

        return claude_code
    if agent == "copilot":
        from kenning.history import copilot

        return copilot
    from kenning.history import codex

    return codex


def discover(agents: tuple[str, ...] = READERS, roots: dict[str, str] | None = None,
             skipped: Problems | None = None) -> list[SessionFile]:
    """Every session file of ``agents``; paths that are no regular file go to ``skipped``, with why."""
    out: list[SessionFile] = []
    for agent in agents:
        out.extend(_reader(agent).discover((roots or {}).get(agent), skipped))
    return out


def pending_sessions(paths: Paths, roots: dict[str, str] | None = None) -> dict[str, int]:
    """Past sessions per agent that are not in memory yet (for ``kenning install``'s offer): neither
    imported (their file is in ``history_imports``) nor captured live by the hooks (a session of that
    agent with that id is stored; ``kenning import-history`` leaves those alone too)."""
    done: set[str] = set()
    stored: set[tuple[str, str]] = set()
    if os.path.exists(paths.db):
        from kenning.store.db import connect

        try:
            conn = connect(paths.db, readonly=True)
            try:
                done = {r[0] for r in conn.execute("SELECT path FROM history_imports")}
                marks = ",".join("?" * len(READERS))
                stored = {(r[0], r[1]) for r in conn.execute(
                    f"SELECT platform, agent_session_id FROM sessions WHERE platform IN ({marks})", READERS)}
            finally:
                conn.close()
        except sqlite3.Error:
            done, stored = set(), set()
    out: dict[str, int] = {}
    for f in discover(roots=roots):
        if f.path not in done and (f.agent, session_id(f)) not in stored:
            out[f.agent] = out.get(f.agent, 0) + 1
    return out


_ROLLOUT_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")
_META_BYTES = 1024 * 1024  # a rollout's first line (session_meta) carries the instructions: it can be long


def session_id(f: SessionFile) -> str:
    """The id the agent's hooks send for a past session: a Claude Code transcript is named by it
    (``<id>.jsonl``), a Codex rollout ends with it (``rollout-<time>-<id>.jsonl``; else its
    ``session_meta`` line says it), a Copilot CLI log is its session's (``<id>/events.jsonl``)."""
    name = os.path.basename(f.path)
    if f.agent == "claude-code":
        return name[:-len(".jsonl")]
    if f.agent == "copilot":
        from kenning.history.copilot import session_id_of

        return session_id_of(f.path)
    m = _ROLLOUT_ID.search(name)
    if m:
        return m.group(1)
    from kenning.history import source

    try:
        with source.open_regular(f.path) as fh:
            rec = source.parse(fh.readline(_META_BYTES))
    except (source.Unreadable, OSError):
        return ""
    meta = rec.get("payload") if isinstance(rec, dict) and rec.get("type") == "session_meta" else None
    return str(meta.get("id") or meta.get("session_id") or "") if isinstance(meta, dict) else ""


def run(paths: Paths, settings: Settings, *, agents: tuple[str, ...] = READERS, since: float | None = None,
        project: str | None = None, dry_run: bool = False, roots: dict[str, str] | None = None,
        progress: Callable[[SessionFile, Totals], None] | None = None, now: float | None = None) -> Totals:
    """Read every past session not stored yet; returns what was done (or would be, with ``dry_run``)."""
    from kenning.store.db import connect, open_db

    started, wall = time.monotonic(), time.time()
    totals = Totals()
    skipped = Problems()
    files = sorted(discover(agents, roots, skipped), key=lambda f: (f.mtime, f.path))
    totals.add(skipped)
    conn: sqlite3.Connection | None = None
    if not dry_run:
        paths.ensure()
        conn = open_db(paths.db)
    elif os.path.exists(paths.db):
        conn = connect(paths.db, readonly=True)
    try:
        seen = _seen(conn)
        for f in files:
            totals.files += 1
            if since is not None and f.mtime < since:
                totals.filtered += 1
            elif seen.get(f.path) == (f.size, f.mtime):
                totals.unchanged += 1
            else:
                _import_file(conn, paths, settings, f, totals, since=since, project=project, dry_run=dry_run,
                             now=now)
                totals.add(f.problems)
            if progress is not None:
                progress(f, totals)
        if conn is not None and not dry_run:
            totals.joined = _join_checkouts(conn, since=wall)
    finally:
        if conn is not None:
            conn.close()
    totals.seconds = time.monotonic() - started
    return totals


def _join_checkouts(conn: sqlite3.Connection, since: float) -> list[str]:
    """Join the checkouts of one repository that this and earlier imports stored apart (after every
    file, so the evidence of all its sessions counts); every join made since ``since``, and why
    (those of a remote the transcripts named, made as sessions were filed, too)."""
    from kenning.memory_service import MemoryService
    from kenning.store import checkouts

    MemoryService(conn, "import").join_checkouts()
    return [j.line() for j in reversed(checkouts.joins(conn, limit=1000, since=since))]


def _seen(conn: sqlite3.Connection | None) -> dict[str, tuple[int, float]]:
    if conn is None:
        return {}
    try:
        return {r[0]: (int(r[1]), float(r[2])) for r in conn.execute("SELECT path, size, mtime FROM history_imports")}
    except sqlite3.OperationalError:  # read-only dry run on a database from before migration 0017
        return {}


def _records(paths: Paths, settings: Settings, f: SessionFile, events: Iterator[Event], *, since: float | None,
             project: str | None, totals: Totals, conn: sqlite3.Connection | None) -> Iterator[dict[str, Any]]:
    """Spool records for a session's events, gated and cleaned exactly as the hook does it live."""
    from kenning.history.identity import checkout
    from kenning.hook.main import clean
    from kenning.privacy.tags import is_entirely_private
    from kenning.project import git_remote, glob_match, is_excluded, project_key

    name = root = remote = ""
    stored = _stored_messages(conn) if f.agent in GLOBAL_KEYS else None
    start: dict[str, Any] | None = None  # a SessionStart held until the session says something new
    for e in events:
        if e.kind == "SessionStart":
            cwd = str(e.payload.get("cwd") or "")
            if not cwd or paths.contains(cwd):
                totals.excluded += 1
                return
            name, root = checkout(cwd)
            if is_excluded(name, root, cwd, settings.excluded_projects):
                totals.excluded += 1
                return
            if project and project not in (name, root):
                totals.filtered += 1
                return
            if conn is not None and _captured_live(conn, f.agent, str(e.payload.get("session_id") or "")):
                totals.live += 1
                return
            # The checkout's own remote when it is on this machine, else the one the transcript names.
            local = git_remote(root) if root and os.path.isdir(root) else ""
            remote = local or str(e.payload.get("repository") or "")
        if since is not None and e.at < since:
            continue
        if stored is not None and stored(f.agent, e.key):
            totals.already += 1  # stored from another file (a resumed session's copy) or an earlier import
            continue
        payload = e.payload
        record: dict[str, Any] = {"v": 1, "id": f"h:{e.key}", "agent": f.agent, "event": e.kind, "at": e.at,
                                  "project": name, "project_key": project_key(root, name), "project_root": root,
                                  "project_remote": remote, "imported": True, "message_key": e.key}
        if e.kind == "UserPromptSubmit":
            prompt = payload.get("prompt")
            if isinstance(prompt, str) and settings.optout_marker and settings.optout_marker in prompt:
                return  # the user asked that the rest of this session not be remembered
            if isinstance(prompt, str) and is_entirely_private(prompt):
                record["private"] = True
        if e.kind in ("PostToolUse", "PostToolUseFailure"):
            tool = payload.get("tool_name")
            if isinstance(tool, str) and any(glob_match(tool, p) for p in settings.skip_tools):
                continue
        record["payload"], record["truncated"] = clean(settings, payload)
        if e.kind == "SessionStart" and stored is not None:
            start = record
            continue
        if start is not None:  # the session starts with the first message no other file holds
            if e.kind == "SessionEnd":
                continue  # nothing new was said: no session
            start["at"] = max(float(start["at"]), e.at)
            yield start
            start = None
        yield record


def _stored_messages(conn: sqlite3.Connection | None) -> Callable[[str, str], bool] | None:
    """A lookup: is this message key stored already (None: the database cannot tell yet)."""
    if conn is None:
        return None
    try:
        conn.execute("SELECT 1 FROM history_messages LIMIT 1").fetchall()
    except sqlite3.OperationalError:  # a read-only dry run on a database from before migration 0024
        return None

    def stored(agent: str, key: str) -> bool:
        return conn.execute("SELECT 1 FROM history_messages WHERE agent = ? AND key = ?",
                            (agent, key)).fetchone() is not None

    return stored


def _captured_live(conn: sqlite3.Connection, agent: str, sid: str) -> bool:
    """The hooks recorded this session: it has an event no import made (tool events share their key
    with the transcript's, so only prompts, stops, starts and ends tell)."""
    row = conn.execute(
        "SELECT 1 FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.platform = ? AND "
        "s.agent_session_id = ? AND e.event_key NOT LIKE 'h:%' AND e.event_key NOT LIKE 'PostToolUse%' LIMIT 1",
        (agent, sid)).fetchone()
    return row is not None


def _import_file(conn: sqlite3.Connection | None, paths: Paths, settings: Settings, f: SessionFile, totals: Totals,
                 *, since: float | None, project: str | None, dry_run: bool, now: float | None) -> None:
    from kenning.history.evidence import of_record
    from kenning.memory_service import MemoryService
    from kenning.store import repo

    events = _reader(f.agent).events(f, now=now)
    batch: list[dict[str, Any]] = []
    sid = ""
    new = 0
    count = 0

    def flush() -> None:
        nonlocal new
        if conn is None or dry_run or not batch:
            batch.clear()
            return
        door = MemoryService(conn, "import")
        with repo.transaction(conn):
            for rec in batch:
                if door.capture(rec):
                    new += 1
                else:
                    totals.already += 1
                if f.agent in GLOBAL_KEYS:
                    conn.execute("INSERT OR IGNORE INTO history_messages (agent, key, agent_session_id) "
                                 "VALUES (?, ?, ?)", (f.agent, rec["message_key"], rec["payload"]["session_id"]))
                door.evidence(rec["project_key"], of_record(rec))
        batch.clear()

    already = totals.already
    for rec in _records(paths, settings, f, events, since=since, project=project, totals=totals, conn=conn):
        sid = sid or str(rec["payload"].get("session_id") or "")
        count += 1
        batch.append(rec)
        if len(batch) >= BATCH:
            flush()
    flush()
    if not count:
        if conn is not None and not dry_run and totals.already > already:  # every message was stored already
            with repo.transaction(conn):
                _remember(conn, f, sid, 0)
        return
    totals.sessions += 1
    totals.per_agent[f.agent] = totals.per_agent.get(f.agent, 0) + 1
    totals.events += new if not dry_run else count
    if conn is not None and not dry_run:
        with repo.transaction(conn):
            _remember(conn, f, sid, new)


def _remember(conn: sqlite3.Connection, f: SessionFile, sid: str, new: int) -> None:
    """The file as read now: unchanged, it is not read again."""
    conn.execute(
        "INSERT INTO history_imports (path, agent, agent_session_id, size, mtime, events, imported_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET size = excluded.size, "
        "mtime = excluded.mtime, events = history_imports.events + excluded.events, "
        "imported_at = excluded.imported_at", (f.path, f.agent, sid, f.size, f.mtime, new, time.time()))


def observe(paths: Paths, *, timeout: float = 600.0, quiet_s: float = 3.0,
            progress: Callable[[int], None] | None = None) -> int:
    """Have the worker (started if needed) observe the imported events; returns those still pending
    (turns still open, or the worker did not finish in time)."""
    from kenning import daemon
    from kenning.hook import client

    health = daemon.ensure(paths, wait=15.0)
    if not health:
        return -1
    left = _pending(paths)
    last_change = time.monotonic()
    deadline = time.monotonic() + timeout
    while left > 0 and time.monotonic() < deadline:
        client.poke_udp(int(health["port"]))
        time.sleep(0.25)
        now_left = _pending(paths)
        if now_left != left:
            left, last_change = now_left, time.monotonic()
            if progress is not None:
                progress(left)
        elif time.monotonic() - last_change > quiet_s:
            break  # what is left waits on turns that are still open
    return left


def pending_count(paths: Paths) -> int:
    """Events waiting for the observer."""
    return _pending(paths) if os.path.exists(paths.db) else 0


def _pending(paths: Paths) -> int:
    from kenning.store.db import connect

    conn = connect(paths.db, readonly=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])
    finally:
        conn.close()
