"""The offline observer: no model API, no network; a turn at a time, deterministic.

A turn runs from a user prompt to the agent's Stop. Its events stay pending until the turn closes
(Stop, the next prompt, SessionEnd, or silence longer than ``turn_idle_seconds``); then the whole
turn is read (kenning/observer/reading.py: every unit of the user's words and of the agent's texts
judged by the role model, what the commands did) and turned into memories
(kenning/observer/user_said.py and compose.py, DESIGN.md §9):

* the user's rules, decisions, facts and to-dos, each with the sentence and where it was said;
* the design decisions of a plan the user accepted, as the plan's;
* the root cause and fix the agent explained (one memory), its gotchas, decisions with reasons,
  open items and durable facts;
* routine work (files changed, a commit, a question answered, code explored): the session log;
* a gotcha the commands prove (the same command failing, then passing with an environment variable
  or flag added) when the agent says so too; a failure that was fixed by edits, as a routine fix
  unless the agent explained it.

A change that is reverted (``git revert``, changes discarded) stops being a fix; a fix the user
said did not work is replaced by the next one (kenning/observer/taken_back.py). At Stop the session summary is rewritten
(kenning/observer/summary.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kenning import winpath
from kenning.context.layout import ASKED
from kenning.memory.text import clip, content_words, jaccard, unique
from kenning.observer import (
    checks,
    decision_records,
    evidence,
    git_actions,
    not_on_path,
    outside_sandbox,
    protected,
    proven,
    rejected_usage,
    worktree,
)
from kenning.observer.carried_out import CarriedOut
from kenning.observer.compose import agent_memories, plan_memories
from kenning.observer.conclusion import ROUTINE, counts_a_list, status_said, topic
from kenning.observer.plan_scope import PlanScope
from kenning.observer.reading import Reading, read_turn
from kenning.observer.stated import _prompt_text, gist_of, statements
from kenning.observer.summary import STATE, Notes, advance, command_note, parse_state, summarize
from kenning.observer.taken_back import Restated, Undoable
from kenning.observer.transcript import PAYLOAD_KEY
from kenning.observer.upgrades import title as upgrade_title
from kenning.observer.upgrades import upgrades
from kenning.observer.user_ran import UserRan
from kenning.observer.user_said import user_memories
from kenning.project import relative
from kenning.records import Event, ObservationDraft, Outcome, SessionInfo, tokens_of

TURN_CLOSERS = ("Stop", "SessionEnd")
MAX_FILES_IN_TITLE = 3
LOG_KINDS = ("change", "answer", "explored", "note")
CHANGE_TITLE = 140  # routine work's title: what changed and the outcome, one short line


@dataclass
class Turn:
    """The events of one prompt turn, in order."""

    prompt: Event | None = None
    events: list[Event] = field(default_factory=list)
    stop: Event | None = None

    @property
    def all(self) -> list[Event]:
        return ([self.prompt] if self.prompt else []) + self.events + ([self.stop] if self.stop else [])


class RulesObserver:
    """Observer provider ``rules``: no model, no network, deterministic."""

    name = "rules"

    def __init__(self, turn_idle_seconds: float = 600.0) -> None:
        self.turn_idle_seconds = turn_idle_seconds

    @property
    def closed_turns_after(self) -> float:
        """It acts on closed turns only (an open one counts as closed after this many idle seconds):
        the pipeline need not hand it a session whose turn is still open (repo.sessions_with_closed_turns)."""
        return self.turn_idle_seconds

    def observe(self, session: SessionInfo, events: list[Event], *, now: float) -> Outcome:
        out = Outcome()
        # SessionStart carries nothing to observe (the session row already exists): consume it.
        out.done.extend(e.id for e in events if e.kind == "SessionStart")
        events = [e for e in events if e.kind != "SessionStart"]
        turns, leftover = split_turns(events)
        idle = bool(leftover) and now - leftover[-1].occurred_at >= self.turn_idle_seconds
        if leftover and (session.ended or idle):
            turns.append(_as_turn(leftover))
            leftover = []
        notes: list[Notes] = []
        plans: list[str] = []
        undoable = Undoable(session)
        taken_back: set[str] = set()
        restated = Restated(session)
        todos_done = CarriedOut(session)
        done_titles: set[str] = set()
        summary_turn: Turn | None = None
        user_ran = UserRan()  # the agent's failures, to match the user's own runs of a later turn
        scope = PlanScope()  # the parts of the plan accepted last, to tell what "only …" left out of it
        for turn in turns:
            drafts, note, reading = observe_turn(turn, session, user_ran)
            if reading.origin == "plan":
                # (a plan carried out whole is done: a later "only …" asks for something else)
                stopped = turn.stop is not None and bool(turn.stop.payload.get("interrupted"))
                scope.accepted(reading.prompt, reading.plan_title, carried_out=bool(note.modified) and not stopped)
            elif reading.words:  # only the user's next words after the plan narrow it
                if not reading.brought and (left := scope.left_out(reading.words)):
                    note.todos.append(left)
                scope.forget()
            if reading.plan_title:
                plans.append(reading.plan_title)
            taken_back |= undoable.apply(drafts, reading, out.observations)
            restated.apply(drafts, out.observations)
            done_titles |= todos_done.apply(drafts, reading, out.observations)
            out.observations.extend(drafts)
            if turn.prompt is not None or turn.events or (turn.stop is not None and turn.stop.kind == "Stop"):
                notes.append(note)  # (a SessionEnd alone adds nothing to the summary, not even its time)
            out.done.extend(e.id for e in turn.all)
            if turn.prompt is not None or turn.events or (turn.stop is not None and turn.stop.kind == "Stop"):
                summary_turn = turn
        if summary_turn is None and turns and session.prior_summary is None and session.prompts:
            summary_turn = turns[-1]  # the session ended without a Stop: summarise what it did
        if summary_turn is not None and (summary_turn.stop is not None or session.ended or idle):
            for n in notes:  # what was taken back is no lesson and nothing done; a to-do carried out is not open
                n.learned = [x for x in n.learned if x not in taken_back and x not in done_titles]
                n.done = [x for x in n.done if x not in taken_back]
                n.todos = [x for x in n.todos if x not in done_titles]
            out.summary = summarize(session, notes, plans, taken_back)
        return out


def split_turns(events: list[Event]) -> tuple[list[Turn], list[Event]]:
    """Closed turns, and the events of the turn still open (oldest first)."""
    turns: list[Turn] = []
    current: list[Event] = []
    for ev in events:
        if ev.kind == "UserPromptSubmit" and current and not _mid_turn(ev):
            turns.append(_as_turn(current))  # a new prompt closes a turn that never got its Stop
            current = []
        current.append(ev)
        if ev.kind in TURN_CLOSERS:
            turns.append(_as_turn(current))
            current = []
    return turns, current


def _mid_turn(ev: Event) -> bool:
    """Words the user typed while the agent worked, or said refusing a tool call: the turn goes on."""
    return ev.payload.get("prompt_origin") in ("queued", "rejection")


def _as_turn(events: list[Event]) -> Turn:
    turn = Turn()
    for ev in events:
        if ev.kind == "UserPromptSubmit" and turn.prompt is None and not turn.events:
            turn.prompt = ev
        elif ev.kind in TURN_CLOSERS:
            turn.stop = ev if ev.kind == "Stop" or turn.stop is None else turn.stop
        else:
            turn.events.append(ev)
    return turn


def agent_texts(turn: Turn) -> list[str]:
    """What the agent said in the turn: its messages along the way (transcript), then its last one."""
    if turn.stop is None or turn.stop.kind != "Stop":
        return []
    p = turn.stop.payload
    texts = [t for t in p.get(PAYLOAD_KEY) or [] if isinstance(t, str)]
    last = p.get("last_assistant_message")
    if isinstance(last, str) and last.strip():
        texts.append(last)
    return texts


# ----------------------------------------------------------------------------- one turn

def observe_turn(turn: Turn, session: SessionInfo,
                 user_ran: UserRan | None = None) -> tuple[list[ObservationDraft], Notes, Reading]:
    root = session.project_root
    reading = read_turn(turn.prompt, turn.events, turn.stop, agent_texts(turn))
    prompt_text = _prompt_text(turn.prompt)
    typed = reading.origin in ("typed", "queued", "rejection")
    gist = gist_of(prompt_text) if typed else (f"Plan: {reading.plan_title}" if reading.plan_title else "")
    number = turn.prompt.prompt_number if turn.prompt else (turn.events[0].prompt_number if turn.events else None)
    where = f"prompt {number} of session {session.agent_session_id[:8]}" if number else \
        f"session {session.agent_session_id[:8]}"
    start = turn.prompt.occurred_at if turn.prompt else (turn.all[0].occurred_at if turn.all else 0.0)
    end = (turn.stop or turn.all[-1]).occurred_at if turn.all else start
    tools = [e for e in turn.events if e.kind in ("PostToolUse", "PostToolUseFailure")]
    modified: dict[str, float] = {}
    edits: dict[str, int] = {}
    created: set[str] = set()
    reads: list[str] = []
    searches: list[str] = []
    for e in tools:
        for f in evidence.modified_files(e):
            if _plan_file(f):
                continue  # the agent writing its plan (the plan is read as the agent's words), not the project
            modified[_rel(f, root)] = e.occurred_at
            edits[_rel(f, root)] = edits.get(_rel(f, root), 0) + 1
            if evidence.created(e):
                created.add(_rel(f, root))
        reads.extend(_rel(f, root) for f in evidence.read_files(e))
        if evidence.searched(e):
            searches.append(str(evidence.searched(e)))
    reads = unique(reads)
    files = list(modified)

    rules_now = [str(m.get("title") or "") for m in session.memories if m.get("layer") == "rule"]
    drafts: list[ObservationDraft] = user_memories(reading, start, where, rules_now)
    if reading.words:
        drafts += _user_statuses(reading, reading.words, start, where, drafts)
    drafts += plan_memories(reading, start, where)
    fixed = _fixed_by_edits(reading, tools, root)
    slips = _slips(reading, tools, root)
    said, used = agent_memories(reading, end, where, files, reads, slips=slips)
    # A plan's decision that became the fix of the plan's cause is said in that row, not again alone
    taken = {u.text for u in used if u.origin == "plan"}
    drafts = [d for d in drafts if not (d.kind == "decision" and d.facts and d.facts[0] in taken)]
    drafts += said
    drafts += [d for d in decision_records.drafts(tools, root, end) if not decision_records.told_by(d, drafts)]
    drafts += _proven_gotchas(reading, used, reads, end, gist)
    drafts += _unwrapped(reading, reads, gist)
    drafts += _protected(reading, gist)
    drafts += _refused_words(reading, gist)
    drafts += not_on_path.drafts(reading.commands, gist)
    drafts += outside_sandbox.drafts(reading.commands, gist)
    drafts += user_ran.gotchas(turn.events) if user_ran is not None else []
    drafts += _versions(reading, turn, end)
    if fixed and not any(d.kind in ("rootcause", "fix") for d in said):
        drafts.append(_routine_fix(fixed, reads, gist, reading))
    if files and not any(d.kind in ("rootcause", "fix") for d in drafts):
        change = _change(reading, files, created, reads, gist, max(modified.values()), edits)
        drafts = [d for d in drafts if d.kind != "note" or not _overlaps(d.title, change.title)] + [change]
    elif not files and not said and reads and gist:
        drafts.append(_answer_or_explored(reading, reads, gist, end, searches))
    for d in drafts:
        d.source_tokens = tokens_of(sum(e.size_chars for e in turn.all) // max(1, len(drafts)))
        d.prompt_number = number
        d.agent_id, d.agent_type = _agent(turn)

    note = Notes(
        learned=[d.title for d in drafts if d.kind not in LOG_KINDS and d.kind != "rule"],
        done=[c.subject for c in reading.actions.commits] + [d.title for d in drafts if d.kind in (
            "rootcause", "fix")][:1] + [d.title for d in drafts if d.kind == "change" and not d.title.startswith(
                "Fixed `")][:1],
        status=[stands for j in reading.found("status", final_only=True, min_p=0.5)
                if not ROUTINE.match(j.text) and (stands := status_said(j))][:2],
        todos=[d.title for d in drafts if d.kind == "todo"], failing=_still_failing(reading),
        commands=[command_note(c, _short_cmd(c.command)) for c in reading.commands
                  if not evidence.trivial(c)],
        modified=files, read=reads,
        last_message=(agent_texts(turn) or [""])[-1], at=end, size=sum(e.size_chars for e in turn.all),
        prompt_number=number)
    standing(note, reading.actions, reading.commands, modified, root)
    return drafts, note, reading


def standing(note: Notes, actions: git_actions.Actions, commands: list[evidence.Command],
             modified: dict[str, float], root: str) -> None:
    """Where the turn left the repository, as its commands prove it, into ``note``: its commits and
    pushes, pull requests, reverts, and what is not committed."""
    # What is not committed: changed after the last commit and after changes were last thrown away.
    last_commit = max([c.at for c in actions.commits] + ([actions.discarded_at] if actions.discarded else []),
                      default=None)
    edited = [f for f, at in modified.items() if (last_commit is None or at > last_commit) and not _outside(f)]
    # A status the turn ran says what the tree held, whoever changed it (git's words, brought forward).
    tree = worktree.after(commands, root)
    if tree is not None:
        # (what the session edited first: it is what the session worked on)
        edited = unique([f for f in edited if modified[f] > tree.at] + [f for f in tree.files if f in modified] +
                        tree.files)
    note.uncommitted = edited  # (a file outside the project, a plan under ~/.claude, is no change)
    note.tree_seen = tree is not None
    note.touched = bool(modified)
    note.checks = [(k, c.ok) for c in commands if c.finished for k in checks.checks_of(c.command, c.ok)]
    note.commits = [_commit_line(c) for c in actions.commits]
    note.unpushed = [_commit_line(c) for c in actions.commits if not actions.pushed or c.at > actions.pushed_at]
    note.branch = next((c.branch for c in actions.commits[-1:] if c.branch != "HEAD"), "")
    note.pushed, note.prs, note.merged = actions.pushed, actions.prs, actions.merged
    note.reverted = list(actions.reverted)
    note.discarded = actions.discarded and not any(at > actions.discarded_at for at in modified.values())


def state_notes(session: SessionInfo, events: list[Event]) -> list[Notes]:
    """What each turn of ``events`` did to the repository (the state fields of its notes, nothing else), for an
    observer that writes the rest of the summary itself (a model): the same proof from the commands."""
    root = session.project_root
    turns, leftover = split_turns([e for e in events if e.kind != "SessionStart"])
    notes = []
    for turn in [*turns, *([_as_turn(leftover)] if leftover else [])]:
        tools = [e for e in turn.events if e.kind in ("PostToolUse", "PostToolUseFailure")]
        commands = [c for c in (evidence.command(e) for e in tools) if c is not None]
        modified = {_rel(f, root): e.occurred_at for e in tools for f in evidence.modified_files(e)
                    if not _plan_file(f)}
        note = Notes()
        standing(note, git_actions.read(commands), commands, modified, root)
        notes.append(note)
    return notes


def with_state(summary_notes: str, prior_notes: str, notes: list[Notes]) -> str:
    """A model's summary notes after the state and checks lines the commands prove (a line the model began with
    "State: " or "Checks: " loses the label: only the commands' lines are read as such)."""
    line = advance(parse_state(prior_notes), notes).line()
    ran = checks.summary_line(prior_notes, [c for n in notes for c in n.checks])
    kept = [ln.split(": ", 1)[1] if ln.startswith((STATE, checks.CHECKS)) else ln for ln in summary_notes.splitlines()]
    return "\n".join(([STATE + line] if line else []) + ([ran] if ran else []) + [ln for ln in kept if ln.strip()])


