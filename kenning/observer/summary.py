"""The session summary the offline observer keeps: what the session was about, what it did, what
it learned, where the work stands and what is still open.

Rewritten at every call from what earlier calls wrote (the stored summary) and this call's turns,
so a session observed in ten calls ends with the same summary as one observed at once. Where the
work stands comes from what the commands did (commits, pushes, pull requests, files changed since
the last commit) and from what the agent said of it; the open items from what was said to be open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kenning.context.closed import split_commit
from kenning.context.layout import TREE_CLEAN, says_only_done
from kenning.history.claude_lines import is_slash_command
from kenning.memory.text import strings, unique
from kenning.observer import checks, evidence
from kenning.observer.gates import ongoing
from kenning.observer.stated import gist_of
from kenning.records import SessionInfo, SummaryDraft, tokens_of

STATE = "State: "
COMMANDS = "Commands: "
_NOT_WORTH = re.compile(r"^(?:commit|push|continue|go ahead|proceed|yes|ok|okay|do it|approved?|thanks|"
                        r"thank you|lgtm|ship it|done|next)\W*$"
                        # a greeting ("how are you ?", "hi there"): small talk, no work
                        r"|^(?:(?:hi|hello|hey|yo|good (?:morning|afternoon|evening))(?: there)?\W*)?"
                        r"(?:how are you(?: doing)?(?: today)?|how's it going|hi|hello|hey|good (?:morning|afternoon|"
                        r"evening))\W*$|^(?:你好|您好|こんにちは|おはよう(?:ございます)?|안녕하세요|안녕)\W*$"
                        # the same nods in Chinese, Japanese, Korean ("提交吧", "コミットお願いします")
                        r"|^(?:(?:确认内容|確認内容|確認しました)\W*)?(?:提交|推送|合并|继续|好的|可以|没问题|谢谢|"
                        r"コミット|プッシュ|マージ|続けて|進めて|問題(?:ありません|ないです|なし)|ありがとう|了解|"
                        r"커밋|푸시|머지|계속|좋아요|감사합니다|확인했습니다)(?:吧|一下|了|します|して|してください|"
                        r"お願いします|ございます|です|해줘|해주세요|하죠|합시다|진행해주세요)?\W*$", re.IGNORECASE)


UNPUSHED = "later commits not pushed: "  # (starts with no other part's word: parse_state reads by prefix)
CLEAN = TREE_CLEAN  # "working tree clean": git's own words (the index reads the part by them)


@dataclass
class State:
    """Where the session's work stands, as the commands prove it."""

    commits: list[str] = field(default_factory=list)    # "12a669e subject" (hash when printed)
    pushed: list[str] = field(default_factory=list)     # branches ("" when not said)
    unpushed: list[str] = field(default_factory=list)   # commits made after the last push
    prs: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)  # files changed since the last commit
    reverted: list[str] = field(default_factory=list)   # commits a ``git revert`` took back ("" when not said)
    discarded: bool = False                             # the latest work: uncommitted changes thrown away
    branch: str = ""                                    # the branch the latest commit was made on ('' not printed)
    clean: bool = False                                 # a ``git status`` found nothing uncommitted, and none since

    def line(self) -> str:
        parts = []
        shown: list[str] = []
        if self.commits:
            # The first commit (usually the work asked for) and the latest two; how many between.
            shown = list(self.commits) if len(self.commits) <= 3 else \
                [self.commits[0], f"… {len(self.commits) - 3} more", *self.commits[-2:]]
            parts.append("committed " + ", ".join(shown))
        if self.pushed:
            names = [b for b in dict.fromkeys(self.pushed) if b]
            parts.append("pushed" + (f" ({', '.join(names[-2:])})" if names else ""))
            if self.unpushed:  # "pushed" is true of what was committed before the push, not after it
                # (by its hash alone when "committed" above already gives its subject)
                named = [_short(c, shown) for c in self.unpushed[-2:]]
                parts.append(UNPUSHED + ", ".join(named) +
                             (f" and {len(self.unpushed) - 2} more" if len(self.unpushed) > 2 else ""))
        elif self.commits and not self.prs:  # (a pull request needs its branch pushed, by a command not seen)
            # with the branch they wait on, as git printed it ("[hotfix 937984d] …")
            parts.append("not pushed" + (f" ({self.branch})" if self.branch else ""))
        opened = [p for p in self.prs if not p or p not in self.merged]  # (one merged since is said merged)
        if opened:
            parts.append("PR " + ", ".join(p for p in dict.fromkeys(opened) if p) + " opened"
                         if any(opened) else "PR opened")
        if self.merged:
            parts.append("merged " + ", ".join(p for p in dict.fromkeys(self.merged) if p))
        if self.reverted:
            named = [r[:7] for r in dict.fromkeys(self.reverted) if r and r[:1].isalnum() and r != "HEAD"]
            parts.append("reverted " + ", ".join(named) if named else "reverted a commit")
        if self.discarded:
            parts.append("uncommitted changes discarded")
        if self.uncommitted:
            files = ", ".join(self.uncommitted[:4]) + (f" and {len(self.uncommitted) - 4} more"
                                                       if len(self.uncommitted) > 4 else "")
            parts.append(f"not committed: {files}")
        elif self.clean:
            parts.append(CLEAN)
        return "; ".join(parts)


