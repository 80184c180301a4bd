"""What the session-start index lists, layer by layer, and how it is written.

Layers (kenning/memory/layers.py), each within its own budget:

1. *Standing rules and preferences*: every active one, newest first, within ``context_rules_chars``
   (older ones beyond it are counted, never silently dropped).
2. *Key decisions, gotchas and root causes*: ranked by importance, how often they recurred and
   how recent they are, within ``context_key_chars``. Routine work never takes their place.
3. *Recent work*, by day: the newest session-log observations and session summaries, in what
   is left of ``context_max_chars``; log rows older than ``archive_after_days`` are the archive
   (searchable, not listed).

Then where the latest *work* stands (not the latest question), how many memories were left out,
and how to fetch details. Only the heads of near-duplicate groups appear (``×N``: recorded N
times); nothing superseded or retracted appears, nor a summary line that restates it.

Standard library only: the SessionStart hook may build this itself.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time

from kenning.context.fence import CLOSE, OPEN, wrap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from kenning.settings import Settings

SUMMARY_ICON = "📋"
COUNT_CAP = 10_000
RULE_CHARS, KEY_CHARS, LOG_CHARS = 200, 220, 160   # longest title of a row in each section
KEY_CANDIDATES = 80    # most important and newest key memories considered (each)
STALE_CHECKED = 200    # superseded and as many retracted memories whose restatements are kept out
LEFT_OFF_LOOKBACK = 30  # summaries searched for the latest one that did work
NO_BOUND = 1e18  # "recorded at any time": a constant, so a selection read now holds later too
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[./-][A-Za-z0-9_]+)*")
_SHORT = "a an the to of in on for with and or is are was be it this that we i you use uses using from now by at as"
_SHORT_WORDS = frozenset(_SHORT.split())


class Row:
    """One observation row of the index."""

    __slots__ = ("created_at", "id", "importance", "layer", "occurrences", "platform", "title", "type", "work")

    def __init__(self, r: Sequence[object]) -> None:
        self.id = int(str(r[0]))
        self.type = str(r[1])
        self.title = str(r[2] or "")
        self.created_at = float(str(r[3]))
        self.layer = str(r[4] or "log")
        self.importance = int(str(r[5] or 0))
        self.occurrences = int(str(r[6] or 1))
        self.work = int(str(r[7] or 0))  # tokens of captured work it condenses, and spent producing it
        self.platform = str(r[8] or "")  # the agent whose session recorded it



class Summary:
    __slots__ = ("completed", "created_at", "files_modified", "id", "learned", "next_steps", "platform", "request",
                 "started_at", "work")

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

    @property
    def did_work(self) -> bool:
        return self.files_modified not in ("", "[]")


# The session's agent by a correlated lookup (a column, not a join: the queries keep their index plans).
_OBS_COLS = "id, type, title, created_at, layer, importance, occurrences, source_tokens + tokens_spent, " \
            "(SELECT platform FROM sessions WHERE sessions.id = observations.session_id)"


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[Row]:
    return [Row(r) for r in conn.execute(sql, args).fetchall()]


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
        head = "FROM observations WHERE project = ? AND layer = ? AND status = 'active' AND duplicate_of IS NULL " \
               "AND recorded_at <= ?"
        self.rules = _rows(conn, f"SELECT {_OBS_COLS} {head} ORDER BY created_at DESC, id DESC LIMIT ?",
                           (project, "rule", since, max(1, settings.context_rules) + 1))
        by_rank = _rows(conn, f"SELECT {_OBS_COLS} {head} ORDER BY importance DESC, created_at DESC LIMIT ?",
                        (project, "key", since, KEY_CANDIDATES))
        newest = _rows(conn, f"SELECT {_OBS_COLS} {head} ORDER BY created_at DESC, id DESC LIMIT ?",
                       (project, "key", since, KEY_CANDIDATES))
        self._key_candidates = list({r.id: r for r in by_rank + newest}.values())
        # The newest log rows since the archive's cut at ``now``: at a later time the cut only moves
        # forward, and the rows after it are a prefix of these (the same order), so re-timing filters.
        self._log = _rows(conn, f"SELECT {_OBS_COLS} {head} AND created_at >= ? ORDER BY created_at DESC, id DESC "
                                "LIMIT ?", (project, "log", since, self._archive(now), settings.context_observations))
        self._sums = [Summary(r) for r in conn.execute(
            "SELECT s.id, s.request, s.learned, s.completed, s.next_steps, s.created_at, ses.started_at, "
            "s.files_modified, s.source_tokens + s.tokens_spent, ses.platform FROM session_summaries s "
            "JOIN sessions ses ON ses.id = s.session_id "
            "WHERE s.project = ? AND s.recorded_at <= ? ORDER BY s.created_at DESC, s.id DESC LIMIT ?",
            (project, since, max(settings.context_sessions, LEFT_OFF_LOOKBACK))).fetchall()]
        self.left_off = next((s for s in self._sums if s.did_work), self._sums[0] if self._sums else None)
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
        self.keys = sorted(self._key_candidates, key=lambda r: -self.score(r))
        self.log = [r for r in self._log if r.created_at >= archive] if archive > self._archive(self.fetched_at) \
            else self._log
        self.summaries = _dedupe([s for s in self._sums if s.created_at >= archive][:self.settings.context_sessions])

    def at(self, now: float) -> Selection:
        """This selection as it stands at ``now`` (not before the queries ran: that needs new ones)."""
        if now < self.fetched_at:
            raise ValueError("a selection cannot be re-timed to before it was read")
        other = object.__new__(Selection)  # a shallow copy (``copy`` costs the hook's fallback ~1 ms to import)
        other.__dict__.update(self.__dict__)
        other._time(now)
        return other

    def score(self, r: Row) -> float:
        """Importance first; a recurring or recent memory weighs a little more."""
        age_days = max(0.0, self.now - r.created_at) / 86400
        return r.importance + 2.0 * math.exp(-age_days / 30) + math.log2(max(1, r.occurrences))

    def restates_stale(self, text: str, written_at: float) -> bool:
        return self.stale.echoed(text, written_at)

    def fresh_part(self, text: str, written_at: float) -> str:
        return self.stale.fresh_part(text, written_at)

    @property
    def empty(self) -> bool:
        return not (self.rules or self.keys or self.log or self.summaries)

    def shown_ids(self) -> set[int]:
        return {r.id for r in self.rules + self.keys + self.log}

    def work_tokens(self) -> int:
        return sum(r.work for r in self.rules + self.keys + self.log) + sum(s.work for s in self.summaries)


class Stale:
    """What no longer holds in a project (superseded or retracted), to keep its echoes out.

    Text written before a memory stopped being true that restates it (a session summary, a
    routine row titled after the prompt that stated an old rule) is an echo of it. Only the
    session log is checked this way: rules and key memories are statements in their own right,
    and a later one may well say again what an older one said ("back to npm").
    """

    def __init__(self, conn: sqlite3.Connection, project: str, limit: int = STALE_CHECKED) -> None:
        rows = [r for status in ("superseded", "retracted") for r in conn.execute(
            "SELECT title, superseded_at FROM observations WHERE project = ? AND status = ? "
            "ORDER BY created_at DESC LIMIT ?", (project, status, limit)).fetchall()]
        self.items = [(w, float(at) if at is not None else math.inf) for w, at in ((_words(t), at) for t, at in rows)
                      if len(w) >= 2]
        # A text restates item i when it holds at least need_i = ceil(3/4 of its words), so it holds at
        # least one of any len - need_i + 1 of them (prefix filtering, exact): each item is indexed
        # under that many of its rarest words only, and a word common to many stale titles no
        # longer makes every session-log row check every item (~half of the index's build at 10k).
        df: dict[str, int] = {}
        for w, _at in self.items:
            for word in w:
                df[word] = df.get(word, 0) + 1
        self.need = [math.ceil(0.75 * len(w)) for w, _at in self.items]
        self.by_word: dict[str, list[int]] = {}  # word -> the items indexed under it
        for i, (w, _at) in enumerate(self.items):
            for word in sorted(w, key=lambda x: (df[x], x))[: len(w) - self.need[i] + 1]:
                self.by_word.setdefault(word, []).append(i)

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


def _words(text: str) -> frozenset[str]:
    t = text or ""
    if t.isascii():  # the pattern is ASCII and case-blind: lower-case once, then match
        return frozenset(_WORD.findall(t.lower())) - _SHORT_WORDS
    return frozenset(w.lower() for w in _WORD.findall(t) if w.lower() not in _SHORT_WORDS)


def _dedupe(sums: list[Summary]) -> list[Summary]:
    """One row per repeated request (the newest); a question asked eleven times is one line."""
    seen: set[frozenset[str]] = set()
    out: list[Summary] = []
    for s in sums:
        key = _words(s.request)
        if key and key in seen:
            continue
        seen.add(key)
        out.append(s)
    return out


# ------------------------------------------------------------------------------ render

def age(seconds: float) -> str:
    """A short age: 12m, 5h, 3d, 5w, 4mo, 2y."""
    s = max(0.0, seconds)
    if s < 3600:
        return f"{max(1, int(s // 60))}m"
    if s < 86400:
        return f"{int(s // 3600)}h"
    if s < 14 * 86400:
        return f"{int(s // 86400)}d"
    if s < 60 * 86400:
        return f"{int(s // (7 * 86400))}w"
    if s < 730 * 86400:
        return f"{int(s // (30 * 86400))}mo"
    return f"{int(s // (365 * 86400))}y"


def clean(text: object, limit: int) -> str:
    """One line: runs of blanks (newlines too) one space, clipped to ``limit``."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def clean_field(text: object, limit: int) -> str:
    """A summary field on one line: its lines (items) become "; "-separated."""
    return clean("; ".join(x for x in (" ".join(ln.split()) for ln in str(text or "").splitlines()) if x), limit)


