"""What memory holds and what it cost, per day: the viewer's Stats page."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

from kenning.store import usage

MAX_DAYS = 365
MAX_RANGE_DAYS = 3660  # a chosen range: ten years of days, one bar each


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def days(conn: sqlite3.Connection, n: int, project: str | None = None,
         now: float | None = None) -> list[dict[str, Any]]:
    """The last ``n`` days (UTC, like the observer's usage table), oldest first, empty days included."""
    now = time.time() if now is None else now
    return between(conn, _day(now - (n - 1) * 86400), _day(now), project)


def parse_day(text: str, name: str) -> str:
    """A YYYY-MM-DD date as given (ValueError naming the parameter otherwise)."""
    try:
        return datetime.strptime(text, "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        raise ValueError(f"{name} must be a date like 2026-12-05, not {text[:40]!r}") from None


def span(first: str, last: str) -> int:
    """Days from ``first`` to ``last`` inclusive (YYYY-MM-DD)."""
    a = datetime.strptime(first, "%Y-%m-%d")
    b = datetime.strptime(last, "%Y-%m-%d")
    return (b - a).days + 1


def between(conn: sqlite3.Connection, first: str, last: str, project: str | None = None) -> list[dict[str, Any]]:
    """Every day from ``first`` to ``last`` (YYYY-MM-DD, UTC, inclusive), oldest first, empty days included:
    observations per type and what the observer spent."""
    start = datetime.strptime(first, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    end = start + span(first, last) * 86400
    out: dict[str, dict[str, Any]] = {}
    for i in range(span(first, last)):
        d = _day(start + i * 86400 + 3600)
        out[d] = {"day": d, "observations": {}, "total": 0, "tokens_in": 0, "tokens_out": 0, "cache_read": 0,
                  "calls": 0}
    where, args = ("", []) if not project else (" AND project = ?", [project])
    for day, typ, count in conn.execute(
            "SELECT strftime('%Y-%m-%d', created_at, 'unixepoch') AS day, type, COUNT(*) FROM observations "
            f"WHERE created_at >= ? AND created_at < ?{where} GROUP BY day, type", [start, end, *args]):
        row = out.get(day)
        if row is not None:
            row["observations"][typ] = count
            row["total"] += count
    for r in conn.execute("SELECT day, provider, tokens_in, tokens_out, cache_read, calls FROM observer_usage "
                          "WHERE day >= ? AND day <= ?", (first, last)):
        row = out.get(r[0])
        if row is not None and r[1] != "rules":
            for k, v in zip(("tokens_in", "tokens_out", "cache_read", "calls"), r[2:], strict=True):
                row[k] += int(v or 0)
    return list(out.values())


def first_day(conn: sqlite3.Connection, project: str | None = None) -> str | None:
    """The day of the oldest observation (imported history included), for "all history"."""
    where, args = ("", ()) if not project else (" WHERE project = ?", (project,))
    row = conn.execute(f"SELECT MIN(created_at) FROM observations{where}", args).fetchone()
    return _day(row[0]) if row and row[0] is not None else None


def totals(conn: sqlite3.Connection, project: str | None = None) -> dict[str, int]:
    """Rows of each kind, for one project or all of them."""
    if not project:
        r = conn.execute("SELECT (SELECT COUNT(*) FROM observations), (SELECT COUNT(*) FROM observations "
                         "WHERE status = 'active'), (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM "
                         "user_prompts), (SELECT COUNT(*) FROM session_summaries)").fetchone()
    else:
        r = conn.execute("SELECT (SELECT COUNT(*) FROM observations WHERE project = ?1), (SELECT COUNT(*) FROM "
                         "observations WHERE project = ?1 AND status = 'active'), (SELECT COUNT(*) FROM sessions "
                         "WHERE project = ?1), (SELECT COUNT(*) FROM user_prompts u JOIN sessions s ON "
                         "s.id = u.session_id WHERE s.project = ?1), (SELECT COUNT(*) FROM session_summaries "
                         "WHERE project = ?1)", (project,)).fetchone()
    return {"observations": r[0], "active_observations": r[1], "sessions": r[2], "prompts": r[3], "summaries": r[4]}


def savings(conn: sqlite3.Connection, project: str | None = None, settings: Any = None,
            modes_dir: str | None = None) -> dict[str, Any]:
    """Work captured vs what reading its memory costs: the reason to keep memory at all."""
    s = usage.savings(conn, project)
    if settings is not None:  # the index's own count of itself, as `kenning stats` and the context give it
        from kenning.context.session_start import index_tokens

        s["index_tokens"] = index_tokens(conn, settings, project, modes_dir=modes_dir)
    return {**s, "saved_pct": saved_tenths(s)}


def saved_tenths(saved: dict[str, int]) -> float | None:
    """How much smaller the index is than the work it condenses, in percent to one decimal, rounded
    down: 99.65 % is 99.6 %, never "100.0 %" while the index costs anything (None: no work yet)."""
    import math

    work = saved["work_tokens"]
    if not work:
        return None
    return max(0.0, math.floor(1000 - saved["index_tokens"] * 1000 / work) / 10)