def _commit_line(c: git_actions.Commit) -> str:
    return (c.hash[:7] + " " if c.hash else "") + clip(c.subject, 80)


def _versions(r: Reading, turn: Turn, at: float) -> list[ObservationDraft]:
    """The versions the package manager changed in the turn, as it printed them: a note (searchable),
    and what makes a memory of an old version no longer true."""
    ups = upgrades(r.commands)
    if not ups:
        return []
    title = upgrade_title(ups, r.words + " " + " ".join(agent_texts(turn)))
    return [ObservationDraft(
        type="change", title=clip(title, 240), subtitle="versions the package manager changed",
        facts=[f"{u.package}: {u.old} -> {u.new}" for u in ups[:12]], concepts=["what-changed"], created_at=at,
        kind="note", why={"said": title, "by": "commands", "origin": "", "where": "",
                          "how": "printed by the package manager"})]


def _user_statuses(r: Reading, prompt: str, at: float, where: str,
                   taken: list[ObservationDraft]) -> list[ObservationDraft]:
    """A workstream's status the user states ("pause the billing migration until …"), and a choice with
    its reason: the grammar reads these precisely in English; the role model may not have kept them."""
    out = []
    said_elsewhere = [d.title for d in taken] + r.pasted  # already kept, or quoted from a tool's text
    for kind, sentence in statements(prompt):
        if kind not in ("status", "choice") or any(_overlaps(sentence, s) for s in said_elsewhere):
            continue
        out.append(ObservationDraft(
            type="decision", title=clip(sentence, 240), subtitle="stated by the user", facts=[f"User: {sentence}"],
            narrative=f"The user stated: \"{sentence}\"", concepts=["why-it-exists"], created_at=at,
            kind="status" if kind == "status" else "decision",
            why={"said": sentence, "by": "user", "origin": r.origin, "where": where,
                 "how": f"a {'workstream status' if kind == 'status' else 'choice with its reason'} by its cue words"}))
    return out


