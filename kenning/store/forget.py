"""Forgetting: delete memory by id, search query, project or date range, and what derives from it.

Observations, summaries and prompts are the canonical rows; their FTS entries go with them
(triggers), and so do the raw captured payloads of the same prompt turns, so nothing
forgotten can be re-derived later. Space is reclaimed afterwards (FTS merge, checkpoint,
VACUUM) so the forgotten text is gone from the database file and its WAL, not just unlinked.

``select`` is the dry run: it resolves a request into explicit row ids, and ``apply``
deletes exactly those ids, so what a user confirmed is what goes.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from kenning.store import erase
from kenning.store.checkouts import forget_evidence
from kenning.store.repo import transaction

FORGOTTEN_PROMPT = "[forgotten]"  # a forgotten prompt keeps its number (later prompts keep theirs)
MAX_IDS = 10_000
MAX_QUERY_CHARS = 1_000
_CHUNK = 500  # ids per IN (...) list, well under SQLite's variable limit


@dataclass(frozen=True)
class Filters:
    """What to forget (or export). Every given filter must hold (AND)."""

    ids: tuple[int, ...] = ()
    query: str = ""
    project: str = ""
    since: float | None = None  # epoch seconds, inclusive
    until: float | None = None  # epoch seconds, exclusive

    def check(self) -> None:
        """Raise ValueError with a message a user can act on."""
        if not (self.ids or self.query or self.project or self.since is not None or self.until is not None):
            raise ValueError("say what to forget: ids, a query, a project or a date range")
        if len(self.ids) > MAX_IDS:
            raise ValueError(f"at most {MAX_IDS} ids at once")
        if any(isinstance(i, bool) or not isinstance(i, int) or not 0 < i < 2**63 for i in self.ids):
            raise ValueError("ids must be positive integers")
        if len(self.query) > MAX_QUERY_CHARS:
            raise ValueError(f"the query is longer than {MAX_QUERY_CHARS} characters")
        if self.query and not fts_phrase_query(self.query):
            raise ValueError("the query has no words to search for")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError("since must be before until")


def parse_date(text: str, *, end: bool = False) -> float:
    """An ISO date or datetime (local time unless it has an offset) as epoch seconds.

    With ``end``, a bare date means the end of that day: ``--until 2024-03-04`` includes the 4th.
    """
    raw = text.strip()
    try:
        if len(raw) == 10 and raw[4] == "-":
            d = date.fromisoformat(raw)
            dt = datetime(d.year, d.month, d.day) + (timedelta(days=1) if end else timedelta())
        else:
            dt = datetime.fromisoformat(raw)
        return dt.timestamp()  # a naive datetime is local time
    except (ValueError, IndexError, OverflowError, OSError):
        raise ValueError(f"not an ISO date or datetime: {text[:60]!r} (try 2024-03-04 or 2024-03-04T09:15)") \
            from None


def fts_phrase_query(text: str) -> str:
    """Every word of ``text`` becomes a quoted FTS5 phrase (AND): user text never reaches MATCH raw.

    Tokens without a letter or digit (``*``, ``--``, ``(``) are dropped: the tokenizer would
    ignore them anyway, and an empty phrase would match nothing. A word holding CJK letters is
    asked for as the indexes hold it (its runs as character pairs, kenning/search/cjk.py).
    """
    from kenning.search.query import phrase_of

    # FTS5 reads the query as a C string: a NUL would end it inside a quoted phrase.
    text = "".join(c if c.isprintable() else " " for c in text)
    out = []
    for t in text.split():
        if any(c.isalnum() for c in t):
            indexed, prefix = phrase_of(t)
            out.append('"' + indexed.replace('"', '""') + '"' + (" *" if prefix else ""))
    return " ".join(out)


def query_words(text: str) -> list[str]:
    """The words of a query (case-folded, 3+ characters) for the substring scan of raw payloads.

    Split like the FTS tokenizer (on anything not a letter or digit); short words are left
    out, or ``a OR 1=1`` would match nearly every payload.
    """
    out: list[str] = []
    word = ""
    for c in text.casefold() + " ":
        if c.isalnum():
            word += c
            continue
        if len(word) >= 3 and word not in out:
            out.append(word)
        word = ""
    return out


@dataclass
class Item:
    """One row a forget request matches (what the dry run lists)."""

    kind: str  # observation | summary | prompt | session
    id: int
    project: str
    created_at: float
    title: str
    type: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "type": self.type, "title": self.title,
                "project": self.project, "created_at": self.created_at}


@dataclass
class Selection:
    """What a forget request matches, computed before anything is deleted: the dry run."""

    observations: list[Item] = field(default_factory=list)
    summaries: list[Item] = field(default_factory=list)
    prompts: list[Item] = field(default_factory=list)
    sessions: list[Item] = field(default_factory=list)  # whole sessions (forget by project alone)
    event_ids: list[int] = field(default_factory=list)  # raw payloads erased with them
    missing_ids: list[int] = field(default_factory=list)  # requested observation ids that do not exist
    # Summaries of the memories' sessions that hold a copy of their text: rewritten without it
    # (None: nothing else was left, the row goes). See kenning/store/erase.py.
    summary_rewrites: dict[int, dict[str, str] | None] = field(default_factory=dict)
    needles: erase.Needles = field(default_factory=erase.Needles)
    damaged_copies: list[str] = field(default_factory=list)  # set by apply: old files it could not rewrite

    @property
    def empty(self) -> bool:
        return not (self.observations or self.summaries or self.prompts or self.sessions or self.event_ids
                    or self.summary_rewrites)

    def counts(self) -> dict[str, int]:
        return {"observations": len(self.observations), "summaries": len(self.summaries),
                "prompts": len(self.prompts), "sessions": len(self.sessions), "event_payloads": len(self.event_ids),
                "summaries_rewritten": len(self.summary_rewrites)}

    def as_dict(self) -> dict[str, Any]:
        return {"observations": [i.as_dict() for i in self.observations],
                "summaries": [i.as_dict() for i in self.summaries],
                "prompts": [i.as_dict() for i in self.prompts],
                "sessions": [i.as_dict() for i in self.sessions],
                "summaries_rewritten": sorted(self.summary_rewrites),
                "event_payloads": len(self.event_ids), "missing_ids": self.missing_ids, "counts": self.counts()}


def select(conn: sqlite3.Connection, f: Filters) -> Selection:
    """Resolve a forget request into explicit rows. Raises ValueError on a bad request."""
    f.check()
    sel = Selection()
    only_project = bool(f.project) and not f.ids and not f.query and f.since is None and f.until is None
    if only_project:
        # The whole project: its sessions go, and with them everything they hold (FK cascade).
        sel.sessions = [Item("session", r[0], r[1], r[2], r[3]) for r in conn.execute(
            "SELECT id, project, started_at, agent_session_id FROM sessions WHERE project = ? ORDER BY id",
            (f.project,))]
        sids = [s.id for s in sel.sessions]
        sel.observations = _observations(conn, _in("o.session_id", sids))
        sel.summaries = _summaries(conn, _in("s.session_id", sids))
        sel.prompts = _prompts(conn, _in("u.session_id", sids))
        sel.event_ids = _ids(conn, "SELECT id FROM events e WHERE payload IS NOT NULL AND ", _in("e.session_id", sids))
        return sel

    match = fts_phrase_query(f.query) if f.query else ""
    obs_where = _where(f, "o.project", "o.created_at")
    if f.ids:
        found = {r[0] for chunk in _chunks(sorted(set(f.ids))) for r in conn.execute(
            f"SELECT id FROM observations WHERE id IN ({_marks(chunk)})", chunk)}
        sel.missing_ids = [i for i in dict.fromkeys(f.ids) if i not in found]
        obs_where.append(_in("o.id", _groups(conn, sorted(found))))
    if match:
        obs_where.append(("o.id IN (SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?)", [match]))
    sel.observations = _observations(conn, *obs_where)
    if not f.ids:  # ids name observations only
        sum_where = _where(f, "s.project", "s.created_at")
        prompt_where = _where(f, "ses.project", "u.created_at")
        if match:
            sum_where.append(("s.id IN (SELECT rowid FROM session_summaries_fts WHERE session_summaries_fts MATCH ?)",
                              [match]))
            prompt_where.append(("u.id IN (SELECT rowid FROM user_prompts_fts WHERE user_prompts_fts MATCH ?)",
                                 [match]))
        sel.summaries = _summaries(conn, *sum_where)
        sel.prompts = _prompts(conn, *prompt_where)
    events = set(_turn_events(conn, [(o.id, "observations") for o in sel.observations]
                              + [(p.id, "user_prompts") for p in sel.prompts]))
    if not f.ids:
        # Raw payloads forgotten on their own: those holding every word of the query, or
        # (without a query) every event of the date range.
        ev_where = _where(f, "(SELECT project FROM sessions WHERE id = e.session_id)", "e.occurred_at")
        words = query_words(f.query) if f.query else []
        if words:
            conn.create_function("kenning_fold", 1, _fold, deterministic=True)
            ev_where += [("instr(kenning_fold(e.payload), ?) > 0", [w]) for w in words]
        if words or (not f.query and (f.since is not None or f.until is not None)):
            events.update(_ids(conn, "SELECT id FROM events e WHERE payload IS NOT NULL AND ", *ev_where))
    # The copies of the memories' text in their sessions' prompts, payloads and summaries.
    traces = erase.find(conn, [o.id for o in sel.observations], skip_summaries=[s.id for s in sel.summaries],
                        skip_prompts=[p.id for p in sel.prompts], skip_events=events)
    if traces.prompts:
        sel.prompts += _prompts(conn, _in("u.id", traces.prompts))
    events.update(traces.event_ids)
    sel.summary_rewrites, sel.needles = traces.summaries, traces.needles
    sel.event_ids = sorted(events)
    return sel


def _groups(conn: sqlite3.Connection, ids: Sequence[int]) -> list[int]:
    """The ids with their near-duplicate groups (kenning/store/memory_index.py): a restatement of the
    same memory holds the same text, and would take the forgotten head's place in the index."""
    heads = {int(r[0]) for chunk in _chunks(ids) for r in conn.execute(
        f"SELECT COALESCE(duplicate_of, id) FROM observations WHERE id IN ({_marks(chunk)})", chunk)}
    out = set(ids) | heads
    for chunk in _chunks(sorted(heads)):
        out.update(int(r[0]) for r in conn.execute(
            f"SELECT id FROM observations WHERE duplicate_of IN ({_marks(chunk)})", chunk))
    return sorted(out)


Clause = tuple[str, list[object]]


def _where(f: Filters, project_col: str, time_col: str) -> list[Clause]:
    out: list[Clause] = []
    if f.project:
        out.append((f"{project_col} = ?", [f.project]))
    if f.since is not None:
        out.append((f"{time_col} >= ?", [f.since]))
    if f.until is not None:
        out.append((f"{time_col} < ?", [f.until]))
    return out


def _in(col: str, ids: Sequence[int]) -> Clause:
    # Ids are ints we produced or validated: inlining them avoids the variable limit.
    return (f"{col} IN ({','.join(str(int(i)) for i in ids)})" if ids else "0", [])


def _sql(clauses: Iterable[Clause]) -> tuple[str, list[object]]:
    parts, params = [], []
    for sql, p in clauses:
        parts.append(f"({sql})")
        params.extend(p)
    return " AND ".join(parts) or "1", params


def _ids(conn: sqlite3.Connection, head: str, *clauses: Clause) -> list[int]:
    where, params = _sql(clauses)
    return [int(r[0]) for r in conn.execute(head + where, params)]


def _observations(conn: sqlite3.Connection, *clauses: Clause) -> list[Item]:
    where, params = _sql(clauses)
    return [Item("observation", r[0], r[1], r[2], r[3], r[4]) for r in conn.execute(
        f"SELECT o.id, o.project, o.created_at, o.title, o.type FROM observations o WHERE {where} ORDER BY o.id",
        params)]


def _summaries(conn: sqlite3.Connection, *clauses: Clause) -> list[Item]:
    where, params = _sql(clauses)
    return [Item("summary", r[0], r[1], r[2], r[3] or "(session summary)", "summary") for r in conn.execute(
        f"SELECT s.id, s.project, s.created_at, s.request FROM session_summaries s WHERE {where} ORDER BY s.id",
        params)]


def _prompts(conn: sqlite3.Connection, *clauses: Clause) -> list[Item]:
    where, params = _sql(clauses)
    # Already forgotten or private (empty) prompts hold nothing left to forget.
    return [Item("prompt", r[0], r[1], r[2], r[3], "prompt") for r in conn.execute(
        "SELECT u.id, ses.project, u.created_at, u.prompt_text FROM user_prompts u "
        f"JOIN sessions ses ON ses.id = u.session_id WHERE {where} AND u.prompt_text NOT IN ('', ?) "
        "ORDER BY u.id", [*params, FORGOTTEN_PROMPT])]


def _turn_events(conn: sqlite3.Connection, rows: list[tuple[int, str]]) -> list[int]:
    """Events with a payload in the same prompt turns as the given observation / prompt rows."""
    turns: dict[int, set[int]] = {}
    for table in ("observations", "user_prompts"):
        ids = [i for i, t in rows if t == table]
        for chunk in _chunks(ids):
            for sid, number in conn.execute(
                    f"SELECT session_id, prompt_number FROM {table} WHERE id IN ({_marks(chunk)}) "
                    "AND prompt_number IS NOT NULL", chunk):
                turns.setdefault(int(sid), set()).add(int(number))
    out: list[int] = []
    for sid, numbers in turns.items():
        out.extend(int(r[0]) for r in conn.execute(
            "SELECT id, prompt_number FROM events WHERE session_id = ? AND payload IS NOT NULL", (sid,))
            if r[1] in numbers)
    return out


def apply(conn: sqlite3.Connection, sel: Selection,
          log: Callable[[sqlite3.Connection, Selection], None] | None = None) -> dict[str, int]:
    """Delete exactly what ``sel`` names, in one transaction (with ``log``'s row: the memory service's
    operation log); returns what was removed."""
    out = {"observations": 0, "summaries": 0, "prompts": 0, "sessions": 0, "event_payloads": 0,
           "summaries_rewritten": 0, "made_current": 0, "quarantined_files": 0}
    conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left readable in the file
    now = time.time()
    with transaction(conn):
        # The sessions whose text goes: an observer's live conversation of one starts afresh.
        touched: set[int] = set()
        for table, ids in (("observations", [i.id for i in sel.observations]),
                           ("user_prompts", [i.id for i in sel.prompts]),
                           ("session_summaries", [i.id for i in sel.summaries] + list(sel.summary_rewrites))):
            for chunk in _chunks(ids):
                touched.update(int(r[0]) for r in conn.execute(
                    f"SELECT DISTINCT session_id FROM {table} WHERE id IN ({_marks(chunk)})", chunk))
        if touched and _has_column(conn, "sessions", "forgotten_at"):
            conn.execute(f"UPDATE sessions SET forgotten_at = ? WHERE id IN ({','.join(map(str, sorted(touched)))})",
                         (now,))
        # Before the rows go (the foreign key would only clear superseded_by and leave them hidden).
        out["made_current"] = erase.apply_successors(conn, erase.successors(conn, [i.id for i in sel.observations]))
        for chunk in _chunks([i.id for i in sel.observations]):
            out["observations"] += conn.execute(
                f"DELETE FROM observations WHERE id IN ({_marks(chunk)})", chunk).rowcount
        for chunk in _chunks([i.id for i in sel.summaries]):
            out["summaries"] += conn.execute(
                f"DELETE FROM session_summaries WHERE id IN ({_marks(chunk)})", chunk).rowcount
        rewritten, emptied = erase.rewrite_summaries(conn, sorted(sel.summary_rewrites), sel.needles)
        out["summaries_rewritten"] += rewritten
        out["summaries"] += emptied
        for chunk in _chunks([i.id for i in sel.prompts]):
            out["prompts"] += conn.execute(
                f"UPDATE user_prompts SET prompt_text = ? WHERE id IN ({_marks(chunk)}) AND prompt_text != ?",
                [FORGOTTEN_PROMPT, *chunk, FORGOTTEN_PROMPT]).rowcount
        for chunk in _chunks(sel.event_ids):
            # A pending event of a forgotten turn is skipped: the observer must not re-derive it.
            out["event_payloads"] += conn.execute(
                "UPDATE events SET payload = NULL, status = CASE status WHEN 'pending' THEN 'skipped' ELSE status END, "
                f"processed_at = COALESCE(processed_at, ?) WHERE id IN ({_marks(chunk)}) AND payload IS NOT NULL",
                [now, *chunk]).rowcount
        for chunk in _chunks([i.id for i in sel.sessions]):
            out["sessions"] += conn.execute(
                f"DELETE FROM sessions WHERE id IN ({_marks(chunk)})", chunk).rowcount
        for project in sorted({i.project for i in sel.sessions}):
            forget_evidence(conn, project)  # what its sessions showed about the repository goes with them
        if log is not None:
            log(conn, sel)
    files = erase.scrub_files(conn, sel.needles)
    out["quarantined_files"] = len(files["deleted"])
    if files["damaged_copies"]:
        sel.damaged_copies = files["damaged_copies"]
    _reset_backups(conn)
    return out


def _reset_backups(conn: sqlite3.Connection) -> None:
    """Forgetting resets the backups (kenning/store/backup.py): here, where every forget's deletion
    passes (CLI, HTTP, MCP, the viewer's delete), once the deletion is committed."""
    from kenning.store.backup import after_forget

    row = conn.execute("PRAGMA database_list").fetchone()
    if row is not None and row[2]:
        after_forget(str(row[2]))


def reclaim(conn: sqlite3.Connection, *, timeout: float = 30.0,
            on_phase: Callable[[str], None] | None = None) -> None:
    """Rewrite the file so forgotten text leaves the disk, not only the tables.

    FTS5 keeps deleted terms in old segments until they merge, freed pages keep old bytes,
    and the WAL keeps old page images until it is reset: merge, VACUUM, then truncate the
    WAL (retrying while a reader still uses it). Raises sqlite3.OperationalError when the
    database stays busy.
    """
    phase = on_phase or (lambda _name: None)
    phase("merge")
    for table in fts_tables(conn):
        q = '"' + table.replace('"', '""') + '"'
        conn.execute(f"INSERT INTO {q} ({q}) VALUES ('optimize')")
    phase("vacuum")
    conn.execute("VACUUM")
    phase("checkpoint")
    deadline = time.monotonic() + timeout
    while True:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if not busy:
            return
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError("the WAL could not be truncated: a reader kept it busy")
        time.sleep(0.05)


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    """Every FTS5 table, the optional ones (trigram) included: each keeps deleted terms until merged
    (not the fts5vocab views of migration 0022: they hold nothing)."""
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%' "
        "AND sql NOT LIKE '%USING fts5vocab%' ORDER BY name")]


