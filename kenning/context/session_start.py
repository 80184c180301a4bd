"""The session-start index: what the agent is told about a project when a session begins.

An index, not prose: a header, a legend of type icons, the token economics, then per day
the ``#id time icon title`` rows of recent observations interleaved with session-summary
rows, the latest summary's learned / next steps, and how to fetch details. Bounded by
count and by characters (Claude Code cuts hook text at 10,000).

Standard library only (``sqlite3``): the SessionStart hook builds it itself when the
worker cannot answer in time, and the worker serves the very same text.
"""

from __future__ import annotations

import os
import sqlite3
import time

from kenning.context.fence import CLOSE, OPEN, neutralise, wrap
from kenning.observer.modes import load_mode, type_icons
from kenning.paths import Paths
from kenning.project import identify, is_excluded, resolve_key
from kenning.settings import Settings
from kenning.store.projects import display

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

SUMMARY_ICON = "📋"
COUNT_CAP = 10_000
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
                        agent=agent)[0]


def context_text(paths: Paths, settings: Settings, name: str, key_of: Callable[[sqlite3.Connection], str], *,
                 now: float | None = None, agent: str = "claude-code") -> tuple[str, str]:
    """(the index for the project ``key_of`` resolves, its key) - or one line saying why memory is
    unavailable (never "no memory" when there is memory that cannot be read) - followed by what the
    user must know: captures that could not be saved, a read-only data dir, a nearly full disk."""
    from kenning.store import health
    from kenning.store.identity import ForeignDatabase, not_a_database, verify

    key = ""
    if not os.path.exists(paths.db):
        text = empty_note(name, saving=health.writable_dir(paths.root) if os.path.isdir(paths.root) else True)
    else:
        try:
            conn = health.open_readonly(paths.db, timeout=1.0)
        except sqlite3.Error as e:
            if not_a_database(e):  # no SQLite header: not a file of ours to call damaged
                raise ForeignDatabase(paths.db, "not an SQLite file") from None
            text = _unreadable(paths, name, e)
        else:
            try:
                conn.execute("PRAGMA busy_timeout = 1000")
                verify(conn, paths.db)
                key = key_of(conn)
                text = build(conn, settings, key, now=now, modes_dir=paths.modes, name=name,
                             agent=agent)
            except ForeignDatabase:
                raise  # the caller tells the user: "no memory of this project yet" would be untrue
            except sqlite3.Error as e:
                text = _unreadable(paths, name, e)
            finally:
                conn.close()
    return with_notes(text, status_notes(paths, now)), key


def _unreadable(paths: Paths, project: str, err: BaseException) -> str:
    from kenning.store import health

    kind, message = health.classify(paths.db, err)
    if kind in (health.NO_SCHEMA, health.MISSING):
        return empty_note(project)  # created, never migrated: truly nothing yet
    return unavailable_note(project, message)


def empty_note(project: str, *, saving: bool = True) -> str:
    then = ("what happens in this session will be remembered." if saving
            else "nothing can be saved either (see below).")
    return f"{OPEN}Kenning has no memory of project {neutralise(project)} yet; {then}{CLOSE}"


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
          modes_dir: str | None = None, name: str = "", agent: str = "claude-code") -> str:
    """Render the index for the project keyed ``project`` from an open connection.

    ``name`` is what to call it when the database does not know it (yet). Rows recorded by another
    agent than ``agent`` (the one asking) name that agent, so one agent knows what another did.
    """
    now = time.time() if now is None else now
    title = display(conn, project, name)
    obs = conn.execute(
        "SELECT o.id, o.session_id, o.type, o.title, o.created_at, o.source_tokens, o.tokens_spent, s.platform "
        "FROM observations o JOIN sessions s ON s.id = o.session_id "
        "WHERE o.project = ? AND o.status = 'active' ORDER BY o.created_at DESC, o.id DESC LIMIT ?",
        (project, settings.context_observations)).fetchall()
    sums = conn.execute(
        "SELECT s.id, s.session_id, s.request, s.learned, s.completed, s.next_steps, s.created_at, "
        "s.source_tokens, s.tokens_spent, ses.started_at, ses.platform FROM session_summaries s "
        "JOIN sessions ses ON ses.id = s.session_id WHERE s.project = ? "
        "ORDER BY s.created_at DESC, s.id DESC LIMIT ?",
        (project, settings.context_sessions)).fetchall()
    if not obs and not sums:
        return empty_note(title)
    # Counting is linear in the project's size: count at most COUNT_CAP rows (constant time at 1M).
    total = conn.execute("SELECT COUNT(*) FROM (SELECT 1 FROM observations WHERE project = ? AND status = 'active' "
                         "LIMIT ?)", (project, COUNT_CAP + 1)).fetchone()[0]
    icons = type_icons(load_mode(settings.mode, modes_dir))
    rows: list[tuple[float, int, str, str]] = []  # (time, order, kind, text) - kind 'o' or 's'
    for o in obs:
        rows.append((o[4], o[0], "o", _obs_row(o, icons) + _by(o[7], agent)))
    for s in sums:
        rows.append((s[9] or s[6], -s[0], "s",
                     f"S{s[0]} {{t}} {SUMMARY_ICON} {_clean(s[2]) or 'Session'}{_by(s[10], agent)}"))
    latest = sums[0] if sums else None
    work = sum(int(o[5] or 0) + int(o[6] or 0) for o in obs) + sum(int(s[7] or 0) + int(s[8] or 0) for s in sums)

    rows.sort(key=lambda r: (r[0], r[1]))
    footer = budget_note(conn, settings, now)
    def render(keep: int) -> str:
        return _render(title, now, icons, rows[len(rows) - keep:], latest, work, total, hidden=len(rows) - keep,
                       footer=footer)

    # Keep the newest rows that fit: binary search on how many (the length grows with the count).
    text = render(len(rows))
    if len(text) > settings.context_max_chars:
        lo, hi = 1, len(rows) - 1
        best = render(1)
        while lo <= hi:
            mid = (lo + hi) // 2
            candidate = render(mid)
            if len(candidate) <= settings.context_max_chars:
                best, lo = candidate, mid + 1
            else:
                hi = mid - 1
        text = best
    if len(text) > settings.context_max_chars:
        text = text[: settings.context_max_chars - len(CLOSE) - 2] + "…\n" + CLOSE
    return text


