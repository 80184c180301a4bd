"""How the session-start index is written, section by section, within its character budgets
(the selection it writes: kenning/context/index.py).

    ## Your preferences (every project)          the user's own, said in any project
    ## Standing rules of this project            newest version only; a provisional one says so
    ## Key decisions, gotchas and root causes    by importance
    ## Open to-dos                               what was left to do, until it is done
    ## Recent sessions                           per day, one line a session: what it was about → what came of it
    ## Where we left off                         the latest work's session (not also a line above): what it was,
                                                 its state, what it did, and what is still open (left_off.py)

Standard library only (the SessionStart hook may write it itself).
"""

from __future__ import annotations

import math
import re
import time

from kenning.context import closed, values
from kenning.context.fence import CLOSE, OPEN, wrap
from kenning.records import text_tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from kenning.context.index import Row, Selection, Summary
    from kenning.settings import Settings

SUMMARY_ICON = "📋"
COUNT_CAP = 10_000
RULE_CHARS, KEY_CHARS, LOG_CHARS = 220, 300, 160   # longest title of a row in each section
SESSION_CHARS = 230    # a session's line: what it was about, and what came of it
TODO_CHARS = 200
BY = " · in "
HEADER_TIME = "%a %Y-%m-%d %H:%M %Z"
RULES_HEADER = "\n## Standing rules and preferences (follow them; newest version only)"
USER_HEADER = "\n## Your preferences (every project; follow them)"
TENTATIVE = " (tentative)"
PROPOSED = " (proposed by the agent, not confirmed)"  # a rule the agent saved; the user's pin makes it one
_STATE = "State: "
TREE_CLEAN = "working tree clean"  # a state line's part: git's words (kenning/observer/summary.py writes it)


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


def moment(sel: Selection) -> tuple[object, ...]:
    """All that the index of ``sel`` shows of the time: the header's minute, every age it could
    print, and which rows the time lets in, in their order. Everything else :class:`Layout` writes
    comes from the rows themselves, so one selection at two moments that are equal here gives the
    same text (the worker reuses it: kenning/context/cache.py)."""
    now = sel.now
    shown = [*sel.user_rules, *sel.rules, *sel.keys, *sel.todos, *sel.log]
    return (time.strftime(HEADER_TIME, time.localtime(now)), tuple(r.id for r in sel.keys),
            tuple(sorted(sel.repeats.items())),
            tuple(r.id for r in sel.log), tuple(x.id for x in sel.summaries),
            tuple(age(now - r.created_at) for r in shown), tuple(age(now - x.created_at) for x in sel.summaries),
            age(now - sel.left_off.created_at) if sel.left_off is not None else "")


def by(platform: str, asking: str) -> str:
    """`` · in Codex CLI`` for a row another coding agent recorded; nothing for the asking agent's own,
    nor for rows of no agent (saved through MCP, imported from an export)."""
    from kenning.integrations import LABELS

    label = LABELS.get(platform)
    return f"{BY}{label}" if label and platform != asking else ""


def obs_line(r: Row, now: float, icons: dict[str, str], limit: int, agent: str = "claude-code",
             title: str = "") -> str:
    times = f" (×{r.occurrences})" if r.occurrences > 1 else ""
    mark = (TENTATIVE if r.tentative else "") + (PROPOSED if r.kind == "proposed" and r.layer != "rule" else "")
    return f"#{r.id} {age(now - r.created_at)} {icons.get(r.type, '•')} " \
           f"{clean(title or r.title, limit - len(mark))}{mark}{times}{by(r.platform, agent)}"


def state_of(notes: str) -> str:
    """The state line the offline observer writes in a summary's notes ("committed 12a669e; pushed")."""
    return next((ln[len(_STATE):] for ln in notes.splitlines() if ln.startswith(_STATE)), "")


def _shared(notes: str) -> list[str]:
    """The parts of a session's state that later work cannot make untrue: its pull requests, merges and pushes
    (a later session may commit or push what this one left)."""
    return [p for p in state_of(notes).split("; ") if p.startswith(("PR ", "merged", "pushed"))]


