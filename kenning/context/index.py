"""What the session-start index lists, layer by layer (kenning/context/layout.py writes it).

Layers (kenning/memory/layers.py), each within its own budget:

1. *Standing rules and preferences*: the user's own, for every project (``scope = 'user'``, said
   in any project), then this project's; every active one, newest first, within
   ``context_rules_chars`` (older ones beyond it are counted, never silently dropped).
2. *Key decisions, gotchas and root causes*: ranked by importance, how often they recurred and
   how recent they are (counted from the project's latest work), within ``context_key_chars``;
   one that another says again in other words is listed once, the newer (restated.py).
   Routine work never takes their place. Open to-dos are listed apart, until done.
3. *Recent sessions*, by day: one line per session saying what it was about and what came of
   it, in what is left of ``context_max_chars``; sessions and routine work older than
   ``archive_after_days`` before the project's latest work are the archive (searchable, not
   listed). The session log's own rows are listed only for sessions without a summary.

Then where the latest *work* stands (not the latest question), how many memories were left out,
and how to fetch details. Only the heads of near-duplicate groups appear (``×N``: recorded N
times); nothing superseded or retracted appears, nor a summary line that restates it.

Standard library only: the SessionStart hook may build this itself.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3

from kenning.context import closed, restated
from kenning.context.layout import COUNT_CAP, SUMMARY_ICON, Layout, age, clean, clean_field, moment, state_of

# How the index is written (kenning/context/layout.py), kept importable from here.
from kenning.store.columns import has_columns

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from kenning.settings import Settings

KEY_CANDIDATES = 80    # most important and newest key memories considered (each)
STALE_CHECKED = 200    # superseded and as many retracted memories whose restatements are kept out
LEFT_OFF_LOOKBACK = 30  # summaries searched for the latest one that did work
NO_BOUND = 1e18  # "recorded at any time": a constant, so a selection read now holds later too
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[./-][A-Za-z0-9_]+)*")
# The same in any script written with spaces; Chinese, Japanese and Korean runs by character pairs (as
# kenning.memory.text.tokens, which the session-start path does not import).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_ANY_WORD = re.compile(rf"[^\W{_CJK}]+(?:[./-][^\W{_CJK}]+)*")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_SHORT = "a an the to of in on for with and or is are was be it this that we i you use uses using from now by at as"
_SHORT_WORDS = frozenset(_SHORT.split())


class Row:
    """One observation row of the index."""

    __slots__ = ("created_at", "id", "importance", "kind", "layer", "occurrences", "platform", "scope", "session",
                 "tentative", "title", "type", "work")

    def __init__(self, r: Sequence[Any]) -> None:  # (SQLite's own types: no conversion through str)
        self.id = int(r[0])
        self.type = str(r[1])
        self.title: str = r[2] or ""
        self.created_at = float(r[3])
        self.layer: str = r[4] or "log"
        self.importance = int(r[5] or 0)
        self.occurrences = int(r[6] or 1)
        self.work = int(r[7] or 0)  # tokens of captured work it condenses, and spent producing it
        self.platform: str = r[8] or ""  # the agent whose session recorded it
        self.session = int(r[9] or 0)
        self.kind: str = r[10] or ""   # the role the observer judged (migration 0025; '' before it)
        self.scope: str = r[11] or "project"
        self.tentative = bool(r[12])


class Summary:
    __slots__ = ("completed", "created_at", "files_modified", "id", "learned", "next_steps", "notes", "platform",
                 "request", "session", "started_at", "work")

    def __init__(self, r: Sequence[object]) -> None:
        self.id = int(str(r[0]))
        self.request = str(r[1] or "")
        self.learned = str(r[2] or "")
        self.completed = str(r[3] or "")
        self.next_steps = str(r[4] or "")
        self.created_at = float(str(r[5]))
        self.started_at = float(str(r[6] or r[5]))
        self.files_modified = str(r[7] or "[]")
        self.work = int(str(r[8] or 0))
        self.platform = str(r[9] or "")
        self.notes = str(r[10] or "")
        self.session = int(str(r[11] or 0))

    @property
    def did_work(self) -> bool:
        """It changed files, or the repository: a commit, a push, a pull request (a dependency bumped with
        the package manager and committed changes no file through the agent's edit tools)."""
        if self.files_modified not in ("", "[]"):
            return True
        parts = state_of(self.notes).split("; ")
        return any(part.startswith(("committed ", "pushed", "PR ", "merged")) for part in parts)


# The session's agent by a correlated lookup (a column, not a join: the queries keep their index plans).
_OBS_COLS = "id, type, title, created_at, layer, importance, occurrences, source_tokens + tokens_spent, " \
            "(SELECT platform FROM sessions WHERE sessions.id = observations.session_id), session_id, " \
            "kind, scope, tentative"
_OLD_COLS = _OBS_COLS.replace("kind, scope, tentative", "NULL, 'project', 0")  # a file before migration 0025


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Row]:
    return [Row(r) for r in conn.execute(sql, args).fetchall()]


