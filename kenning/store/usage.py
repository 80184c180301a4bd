"""Observer cost accounting: the SQL behind the daily budget, per-session usage and `kenning stats`.

``observer_usage`` (per day, provider, model) is written by ``repo.store_outcome`` for every
call; this module adds what only LLM calls have (cached tokens, reply kinds) and the
per-session totals, in the same transaction.
"""

from __future__ import annotations

import math
import sqlite3
import time
from typing import Any

CACHE_READ_WEIGHT = 0.1  # cached input is billed at about a tenth; the budget counts it so


def today(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(time.time() if at is None else at))


def record_call(conn: sqlite3.Connection, session_id: int, *, provider: str, model: str, tokens_in: int,
                tokens_out: int, cache_read: int, cache_write: int, observations: int, reply_kind: str,
                at: float | None = None) -> None:
    """Add one LLM call's details. ``tokens_in`` includes the cached part. Call inside a transaction."""
    day = today(at)
    conn.execute(
        "UPDATE observer_usage SET cache_read = cache_read + ?, cache_write = cache_write + ?, "
        "empty_replies = empty_replies + ?, prose_replies = prose_replies + ? "
        "WHERE day = ? AND provider = ? AND model = ?",
        (cache_read, cache_write, int(reply_kind == "empty"), int(reply_kind == "prose"), day, provider, model))
    conn.execute(
        "INSERT INTO observer_session_usage (session_id, provider, model, calls, tokens_in, tokens_out, cache_read, "
        "cache_write, observations, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, provider, model) DO UPDATE SET calls = calls + 1, "
        "tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out, "
        "cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write, "
        "observations = observations + excluded.observations, updated_at = excluded.updated_at",
        (session_id, provider, model, tokens_in, tokens_out, cache_read, cache_write, observations, time.time()))


def spent_today(conn: sqlite3.Connection, at: float | None = None) -> float:
    """Budget tokens spent today by model-backed observers (cached input weighted)."""
    row = conn.execute(
        "SELECT COALESCE(SUM(tokens_in - cache_read + tokens_out), 0), COALESCE(SUM(cache_read), 0) "
        "FROM observer_usage WHERE day = ? AND provider != 'rules'", (today(at),)).fetchone()
    return float(row[0]) + float(row[1]) * CACHE_READ_WEIGHT


def daily(conn: sqlite3.Connection, days: int = 14) -> list[dict[str, Any]]:
    """Per day and provider, newest first."""
    rows = conn.execute(
        "SELECT day, provider, model, calls, tokens_in, tokens_out, cache_read, cache_write, empty_replies, "
        "prose_replies FROM observer_usage WHERE day >= ? ORDER BY day DESC, provider, model",
        (today(time.time() - days * 86400),)).fetchall()
    return [dict(r) for r in rows]


def sessions(conn: sqlite3.Connection, limit: int = 10) -> list[dict[str, Any]]:
    """The most recently observed sessions with what their observation cost."""
    rows = conn.execute(
        "SELECT s.agent_session_id, s.project, u.provider, u.model, u.calls, u.tokens_in, u.tokens_out, "
        "u.cache_read, u.observations, u.updated_at FROM observer_session_usage u "
        "JOIN sessions s ON s.id = u.session_id ORDER BY u.updated_at DESC LIMIT ?", (limit,)).fetchall()
    return [dict(r) for r in rows]


def saved_percent(saved: dict[str, int]) -> float | None:
    """How much smaller the session-start index is than the work it condenses, rounded down to a tenth
    (99.65 is 99.6, never "100": some of it is always read) (None: no work yet)."""
    work = saved["work_tokens"]
    return floor_tenth(100 - saved["index_tokens"] * 100 / work) if work else None


def floor_tenth(percent: float) -> float:
    """A percentage rounded down to a tenth, at least 0."""
    return max(0.0, math.floor(percent * 10 + 1e-9) / 10)


def savings(conn: sqlite3.Connection, project: str | None = None) -> dict[str, int]:
    """Tokens of work compressed vs tokens the index of it costs to read, and what producing it cost."""
    where, args = ("WHERE status = 'active'", ()) if project is None else (
        "WHERE status = 'active' AND project = ?", (project,))
    row = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(source_tokens), 0), COALESCE(SUM(tokens_spent), 0), "
        f"COALESCE(SUM((LENGTH(title) + 24 + 3) / 4), 0), "
        f"COALESCE(SUM((LENGTH(title) + LENGTH(subtitle) + LENGTH(narrative) + LENGTH(facts) + 3) / 4), 0) "
        f"FROM observations {where}", args).fetchone()
    return {"observations": int(row[0]), "work_tokens": int(row[1]), "observer_tokens": int(row[2]),
            "index_tokens": int(row[3]), "full_tokens": int(row[4])}