def field_items(field: str) -> list[str]:
    return [x.strip() for x in re.split(r"\n|; (?=[A-Z`#\"'\w])", field or "") if x.strip()]


# An outcome that only says it is over ("Done.", "完了", "완료했습니다", a table's status cell): the state line
# says what was done.
_ONLY_DONE = re.compile(r"^\W*(?:(?:all\s+)?(?:done|finished|complete[d]?)|完了(?:しました|です)?|完成了?|搞定了?|好了|"
                        r"완료(?:했습니다|됐습니다|되었습니다|입니다)?|terminé|fini|erledigt|fertig)\W*$",
                        re.IGNORECASE)


def says_only_done(text: str) -> bool:
    return bool(_ONLY_DONE.match(text))


# (a link whose target a stored request cut short, "[text](https://github.com/o/r/disc…", is a link too)
_MD_LINK = re.compile(r"\[([^\]\n]{1,200})\]\((?:[^)\s…]{1,500})(?:\)|…|$)")
_URL = re.compile(r"https?://(?:www\.)?[^\s/]+/([^\s#?;,)]+)(?:[#?][^\s;,)]*)?")


def short_links(text: str) -> str:
    """Links as a reader names them: ``[text](url)`` → text, a bare URL → the end of its path (no anchor)."""
    t = _MD_LINK.sub(r"\1", text)
    return _URL.sub(lambda m: _link_name(m.group(0), m.group(1).rstrip("/").split("/")), t)


def _link_name(url: str, parts: list[str]) -> str:
    """A repository's page by what it is ("hk/pull/12", "hk/actions/runs/2854"); another page by the end of its path."""
    if "github.com/" in url and len(parts) >= 4 and parts[2] not in ("blob", "tree"):  # (a file: its path's end)
        return "/".join(parts[1:4] if parts[3].isdigit() or len(parts) == 4 else parts[1:5])
    return "/".join(parts[-3:])


_FOUND = re.compile(r"\b(?:root cause|caused by|the cause|the fix|fixed by|fix(?:es)? (?:it|this|the))\b|根因|原因是|"
                    r"根本原因|원인은|근본 원인|原因は|根本原因は|la cause|die Ursache", re.IGNORECASE)

ASKED = " (asked: "  # how a change named only by its request says so (kenning/observer/providers/rules.py)
_ASKED = re.compile(re.escape(ASKED) + ".*$")


def first_commit(s: Summary) -> str:
    """The subject of the commit that says what came of a session: the first its state line names that is not
    housekeeping (the first of all when every one is). '' when the line names none."""
    subjects = [closed.split_commit(c)[1] for c in closed.commits_of(state_of(s.notes))]
    return next((c for c in subjects if not closed.housekeeping(c)), subjects[0] if subjects else "")


def digest(s: Summary, fresh_request: str, fresh: Callable[[str, float], str] | None = None,
           listed: dict[str, int] | None = None, own: list[int] | None = None) -> str:
    """What a session was about, and what came of it: its request → its first outcome [its state]
    (``fresh``: the part of a text that restates nothing since made untrue). An outcome that a row listed
    above already says (``listed``: its title's start → its id) is that row's id, not the same words twice;
    a session that says no outcome points to the rows above that it found (``own``)."""
    about = clean(short_links(fresh_request), 90)
    commits = [c for c in (first_commit(s),) if c]
    said = [x for x in (*field_items(s.completed), *field_items(s.learned)) if x[:1] not in ("{", "[")]
    # What a session without a commit found: its cause or fix, before what it looked at on the way
    first = next(iter(commits or [x for x in said if _FOUND.search(x)] or said), "")
    # A change named by its request ("Changed x.py (asked: …)"): the line already says what was asked.
    first = _ASKED.sub("", first) if about else first
    outcome = clean(short_links(fresh(first, s.created_at) if fresh else first), 120)
    same = (listed or {}).get(listing_key(first))
    if same is not None:
        outcome = f"#{same}"
    elif not outcome and own:
        outcome = ", ".join(f"#{rid}" for rid in own[:3])
    # (what was opened and merged first: a line cut short loses branch names, not them)
    state = "; ".join(sorted(_shared(s.notes), key=lambda p: p.startswith("pushed")))
    if state and about and outcome and not outcome.startswith("#"):
        # the state whole (what was pushed, opened, merged), the outcome cut to make room for it
        room = SESSION_CHARS - len(about) - len(state) - 6
        outcome = clean(outcome, room) if room >= 30 else outcome
    text = f"{about} → {outcome}" if outcome and about else about or outcome or "Session"
    if state and len(text) < SESSION_CHARS - 20:
        text += f" [{state}]"
    return clean(text, SESSION_CHARS)