def has_roles(conn: sqlite3.Connection) -> bool:
    """Whether the file has migration 0025's columns (a hook may read a file the worker has not
    migrated yet, during an upgrade)."""
    try:
        return has_columns(conn, "observations", "kind, scope, tentative")
    except sqlite3.OperationalError:
        return False  # a file that cannot be read just now: read as one from before the migration


class Selection:
    """What the index may list for one project, before the character budget.

    What the queries return does not depend on the time (the archive's cut is applied in
    Python): :meth:`at` re-times a selection to a later ``now`` exactly, so the worker may keep
    one while nothing it read has changed (kenning/context/cache.py).
    """

    def __init__(self, conn: sqlite3.Connection, settings: Settings, project: str, now: float,
                 recorded_before: float | None = None) -> None:
        self.settings = settings
        since = recorded_before if recorded_before is not None else NO_BOUND
        # The archive's cut counts back from the project's own latest work, not from now: a project
        # last worked on months ago still lists what was done then (its newest observation or summary).
        newest = [r for r in conn.execute(
            "SELECT (SELECT created_at FROM observations WHERE project = ?1 AND recorded_at <= ?2 "
            "ORDER BY created_at DESC LIMIT 1), (SELECT created_at FROM session_summaries WHERE project = ?1 "
            "AND recorded_at <= ?2 ORDER BY created_at DESC LIMIT 1)", (project, since)).fetchone() if r is not None]
        self.active_at = float(max(newest)) if newest else None
        roles = has_roles(conn)
        cols = _OBS_COLS if roles else _OLD_COLS
        head = "FROM observations WHERE project = ? AND layer = ? AND status = 'active' AND duplicate_of IS NULL " \
               "AND recorded_at <= ?"
        rules = _rows(conn, f"SELECT {cols} {head} ORDER BY created_at DESC, id DESC LIMIT ?",
                      (project, "rule", since, max(1, settings.context_rules) + 1))
        # The user's own preferences, said in any project, hold in every one (newest first).
        mine = _rows(conn, f"SELECT {cols} FROM observations INDEXED BY observations_user_scope WHERE scope = 'user' "
                           "AND duplicate_of IS NULL AND layer = 'rule' AND status = 'active' AND recorded_at <= ? "
                           "ORDER BY created_at DESC, id DESC LIMIT ?",
                     (since, max(1, settings.context_rules) + 1)) if roles else []
        self.user_rules = mine
        self.rules = [r for r in rules if r.scope != "user"]
        by_rank = _rows(conn, f"SELECT {cols} {head} ORDER BY importance DESC, created_at DESC LIMIT ?",
                        (project, "key", since, KEY_CANDIDATES))
        newest = _rows(conn, f"SELECT {cols} {head} ORDER BY created_at DESC, id DESC LIMIT ?",
                       (project, "key", since, KEY_CANDIDATES))
        candidates = list({r.id: r for r in by_rank + newest}.values())
        self._key_candidates = [r for r in candidates if r.kind != "todo"]
        self.todos = sorted((r for r in candidates if r.kind == "todo"), key=lambda r: -r.created_at)
        # The newest log rows since the archive's cut at ``now``: at a later time the cut only moves
        # forward, and the rows after it are a prefix of these (the same order), so re-timing filters.
        self._log = _rows(conn, f"SELECT {cols} {head} AND created_at >= ? ORDER BY created_at DESC, id DESC "
                                "LIMIT ?", (project, "log", since, self._archive(now), settings.context_observations))
        self._sums = [Summary(r) for r in conn.execute(
            "SELECT s.id, s.request, s.learned, s.completed, s.next_steps, s.created_at, ses.started_at, "
            "s.files_modified, s.source_tokens + s.tokens_spent, ses.platform, s.notes, s.session_id "
            "FROM session_summaries s "
            "JOIN sessions ses ON ses.id = s.session_id "
            "WHERE s.project = ? AND s.recorded_at <= ? ORDER BY s.created_at DESC, s.id DESC LIMIT ?",
            (project, since, max(settings.context_sessions, LEFT_OFF_LOOKBACK))).fetchall()]
        # Open work that later releases and merges closed ("release v0.16.0 after the 2 remaining items").
        states = [(s, state_of(s.notes)) for s in self._sums]
        self.done = closed.history((line, s.created_at) for s, line in states)
        self.commits = {s.session: closed.commits_of(line) for s, line in states}  # a session → its commits
        self._later: dict[tuple[int, float], list[str]] = {}  # later_commits, asked again by each layout
        # What later work closed, and what a later session had to fix again (it no longer holds: "`cursor-logo.svg`
        # was invalid, so the inline path is reused" before "Fix Cursor logo: replace corrupted SVG asset"), and a gap
        # its own session or a later one filled ("… but not detached `HEAD`" before "fix: allow detached HEAD").
        self._key_candidates = [r for r in self._key_candidates if not closed.closed(
            r.title, r.created_at, self.done, open_work=r.kind == "status")
            and not closed.refixed(r.title, self.later_commits(r.session, r.created_at))
            and not (r.kind in ("fact", "gotcha") and closed.states_gap(r.title) and closed.gap_filled(
                r.title, [*self.commits.get(r.session, []), *self.later_commits(r.session, r.created_at)]))]
        # A cause a later fix of its session is about: that row says what was done.
        fixed = restated.fixed_later(self._key_candidates)
        self.fixed_titles = [r.title for r in self._key_candidates if r.id in fixed]  # (nor "Learned" either)
        self._key_candidates = [r for r in self._key_candidates if r.id not in fixed]
        self.todos = [r for r in self.todos if not closed.closed(r.title, r.created_at, self.done)]
        self.left_off = next((s for s in self._sums if s.did_work), self._sums[0] if self._sums else None)
        self.summarized = {s.session for s in self._sums}  # sessions whose own line tells their work
        self.stale = Stale(conn, project)
        # Counting is linear in the project's size: count at most COUNT_CAP rows (constant time at 1M).
        self.total = int(conn.execute(  # the partial index holds exactly the group heads: no row lookups
            "SELECT COUNT(*) FROM (SELECT 1 FROM observations INDEXED BY observations_layer_time WHERE project = ? "
            "AND status = 'active' AND duplicate_of IS NULL LIMIT ?)", (project, COUNT_CAP + 1)).fetchone()[0])
        self._log = [r for r in self._log if not self.restates_stale(r.title, r.created_at)]
        self.fetched_at = now
        self.base = self  # what was read; a re-timed copy (``at``) shares its rows
        self._time(now)

    def _archive(self, now: float) -> float:
        """Routine work older than ``archive_after_days`` before the project's latest work (or now,
        if sooner) is the archive. The cut only moves forward with ``now``: re-timing filters."""
        days = self.settings.archive_after_days
        if not days:
            return 0.0
        return (now if self.active_at is None else min(now, self.active_at)) - days * 86400

    def _time(self, now: float) -> None:
        """What depends on the time: the archive's cut, and the key memories' ranking."""
        self.now = now
        self.archive_before = archive = self._archive(now)
        self.keys = restated.once(spread(self._key_candidates, self.score))
        self.log = [r for r in self._log if r.created_at >= archive] if archive > self._archive(self.fetched_at) \
            else self._log
        kept, self.repeats = _dedupe([s for s in self._sums if s.created_at >= archive])
        self.summaries = kept[:self.settings.context_sessions]

    def at(self, now: float) -> Selection:
        """This selection as it stands at ``now`` (not before the queries ran: that needs new ones)."""
        if now < self.fetched_at:
            raise ValueError("a selection cannot be re-timed to before it was read")
        other = object.__new__(Selection)  # a shallow copy (``copy`` costs the hook's fallback ~1 ms to import)
        other.__dict__.update(self.__dict__)
        other._time(now)
        return other

    def score(self, r: Row) -> float:
        """Importance first; a recurring or recent memory (counted from the project's latest work)
        weighs a little more."""
        ref = self.now if self.active_at is None else min(self.now, self.active_at)
        age_days = max(0.0, ref - r.created_at) / 86400
        return r.importance + 2.0 * math.exp(-age_days / 30) + math.log2(max(1, r.occurrences))

    def restates_stale(self, text: str, written_at: float) -> bool:
        return self.stale.echoed(text, written_at)

    def fresh_part(self, text: str, written_at: float) -> str:
        return self.stale.fresh_part(text, written_at)

    def later_commits(self, session: int, at: float) -> list[str]:
        """The commits of the other sessions that ended after ``at`` (newest first)."""
        found = self._later.get((session, at))
        if found is None:
            found = self._later[(session, at)] = [c for s in self._sums if s.session != session and s.created_at > at
                                                  for c in self.commits.get(s.session, [])]
        return found

    def closed(self, text: str, said_at: float) -> bool:
        """Whether open work said at ``said_at`` was done since (a later release of its version, a merge)."""
        return closed.closed(text, said_at, self.done)

    @property
    def empty(self) -> bool:
        return not (self.rules or self.user_rules or self.keys or self.todos or self.log or self.summaries)

    def shown_ids(self) -> set[int]:
        return {r.id for r in self.user_rules + self.rules + self.keys + self.todos + self.log}

    def work_tokens(self) -> int:
        return sum(r.work for r in self.user_rules + self.rules + self.keys + self.todos + self.log) + \
            sum(s.work for s in self.summaries)