def _overlaps(a: str, b: str) -> bool:

    return jaccard(content_words(a), content_words(b)) >= 0.5


def _proven_gotchas(r: Reading, used: list, reads: list[str], at: float, gist: str) -> list[ObservationDraft]:
    """The same command failing, then passing with only an environment variable or flag added, when the
    agent's words name what was added: what it needs is a gotcha (never two different commands)."""
    out: list[ObservationDraft] = []
    cmds = r.commands
    for i, fail in enumerate(cmds):
        if fail.ok or not_on_path.missing(fail):  # (a program not on the PATH: not_on_path.py says how it runs)
            continue
        passing = next((c for c in cmds[i + 1:] if c.ok and _extends(fail.command, c.command)), None)
        if passing is None:
            continue
        needs = _invocation_change(fail.command, passing.command)
        said = [j.text for j in r.agent if any(_names_word(j.text, w.strip("`")) for w in needs)]
        if not needs or not said or any(d.title == said[0] for d in out):
            continue
        headline = evidence.error_headline(fail.output)
        title = f"`{_short_cmd(fail.command)}` needs {' '.join(needs)}" + (f" (else: {headline})" if headline else "")
        best = next((j for j in r.agent if j.text == said[0]), None)
        out.append(ObservationDraft(
            type="discovery",
            title=clip(said[0] if best is not None and best.role in ("gotcha", "rootcause") else title, 240),
            subtitle=clip(title, 160), facts=unique([title, f"`{_short_cmd(passing.command)}` passes", *said[:2]]),
            narrative=(f"While working on: {gist}. " if gist else "") + f"`{_short_cmd(fail.command)}` failed "
            f"({headline or 'non-zero exit'}); run as `{_short_cmd(passing.command)}` it passed.",
            concepts=["gotcha", "problem-solution"], files_read=reads, created_at=passing.at, kind="gotcha",
            why={"said": said[0], "by": "agent", "origin": "final", "where": "", "how":
                 f"the command failed, then passed with {' '.join(needs)} added, and the agent said why"}))
        break
    return out