_WORD = re.compile(r"[^\W\d_][\w-]{3,}")
_PLAIN = frozenset(("that", "this", "with", "from", "when", "into", "only", "after", "before", "then", "than",
                    "have", "were", "does", "each", "every", "also", "still", "never", "always", "because",
                    # a verb of change says nothing of what changed ("Implement the pipeline", "Replaced the engine")
                    "implement", "implemented", "implements", "replace", "replaced", "replaces", "update", "updated",
                    "updates", "refactor", "refactored", "remove", "removed", "change", "changed", "introduce",
                    "introduced", "added", "adds"))


def _gist(text: str) -> set[str]:
    """What a text is about, for telling two wordings of one thing: its longer words, by their first four letters
    ("writes" and "write", "failures" and "fail", "evaluation" and "evaluator" alike)."""
    return {w[:4] for w in (x.lower() for x in _WORD.findall(text)) if w not in _PLAIN}


# A prompt that only gives the agent a role: a script's, saying nothing of the project's work
_ROLE_PROMPT = re.compile(r"^\s*(?:you are|you're|act as|your role is)\s+(?:a|an|the)\s|^\s*(?:你是一(?:个|名|位)|"
                          r"あなたは[^。]{0,60}(?:です|として)|당신은\s)", re.IGNORECASE)


def _nothing_came_of(said: str) -> bool:
    """One prompt whose answer asks back or says a few words ("test prompt → Received. What would you like me
    to do?", "show me your version → claude-opus-4-7 (Opus 4.7)"): a session in which nothing happened."""
    prompt, arrow, answer = said.partition(" → ")
    if not arrow or "; then: " in prompt:
        return False
    answer = answer.strip()
    cjk = sum(1 for c in answer if "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af")
    return answer.endswith(("?", "？")) or (len(answer.split()) < 6 and cjk < 12)


# A session line whose outcome only points at rows listed above ("Shutdown used to take only 10s → #169")
_POINTS_ONLY = re.compile(r" → #\d+(?:, #\d+)*$")


def listing_key(title: str) -> str:
    return " ".join(title.split())[:60].lower()


