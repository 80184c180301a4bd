"""The index's last section, "Where we left off": the latest session's work (what it was, its state, what it
did, what is still open) and how the recent sessions before it ended (files not committed, commits not pushed).

Standard library only (the SessionStart hook may write it itself).
"""

from __future__ import annotations

import re
import time

from kenning.context import checks, closed
from kenning.context.layout import (
    CJK,
    TREE_CLEAN,
    age,
    by,
    clean,
    clean_field,
    field_items,
    listing_key,
    says_only_done,
    short_links,
    state_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.context.index import Selection, Summary
    from kenning.context.layout import Layout

OPEN_ITEMS = 5         # open items of the recent sessions under "Where we left off"
EARLIER_SESSIONS = 4   # sessions before the latest whose uncommitted files are named there
EARLIER_WINDOW_S = 14 * 86400  # ... when they ended at most this long before the latest
UNPUSHED_SESSIONS = 3  # earlier sessions whose unpushed commits are named (the newest; the rest counted)


def uncommitted(notes: str) -> list[str]:
    """The files a summary's state line names as not committed when its session ended."""
    for part in state_of(notes).split("; "):
        if part.startswith("not committed: "):
            return [f for f in re.split(r", | and \d+ more", part[len("not committed: "):]) if f]
    return []


def _unpushed_branch(notes: str) -> str | None:
    """The branch a session's commits were left on, not pushed ('' when git named none; None: not so left)."""
    part = next((p for p in state_of(notes).split("; ") if p.startswith("not pushed")), None)
    return None if part is None else part[len("not pushed ("):-1] if part.endswith(")") else ""


def _went_up(notes: str) -> bool:
    """The session pushed, merged or opened a pull request (which needs its branch on the remote)."""
    return any(p.startswith(("pushed", "merged", "PR ")) for p in state_of(notes).split("; "))


def _published(notes: str) -> bool:
    """The session pushed or merged: work left uncommitted before it was, by then, committed or dropped."""
    return any(p.startswith(("pushed", "merged")) for p in state_of(notes).split("; "))


def _files(field: str) -> list[str]:
    from kenning import fastjson  # (json costs the hook path a few ms at import)

    try:
        found = fastjson.loads(field or "[]")
    except ValueError:
        return []
    return [f for f in found if isinstance(f, str)] if isinstance(found, list) else []


# Git bookkeeping ("Commit `c653b3c` created successfully.", "PR #235 머지 완료.", "コミット完了しました"): the state
# line says it, with the hashes. What is left of an item without these words says whether it says anything else.
_BOOKKEEPING = re.compile(
    r"`?\b[0-9a-f]{7,40}\b`?|#\d+|\d+|\b(?:the|a|an|is|are|was|were|has|have|been|now|just|all|and|with|to|"
    r"pr|prs|pull|requests?|commits?|committed|merged?|push(?:ed)?|tag(?:ged)?|branch(?:es)?|created|made|done|"
    r"complete[d]?|succeeded|successful(?:ly)?|opened|closed)\b|"
    r"커밋|푸시|머지|병합|완료|했습니다|되었습니다|됐습니다|방금|건|コミット|プッシュ|マージ|完了|しました|です|"
    r"提交|推送|合并|完成|已|了", re.IGNORECASE)
_GIT = re.compile(r"\b(?:commit|push|merg|prs?\b|pull request|tag|branch)|#\d+|\b[0-9a-f]{7,40}\b|"
                  r"커밋|푸시|머지|병합|コミット|プッシュ|マージ|提交|推送|合并", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w-]{3,}")  # (a word of four or more characters)
_CHANGE = r"^(?:Changed|Added|Removed|Updated|Edited|Deleted) "  # a change row's title (observer/providers/rules.py)
_CHANGED = re.compile(_CHANGE + r"[^:]{1,200}: ")
_CHANGE_ROW = re.compile(r"^Changed [^:(]{1,300}(?::|\(asked: |$)")  # a change row named by its files


def _told_by_state(item: str, state: str) -> bool:
    """Whether a "Done" item only repeats the state line: git bookkeeping, or a commit subject it names."""
    core = _CHANGED.sub("", item).rstrip().rstrip("…").rstrip(".")
    rest = _BOOKKEEPING.sub(" ", item)
    if _GIT.search(item) and len(_WORD.findall(rest)) + len(CJK.findall(rest)) // 2 <= 1:
        return True
    return len(core) >= 12 and core[:60].lower() in state.lower()


_ASKED_CHANGE = re.compile(_CHANGE + r"(.{1,300}?) \(asked: ")


def _files_in_state(item: str, state: str) -> bool:
    """A change named only by its request ("Changed a.py, b.py (asked: …)") whose files the state line names:
    "Worked on" says the request, the state its files."""
    m = _ASKED_CHANGE.match(item)
    if not m or " more" in m.group(1):
        return False
    names = [f.strip() for f in re.split(r", | and ", m.group(1)) if f.strip()]
    return bool(names) and all(re.search(r"(?:^|[/\s])" + re.escape(f) + r"(?:,|;|$| )", state) for f in names)


def where_we_left_off(lay: Layout) -> list[str]:
    """The latest work: what it was, its state, what it did, and what is still open (also from the
    sessions before it)."""
    latest = lay.sel.left_off
    if latest is None:
        return []
    fresh = lay.sel.fresh_part
    request, completed, next_steps, learned = (fresh(x, latest.created_at) for x in (
        latest.request, latest.completed, latest.next_steps, latest.learned))
    state = state_of(latest.notes)
    shown_todos = " ".join(lay.todo_lines)
    opened: list[str] = []
    for s in [latest, *(x for x in lay.sel.summaries if x.id != latest.id)][:4]:
        for item in field_items(fresh(s.next_steps, s.created_at)):
            if item not in opened and item[:60] not in shown_todos and not lay.sel.closed(item, s.created_at):
                opened.append(item)
    if not (completed or state or opened or learned):
        return []
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(latest.created_at))
    out = [f"\n## Where we left off (S{latest.id}, {when}, {age(lay.sel.now - latest.created_at)} ago)"
           f"{by(latest.platform, lay.agent)}"]
    if request:
        out.append(f"Worked on: {clean_field(short_links(request), 300)}")
    if state:
        out.append(f"State: {clean(state, 300)}")
    for title, rid in lay.listed_titles:  # whole, before the split at "; " (a title may hold one)
        completed = completed.replace(title, f"#{rid}")
    # A change row ("Changed a.ts, b.ts and 5 more: Added `x` option to both…") beside a state that names the
    # session's commits: the commits say what was done, the row only its files and a cut fragment.
    committed = bool(closed.commits_of(state))
    done = [f"#{lay.listed[listing_key(x)]}" if listing_key(x) in lay.listed else x
            for x in field_items(completed) if not says_only_done(x) and not _told_by_state(x, state)
            and not (request and _files_in_state(x, state)) and not (committed and _CHANGE_ROW.match(x))]
    if done:
        out.append(f"Done: {clean('; '.join(done[-4:]), 500)}")
    elif learned and not next_steps:
        # What a row above says already is not said again here, nor a cause a later fix of its session made history.
        titles = [" ".join(title.split()).lower() for title in [*(t for t, _rid in lay.listed_titles),
                                                                  *lay.sel.fixed_titles]]
        new = [x for x in learned.split("\n") if x.strip() and not any(
            (k := " ".join(x.split()).lower())[:40] in t or t[:40] in k for t in titles)]
        if new:
            out.append(f"Learned: {clean_field('; '.join(new), 400)}")
    if opened:
        out.append(f"Still open: {clean('; '.join(opened[:OPEN_ITEMS]), 500)}")
    earlier = _earlier_uncommitted(lay.sel, latest)
    if earlier:
        out.append(f"Earlier sessions ended with changes not committed: {clean('; '.join(earlier), 400)}")
    unpushed = _earlier_unpushed(lay.sel, latest)
    if unpushed:
        out.append(f"Earlier sessions ended with commits not pushed: {clean('; '.join(unpushed), 400)}")
    ran = checks.line(s.notes for s in [latest, *(x for x in lay.sel.summaries if x.id != latest.id)])
    if ran:
        out.append(clean(ran, 300))
    return out