def _protected(r: Reading, gist: str) -> list[ObservationDraft]:
    """A push the remote refused because the branch is protected (its own words say so): a gotcha."""
    out: list[ObservationDraft] = []
    for refused in protected.refusals(r.commands):
        out.append(proven.gotcha(
            protected.title(refused), proved_by="the remote", facts=[f"the remote refused the push: {refused.words}"],
            narrative=f"A push was refused: {refused.words}.", at=refused.at,
            how="the remote refused a push to a protected branch, in its own words", gist=gist))
    return out


def _refused_words(r: Reading, gist: str) -> list[ObservationDraft]:
    """A field or option a tool refused in its own words, which the same tool then did without: a gotcha."""
    out: list[ObservationDraft] = []
    for refused in rejected_usage.refused(r.commands)[:2]:
        out.append(proven.gotcha(
            rejected_usage.title(refused), proved_by="the tool",
            facts=[f"`{refused.tool}` refused `{refused.word}`: {refused.says}", f"`{refused.passed}` passed"],
            narrative=f"`{refused.tool}` refused `{refused.word}` ({refused.says}); run without it, it passed.",
            at=refused.at, how="the tool refused the word in its own words, and passed run without it", gist=gist))
    return out


_REJECTED_ARG = re.compile(r"unrecognized|unknown (?:sub)?command|unexpected argument|invalid (?:sub)?command|"
                           r"no such (?:sub)?command|not a valid|command not found", re.IGNORECASE)