# A character of Chinese, Japanese or Korean: one says about as much as two Latin letters (a word is about two).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _width(text: str) -> int:
    """How much a title says, in Latin letters: long enough (30) to be told apart where it is said again."""
    return len(text) + len(CJK.findall(text))


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
        rules = [obs_line(r, now, icons, RULE_CHARS, agent) for r in sel.user_rules[:settings.context_rules]]
        self.user_lines = _fit(rules, settings.context_rules_chars)
        left = max(0, settings.context_rules_chars - sum(len(x) + 1 for x in self.user_lines))
        self.rule_lines = _fit([obs_line(r, now, icons, RULE_CHARS, agent) for r in
                                sel.rules[:max(0, settings.context_rules - len(self.user_lines))]], left)
        self.key_lines = _fit((obs_line(r, now, icons, KEY_CHARS, agent, self._as_history(r)) for r in sel.keys),
                              settings.context_key_chars)
        self.todo_lines = _fit([obs_line(r, now, icons, TODO_CHARS, agent) for r in sel.todos],
                               settings.context_key_chars // 3)
        shown = [*sel.user_rules[:len(self.user_lines)], *sel.rules[:len(self.rule_lines)],
                 *sel.keys[:len(self.key_lines)], *sel.todos[:len(self.todo_lines)]]
        self.listed_titles = [(r.title, r.id) for r in shown if _width(r.title) >= 30]
        self.shown_titles = {r.id: r.title for r in sel.keys[:len(self.key_lines)]}
        self.found: dict[int, list[int]] = {}  # a session → the rows listed above that it found
        for r in sorted(shown, key=lambda r: r.id):
            self.found.setdefault(r.session, []).append(r.id)
        self.listed = {listing_key(title): rid for title, rid in self.listed_titles}
        self.left_off = self._left_off()
        # The latest work's session is said under "Where we left off", not also as a line of recent work.
        told = sel.left_off.id if self.left_off and sel.left_off is not None else None
        self.recent = self._recent_rows(told)

    def _as_history(self, r: Row) -> str:
        """A key memory as it reads now: with what a later memory says of a value it changed ("… from 10s to
        120s; later the deadline is 60s (#167)"), and as history when later work changed it."""
        told = self._told_now(r)
        if not values.stated(told or r.title, changed_only=True):
            return told  # (most rows: no value changed, nothing to weigh)
        later = values.restated(told or r.title, [(o.title, f"#{o.id}") for o in sorted(
            self.sel.keys, key=lambda o: o.created_at) if o.created_at > r.created_at and o.session != r.session])
        if later is None:
            return told
        noun, value, ref = later
        note = f"; later the {noun} is {value} ({ref})"
        return clean(told or r.title, KEY_CHARS - len(note)).rstrip(".。") + note

    def _told_now(self, r: Row) -> str:
        """A root cause said without its fix, whose session committed a fix of it: said to be fixed, or it
        reads as how the code is now ("`RotateWALFiles` uses a non-blocking send … — fixed in 88c6586 fix: …").
        A fix, part of which a later fix named as its cause: that part is said to be replaced."""
        if " fix: " in r.title and r.kind in ("fix", "rootcause"):
            undone = closed.replaced(r.title, self.sel.later_commits(r.session, r.created_at))
            if undone is None:
                return ""
            part, cause, commit = undone
            rest = re.sub(r"(?:;\s+)?" + re.escape(part), "", r.title, count=1).rstrip().removesuffix(" — fix:")
            note = f"; its {clean(cause, 40)} was later named as a cause and replaced ({commit.split(' ', 1)[0]})"
            return clean(rest, KEY_CHARS - len(note)).rstrip(".。") + note
        if r.kind != "rootcause" or " fix: " in r.title or " — fixed in " in r.title:
            return ""
        commit = closed.fixed_in(r.title, self.sel.commits.get(r.session, []))
        if not commit:
            return ""
        room = KEY_CHARS - len(commit) - 14
        return f"{clean(r.title, max(60, room)).rstrip('.。')} — fixed in {commit}"

    def _recent_rows(self, told: int | None) -> list[tuple[float, int, str]]:
        """(time, order, line) of the sessions (and of routine rows no session summary covers), oldest first;
        not the session ``told`` (the one "Where we left off" is about)."""
        now = self.sel.now
        rows: list[tuple[float, int, str]] = []
        covered = self.sel.summarized
        for r in self.sel.log:
            if r.session not in covered:
                rows.append((r.created_at, r.id, obs_line(r, now, self.icons, LOG_CHARS, self.agent)))
        for s in self.sel.summaries:
            if s.id == told:
                continue
            request = self.sel.fresh_part(s.request, s.created_at)
            if s.request and not request.strip():
                continue  # the whole request restated something no longer true
            times = self.sel.repeats.get(s.id, 1)
            said = digest(s, request, self.sel.fresh_part, self.listed, self.found.get(s.session))
            if _POINTS_ONLY.search(said) or self._told_above(s, said):
                continue  # what came of it is a row listed above, and it left no state of its own to say
            if " → " not in said and not s.did_work and _ROLE_PROMPT.match(request):
                continue  # a scripted run that only gave the agent a role ("You are a futures analyst …")
            if not s.did_work and not self.found.get(s.session) and _nothing_came_of(said):
                continue  # "test prompt → Received. What would you like me to do?": no work, nothing learnt
            rows.append((s.started_at or s.created_at, -s.id,
                         f"S{s.id} {age(now - s.created_at)} {SUMMARY_ICON} {said}"
                         f"{f' (×{times})' if times > 1 else ''}{by(s.platform, self.agent)}"))
        rows.sort(key=lambda x: (x[0], x[1]))
        return rows

    def _told_above(self, s: Summary, said: str) -> bool:
        """A session line whose outcome is its commit, which a row listed above names as the fix it found
        ("… — fixed in 937984d fix: WAL rotation skipped …") or a row of the session listed above says in other
        words ("unified evaluation crash when debug file writes fail" under "Each debug write is now wrapped so
        IO failures … never crash the evaluator"), and no push or pull request: said twice."""
        commit = first_commit(s)
        if len(commit) < 20 or _shared(s.notes) or f" → {commit[:40]}" not in said:
            return False
        if any(commit[:40] in line for line in self.key_lines):
            return True
        mine = _gist(commit)
        return len(mine) >= 4 and any(len(mine & _gist(self.shown_titles[rid])) >= 0.6 * len(mine)
                                      for rid in self.found.get(s.session, []) if rid in self.shown_titles)

    def render(self, keep_recent: int) -> str:
        sel = self.sel
        lines = [OPEN, f"# Memory of {self.title} · {time.strftime(HEADER_TIME, time.localtime(sel.now))}",
                 "Legend: " + " · ".join([f"{SUMMARY_ICON} session", *(f"{v} {k}" for k, v in self.icons.items())]),
                 "{economics}",
                 "Rows: #ID AGE ICON TITLE (×N: recorded N times); S<ID> a session summary. Only what is still "
                 "true is listed."]
        if self.user_lines:
            lines.append(USER_HEADER)
            lines += self.user_lines
        if self.rule_lines:
            lines.append(RULES_HEADER)
            lines += self.rule_lines
        if self.key_lines:
            lines.append("\n## Key decisions, gotchas and root causes")
            lines += self.key_lines
        if self.todo_lines:
            lines.append("\n## Open to-dos (until done)")
            lines += self.todo_lines
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
        if any(BY in line for line in [*lines[5:], *self.left_off[:1]]):
            lines[4] += ' "in <agent>" marks work done in another coding agent.'
        if any(line.endswith(TENTATIVE) or TENTATIVE + " (×" in line for line in lines[5:]):
            lines[4] += " (tentative): decided for now, not final."
        if any(PROPOSED in line for line in lines[5:]):
            lines[4] += (" (proposed by the agent, not confirmed): a rule an agent suggested, not one the user gave;"
                         " the user makes it one with `kenning pin <ID>`.")
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
        # The count is of the whole text as injected, this line included (the one count every
        # surface gives: records.text_tokens); its own digits can change it, so settle it.
        read_tokens = text_tokens(body)
        text = body
        for _ in range(4):
            text = body.replace("{economics}", self._economics(read_tokens), 1)
            if text_tokens(text) == read_tokens:
                break
            read_tokens = text_tokens(text)
        return text

    def _economics(self, read_tokens: int) -> str:
        if self.work_tokens > 0:
            # Rounded down to a tenth: 99.65 % is "99.6", never "100" (the index is always read).
            saved = max(0.0, math.floor((100 - read_tokens * 100 / self.work_tokens) * 10 + 1e-9) / 10)
            return (f"Economics: reading this index costs ~{read_tokens:,} tokens; it condenses "
                    f"~{self.work_tokens:,} tokens of past work ({saved:g}% smaller).")
        return f"Economics: reading this index costs ~{read_tokens:,} tokens."

    def _left_off(self) -> list[str]:
        from kenning.context.left_off import where_we_left_off  # (it builds on this module's helpers)

        return where_we_left_off(self)

    def dropped(self, shown_recent: int) -> int:
        """Active memories (group heads) not listed: beyond a budget, archived, or never fetched."""
        recent = self.recent[len(self.recent) - shown_recent:] if shown_recent else []
        observations = sum(1 for _t, order, _line in recent if order > 0)  # summary rows have order < 0
        listed = len(self.user_lines) + len(self.rule_lines) + len(self.key_lines) + len(self.todo_lines)
        return max(0, self.sel.total - listed - observations)

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


def _fit(lines: Iterable[str], budget: int) -> list[str]:
    """The first lines (the most important / newest) whose total length fits ``budget`` (made as they are needed:
    a line is written only if those before it fit)."""
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget and out:
            break
        out.append(line)
        used += len(line) + 1
    return out
