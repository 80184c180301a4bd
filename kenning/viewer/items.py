"""Feed items: one shape for observations, prompts and summaries, paged newest first.

The feed merges three tables by time with a keyset cursor ``at:kind:id`` (not OFFSET), so
page 2,000 costs what page 1 does: each table is walked backwards on its time index from
the cursor, at most ``limit`` rows each, and the three short lists are merged here.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from kenning.records import text_tokens
from kenning.search.service import one_line
from kenning.viewer.team import SHARE_SQL, share

KINDS = ("observation", "prompt", "summary")
LETTER = {"observation": "o", "prompt": "p", "summary": "s"}
KIND_OF = {v: k for k, v in LETTER.items()}
# Among items of the same instant, a summary sorts above the observations of its turn, and those
# above the prompt that started it: newest first reads as the story backwards.
RANK = {"prompt": 0, "observation": 1, "summary": 2}
MAX_LIMIT = 200
# Memory views of the feed (the layers of kenning/memory/layers.py as the viewer names them):
# "" every current item (superseded ones hidden); "rule", "key", "log": the group heads of one
# layer that sessions may be given; "archived": routine work past archive_after_days;
# "superseded": what a newer memory replaced.
MEMORY_VIEWS = ("", "rule", "key", "log", "archived", "superseded")


@dataclass(frozen=True)
class FeedFilter:
    project: str | None = None
    types: tuple[str, ...] = ()
    concept: str | None = None
    since: float | None = None
    until: float | None = None
    kinds: tuple[str, ...] = KINDS
    include_inactive: bool = True
    session: int | None = None  # only for counting a session's items
    memory: str = ""  # one of MEMORY_VIEWS
    archive_before: float = 0.0  # routine work created before this is the archive (0: none)

    def wanted(self) -> tuple[str, ...]:
        # A type, concept or layer belongs to observations only: the other kinds have none.
        return ("observation",) if self.types or self.concept or self.memory else self.kinds


@dataclass(frozen=True, order=True)
class Cursor:
    at: float
    rank: int
    id: int

    def encode(self) -> str:
        kind = next(k for k, r in RANK.items() if r == self.rank)
        return f"{self.at!r}:{LETTER[kind]}:{self.id}"

    @staticmethod
    def decode(text: str) -> Cursor:
        """Raises ValueError on anything but a cursor this module made."""
        parts = text.split(":")
        if len(parts) != 3 or parts[1] not in KIND_OF or not parts[2].isdigit() or len(parts[2]) > 18:
            raise ValueError("before must be a cursor from a previous page")
        at = float(parts[0])
        if at != at or at in (float("inf"), float("-inf")):
            raise ValueError("before must be a cursor from a previous page")
        return Cursor(at, RANK[KIND_OF[parts[1]]], int(parts[2]))


@dataclass
class Page:
    items: list[dict[str, Any]] = field(default_factory=list)
    next: str | None = None
    counts: dict[str, dict[str, int]] | None = None  # {"days": {iso day: n}, "sessions": {id: n}}


# Subtitles that only restate what the card already shows (file counts, who said it): written
# by the offline observer before it stopped doing so, and never worth a line of the feed.
_FILLER = re.compile(r"^(?:\d+ created, \d+ modified|\d+ file\(s\) read, nothing changed|stated by the user"
                     r"|command failed|prompt #\d+)$", re.IGNORECASE)


def informative(title: str, subtitle: str) -> str:
    """The subtitle if it tells something the title does not, else ''."""
    s = subtitle.strip()
    if not s or _FILLER.match(s) or s.casefold() == title.strip().casefold():
        return ""
    return s


def json_list(raw: str | None) -> list[str]:
    try:
        v = json.loads(raw or "[]")
    except ValueError:
        return []
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


# Columns each kind's query selects, in the order the row readers below expect.
_OBS_COLS = ("o.id, o.created_at, o.project, o.session_id, o.type, o.title, o.subtitle, o.status, o.concepts, "
             "o.files_read, o.files_modified, "
             "(LENGTH(o.title) + LENGTH(o.subtitle) + LENGTH(o.narrative) + LENGTH(o.facts) + 3) / 4, "
             "o.layer, o.user_layer, o.occurrences, o.superseded_by, o.duplicate_of, o.scope, "
             f"({SHARE_SQL.format(oid='o.id')})")
_PROMPT_COLS = "u.id, u.created_at, s.project, u.session_id, u.prompt_text, u.prompt_number"
_SUMMARY_COLS = ("m.id, m.created_at, m.project, m.session_id, m.request, m.completed, m.files_modified, "
                 "(LENGTH(m.request) + LENGTH(m.investigated) + LENGTH(m.learned) + LENGTH(m.completed) "
                 "+ LENGTH(m.next_steps) + LENGTH(m.notes) + 3) / 4")


def _obs_item(r: Sequence[Any], archive_before: float = 0.0) -> dict[str, Any]:
    files = list(dict.fromkeys(json_list(r[10]) + json_list(r[9])))
    title = one_line(r[5])
    layer = r[12] or "log"
    return {"kind": "observation", "key": f"o:{r[0]}", "id": r[0], "at": r[1], "project": r[2], "session_id": r[3],
            "type": r[4], "title": title, "subtitle": informative(title, one_line(r[6], 300)), "status": r[7],
            "concepts": json_list(r[8]), "files": files, "tokens": int(r[11] or 0),
            "layer": layer, "pinned": r[13] == "rule", "decided": r[13], "occurrences": int(r[14] or 1),
            "superseded_by": r[15], "duplicate_of": r[16],
            "archived": layer == "log" and r[7] == "active" and r[1] < archive_before, "share": share(r[17], r[18])}


def _prompt_item(r: Sequence[Any]) -> dict[str, Any]:
    text = r[4] or ""
    return {"kind": "prompt", "key": f"p:{r[0]}", "id": r[0], "at": r[1], "project": r[2], "session_id": r[3],
            "type": "prompt", "title": one_line(text), "subtitle": "", "number": r[5], "status": "active",
            "concepts": [], "files": [], "tokens": text_tokens(text)}


def _summary_item(r: Sequence[Any]) -> dict[str, Any]:
    title = one_line(r[4] or r[5] or "session summary")
    return {"kind": "summary", "key": f"s:{r[0]}", "id": r[0], "at": r[1], "project": r[2], "session_id": r[3],
            "type": "summary", "title": title, "subtitle": informative(title, one_line(r[5], 300)),
            "status": "active", "concepts": [], "files": json_list(r[6]), "tokens": int(r[7] or 0)}


def _time_clause(col: str, id_col: str, kind: str, c: Cursor | None) -> tuple[str, list[Any]]:
    """Rows strictly after the cursor in feed order (newest first)."""
    if c is None:
        return "", []
    rank = RANK[kind]
    if rank < c.rank:  # every row of this kind at the cursor's instant sorts after it
        return f" AND {col} <= ?", [c.at]
    if rank > c.rank:
        return f" AND {col} < ?", [c.at]
    return f" AND ({col} < ? OR ({col} = ? AND {id_col} < ?))", [c.at, c.at, c.id]


def _common(f: FeedFilter, project_col: str, time_col: str) -> tuple[str, list[Any]]:
    sql, args = "", list[Any]()
    if f.project:
        sql += f" AND {project_col} = ?"
        args.append(f.project)
    if f.since is not None:
        sql += f" AND {time_col} >= ?"
        args.append(f.since)
    if f.until is not None:
        sql += f" AND {time_col} < ?"
        args.append(f.until)
    return sql, args


def memory_clause(f: FeedFilter) -> tuple[str, list[Any]]:
    """The SQL (on ``o``) of a memory view; the default view leaves superseded rows out."""
    if f.memory == "superseded":
        return " AND o.status = 'superseded'", []
    if f.memory in ("rule", "key"):
        return " AND o.layer = ? AND o.status = 'active' AND o.duplicate_of IS NULL", [f.memory]
    if f.memory == "log":
        return " AND o.layer = 'log' AND o.status = 'active' AND o.duplicate_of IS NULL AND o.created_at >= ?", \
            [f.archive_before]
    if f.memory == "archived":
        return " AND o.layer = 'log' AND o.status = 'active' AND o.duplicate_of IS NULL AND o.created_at < ?", \
            [f.archive_before]
    return " AND o.status != 'superseded'", []


def in_view(item: dict[str, Any], f: FeedFilter) -> bool:
    """Whether an item (from ``hydrate``, with ``f.archive_before``) belongs to ``f``'s memory view:
    what ``memory_clause`` says in SQL, for search hits, which come from elsewhere."""
    if item["kind"] != "observation":
        return not f.memory
    status, layer, head = item["status"], item["layer"], item["duplicate_of"] is None
    if f.memory == "superseded":
        return bool(status == "superseded")
    if not f.memory:
        return bool(status != "superseded")
    if status != "active" or not head:
        return False
    if f.memory == "archived":
        return bool(item["archived"])
    return bool(layer == f.memory and not item["archived"])


def _observations(conn: sqlite3.Connection, f: FeedFilter, c: Cursor | None, limit: int) -> list[dict[str, Any]]:
    if f.concept:
        # Walk the concept's own index (a derived table) by time: a rare concept costs what a common one does.
        source = "observation_concepts k JOIN observations o ON o.id = k.observation_id"
        where, args = " AND k.concept = ?", [f.concept]
        when, oid = "k.created_at", "k.observation_id"
    else:
        # Pin the index that yields rows in feed order: the planner would otherwise pick the
        # (project, status, created_at) one and sort every row of the project (~50 ms at 80k).
        one_type = len(f.types) == 1
        if f.memory == "superseded":
            index = "observations_superseded" if f.project else "observations_superseded_time"
        elif f.memory:  # one layer's group heads in time order
            index = "observations_layer_time" if f.project else "observations_layer_all"
        elif f.project:
            index = "observations_project_type_created" if one_type else "observations_project_created"
        else:
            index = "observations_type_created" if one_type else "observations_time"
        source = f"observations o INDEXED BY {index}"
        where, args, when, oid = "", [], "o.created_at", "o.id"
    w, a = _common(f, "o.project", when)
    t, targs = _time_clause(when, oid, "observation", c)
    where += w + t
    args += a + targs
    if f.types:
        where += f" AND o.type IN ({','.join('?' * len(f.types))})"
        args += list(f.types)
    if not f.include_inactive:
        where += " AND o.status = 'active'"
    m, margs = memory_clause(f)
    where += m
    args += margs
    rows = conn.execute(f"SELECT {_OBS_COLS} FROM {source} WHERE 1{where} "
                        f"ORDER BY {when} DESC, {oid} DESC LIMIT ?", [*args, limit]).fetchall()
    return [_obs_item(r, f.archive_before) for r in rows]


def _prompts(conn: sqlite3.Connection, f: FeedFilter, c: Cursor | None, limit: int) -> list[dict[str, Any]]:
    where, args = _common(f, "s.project", "u.created_at")
    t, targs = _time_clause("u.created_at", "u.id", "prompt", c)
    # Private prompts are stored empty and forgotten ones as a marker: neither is worth a row.
    # Walk prompts by time and check each one's project: a page stops after `limit` matches,
    # where going by the project's sessions first would sort all of its prompts.
    rows = conn.execute(
        f"SELECT {_PROMPT_COLS} FROM user_prompts u INDEXED BY user_prompts_time "
        f"JOIN sessions s ON s.id = u.session_id WHERE u.prompt_text NOT IN ('', '[forgotten]'){where}{t} "
        "ORDER BY u.created_at DESC, u.id DESC LIMIT ?", [*args, *targs, limit]).fetchall()
    return [_prompt_item(r) for r in rows]


def _summaries(conn: sqlite3.Connection, f: FeedFilter, c: Cursor | None, limit: int) -> list[dict[str, Any]]:
    where, args = _common(f, "m.project", "m.created_at")
    t, targs = _time_clause("m.created_at", "m.id", "summary", c)
    rows = conn.execute(f"SELECT {_SUMMARY_COLS} FROM session_summaries m WHERE 1{where}{t} "
                        "ORDER BY m.created_at DESC, m.id DESC LIMIT ?", [*args, *targs, limit]).fetchall()
    return [_summary_item(r) for r in rows]


_READERS = {"observation": _observations, "prompt": _prompts, "summary": _summaries}


def sort_key(item: dict[str, Any]) -> tuple[float, int, int]:
    return (item["at"], RANK[item["kind"]], item["id"])


def feed(conn: sqlite3.Connection, f: FeedFilter, *, before: str | None = None, limit: int = 50,
         tz: tzinfo | None = None) -> Page:
    """One page of the feed, newest first; ``next`` is the cursor of the following page. With
    ``tz``, the page also counts the items of each local day and session it shows."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
    cursor = Cursor.decode(before) if before else None
    merged: list[dict[str, Any]] = []
    for kind in f.wanted():
        # One more than a page: tells whether anything follows without another query.
        merged.extend(_READERS[kind](conn, f, cursor, limit + 1))
    merged.sort(key=sort_key, reverse=True)
    page = merged[:limit]
    nxt = None
    if len(merged) > limit and page:
        last = page[-1]
        nxt = Cursor(last["at"], RANK[last["kind"]], last["id"]).encode()
    return Page(page, nxt, group_counts(conn, f, page, tz) if tz is not None else None)