def _unwrapped(r: Reading, reads: list[str], gist: str) -> list[ObservationDraft]:
    """A command that failed because a wrapper in front of it rejected it ("rtk: unrecognized subcommand
    'bun'"), then passed run without the wrapper: the wrapper cannot run it (proved twice, invented never)."""
    out: list[ObservationDraft] = []
    for i, fail in enumerate(r.commands):
        passing = _run_unwrapped(r.commands, i)
        if passing is None:
            continue
        a = fail.command.split()
        wrapper = " ".join(a[:len(a) - len(passing.command.split())])
        head = evidence.error_headline(fail.output)
        tool = " ".join(w for w in passing.command.split()[:3] if not re.match(r"^[0-9]*[<>|&]", w))
        title = f"`{wrapper}` cannot run `{tool}`" + (f" ({head})" if head else "") + f": run `{tool}` without it"
        if any(d.title == title for d in out):
            continue
        out.append(ObservationDraft(
            type="discovery", title=clip(title, 240), subtitle="gotcha proved by the commands",
            facts=[f"`{_short_cmd(fail.command)}` failed" + (f": {head}" if head else ""),
                   f"`{_short_cmd(passing.command)}` passed"],
            narrative=(f"While working on: {gist}. " if gist else "") + f"`{_short_cmd(fail.command)}` was rejected "
            f"by `{wrapper}`; the same command without it passed.", concepts=["gotcha"], files_read=reads,
            created_at=passing.at, kind="gotcha",
            why={"said": title, "by": "commands", "origin": "", "where": "", "how":
                 f"`{wrapper}` rejected the command ({head or 'error'}), which then passed without it"}))
    return out[:2]