SAME_SESSION = 1.5  # what the n-th key memory of one session loses, so one long session does not fill the list


def spread(rows: list[Row], score: Callable[[Row], float]) -> list[Row]:
    """Key memories by score, each one after the first of its session ``SAME_SESSION`` lower."""
    seen: dict[int, int] = {}
    scored = []
    for s, r in sorted([(score(r), r) for r in rows], key=lambda x: -x[0]):  # (each scored once)
        k = seen.get(r.session, 0)
        seen[r.session] = k + 1
        scored.append((s - k * SAME_SESSION, r))
    return [r for _s, r in sorted(scored, key=lambda x: -x[0])]


class Stale:
    """What no longer holds in a project (superseded or retracted), to keep its echoes out.

    Text written before a memory stopped being true that restates it (a session summary, a
    routine row titled after the prompt that stated an old rule) is an echo of it. Only the
    session log is checked this way: rules and key memories are statements in their own right,
    and a later one may well say again what an older one said ("back to npm").
    """

    def __init__(self, conn: sqlite3.Connection, project: str, limit: int = STALE_CHECKED) -> None:
        rows = tuple(tuple(r) for status in ("superseded", "retracted") for r in conn.execute(
            "SELECT title, superseded_at FROM observations WHERE project = ? AND status = ? "
            "ORDER BY created_at DESC LIMIT ?", (project, status, limit)).fetchall())
        self.items, self.need, self.by_word = _stale_index(rows)

    def echoed(self, text: str, written_at: float) -> bool:
        """Whether ``text``, written at ``written_at``, restates a memory that has since stopped being true."""
        if not self.items or not text:
            return False
        words = _words(text)
        checked: set[int] = set()
        for word in words:
            for i in self.by_word.get(word, ()):
                if i in checked:
                    continue
                checked.add(i)
                w, at = self.items[i]
                if written_at <= at and len(w & words) >= self.need[i]:
                    return True
        return False

    def fresh_part(self, text: str, written_at: float) -> str:
        """``text`` without the clauses that echo a memory no longer true."""
        if not self.items:
            return text
        parts = [p for p in re.split(r"\n+|(?<=[.;!?])\s+|;\s*then:\s*|;\s+", text) if p.strip()]
        kept = [p for p in parts if not self.echoed(p, written_at)]
        return "; ".join(p.rstrip(";") for p in kept) if len(kept) != len(parts) else text