# ------------------------------------------------------------------------------ group counts
_COUNT_SQL = {
    "observation": ("observations o", "o.project", "o.created_at", "o.session_id"),
    "prompt": ("user_prompts u JOIN sessions s ON s.id = u.session_id", "s.project", "u.created_at", "u.session_id"),
    "summary": ("session_summaries m", "m.project", "m.created_at", "m.session_id"),
}


def count(conn: sqlite3.Connection, f: FeedFilter) -> int:
    """How many feed items ``f`` matches (the same rules as ``feed``)."""
    total = 0
    for kind in f.wanted():
        source, project_col, time_col, session_col = _COUNT_SQL[kind]
        if kind == "observation" and f.session is not None:
            # A session's few rows by their own index: with a layer to match, the planner (no
            # statistics) would walk the layer's index instead (~6 ms a session at 100k).
            source = "observations o INDEXED BY observations_session"
        concept_sql, concept_args = "", list[Any]()
        if kind == "observation" and f.concept:
            if f.session is None:
                # A day of one concept: a range of the concept's own (concept, created_at) key.
                source = "observation_concepts k JOIN observations o ON o.id = k.observation_id"
                time_col = "k.created_at"
                concept_sql, concept_args = " AND k.concept = ?", [f.concept]
            else:  # a session's few rows, each checked for the concept
                concept_sql = (" AND EXISTS (SELECT 1 FROM observation_concepts k "
                               "WHERE k.observation_id = o.id AND k.concept = ?)")
                concept_args = [f.concept]
        where, args = _common(f, project_col, time_col)
        where += concept_sql
        args += concept_args
        if f.session is not None:
            where += f" AND {session_col} = ?"
            args.append(f.session)
        if kind == "observation":
            if f.types:
                where += f" AND o.type IN ({','.join('?' * len(f.types))})"
                args += list(f.types)
            if not f.include_inactive:
                where += " AND o.status = 'active'"
            if not f.memory and f.include_inactive and not f.types and not f.concept:
                # Everything but what was superseded: the range's count (from an index alone) less
                # the few superseded rows in it (their own partial index), no row read.
                every = int(conn.execute(f"SELECT COUNT(*) FROM {source} WHERE 1{where}", args).fetchone()[0])
                gone = int(conn.execute(f"SELECT COUNT(*) FROM {source} WHERE 1{where} AND o.status = 'superseded'",
                                        args).fetchone()[0])
                total += every - gone
                continue
            m, margs = memory_clause(f)
            where += m
            args += margs
        elif kind == "prompt":
            where += " AND u.prompt_text NOT IN ('', '[forgotten]')"
        total += int(conn.execute(f"SELECT COUNT(*) FROM {source} WHERE 1{where}", args).fetchone()[0])
    return total