def _run_unwrapped(commands: list[evidence.Command], i: int) -> evidence.Command | None:
    """The later command that passed as command ``i`` without the wrapper in front of it (one or two words), when
    ``i`` failed because that wrapper rejected it; None otherwise."""
    fail = commands[i]
    if fail.ok or not _REJECTED_ARG.search(fail.output[:400]):
        return None
    a = fail.command.split()
    return next((c for c in commands[i + 1:] if c.ok and 0 < len(a) - len(b := c.command.split()) <= 2
                 and a[len(a) - len(b):] == b), None)


# Where a shell line chains another command: words after it are that command's, not the first one's.
_CHAINED = re.compile(r"\s(?:\|\|?|&&|;)\s|\s[|;]|[|;]\s")


def _extends(failed: str, passed: str) -> bool:
    """The passing command is the failing one with words added (an env variable, a flag), nothing else: the
    same pipeline (``cmd | sed -n 1,80p`` after ``cmd`` adds a command, not a flag of ``cmd``) and the same
    program (``mise exec -- go test`` after ``go test`` runs another program, whose ``--`` is none of go's)."""
    a, b = failed.split(), passed.split()
    return a != b and len(b) > len(a) and all(w in b for w in a) and _program(a) == _program(b) \
        and len(_CHAINED.split(failed)) == len(_CHAINED.split(passed))


def _program(words: list[str]) -> str:
    """The program a command runs: its first word after the environment it sets (``FOO=1 make`` runs make)."""
    return next((w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)), "")


def _names_word(text: str, word: str) -> bool:
    """``word`` said as a word of its own (`-n` is not said by "--no-results-push" or "v4.40.1-next")."""
    return bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text))


def _invocation_change(failed: str, passed: str) -> list[str]:
    a, b = failed.split(), passed.split()
    return [f"`{w}`" for w in b if w not in a and (re.match(r"^[A-Z_][A-Z0-9_]*=", w) or w.startswith("-"))][:3]


@dataclass
class _Fixed:
    command: str
    headline: str
    files: list[str]
    at: float
    own: bool = False


def _fixed_by_edits(r: Reading, tools: list[Event], root: str) -> _Fixed | None:
    """A command that failed, then passed after files were edited: the proof of a fix. ``own`` when the
    files fixed had been changed in the same turn before the failure (the agent's own slip)."""
    for i, fail in enumerate(r.commands):
        if fail.ok or not_on_path.missing(fail):  # (a program not on the PATH: no edit made it pass)
            continue
        key = evidence.command_key(fail.command)
        passing = next((c for c in r.commands[i + 1:] if c.ok and key and evidence.command_key(c.command)[:1] ==
                        key[:1]), None)
        if passing is None:
            continue
        between = unique(_rel(f, root) for e in tools if fail.at <= e.occurred_at <= passing.at
                          for f in evidence.modified_files(e))
        before = {_rel(f, root) for e in tools if e.occurred_at < fail.at for f in evidence.modified_files(e)}
        if between:
            # The agent's own slip: it fails on what the turn had just changed; or the tests made to match a
            # change of the turn's (only tests edited, after code was): no fault found, the tests followed.
            own = bool(set(between) & before) or (all(_TEST_FILE.search(f) for f in between)
                                                   and any(not _TEST_FILE.search(f) for f in before))
            return _Fixed(fail.command, evidence.error_headline(fail.output), between, passing.at, own=own)
    return None


def _slips(r: Reading, tools: list[Event], root: str) -> frozenset[str]:
    """The commands that failed on the turn's own doing and passed again before it ended: a check run on what the
    turn had just changed (a type error in its new code, its lint, fixed in the same minute), or a command a
    wrapper in front of it rejected ("rtk: unrecognized subcommand 'bun'") that passed without it. Neither says
    the turn was about something wrong."""
    out: set[str] = set()
    for i, fail in enumerate(r.commands):
        if fail.ok or not fail.finished:
            continue
        if _run_unwrapped(r.commands, i) is not None:
            out.add(fail.command)
            continue
        key = evidence.command_key(fail.command)
        # The same command run again, or more broadly (`pytest tests/x.py`, then `pytest`); not another command of
        # the same tool (`git push` refused, then `git branch` ran)
        passing = next((c for c in r.commands[i + 1:] if c.ok and key and _rerun(key, evidence.command_key(c.command))),
                       None)
        if passing is None:
            continue
        before = {_rel(f, root) for e in tools if e.occurred_at < fail.at for f in evidence.modified_files(e)}
        between = {_rel(f, root) for e in tools if fail.at <= e.occurred_at <= passing.at
                   for f in evidence.modified_files(e)}
        # What the turn had changed, changed again until it passed (or a check passing when run again, or after a
        # fixer: a push refused, then made elsewhere, is no slip); a change to code the turn had not touched found
        # a fault in what was there.
        if before and (between & before if between else checks.runs_a_check(fail.command)) \
                and not (between - before - _tests(between)):
            out.add(fail.command)
    return frozenset(out)


