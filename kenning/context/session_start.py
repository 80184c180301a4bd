"""The session-start index: what the agent is told about a project when a session begins.

An index, not prose: a header, a legend of type icons, the token economics, the standing
rules, the key decisions, gotchas and root causes, then per day the recent work, where the
latest work stands, and how to fetch details (kenning/context/index.py selects and writes it).
Bounded by count and by characters (Claude Code cuts hook text at 10,000).

Standard library only (``sqlite3``): the SessionStart hook builds it itself when the
worker cannot answer in time, and the worker serves the very same text.
"""

from __future__ import annotations

import os
import sqlite3
import time

from kenning.context.index import CLOSE, OPEN, Layout, Selection
from kenning.observer.modes import load_mode, type_icons
from kenning.paths import Paths
from kenning.project import identify, is_excluded, resolve_key
from kenning.settings import Settings
from kenning.store.projects import display

__all__ = ["CLOSE", "OPEN", "budget_note", "build", "build_for_cwd", "empty_note"]


def build_for_cwd(paths: Paths, settings: Settings, cwd: str, *, now: float | None = None,
                  agent: str = "claude-code") -> str:
    """Context for the project that ``cwd`` belongs to, read from the database file."""
    project = identify(cwd)
    if is_excluded(project.name, project.root, cwd, settings.excluded_projects):
        return ""
    if not os.path.exists(paths.db):
        return empty_note(project.name)
    try:
        # In a URI '?', '#' and '%' are syntax: escape them or a data dir named so reads nothing.
        path = paths.db.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return empty_note(project.name)
    try:
        conn.execute("PRAGMA busy_timeout = 1000")
        return build(conn, settings, resolve_key(conn, project.key), now=now, modes_dir=paths.modes,
                     name=project.name, agent=agent)
    except sqlite3.Error:
        return empty_note(project.name)  # no schema yet (the worker has never run)
    finally:
        conn.close()


def empty_note(project: str) -> str:
    return (f"{OPEN}Kenning has no memory of project {project} yet; what happens in this session "
            f"will be remembered.{CLOSE}")


def build(conn: sqlite3.Connection, settings: Settings, project: str, *, now: float | None = None,
          modes_dir: str | None = None, name: str = "", agent: str = "claude-code") -> str:
    """Render the index for the project keyed ``project`` from an open connection.

    ``name`` is what to call it when the database does not know it (yet). Rows recorded by another
    agent than ``agent`` (the one asking) name that agent, so one agent knows what another did.
    """
    now = time.time() if now is None else now
    title = display(conn, project, name)
    sel = Selection(conn, settings, project, now)
    if sel.empty:
        return empty_note(title)
    icons = type_icons(load_mode(settings.mode, modes_dir))
    return Layout(sel, settings, title, icons, footer=budget_note(conn, settings, now),
                  work_tokens=sel.work_tokens(), agent=agent).text()


def budget_note(conn: sqlite3.Connection, settings: Settings, now: float) -> str:
    """One line when the LLM observer's daily token budget is spent (its notes are thinner today)."""
    budget = settings.daily_token_budget
    if not budget or settings.provider == "rules":
        return ""
    try:  # cached input counts a tenth, as in kenning.store.usage (not imported: hook path)
        row = conn.execute("SELECT COALESCE(SUM(tokens_in - cache_read + tokens_out), 0), "
                           "COALESCE(SUM(cache_read), 0) FROM observer_usage WHERE day = ? AND provider != 'rules'",
                           (time.strftime("%Y-%m-%d", time.localtime(now)),)).fetchone()
    except sqlite3.Error:  # a database from before migration 0005
        return ""
    if row[0] + row[1] * 0.1 < budget:
        return ""
    return "Observer: today's token budget is spent; until midnight, notes come from the offline rules observer."


