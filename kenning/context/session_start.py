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

from kenning.context.fence import CLOSE, OPEN, neutralise, wrap
from kenning.context.index import Layout, Selection
from kenning.observer import trouble
from kenning.observer.modes import load_mode, type_icons
from kenning.paths import Paths
from kenning.project import identify, is_excluded, resolve_key
from kenning.settings import Settings
from kenning.store.projects import display
from kenning.team.render import add as team_section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kenning.context.cache import SelectionCache
    from kenning.store.db import ReadPool

LOW_DISK_BYTES = 50_000_000    # below this the context warns that captures may be lost
LOSS_NOTE_S = 7 * 24 * 3600    # losses are told at session start for a week (doctor tells them until cleared)
NOTES_MAX_CHARS = 800


def build_for_cwd(paths: Paths, settings: Settings, cwd: str, *, now: float | None = None,
                  agent: str = "claude-code") -> str:
    """Context for the project that ``cwd`` belongs to, read from the database file."""
    project = identify(cwd)
    if is_excluded(project.name, project.root, cwd, settings.excluded_projects):
        return ""
    return context_text(paths, settings, project.name, lambda conn: resolve_key(conn, project.key), now=now,
                        agent=agent, root=project.root)[0]


def context_text(paths: Paths, settings: Settings, name: str, key_of: Callable[[sqlite3.Connection], str], *,
                 now: float | None = None, agent: str = "claude-code", pool: ReadPool | None = None,
                 cache: SelectionCache | None = None, root: str = "") -> tuple[str, str]:
    """(the index for the project ``key_of`` resolves, its key) - or one line saying why memory is
    unavailable (never "no memory" when there is memory that cannot be read) - followed by what the
    user must know: captures that could not be saved, a read-only data dir, a nearly full disk.

    ``pool`` (the worker's): the read comes from a kept connection instead of a new one; ``cache``
    (the worker's): a selection kept while nothing it read has changed."""
    from kenning.store import health
    from kenning.store.identity import ForeignDatabase, not_a_database, verify

    key = ""
    waiting = ""  # why captured events are not memory yet (kenning.observer.trouble), when they are not
    if not os.path.exists(paths.db):
        text = empty_note(name, saving=health.writable_dir(paths.root) if os.path.isdir(paths.root) else True)
    else:
        try:
            conn = pool.take() if pool is not None else health.open_readonly(paths.db, timeout=1.0)
        except sqlite3.Error as e:
            if not_a_database(e):  # no SQLite header: not a file of ours to call damaged
                raise ForeignDatabase(paths.db, "not an SQLite file") from None
            text = _unreadable(paths, name, e)
        else:
            ok = False
            try:
                if pool is None:  # a pooled connection keeps the worker's own busy timeout
                    conn.execute("PRAGMA busy_timeout = 1000")
                verify(conn, paths.db)
                key = key_of(conn)
                waiting = waiting_note(conn, paths, key, now)
                text = build(conn, settings, key, now=now, modes_dir=paths.modes, name=name,
                             agent=agent, cache=cache, waiting=waiting, root=root)
                ok = True
            except ForeignDatabase:
                raise  # the caller tells the user: "no memory of this project yet" would be untrue
            except sqlite3.Error as e:
                text = _unreadable(paths, name, e)
            finally:
                if pool is not None:
                    pool.give(conn, ok)
                else:
                    conn.close()
    notes = status_notes(paths, now)
    if waiting and neutralise(waiting) not in text and not waiting.startswith(trouble.BUDGET_SPENT):
        notes.insert(0, waiting)  # (a spent budget: the index's own footer says it)
    damage = health.noted_damage(paths.db) if key else ""
    if damage:  # found by another process (the worker's integrity check): what was read may be incomplete
        notes.insert(0, damage_note(damage))
    return with_notes(text, notes), key


def _unreadable(paths: Paths, project: str, err: BaseException) -> str:
    from kenning.store import health

    kind, message = health.classify(paths.db, err)
    if kind in (health.NO_SCHEMA, health.MISSING):
        return empty_note(project)  # created, never migrated: truly nothing yet
    if kind == health.CORRUPT:
        health.note_damage(paths.db, message)
    return unavailable_note(project, message)


def damage_note(message: str) -> str:
    """Memory was read, but the file is known to be damaged (``message``: ``kenning.store.health.explain``)."""
    return (f"Kenning's database is damaged: {message}. What is listed may be incomplete, and nothing new is "
            "saved until it is repaired (the spool keeps every event).")


def empty_note(project: str, *, saving: bool = True, waiting: str = "") -> str:
    """No memory of ``project``; ``waiting``: why what was captured is not memory yet (then that, not
    the promise that this session will be remembered)."""
    if waiting:
        return f"{OPEN}Kenning has no memory of project {neutralise(project)} yet. {neutralise(waiting)}{CLOSE}"
    then = ("what happens in this session will be remembered." if saving
            else "nothing can be saved either (see below).")
    return f"{OPEN}Kenning has no memory of project {neutralise(project)} yet; {then}{CLOSE}"