def local_day(at: float, tz: tzinfo) -> str:
    return datetime.fromtimestamp(at, tz).strftime("%Y-%m-%d")


def _day_bounds(day: str, tz: tzinfo) -> tuple[float, float]:
    start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=tz)
    # The next local midnight (23 or 25 hours later on a change of clocks).
    end = (start + timedelta(days=1, hours=2)).replace(hour=0, minute=0)
    return start.timestamp(), end.timestamp()


def group_counts(conn: sqlite3.Connection, f: FeedFilter, page: list[dict[str, Any]],
                 tz: tzinfo) -> dict[str, dict[str, int]]:
    """Items per local day and per session, under the same filters, for the groups a page shows."""
    days: dict[str, int] = {}
    for day in dict.fromkeys(local_day(it["at"], tz) for it in page):
        lo, hi = _day_bounds(day, tz)
        since = lo if f.since is None else max(lo, f.since)
        until = hi if f.until is None else min(hi, f.until)
        days[day] = count(conn, replace(f, since=since, until=until)) if since < until else 0
    sessions = {str(sid): count(conn, replace(f, session=sid))
                for sid in dict.fromkeys(it["session_id"] for it in page if it.get("session_id") is not None)}
    return {"days": days, "sessions": sessions}


def hydrate(conn: sqlite3.Connection, keys: Iterable[tuple[str, int]],
            archive_before: float = 0.0) -> list[dict[str, Any]]:
    """Items for (kind, id) pairs, in the order given; ids that no longer exist are skipped."""
    keys = list(keys)
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for kind in KINDS:
        ids = sorted({i for k, i in keys if k == kind})
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            if kind == "observation":
                rows = conn.execute(f"SELECT {_OBS_COLS} FROM observations o WHERE o.id IN ({marks})", chunk)
                found.update({("observation", r[0]): _obs_item(r, archive_before) for r in rows})
            elif kind == "prompt":
                rows = conn.execute(f"SELECT {_PROMPT_COLS} FROM user_prompts u JOIN sessions s ON s.id = u.session_id "
                                    f"WHERE u.id IN ({marks})", chunk)
                found.update({("prompt", r[0]): _prompt_item(r) for r in rows})
            else:
                rows = conn.execute(f"SELECT {_SUMMARY_COLS} FROM session_summaries m WHERE m.id IN ({marks})", chunk)
                found.update({("summary", r[0]): _summary_item(r) for r in rows})
    return [found[k] for k in keys if k in found]