def _obs_row(o: Sequence[object], icons: dict[str, str]) -> str:
    icon = icons.get(str(o[2]), "•")
    return f"#{o[0]} {{t}} {icon} {_clean(str(o[3]))}"


_BY = " · in "


def _by(platform: object, asking: str) -> str:
    """`` · in Codex CLI`` for a row another coding agent recorded; nothing for the asking agent's own,
    nor for rows of no agent (saved through MCP, imported from an export)."""
    from kenning.integrations import LABELS

    label = LABELS.get(str(platform or ""))
    return f"{_BY}{label}" if label and platform != asking else ""


def _clean(text: object) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= 160 else s[:159] + "…"


def _render(project: str, now: float, icons: dict[str, str], rows: list[tuple[float, int, str, str]],
            latest: Sequence[object] | None, work: int, total: int, hidden: int, footer: str = "") -> str:
    lines = [OPEN, f"# Memory of {project} · {time.strftime('%a %Y-%m-%d %H:%M %Z', time.localtime(now))}",
             "Legend: " + " · ".join([f"{SUMMARY_ICON} session", *(f"{v} {k}" for k, v in icons.items())]),
             "{economics}",
             "Rows: #ID TIME ICON TITLE (observations) and S<ID> (session summaries), oldest first."]
    if any(_BY in text for _t, _o, _k, text in rows):
        lines[-1] = lines[-1][:-1] + "; \"in <agent>\" marks work done in another coding agent."
    day = None
    last_time = None
    for t, _order, _kind, text in rows:
        lt = time.localtime(t)
        d = time.strftime("%Y-%m-%d (%a)", lt)
        if d != day:
            lines.append(f"\n## {d}")
            day, last_time = d, None
        hm = time.strftime("%H:%M", lt)
        lines.append(text.replace("{t}", hm if hm != last_time else '  "  ', 1))
        last_time = hm
    if latest is not None and (latest[3] or latest[5]):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(str(latest[6]))))
        lines.append(f"\n## Where the last session left off ({when})")
        if latest[2]:
            lines.append(f"Asked: {_clean(latest[2])}")
        if latest[3]:
            lines.append(f"Learned: {_clip(str(latest[3]), 500)}")
        if latest[4]:
            lines.append(f"Completed: {_clip(str(latest[4]), 500)}")
        if latest[5]:
            lines.append(f"Next steps: {_clip(str(latest[5]), 400)}")
    shown = sum(1 for r in rows if r[2] == "o")
    older = total - shown
    lines.append("")
    if older > 0 or hidden:
        many = f"More than {COUNT_CAP - shown:,}" if total > COUNT_CAP else f"{older}"
        lines.append(f"{many} older observation(s) are not listed; search finds them.")
    lines.append("Details: `kenning show <ID>` prints a full record; `kenning search <words>` looks further back.")
    if footer:
        lines.append(footer)
    # Stored text (titles, summaries, the project's name) is neutralised inside the fence.
    body = wrap("\n".join(lines[1:]))
    read_tokens = (len(body) + 3) // 4
    if work > 0:
        saved = max(0, 100 - round(read_tokens * 100 / work)) if work else 0
        econ = (f"Economics: reading this index costs ~{read_tokens:,} tokens; it condenses ~{work:,} tokens "
                f"of past work ({saved}% smaller).")
    else:
        econ = f"Economics: reading this index costs ~{read_tokens:,} tokens."
    return body.replace("{economics}", econ, 1)


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


def _clip(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