def _newest_of_each(commits: list[str]) -> list[str]:
    """``commits`` ("<hash> <subject>") with each subject once, its last, in the order of those."""
    last = {split_commit(c)[1]: i for i, c in enumerate(commits)}
    return [c for i, c in enumerate(commits) if last[split_commit(c)[1]] == i]


def _short(commit: str, shown: list[str]) -> str:
    """A commit as its hash alone, when it has one and ``shown`` names it in full already."""
    sha = split_commit(commit)[0]
    return sha if sha and commit in shown else commit


def parse_state(notes: str) -> State:
    """The state an earlier call wrote (the first line of the summary's notes)."""
    s = State()
    line = next((ln[len(STATE):] for ln in notes.splitlines() if ln.startswith(STATE)), "")
    for part in line.split("; "):
        if part.startswith("committed "):
            for c in (c.strip() for c in part[len("committed "):].split(", ")):
                between = re.fullmatch(r"… (\d+) more", c)
                s.commits += ["…"] * int(between.group(1)) if between else [c] if c else []
        elif part.startswith("pushed"):
            m = re.search(r"\((.*)\)", part)
            s.pushed = [b.strip() for b in m.group(1).split(",")] if m else [""]
        elif part.startswith("not pushed"):
            m = re.fullmatch(r"not pushed \((.+)\)", part)
            s.branch = m.group(1) if m else ""
        elif part.startswith(UNPUSHED):
            s.unpushed = [next((full for full in s.commits if _short(full, [full]) == c), c)
                          for c in re.split(r", | and \d+ more", part[len(UNPUSHED):]) if c]
        elif part.startswith("PR "):
            s.prs = re.findall(r"#\d+", part) or [""]
        elif part.startswith("merged"):
            s.merged = re.findall(r"#\d+", part) or [""]
        elif part.startswith("reverted "):
            s.reverted = [r for r in part[len("reverted "):].split(", ") if r and r != "a commit"] or [""]
        elif part in ("uncommitted changes discarded", "changes reverted"):  # (the latter: written before)
            s.discarded = True
        elif part == CLEAN:
            s.clean = True
        elif part.startswith("not committed: "):
            s.uncommitted = [f for f in re.split(r", | and \d+ more", part[len("not committed: "):]) if f]
    return s


@dataclass
class Notes:
    """What one turn adds to the summary."""

    request: str = ""
    learned: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)  # its last command failed: open only if the session ends so
    commands: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)  # changed after the turn's last commit
    tree_seen: bool = False  # ``uncommitted`` is the whole tree's (a ``git status`` of the turn said it)
    touched: bool = False  # the turn changed files (a tree found clean before may not be any more)
    checks: list[tuple[str, bool]] = field(default_factory=list)  # its checks (tests, linters) and if they passed
    read: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    unpushed: list[str] = field(default_factory=list)  # its commits made after its last push (all, without one)
    prs: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    reverted: list[str] = field(default_factory=list)
    discarded: bool = False  # the turn ended with its uncommitted changes thrown away
    branch: str = ""  # the branch its last commit was made on ('' when git printed none)
    last_message: str = ""
    at: float = 0.0
    size: int = 0
    prompt_number: int | None = None


def request_of(prompts: list[str], plan_titles: list[str]) -> str:
    """What the session was about: its plans' titles and the gists of the prompts that say something."""
    gists = [f"Plan: {t}" for t in plan_titles]
    for p in prompts:
        if p.lstrip().startswith(("<task-notification>", "<command-", "<local-command")):
            continue
        if p == "[forgotten]":  # kenning/store/forget.py FORGOTTEN_PROMPT: the user had it erased
            continue
        if re.match(r"^\s*implement the following plan", p, re.IGNORECASE):
            continue
        # a command or skill run without words ("/bmad-code-review") is the request itself
        g = p.strip() if is_slash_command(p.strip()) and len(p.split()) == 1 else gist_of(p, 120)
        if g and not _NOT_WORTH.match(g.lstrip("/").rsplit(":", 1)[-1]) and g not in gists:  # ("/commit": a nod)
            gists.append(g)
    if not gists:
        return ""
    return gists[0] + ("; then: " + "; ".join(gists[1:4]) if len(gists) > 1 else "")