def file_bytes(db_path: str) -> int:
    """Size of the database file and its WAL."""
    return sum(os.path.getsize(p) for p in (db_path, db_path + "-wal") if os.path.exists(p))


def forget(conn: sqlite3.Connection, db_path: str, f: Filters, *, dry_run: bool,
           log: Callable[[sqlite3.Connection, Selection], None] | None = None) -> dict[str, Any]:
    """Select, and unless ``dry_run`` delete and reclaim: the whole request in one call (HTTP, MCP)."""
    sel = select(conn, f)
    out: dict[str, Any] = {"dry_run": dry_run, "selection": sel.as_dict()}
    if dry_run or sel.empty:
        out["deleted"] = None
        return out
    out["deleted"] = apply(conn, sel, log)
    out.update(reclaim_report(conn, db_path))
    if sel.damaged_copies:
        out["warning"] = "; ".join(filter(None, [out.get("warning"), damaged_warning(sel.damaged_copies)]))
    return out


def damaged_warning(paths: Sequence[str]) -> str:
    return (f"{len(paths)} damaged database(s) set aside by `kenning repair` may still hold old memory, "
            f"forgotten text included: delete them once nothing more is to be salvaged ({', '.join(paths)})")


def reclaim_report(conn: sqlite3.Connection, db_path: str) -> dict[str, Any]:
    """Reclaim space; the deletion is already committed, so a busy database is a warning, not a failure."""
    before = file_bytes(db_path)
    try:
        reclaim(conn)
    except sqlite3.OperationalError as e:
        return {"reclaimed": False, "bytes_before": before, "bytes_after": file_bytes(db_path),
                "warning": f"deleted, but the space is not reclaimed yet ({e}); forget again to retry"}
    return {"reclaimed": True, "bytes_before": before, "bytes_after": file_bytes(db_path)}


def _has_column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    return any(r[1] == column for r in conn.execute(f"PRAGMA table_info({table})"))


def _fold(value: str | None) -> str | None:
    return value.casefold() if isinstance(value, str) else value


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    for i in range(0, len(ids), _CHUNK):
        yield list(ids[i:i + _CHUNK])


def _marks(chunk: Sequence[object]) -> str:
    return ",".join("?" * len(chunk))