def _earlier_recent(sel: Selection, latest: Summary) -> list[Summary]:
    """The sessions before the latest that ended at most ``EARLIER_WINDOW_S`` before it, newest first."""
    return sorted((s for s in sel.summaries if s.id != latest.id and s.created_at <= latest.created_at
                   and latest.created_at - s.created_at <= EARLIER_WINDOW_S), key=lambda s: -s.created_at)


def _earlier_unpushed(sel: Selection, latest: Summary) -> list[str]:
    """What the recent sessions before the latest committed and did not push, where no session since pushed
    or merged: how they ended, said as such (work committed on a `hotfix` branch, then a session on the lint
    set-up). Not when the latest committed on the same branch (or on one git did not name): its own state
    says that branch waits to be pushed."""
    if _went_up(latest.notes):
        return []
    mine = _unpushed_branch(latest.notes) if closed.commits_of(state_of(latest.notes)) else None
    out: list[str] = []
    # Back to the last push, whatever the number of sessions since (unlike files left uncommitted, which a
    # later session may have committed without saying so, a commit stays unpushed until a push).
    for s in _earlier_recent(sel, latest):
        if _went_up(s.notes):
            break  # a push since may have taken them up (a pull request needs its branch pushed)
        commits = closed.commits_of(state_of(s.notes))
        branch = _unpushed_branch(s.notes)
        if not commits or branch is None or (mine is not None and (not mine or not branch or branch == mine)):
            continue
        day = time.strftime("%m-%d", time.localtime(s.created_at))
        named = [clean(c, 60) for c in commits[-2:]] + ([f"{len(commits) - 2} more"] if len(commits) > 2 else [])
        out.append(f"{', '.join(named)} (S{s.id}, {day}{f', on {branch}' if branch else ''})")
    more = len(out) - UNPUSHED_SESSIONS
    return out[:UNPUSHED_SESSIONS] + ([f"and {more} earlier session{'s' if more > 1 else ''}"] if more > 0 else [])


def _earlier_uncommitted(sel: Selection, latest: Summary) -> list[str]:
    """What the recent sessions before the latest ended with uncommitted, where no later session changed
    the file again, pushed or merged: a fact about how they ended (the user may have committed since), said
    as such."""
    before = _earlier_recent(sel, latest)
    touched = set(_files(latest.files_modified))
    out: list[str] = []
    for s in [latest, *before[:EARLIER_SESSIONS]]:
        left = [f for f in uncommitted(s.notes) if f not in touched] if s is not latest else []
        if left:
            day = time.strftime("%m-%d", time.localtime(s.created_at))
            out.append(f"{', '.join(left[:3])}{' …' if len(left) > 3 else ''} (S{s.id}, {day})")
        touched.update(_files(s.files_modified))
        if _published(s.notes) or TREE_CLEAN in state_of(s.notes).split("; "):
            break  # what sessions before a push, a merge or a clean status left was committed since, or dropped
    return out
