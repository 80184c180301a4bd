"""Clocks that lie: a session captured two days fast, a transcript dated in the future, rows a fast
worker stored. Newer is decided by the clock while it is believable and by arrival (the store's
autoincrement) when it is not (kenning/memory/order.py); a time from the future is stored as the
arrival time, and what it claimed is kept in ``claimed_at``. Real worker, real hook processes."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kenning import spool
from tests.conftest import Home
from tests.security import context_of, prompt, session_end, session_start, stop
from tests.support.imports import agent_homes, imported, rows
from tests.support.transcripts import ClaudeSession

STALE = "Always use 4 spaces, not tabs, in the YAML files"
FIXED = "Use 2 spaces in the YAML files from now on"
DAYS_2 = 2 * 86400


def spool_record(home: Home, payload: dict[str, Any], at: float) -> dict[str, Any]:
    return {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"], "at": at, "project": "project",
            "project_root": str(home.project), "truncated": False, "payload": payload}


def said(home: Home, sid: str, text: str, at: float | None = None) -> None:
    """A one-prompt session: through the real hooks (``at`` None), or captured by a clock set to ``at``."""
    p = str(home.project)
    events = [prompt(p, sid, text), stop(p, sid, "Noted."), session_end(p, sid)]
    for i, payload in enumerate(events):
        if at is None:
            r = home.hook(str(payload["hook_event_name"]), payload)
            assert r.returncode == 0 and r.stderr == b"", r.stderr
        else:
            spool.write(home.paths, spool_record(home, payload, at + i))
    home.flush()


def rule_rows(home: Home) -> dict[str, sqlite3.Row]:
    conn = home.db()
    try:
        return {str(r["title"]): r for r in conn.execute(
            "SELECT id, title, status, superseded_by, duplicate_of, created_at, recorded_at, claimed_at "
            "FROM observations WHERE layer = 'rule'")}
    finally:
        conn.close()


def find(found: dict[str, sqlite3.Row], words: str) -> sqlite3.Row:
    hits = [r for t, r in found.items() if words in t]
    assert len(hits) == 1, (words, list(found))
    return hits[0]


def test_a_session_two_days_fast_cannot_outlive_the_correction_after_it(home: Home) -> None:
    home.start_worker()
    said(home, "fast", STALE, at=time.time() + DAYS_2)  # the machine's clock ran two days ahead
    said(home, "later", FIXED)                           # fixed; the user corrects the rule
    found = rule_rows(home)
    stale, fixed = find(found, "4 spaces"), find(found, "2 spaces")
    # The future time was not believed: its events stored at their arrival, the claim kept and flagged.
    assert stale["created_at"] <= stale["recorded_at"] + 1 and stale["created_at"] < fixed["created_at"]
    conn = home.db()
    try:
        claims = conn.execute("SELECT s.agent_session_id, e.claimed_at FROM events e JOIN sessions s "
                              "ON s.id = e.session_id").fetchall()
    finally:
        conn.close()
    assert {sid for sid, claimed in claims if claimed is not None} == {"fast"}, claims
    assert all(claimed > time.time() + DAYS_2 - 600 for sid, claimed in claims if sid == "fast"), claims
    assert stale["status"] == "superseded" and stale["superseded_by"] == fixed["id"], dict(stale)
    assert fixed["status"] == "active" and fixed["duplicate_of"] is None, dict(fixed)
    ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "next")))
    assert "2 spaces in the YAML" in ctx and "4 spaces" not in ctx, ctx


def test_rows_a_fast_worker_stored_are_ordered_by_arrival(home: Home) -> None:
    """The worker's own clock ran fast when it stored the rule (so nothing looked like the future
    then); once the clock is right the row claims the future, and arrival decides."""
    home.start_worker()
    said(home, "fast", STALE)
    conn = home.db()
    try:
        with conn:
            conn.execute("UPDATE observations SET created_at = created_at + ?, recorded_at = recorded_at + ?",
                         (DAYS_2, DAYS_2))
    finally:
        conn.close()
    said(home, "later", FIXED)
    found = rule_rows(home)
    stale, fixed = find(found, "4 spaces"), find(found, "2 spaces")
    assert stale["status"] == "superseded" and stale["superseded_by"] == fixed["id"], dict(stale)
    assert fixed["status"] == "active" and fixed["duplicate_of"] is None, dict(fixed)
    ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "next")))
    assert "2 spaces in the YAML" in ctx and "4 spaces" not in ctx, ctx


def test_a_restatement_after_a_future_dated_one_heads_its_group(home: Home) -> None:
    """Near-duplicates: the newest says it last and heads the group, whatever the clock said."""
    home.start_worker()
    said(home, "fast", "Always run the linter before every commit")
    conn = home.db()
    try:
        with conn:
            conn.execute("UPDATE observations SET created_at = created_at + ?", (DAYS_2,))
    finally:
        conn.close()
    said(home, "later", "Always run the linter before every commit, please")
    conn = home.db()
    try:
        got = conn.execute("SELECT id, duplicate_of FROM observations WHERE title LIKE '%linter%' "
                           "ORDER BY id").fetchall()
    finally:
        conn.close()
    assert len(got) == 2, got
    (_first, first_dup), (second, second_dup) = got
    assert second_dup is None and first_dup == second, got  # the later arrival is the head shown
    home.stop_worker()
    r = home.kenning("reindex", "--no-vectors", timeout=120)  # groups rebuilt from every row: the same head
    assert r.returncode == 0, r.stdout + r.stderr
    conn = home.db()
    try:
        again = conn.execute("SELECT id, duplicate_of FROM observations WHERE title LIKE '%linter%' "
                             "ORDER BY id").fetchall()
    finally:
        conn.close()
    assert [tuple(x) for x in again] == [tuple(x) for x in got], again


def test_an_imported_transcript_dated_in_the_future_is_clamped_and_does_not_outrank(home: Home,
                                                                                      tmp_path: Path) -> None:
    h = agent_homes(home, tmp_path)
    ahead = datetime.now(UTC) + timedelta(days=30)
    ClaudeSession(str(h.project), ahead.strftime("%Y-%m-%dT%H:%M:%SZ")).prompt(STALE).say("Noted.") \
        .write(h.claude)  # type: ignore[attr-defined]
    imported(h)
    found = rule_rows(h)
    stale = find(found, "4 spaces")
    assert stale["created_at"] <= time.time() + 1, dict(stale)  # stored at its arrival, the claim kept:
    assert rows(h, "SELECT MIN(claimed_at) > ? FROM events", (time.time() + 29 * 86400,)) == [(1,)]
    h.start_worker()
    said(h, "later", FIXED)
    found = rule_rows(h)
    stale, fixed = find(found, "4 spaces"), find(found, "2 spaces")
    assert stale["status"] == "superseded" and stale["superseded_by"] == fixed["id"], dict(stale)
    ctx = context_of(h.hook("SessionStart", session_start(str(h.project), "next")))
    assert "2 spaces in the YAML" in ctx and "4 spaces" not in ctx, ctx
    assert rows(h, "SELECT COUNT(*) FROM observations WHERE created_at > ?", (time.time() + 600,)) == [(0,)]