_StaleIndex = tuple[list[tuple[frozenset[str], float]], list[int], dict[str, list[int]]]


@functools.lru_cache(maxsize=32)
def _stale_index(rows: tuple[tuple[str, float | None], ...]) -> _StaleIndex:
    """The stale titles' words, and each indexed under its rarest words: built once for the same rows
    (the worker builds the index of a project again and again; its stale rows rarely change)."""
    items = [(w, float(at) if at is not None else math.inf) for w, at in ((_words(t), at) for t, at in rows)
             if len(w) >= 2]
    # A text restates item i when it holds at least need_i = ceil(3/4 of its words), so it holds at
    # least one of any len - need_i + 1 of them (prefix filtering, exact): each item is indexed
    # under that many of its rarest words only, and a word common to many stale titles no
    # longer makes every session-log row check every item (~half of the index's build at 10k).
    df: dict[str, int] = {}
    for w, _at in items:
        for word in w:
            df[word] = df.get(word, 0) + 1
    need = [math.ceil(0.75 * len(w)) for w, _at in items]
    by_word: dict[str, list[int]] = {}  # word -> the items indexed under it
    for i, (w, _at) in enumerate(items):
        for word in sorted(w, key=lambda x: (df[x], x))[: len(w) - need[i] + 1]:
            by_word.setdefault(word, []).append(i)
    return items, need, by_word


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    # Cached: the worker builds the index again and again from mostly the same titles (the stale ones
    # above all, read at every build).
    t = text or ""
    if t.isascii():  # the pattern is ASCII and case-blind: lower-case once, then match
        return frozenset(_WORD.findall(t.lower())) - _SHORT_WORDS
    t = t.lower()
    pairs = [run[i:i + 2] for run in _CJK_RUN.findall(t) for i in range(max(len(run) - 1, 1))]
    return frozenset(_ANY_WORD.findall(t) + pairs) - _SHORT_WORDS


def _dedupe(sums: list[Summary]) -> tuple[list[Summary], dict[int, int]]:
    """One row per repeated request (the newest), and how many sessions asked it: a question asked
    eleven times is one line (×11)."""
    seen: dict[frozenset[str], int] = {}
    out: list[Summary] = []
    times: dict[int, int] = {}
    for s in sums:
        key = _words(s.request)
        if key and key in seen:
            times[seen[key]] = times.get(seen[key], 1) + 1
            continue
        if key:
            seen[key] = s.id
        out.append(s)
    return out, times


__all__ = ["COUNT_CAP", "SUMMARY_ICON", "Layout", "Row", "Selection", "Stale", "Summary", "age", "clean",
           "clean_field", "moment"]