# ------------------------------------------------------------------------------ live stream
@dataclass
class Mark:
    """The newest id of each kind a stream has sent: what came after it is new."""

    observation: int = 0
    prompt: int = 0
    summary: int = 0

    def encode(self) -> str:
        return f"o{self.observation}.p{self.prompt}.s{self.summary}"

    @staticmethod
    def decode(text: str) -> Mark | None:
        try:
            o, p, s = text.split(".")
            if o[0] != "o" or p[0] != "p" or s[0] != "s":
                return None
            return Mark(int(o[1:]), int(p[1:]), int(s[1:]))
        except (ValueError, IndexError):
            return None


def high_water(conn: sqlite3.Connection) -> Mark:
    row = conn.execute("SELECT (SELECT COALESCE(MAX(id), 0) FROM observations), "
                       "(SELECT COALESCE(MAX(id), 0) FROM user_prompts), "
                       "(SELECT COALESCE(MAX(id), 0) FROM session_summaries)").fetchone()
    return Mark(int(row[0]), int(row[1]), int(row[2]))


def since_mark(conn: sqlite3.Connection, mark: Mark, limit: int = 200) -> tuple[list[dict[str, Any]], Mark]:
    """Rows stored after ``mark`` (oldest first) and the mark after them.

    A summary is rewritten in place when a session resumes: it keeps its id, so only new
    summaries show here (the page refreshes a session's summary when it opens it).
    """
    obs = [_obs_item(r) for r in conn.execute(
        f"SELECT {_OBS_COLS} FROM observations o WHERE o.id > ? ORDER BY o.id LIMIT ?", (mark.observation, limit))]
    prompts = conn.execute(
        f"SELECT {_PROMPT_COLS} FROM user_prompts u JOIN sessions s ON s.id = u.session_id "
        "WHERE u.id > ? ORDER BY u.id LIMIT ?", (mark.prompt, limit)).fetchall()
    sums = [_summary_item(r) for r in conn.execute(
        f"SELECT {_SUMMARY_COLS} FROM session_summaries m WHERE m.id > ? ORDER BY m.id LIMIT ?",
        (mark.summary, limit))]
    new = Mark(obs[-1]["id"] if obs else mark.observation, prompts[-1][0] if prompts else mark.prompt,
               sums[-1]["id"] if sums else mark.summary)
    items = obs + sums + [_prompt_item(r) for r in prompts if (r[4] or "") not in ("", "[forgotten]")]
    items.sort(key=sort_key)
    return items, new