def _rerun(failed: tuple[str, ...], later: tuple[str, ...]) -> bool:
    return failed == later or (failed[:1] == later[:1] and min(len(failed), len(later)) == 1)


def _tests(files: set[str]) -> set[str]:
    return {f for f in files if _TEST_FILE.search(f)}


# A test file by the conventions of most ecosystems: tests/…, __tests__/…, x.test.ts, x_test.go, test_x.py, XTest.kt
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|__tests__|specs?|testdata)/|[._-](?:test|spec)s?\.[A-Za-z]+$|"
                        r"(?:^|/)test_[^/]+$|[a-z0-9]Tests?\.[A-Za-z]+$")


def _routine_fix(f: _Fixed, reads: list[str], gist: str, r: Reading) -> ObservationDraft:
    cmd = _short_cmd(f.command)
    title = f"Fixed `{cmd}`" + (f": {f.headline}" if f.headline else "") + f" ({_file_list(f.files)})"
    # What the agent said of it, along the way or at the end, when it names the fixed file or the command.
    names = {os.path.basename(x) for x in f.files} | set(evidence.command_key(f.command))
    said = [j.text for j in sorted(r.agent, key=lambda j: -j.worth) if j.role in ("rootcause", "fix")
            and j.worth >= 0.5 and not f.own and (any(n and n in j.text for n in names) or len(r.agent) <= 3)]
    if said:
        title = clip(f"{title} — {said[0].rstrip('.')}", 320)
    # A failure of what the turn itself had just written (its own slip) is routine; one of code that was
    # there before is a fix: the failing command and its error say what was wrong.
    return ObservationDraft(
        type="bugfix", title=clip(title, 200), subtitle=f"{len(f.files)} file(s) changed to make `{cmd}` pass",
        facts=unique([f"`{cmd}` failed" + (f": {f.headline}" if f.headline else ""),
                       f"Fixed by changing {', '.join(f.files[:6])}", f"`{cmd}` passes after the change", *said[:3]]),
        narrative=(f"While working on: {gist}. " if gist else "") + f"`{cmd}` failed; after edits to "
        f"{', '.join(f.files[:6])} it passed.", concepts=["what-changed" if f.own else "problem-solution"],
        # Without a word of why, a command made to pass is routine work: the session's log, not a key memory
        # ("Fixed `bun run test`: exited with code 1" tells the next session nothing it can act on).
        files_read=reads, files_modified=f.files, created_at=f.at, kind="change" if f.own or not said else "fix",
        why={} if f.own else {"said": title, "by": "commands", "origin": "", "where": "",
                               "how": f"`{cmd}` failed, the files were changed, then it passed"})


def _change(r: Reading, files: list[str], created: set[str], reads: list[str], gist: str,
            at: float, edits: dict[str, int]) -> ObservationDraft:
    """Routine work: titled by its commit, else by what the agent said it changed, else by the request."""
    commit = r.actions.commits[-1] if r.actions.commits else None
    # (not a sentence that only counts the list of changes it introduces: "Three changes were needed for v2:", nor a
    # table's row: "7; Content-aware overlap only for new files; …" of a table the answer shows, not what was done)
    change = [j for j in r.found("change", final_only=True, min_p=0.4) if not counts_a_list(j) and not j.unit.table]
    lead = topic(r, [], "")
    outcome = commit.subject if commit else lead or (change[0].text if change else "")
    verb = "Added" if created and len(created) == len(files) else "Changed"
    listed = _file_list([f for f in files if f in created] + [f for f in files if f not in created])
    # Only a commit or the agent says what a change did. The request it answered (a question, a bug
    # report, a guess) is named as the request, never as the change: "Changed x.py: why is X slow?" reads
    # as if the change were the question.
    asked = "" if outcome or not gist else f" ({gist})" if gist.startswith("Plan: ") else f"{ASKED}{gist})"
    facts = [f"Created {f}" for f in files if f in created]
    facts += [f"Modified {f}" + (f" ({edits[f]} edits)" if edits.get(f, 1) > 1 else "")
              for f in files if f not in created]
    ran = [c for c in r.commands if not evidence.trivial(c)]
    if ran:
        facts.append(f"Last check: `{_short_cmd(ran[-1].command)}` {'passed' if ran[-1].ok else 'failed'}")
    if commit:
        facts.append(f"Committed{' ' + commit.hash[:7] if commit.hash else ''}: {commit.subject}")
    facts += [j.text for j in change[:3]]
    return ObservationDraft(
        type="feature" if created else "change",
        title=clip(f"{verb} {listed}" + (f": {outcome}" if outcome else asked), CHANGE_TITLE),
        subtitle=f"{len(created)} created, {len(files) - len(created)} modified", facts=unique(facts),
        narrative=(f"Asked: {gist}. " if gist else "") + f"{verb} {len(files)} file(s): {', '.join(files[:8])}.",
        concepts=["what-changed"], files_read=reads, files_modified=files, created_at=at, kind="change")


