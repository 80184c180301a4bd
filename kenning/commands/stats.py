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
from typing import Any

from kenning.commands.args import count
from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("stats", help="observations made, observer tokens per day and provider, and savings",
                       description="What the observer produced and spent (per day and provider, and for the "
                                   "latest sessions), today's budget, and the savings: tokens of work condensed "
                                   "vs tokens the index costs to read.")
    s.add_argument("--days", type=count(1, 3650), default=14, help="days of usage to list (default 14)")
    s.add_argument("-p", "--project", help="savings of one project only")
    s.add_argument("--json", action="store_true", help="print everything as JSON")
    s.set_defaults(func=cmd_stats)


def collect(conn: sqlite3.Connection, *, days: int = 14, project: str | None = None,
            budget: int = 0, settings: Any = None, modes_dir: str | None = None) -> dict[str, Any]:
    from kenning.store import usage

    by_observer = {str(r[0]): int(r[1]) for r in conn.execute(
        "SELECT observer, COUNT(*) FROM observations GROUP BY observer ORDER BY 2 DESC")}
    summaries = int(conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0])
    saved = usage.savings(conn, project)
    if settings is not None:  # the index as the session start gives it, counted as it counts itself
        from kenning.context.session_start import index_tokens

        saved["index_tokens"] = index_tokens(conn, settings, project, modes_dir=modes_dir)
    return {
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
    if sv["observations"]:
        lines.append(f"Savings: the index of {sv['observations']:,} observations costs ~{sv['index_tokens']:,} tokens "
                     f"to read (~{sv['full_tokens']:,} with every detail); it condenses ~{sv['work_tokens']:,} "
                     f"tokens of captured work ({sv['percent']}% smaller). Producing it cost "
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
    conn = connect(paths.db, readonly=True)
    try:
        project = projects.one(conn, args.project) if args.project else None
        data = collect(conn, days=max(1, args.days), project=project, budget=settings.daily_token_budget,
                       settings=settings, modes_dir=paths.modes)
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