BY = " · in "
HEADER_TIME = "%a %Y-%m-%d %H:%M %Z"


def moment(sel: Selection) -> tuple[object, ...]:
    """All that the index of ``sel`` shows of the time: the header's minute, every age it could
    print, and which rows the time lets in, in their order. Everything else :class:`Layout` writes
    comes from the rows themselves, so one selection at two moments that are equal here gives the
    same text (the worker reuses it: kenning/context/cache.py)."""
    now = sel.now
    shown = [*sel.rules, *sel.keys, *sel.log]
    return (time.strftime(HEADER_TIME, time.localtime(now)), tuple(r.id for r in sel.keys),
            tuple(r.id for r in sel.log), tuple(x.id for x in sel.summaries),
            tuple(age(now - r.created_at) for r in shown), tuple(age(now - x.created_at) for x in sel.summaries),
            age(now - sel.left_off.created_at) if sel.left_off is not None else "")


def by(platform: str, asking: str) -> str:
    """`` · in Codex CLI`` for a row another coding agent recorded; nothing for the asking agent's own,
    nor for rows of no agent (saved through MCP, imported from an export)."""
    from kenning.integrations import LABELS

    label = LABELS.get(platform)
    return f"{BY}{label}" if label and platform != asking else ""


def obs_line(r: Row, now: float, icons: dict[str, str], limit: int, agent: str = "claude-code") -> str:
    times = f" (×{r.occurrences})" if r.occurrences > 1 else ""
    return f"#{r.id} {age(now - r.created_at)} {icons.get(r.type, '•')} {clean(r.title, limit)}{times}" \
           f"{by(r.platform, agent)}"


