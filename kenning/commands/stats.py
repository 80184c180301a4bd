"""``kenning stats``: observations made, what the observer spent, and what memory saves.

Savings compare the tokens of captured work that observations condense with the tokens the
session-start index of them costs to read; the observer's own spending is shown beside
them so the trade is visible. Reads the database directly (read-only), worker or not.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from typing import Any

from kenning.commands.args import count
from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("stats", help="observations made, observer tokens per day and provider, and savings",
                       description="What the observer produced and spent (per day and provider, and for the "
                                   "latest sessions), today's budget, and the savings: tokens of work condensed "
                                   "vs tokens the index costs to read.")
    s.add_argument("--days", type=count(1, 3650), default=14, help="days of usage to list (default 14)")
    s.add_argument("-p", "--project", help="savings and memory health of one project only")
    s.add_argument("--since", metavar="DATE", help="memory health from this date (2026-11-01, 30d, yesterday); "
                                                   "default: everything kept")
    s.add_argument("--until", metavar="DATE", help="memory health before this date (default: now)")
    s.add_argument("--json", action="store_true", help="print everything as JSON")
    s.set_defaults(func=cmd_stats)


HEALTHY, CHECK_UP = 0.7, 0.5  # hit rates: above the first memory serves well; below the second, review it


def health(conn: sqlite3.Connection, *, project: str | None = None, since: float | None = None,
           until: float | None = None, settings: Any = None) -> dict[str, Any]:
    """The memory's own dashboard: entries per type and layer (recorded in the range), the last archive
    cut, backup and reindex, the hit rate of what was handed to agents, and the memories never used."""
    from kenning.commands.audit import REVIEW_AFTER_DAYS
    from kenning.store import injections

    where, args = ["status = 'active'", "duplicate_of IS NULL"], []
    for cond, val in (("project = ?", project), ("created_at >= ?", since), ("created_at < ?", until)):
        if val is not None:
            where.append(cond)
            args.append(val)
    cond = " AND ".join(where)
    by_type = {str(r[0]): int(r[1]) for r in conn.execute(
        f"SELECT type, COUNT(*) FROM observations WHERE {cond} GROUP BY type ORDER BY 2 DESC", args)}
    by_layer = {str(r[0]): int(r[1]) for r in conn.execute(
        f"SELECT layer, COUNT(*) FROM observations WHERE {cond} GROUP BY layer ORDER BY 2 DESC", args)}
    reindexed = conn.execute("SELECT MAX(at) FROM memory_log WHERE op = 'reindexed'").fetchone()[0]
    days = int(getattr(settings, "archive_after_days", 0) or 0)
    try:
        led = injections.health(conn, since=since, until=until, project=project)
        never = injections.never_used_count(conn, older_than=time.time() - REVIEW_AFTER_DAYS * 86400, project=project)
    except sqlite3.OperationalError:  # a database from before the ledger (migration 0032)
        led, never = injections.empty_health(), 0
    rate = led["hit_rate"]
    verdict = "no handings recorded" if rate is None else (
        "healthy" if rate >= HEALTHY else "a check-up is due (`kenning review`)" if rate < CHECK_UP else "fair")
    return {"since": since, "until": until, "by_type": by_type, "by_layer": by_layer,
            "archive_after_days": days, "archive_before": time.time() - days * 86400 if days else None,
            "last_reindex": reindexed, "last_backup": _last_backup(), "injections": led, "verdict": verdict,
            "never_used": never, "never_used_days": REVIEW_AFTER_DAYS}


def _last_backup() -> float | None:
    from kenning.store import backup

    found = backup.listed(Paths())
    return found[0].taken_at if found else None


def render_health(h: dict[str, Any]) -> list[str]:
    def when(at: float | None) -> str:
        return time.strftime("%Y-%m-%d", time.localtime(at)) if at else "never"

    span = (f"{when(h['since']) if h['since'] else 'the start'} to {when(h['until']) if h['until'] else 'now'}")
    led = h["injections"]
    lines = [f"Memory health ({span}):",
             "  entries by type: " + (", ".join(f"{k} {v:,}" for k, v in h["by_type"].items()) or "none"),
             "  entries by layer: " + (", ".join(f"{k} {v:,}" for k, v in h["by_layer"].items()) or "none"),
             f"  archive: routine work before {when(h['archive_before'])} is archived" if h["archive_before"]
             else "  archive: off (archive_after_days = 0)",
             f"  last backup {when(h['last_backup'])}; last reindex {when(h['last_reindex'])}"]
    if led["given"]:
        lines.append(f"  handed to agents: {led['given']:,} times in {led['sessions']:,} sessions; used "
                     f"{led['used']:,} ({led['hit_rate'] * 100:.1f}% hit rate: {h['verdict']}); "
                     f"{(led['used_token_share'] or 0) * 100:.1f}% of ~{led['tokens']:,} injected tokens were used; "
                     f"{led['contradicted']:,} superseded or retracted after")
        for via, v in led["by_via"].items():
            lines.append(f"    {via:<14} {v['given']:>7,} given {v['used']:>7,} used")
    else:
        lines.append("  handed to agents: nothing recorded yet (the worker records what it serves)")
    lines.append(f"  never used, older than {h['never_used_days']} days: {h['never_used']:,} "
                 "(`kenning review` proposes them)")
    return lines


def collect(conn: sqlite3.Connection, *, days: int = 14, project: str | None = None,
            budget: int = 0, settings: Any = None, modes_dir: str | None = None,
            since: float | None = None, until: float | None = None) -> dict[str, Any]:
    from kenning.store import usage

    by_observer = {str(r[0]): int(r[1]) for r in conn.execute(
        "SELECT observer, COUNT(*) FROM observations GROUP BY observer ORDER BY 2 DESC")}
    summaries = int(conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0])
    saved = usage.savings(conn, project)
    if settings is not None:  # the index as the session start gives it, counted as it counts itself
        from kenning.context.session_start import index_tokens

        saved["index_tokens"] = index_tokens(conn, settings, project, modes_dir=modes_dir)
    return {
        "health": health(conn, project=project, since=since, until=until, settings=settings),
        "observations": sum(by_observer.values()), "by_observer": by_observer, "summaries": summaries,
        "daily": usage.daily(conn, days), "sessions": usage.sessions(conn, 10),
        "budget": {"daily": budget, "spent_today": round(usage.spent_today(conn))},
        "savings": {**saved, "percent": usage.saved_percent(saved) or 0},
    }


def render(data: dict[str, Any]) -> str:
    lines = []
    split = ", ".join(f"{k} {v:,}" for k, v in data["by_observer"].items())
    lines.append(f"Observations: {data['observations']:,}" + (f" ({split})" if split else "")
                 + f"; session summaries: {data['summaries']:,}")
    lines.append("")
    if data["daily"]:
        lines.append("Observer tokens per day:")
        lines.append(f"  {'day':<10}  {'provider':<10} {'model':<24} {'calls':>6} {'in':>11} {'cached':>11} "
                     f"{'out':>9} {'empty':>6} {'prose':>6}")
        for d in data["daily"]:
            lines.append(f"  {d['day']:<10}  {d['provider']:<10} {(d['model'] or '-')[:24]:<24} {d['calls']:>6,} "
                         f"{d['tokens_in']:>11,} {d['cache_read']:>11,} {d['tokens_out']:>9,} "
                         f"{d['empty_replies']:>6,} {d['prose_replies']:>6,}")
    else:
        lines.append("Observer tokens per day: none recorded (the offline rules observer spends none).")
    b = data["budget"]
    if b["daily"]:
        lines.append(f"Budget today: {b['spent_today']:,} of {b['daily']:,} tokens "
                     f"({b['spent_today'] * 100 / b['daily']:.1f}%; cached input counts a tenth)")
    if data["sessions"]:
        lines.append("")
        lines.append("Latest observed sessions:")
        for s in data["sessions"]:
            lines.append(f"  {s['agent_session_id'][:8]}  {s.get('project_name', s['project'])[:20]:<20} "
                         f"{s['provider']:<10} "
                         f"{s['calls']:>4,} calls {s['tokens_in'] + s['tokens_out']:>10,} tokens "
                         f"{s['observations']:>4,} observations")
    sv = data["savings"]
    lines.append("")
    lines += render_health(data["health"])
    lines.append("")
    if sv["observations"]:
        lines.append(f"Savings: the index of {sv['observations']:,} observations costs ~{sv['index_tokens']:,} tokens "
                     f"to read (~{sv['full_tokens']:,} with every detail); it condenses ~{sv['work_tokens']:,} "
                     f"tokens of captured work ({sv['percent']:g}% smaller). Producing it cost "
                     f"{sv['observer_tokens']:,} observer tokens.")
    else:
        lines.append("Savings: no observations yet.")
    return "\n".join(lines)


def cmd_stats(args: argparse.Namespace) -> int:
    from kenning.settings import load
    from kenning.store import projects
    from kenning.store.db import connect

    paths = Paths()
    settings, _problems = load(paths)
    if not os.path.exists(paths.db):
        print("No memory yet: the worker creates the database on its first start.")
        return 0
    from kenning.mcp.inputs import ToolInputError, time_range

    try:
        since, until = time_range(args.since, args.until)
    except ToolInputError as e:
        print(f"kenning stats: {e}", file=sys.stderr)
        return 2
    conn = connect(paths.db, readonly=True)
    try:
        project = projects.one(conn, args.project) if args.project else None
        data = collect(conn, days=max(1, args.days), project=project, budget=settings.daily_token_budget,
                       settings=settings, modes_dir=paths.modes, since=since, until=until)
        shown = projects.names(conn, [s["project"] for s in data["sessions"]])
        for s in data["sessions"]:
            s["project_name"] = shown[s["project"]]
    except projects.AmbiguousProject as e:
        print(f"kenning stats: {e}", file=sys.stderr)
        return 2
    except sqlite3.Error as e:
        print(f"kenning stats: cannot read {paths.db}: {e}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    print(json.dumps(data, indent=2) if args.json else render(data))
    return 0