def _answer_or_explored(r: Reading, reads: list[str], gist: str, at: float,
                        searches: list[str]) -> ObservationDraft:
    final = [j for j in r.agent if j.origin == "final" and j.role != "noise"]
    answer = " ".join(j.text for j in final[:2]) if final else ""
    if answer:
        return ObservationDraft(
            type="discovery", title=clip(answer, 200), subtitle=clip(f"answer to: {gist}", 160),
            facts=unique([f"Asked: {gist}", *(f"Read {f}" for f in reads[:10])]),
            narrative=f"Asked: {gist}. Answer: {answer}", concepts=["how-it-works"], files_read=reads,
            created_at=at, kind="answer")
    return ObservationDraft(
        type="discovery", title=clip(f"Explored {_file_list(reads)}: {gist}", 200),
        subtitle=f"{len(reads)} file(s) read, nothing changed",
        facts=[f"Read {f}" for f in reads[:10]] + [f"Searched: {x}" for x in searches[:5]],
        narrative=f"Asked: {gist}. Read {', '.join(reads[:8])} without changing anything.",
        concepts=["how-it-works"], files_read=reads, created_at=at, kind="explored")


_DENIED = re.compile(r"permission (?:for this action )?(?:was )?denied|denied by|blocked by|not allowed|"
                     r"requires approval|user (?:rejected|declined)", re.IGNORECASE)


# The shell refusing to run what it was given: a glob that matched nothing (zsh: "(eval):1: no matches found:
# repo:*"), a quote or a token out of place. The program never ran; the command was written wrong.
_SHELL_REFUSED = re.compile(r"^(?:\(eval\)|(?:/(?:usr/)?bin/)?(?:z|ba|da|k)?sh)(?::[ \w-]{1,12}){0,3}: (?i:no matches "
                            r"found|syntax error|parse error|unexpected EOF|unmatched|bad substitution)", re.MULTILINE)


def _still_failing(r: Reading) -> list[str]:
    """The turn's last command, when it failed (not when a permission check refused it, nor when the tool refused
    an option it was given or the shell the way it was written: a slip in how the command was written, not work
    left failing)."""
    ran = [c for c in r.commands if not evidence.trivial(c)]
    last = ran[-1] if ran else None
    if last and not last.ok and not _DENIED.search(last.output[:500]) \
            and not rejected_usage.refuses_usage(last.output) and not _SHELL_REFUSED.search(last.output[:500]):
        head = evidence.error_headline(last.output)
        return [f"Still failing: `{_short_cmd(last.command)}`" + (f" ({head})" if head else "")]
    return []


# ----------------------------------------------------------------------------- helpers

def _agent(turn: Turn) -> tuple[str | None, str | None]:
    for e in turn.events:
        if e.agent_id:
            return e.agent_id, e.agent_type
    return None, None


def _plan_file(path: str) -> bool:
    """Claude Code's plan mode writes the plan to ``~/.claude/plans/<three-words>.md``."""
    return "/.claude/plans/" in path.replace("\\", "/")


def _outside(path: str) -> bool:
    """A file left absolute by ``_rel``: outside the project (a scratch file under the temp folder, a plan),
    on either kind of machine the agent ran on."""
    return os.path.isabs(path) or winpath.is_windows(path)


def _rel(path: str, root: str) -> str:
    return relative(path, root)  # a Windows checkout's files too, with / between names


def _file_list(files: list[str]) -> str:
    names = [os.path.basename(f) or f for f in files]
    shown = ", ".join(names[:MAX_FILES_IN_TITLE])
    more = len(names) - MAX_FILES_IN_TITLE
    return shown + (f" and {more} more" if more > 0 else "")


def _short_cmd(cmd: str, limit: int = 60) -> str:
    first = cmd.strip().splitlines()[0] if cmd.strip() else cmd
    return first if len(first) <= limit else first[: limit - 1] + "…"