class Layout:
    """The index text for a selection, with as many rows of each section as its budget allows."""

    def __init__(self, sel: Selection, settings: Settings, title: str, icons: dict[str, str], *,
                 footer: str = "", work_tokens: int = 0, agent: str = "claude-code") -> None:
        self.sel = sel
        self.settings = settings
        self.title = title
        self.icons = icons
        self.footer = footer
        self.work_tokens = work_tokens
        self.agent = agent
        now = sel.now
        self.rule_lines = _fit([obs_line(r, now, icons, RULE_CHARS, agent) for r in sel.rules[:settings.context_rules]],
                               settings.context_rules_chars)
        self.key_lines = _fit([obs_line(r, now, icons, KEY_CHARS, agent) for r in sel.keys],
                              settings.context_key_chars)
        self.recent = self._recent_rows()
        self.left_off = self._left_off()

    def _recent_rows(self) -> list[tuple[float, int, str]]:
        """(time, order, line) of the log rows and summary rows, oldest first."""
        now = self.sel.now
        rows: list[tuple[float, int, str]] = []
        for r in self.sel.log:
            rows.append((r.created_at, r.id, obs_line(r, now, self.icons, LOG_CHARS, self.agent)))
        for s in self.sel.summaries:
            request = self.sel.fresh_part(s.request, s.created_at)
            if s.request and not request.strip():
                continue  # the whole request restated something no longer true
            rows.append((s.started_at or s.created_at, -s.id,
                         f"S{s.id} {age(now - s.created_at)} {SUMMARY_ICON} {clean(request, LOG_CHARS) or 'Session'}"
                         f"{by(s.platform, self.agent)}"))
        rows.sort(key=lambda x: (x[0], x[1]))
        return rows

    def render(self, keep_recent: int) -> str:
        sel = self.sel
        lines = [OPEN, f"# Memory of {self.title} · {time.strftime(HEADER_TIME, time.localtime(sel.now))}",
                 "Legend: " + " · ".join([f"{SUMMARY_ICON} session", *(f"{v} {k}" for k, v in self.icons.items())]),
                 "{economics}",
                 "Rows: #ID AGE ICON TITLE (×N: recorded N times); S<ID> a session summary. Only what is still "
                 "true is listed."]
        if self.rule_lines:
            lines.append("\n## Standing rules and preferences (follow them; newest version only)")
            lines += self.rule_lines
        if self.key_lines:
            lines.append("\n## Key decisions, gotchas and root causes")
            lines += self.key_lines
        recent = self.recent[len(self.recent) - keep_recent:] if keep_recent else []
        if recent:
            lines.append("\n## Recent work (oldest first)")
            day = None
            for t, _order, text in recent:
                d = time.strftime("%Y-%m-%d (%a)", time.localtime(t))
                if d != day:
                    lines.append(f"### {d}")
                    day = d
                lines.append(text)
        if any(BY in line for line in lines[5:]):
            lines[4] += ' "in <agent>" marks work done in another coding agent.'
        lines += self.left_off
        dropped = self.dropped(len(recent))
        lines.append("")
        if dropped > 0:
            many = f"More than {dropped:,}" if sel.total > COUNT_CAP else f"{dropped:,}"
            lines.append(f"{many} older or less important memories are not listed: search them "
                         "(`kenning search <words>`, or the search_memory tool).")
        lines.append("Details: `kenning show <ID>` prints a full record; `kenning search <words>` looks further back.")
        if self.footer:
            lines.append(self.footer)
        # Stored text (titles, summaries, the project's name) is neutralised inside the fence.
        body = wrap("\n".join(lines[1:]))
        read_tokens = (len(body) + 3) // 4
        if self.work_tokens > 0:
            saved = max(0, 100 - round(read_tokens * 100 / self.work_tokens))
            econ = (f"Economics: reading this index costs ~{read_tokens:,} tokens; it condenses "
                    f"~{self.work_tokens:,} tokens of past work ({saved}% smaller).")
        else:
            econ = f"Economics: reading this index costs ~{read_tokens:,} tokens."
        return body.replace("{economics}", econ, 1)

    def _left_off(self) -> list[str]:
        latest = self.sel.left_off
        if latest is None:
            return []
        learned, completed, next_steps, request = (self.sel.fresh_part(x, latest.created_at) for x in (
            latest.learned, latest.completed, latest.next_steps, latest.request))
        if not (learned or completed or next_steps):
            return []
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(latest.created_at))
        out = [f"\n## Where we left off ({when}, {age(self.sel.now - latest.created_at)} ago)"]
        if request:
            out.append(f"Working on: {clean_field(request, 300)}")
        if completed:
            out.append(f"Completed: {clean_field(completed, 500)}")
        if learned:
            out.append(f"Learned: {clean_field(learned, 500)}")
        if next_steps:
            out.append(f"Next steps: {clean_field(next_steps, 400)}")
        return out

    def dropped(self, shown_recent: int) -> int:
        """Active memories (group heads) not listed: beyond a budget, archived, or never fetched."""
        recent = self.recent[len(self.recent) - shown_recent:] if shown_recent else []
        observations = sum(1 for _t, order, _line in recent if order > 0)  # summary rows have order < 0
        return max(0, self.sel.total - len(self.rule_lines) - len(self.key_lines) - observations)

    def text(self) -> str:
        """The longest index within the character cap: as many recent rows as fit (newest kept)."""
        cap = self.settings.context_max_chars
        n = len(self.recent)
        best = self.render(n)
        if len(best) > cap and n:
            lo, hi = 0, n - 1
            best = self.render(0)
            while lo <= hi:
                mid = (lo + hi) // 2
                candidate = self.render(mid)
                if len(candidate) <= cap:
                    best, lo = candidate, mid + 1
                else:
                    hi = mid - 1
        if len(best) > cap:  # even without recent work (a tiny cap): cut, and still close the fence
            best = best[: cap - len(CLOSE) - 2] + "…\n" + CLOSE
        return best


def _fit(lines: list[str], budget: int) -> list[str]:
    """The first lines (the most important / newest) whose total length fits ``budget``."""
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget and out:
            break
        out.append(line)
        used += len(line) + 1
    return out