def waiting_note(conn: sqlite3.Connection, paths: Paths, key: str, now: float | None = None) -> str:
    """One line when the observer is in trouble (unreachable, quota, auth, budget): how many of the
    project's events wait, why, and the fix; "" otherwise (the usual case costs one failed ``open``)."""
    rec = trouble.read(paths)
    if rec is None:
        return ""
    try:
        waiting = int(conn.execute(
            "SELECT COUNT(*) FROM events WHERE status = 'pending' AND session_id IN "
            "(SELECT id FROM sessions WHERE project = ?)", (key,)).fetchone()[0]) if key else 0
    except sqlite3.Error:
        waiting = 0
    return trouble.line(rec, waiting, time.time() if now is None else now, here=" of this project")


def unavailable_note(project: str, message: str) -> str:
    """Memory exists but cannot be read: say so, and why; never pretend it is empty."""
    return wrap(f"Kenning's memory of project {project} is unavailable: {message}. Nothing from earlier sessions "
                "is shown. What happens in this session is still captured in the spool and kept.")


def status_notes(paths: Paths, now: float | None = None) -> list[str]:
    """What the agent (and through it the user) must be told about saving: one line each."""
    from kenning import losses
    from kenning.store import health

    now = time.time() if now is None else now
    notes = []
    if os.path.isdir(paths.root) and not health.writable_dir(paths.root):
        notes.append(f"Kenning cannot save: the data dir {paths.root} is read-only, so this session will not be "
                     "remembered (remount it read-write, or set KENNING_DATA_DIR).")
    free = free_bytes(paths.root)
    if free is not None and free < LOW_DISK_BYTES:
        notes.append(f"Kenning's disk is almost full ({free // 1_000_000} MB free in {paths.root}): what this session "
                     "does may not be saved.")
    rec = losses.read(paths)
    if rec.get("events") and now - float(rec.get("last_at") or 0) < LOSS_NOTE_S:
        notes.append(f"Kenning lost captures: {losses.describe(rec)}. `kenning doctor` has the details.")
    return notes


def with_notes(text: str, notes: Sequence[str]) -> str:
    """``text`` (a fenced context) with ``notes`` as its last lines, inside the fence."""
    if not notes or not text.endswith(CLOSE):
        return text
    extra = "\n".join(notes)[:NOTES_MAX_CHARS]
    return text[:-len(CLOSE)].rstrip("\n") + "\n" + neutralise(extra) + "\n" + CLOSE


def free_bytes(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


def build(conn: sqlite3.Connection, settings: Settings, project: str, *, now: float | None = None,
          modes_dir: str | None = None, name: str = "", agent: str = "claude-code",
          cache: SelectionCache | None = None, waiting: str = "", root: str = "") -> str:
    """Render the index for the project keyed ``project`` from an open connection.

    ``name`` is what to call it when the database does not know it (yet). Rows recorded by another
    agent than ``agent`` (the one asking) name that agent, so one agent knows what another did.
    """
    now = time.time() if now is None else now
    title = display(conn, project, name)
    sel = Selection(conn, settings, project, now) if cache is None else cache.selection(conn, settings, project, now)
    if sel.empty:
        return team_section(empty_note(title, waiting=waiting), conn, project)
    from kenning.context.evidence_marks import vet  # checked against the working tree at ``root``

    sel, checked = vet(conn, sel, root, settings, project)
    icons = type_icons(load_mode(settings.mode, modes_dir))
    footer = budget_note(conn, settings, now)

    def render() -> str:
        return Layout(sel, settings, title, icons, footer=footer, work_tokens=sel.work_tokens(), agent=agent).text()

    rest = (title, tuple(icons.items()), footer, agent, checked)
    text = render() if cache is None else cache.text(project, sel, rest, render)
    return team_section(text, conn, project, root if settings.evidence_check else "")


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




def index_tokens(conn: sqlite3.Connection, settings: Settings, project: str | None, *,
                 modes_dir: str | None = None, now: float | None = None) -> int:
    """What reading the session-start index costs, as the index counts itself (records.text_tokens of
    its text): of ``project``'s, or the sum of every project's with memory when ``project`` is None."""
    from kenning.records import text_tokens

    keys = [project] if project else [str(r[0]) for r in conn.execute(
        "SELECT DISTINCT project FROM observations WHERE status = 'active'")]
    total = 0
    for key in keys:
        if conn.execute("SELECT 1 FROM observations WHERE project = ? AND status = 'active' LIMIT 1",
                        (key,)).fetchone():
            total += text_tokens(build(conn, settings, key, now=now, modes_dir=modes_dir))
    return total