def advance(state: State, notes: list[Notes]) -> State:
    """``state`` after the turns of ``notes``, in order."""
    for n in notes:
        if n.commits:  # what was changed before a commit is in it; what changed after is not
            # A commit made again with the same message (amended, rebased, redone after a failed hook) is listed
            # once, as its newest: "0a69b3c Add demo videos, 8b4d61d Add demo videos" said one commit twice.
            state.commits = _newest_of_each(state.commits + n.commits)
            state.branch = n.branch
        if n.commits or n.tree_seen:  # (git status says what the whole tree holds)
            state.uncommitted = list(n.uncommitted)
        else:
            state.uncommitted = unique([*state.uncommitted, *n.uncommitted])
        if n.tree_seen or n.touched or n.uncommitted or n.discarded:
            state.clean = n.tree_seen and not n.uncommitted
        state.unpushed = list(n.unpushed) if n.pushed else [*state.unpushed, *n.unpushed]
        state.pushed += n.pushed
        state.prs += n.prs
        state.merged += n.merged
        state.reverted += n.reverted
        if n.discarded:
            state.discarded = True
            state.uncommitted = list(n.uncommitted) if n.tree_seen else []
        elif n.commits or n.uncommitted:
            state.discarded = False  # later work: what was thrown away is no longer where things stand
    return state


def summarize(session: SessionInfo, notes: list[Notes], plan_titles: list[str],
              taken_back: set[str] | frozenset[str] = frozenset()) -> SummaryDraft | None:
    """The session's summary so far, or None when the session did nothing worth one."""
    prior = session.prior_summary or {}
    prior_notes = str(prior.get("notes") or "")
    state = advance(parse_state(prior_notes), notes)
    commands = _prior_list(prior_notes, COMMANDS, ", ") + [c for n in notes for c in n.commands]
    request = request_of([p for p in session.prompts if p], [*_prior_plans(prior), *plan_titles])
    learned = [x for x in _lines(prior.get("learned")) if x not in taken_back] + [x for n in notes for x in n.learned]
    done = [x for x in _split(prior.get("completed")) if x not in taken_back] + [
        x for n in notes for x in (*n.done, *n.status) if not says_only_done(x)]
    todos = [t for t in _split(prior.get("next_steps")) if not t.startswith("Still failing: ")]
    todos += [x for n in notes for x in n.todos] + (notes[-1].failing if notes else [])
    files_read = unique([*strings(prior.get("files_read")), *(f for n in notes for f in n.read)])
    files_modified = unique([*strings(prior.get("files_modified")), *(f for n in notes for f in n.modified)])
    last_message = next((n.last_message for n in reversed(notes) if n.last_message), "")
    if not (request or files_modified or commands or learned or done or last_message):
        return None
    line = state.line()
    ran = checks.summary_line(prior_notes, [c for n in notes for c in n.checks])
    note_lines = ([STATE + line] if line else []) + ([COMMANDS + ", ".join(unique(commands)[:12])] if commands
                                                     else []) + ([ran] if ran else [])
    if not done and last_message and last_message.lstrip()[:1] not in ("{", "[") and not says_only_done(last_message) \
            and not ongoing(last_message):
        done = [_clip(last_message, 300)]
    at = max((n.at for n in notes), default=float(prior.get("created_at") or 0.0))
    investigated = ", ".join(f for f in files_read if f not in files_modified)[:600]
    return SummaryDraft(
        created_at=at, request=_clip(request, 400),
        investigated=("Read " + investigated) if investigated else "",
        learned=_newest(unique(learned)[-8:], "\n", 1500),
        completed=_newest(unique(done)[-8:], "; ", 1200),
        next_steps=_newest(unique(todos)[-6:], "; ", 800),
        notes="\n".join(note_lines), files_read=files_read[:50], files_modified=files_modified[:50],
        prompt_number=next((n.prompt_number for n in reversed(notes) if n.prompt_number), None),
        source_tokens=tokens_of(sum(n.size for n in notes)) + int(prior.get("source_tokens") or 0))


def command_note(c: evidence.Command, short: str) -> str:
    return f"{short} ({'ok' if c.ok else 'failed'})"


def _prior_plans(prior: dict[str, object]) -> list[str]:
    req = str(prior.get("request") or "")
    return [m.group(1) for m in re.finditer(r"(?:^|; then: |; )Plan: ([^;]+)", req)]


def _prior_list(notes: str, prefix: str, sep: str) -> list[str]:
    line = next((ln[len(prefix):] for ln in notes.splitlines() if ln.startswith(prefix)), "")
    return [x for x in line.split(sep) if x]


def _lines(v: object) -> list[str]:
    return [x for x in str(v or "").split("\n") if x]


def _split(v: object) -> list[str]:
    return [x for x in str(v or "").split("; ") if x]


def _newest(items: list[str], sep: str, limit: int) -> str:
    """The newest ``items`` that fit in ``limit`` characters, each whole (a cut item began mid-word: "it v6
    returns …" of "But go-git v6 returns …"); the newest alone is clipped at its end when it does not fit."""
    kept: list[str] = []
    size = 0
    for item in reversed(items):
        size += len(item) + (len(sep) if kept else 0)
        if size > limit:
            break
        kept.append(item)
    return sep.join(reversed(kept)) if kept else _clip(items[-1], limit) if items else ""


def _clip(text: str, limit: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
