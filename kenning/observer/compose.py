"""The memories one read turn leaves (DESIGN.md §9), as observation drafts.

* The user's own words: each standing rule, decision, durable fact, open to-do or workstream status
  they state is a memory of its own (kenning/observer/user_said.py).
* An accepted plan: its design decisions (a few), marked as the plan's, never as the user's rules.
* The agent's explanation: the root cause and the fix it states (the paragraph that explains, not
  its heading) make one memory titled by both; each gotcha, decision with its reason, open item and
  durable fact it states is one of its own. Its last message counts first; what it only said along
  the way counts when the model is sure of it.
* Routine work (files changed, a commit, a question answered) is the session log.

What the commands prove (files changed, commits, pushes) comes from the tool events, never from
what anyone said.
"""

from __future__ import annotations

import re

from kenning.memory import cues
from kenning.memory.subjects import is_status
from kenning.memory.text import clip
from kenning.observer import gates, no_finding, own_words
from kenning.observer.conclusion import (
    MIN_WORDS,
    cause_and_fix,
    fixing_commit,
    lead_of,
    problem,
    proposed,
    same_subject,
    same_thing,
    together,
    worth_saying,
)
from kenning.observer.reading import Reading, distinct
from kenning.observer.roles.roles import Judged
from kenning.observer.titles import GENERIC_HEADING, TITLE, absorbed, dangling, self_contained, statement, titled
from kenning.observer.units import names_cause_or_fix
from kenning.observer.why import concepts_of, signals_of, why_of
from kenning.records import ObservationDraft

# How sure the model must be before an agent's sentence becomes a memory of its own.
# (Measured held out, leave-one-project-out: of the agent's last-message units the model gives worth >= 0.55,
# ~0.7 are worth keeping; of what it said along the way at 0.7, ~0.6; training/roles/README.md.)
SURE = {"rootcause": 0.55, "fix": 0.55, "gotcha": 0.55, "decision": 0.6, "fact": 0.65, "todo": 0.65}
# What it said before its last message counts only for gotchas, and only when the model is sure: along the
# way it diagnoses its own slips ("the label is inside the select"), and hypotheses get refuted; its
# conclusion says which causes, fixes and decisions stand (the rest are notes).
SURE_ALONG_THE_WAY = 0.75
# A sentence the role model cannot place (no role above UNPLACED) must be surer than that to be worth keeping,
# unless it says what it is ("A temporary workaround is: …"): of the key rows of unseen projects' contexts that low
# on both, 6 of 7 of the agent's were noise ("Findings written to the review findings section in `2-1-….md`",
# "After That (Phase 4 — Implementation): Generates the sprint plan …")
UNPLACED, SURE_UNPLACED = 0.3, 0.62
FINAL_ONLY = frozenset({"rootcause", "fix", "decision", "fact", "todo"})  # along the way: only gotchas
MAX_AGENT = 3       # memories of the agent's own from one turn (the root cause with its fix counts one)
MAX_PLAN = 3        # decisions from one accepted plan
MAX_EACH = {"gotcha": 2, "decision": 2, "todo": 1, "fact": 1}  # of the agent, in one turn
_SAYS_WHY = frozenset({"reason", "cause", "decided", "tentative"})  # what a plan's decision must say
# A plan's sections on how it is built and checked ("## Files to Modify", "## Verification", "## Test plan"): of
# 117 labelled plan sentences under such headings, none is a decision (116 noise, 1 fact)
_HOW_BUILT = re.compile(r"^(?:\d+[.)]\s*)?(?:(?:critical |key )?files? (?:to )?"
                        r"(?:modify|create|change|touch|edit|update)|files? (?:changed|modified|touched)|"
                        r"verification|testing|tests?|test plan|(?:implementation )?order(?: of implementation)?|"
                        r"fichiers à modifier|vérification|修改文件|文件列表|验证|测试|"
                        r"変更(?:する)?ファイル|検証|テスト|수정할 파일|검증|테스트)\b", re.IGNORECASE)


def plan_memories(r: Reading, at: float, where: str) -> list[ObservationDraft]:
    """The design decisions of an accepted plan (the agent's words, accepted by the user): those that say why
    (DESIGN.md §9: a decision is a choice and its reason). The rest of a plan is how it is to be built ("Replace
    all 4 early returns with …", "~37 call sites follow this pattern"), true until the code changes and told by
    the code once built: notes, searchable, never listed at session start. Nor is a plan's "maybe" ("Consider if
    `CheckpointInfo` should also drop SessionIDs (probably keep for now)") a decision, nor its list of files."""
    picked = distinct(sorted((j for j in r.plan if j.role == "decision" and j.worth >= 0.6 and worth_saying(j)
                              and not dangling(j) and not _HOW_BUILT.match(j.unit.heading)
                              and _SAYS_WHY & (said := signals_of(j.text)) and "hypothesis" not in said),
                             key=lambda j: -j.worth))
    out = []
    for j in picked[:MAX_PLAN]:
        out.append(ObservationDraft(  # (one that only points back takes the sentence it points at in front)
            type="decision", title=self_contained(clip(j.text, TITLE), "", r, [], j.unit.before, work=False),
            subtitle="from the plan the user accepted"
            + (f": {clip(r.plan_title, 80)}" if r.plan_title else ""), facts=[j.text], narrative=j.text,
            concepts=["why-it-exists"], created_at=at, kind="decision", tentative=j.tentative,
            why=why_of(j, where, "plan")))
    return out


def agent_memories(r: Reading, at: float, where: str, files_modified: list[str],
                   files_read: list[str], *, slips: frozenset[str] = frozenset()) -> tuple[list[ObservationDraft],
                                                                                             list[Judged]]:
    """The agent's root cause and fix (one memory), gotchas, decisions, facts and open items.
    Also returns what it stated and the memories took (the summary's "learned")."""
    asked = routine_question(r, files_modified)
    causes = _sure(r, "rootcause", asked)
    if slips and all(c.ok or c.command in slips for c in r.commands) and not gates.reports_a_problem(r.words):
        # Every failure of the turn was its own slip, and the user reported no problem: a cause found on the way
        # ("The issue is that `pairs` is typed as …", before a type annotation) explains that slip, fixed in the
        # same minute. Only the conclusion can say the turn found one.
        causes = [c for c in causes if c.origin == "final"]
    fixes = _sure(r, "fix", asked) if causes or problem(r, slips) else []  # a fix of no problem is a routine change
    if files_modified and not causes:
        # An accepted plan that was then carried out: the root cause it names (under a heading that says
        # so) is the one the change fixed. Its other context is the plan's motivation, not a cause.
        causes = distinct(sorted((j for j in r.plan if j.role == "rootcause" and j.worth >= 0.6 and worth_saying(j)
                                  and cues.has(j.unit.heading, "cause")), key=lambda j: -j.worth))[:2]
    if causes and not fixes and causes[0].origin == "plan":
        # The plan's cause, and what the plan decided about the code it names: that is its fix.
        fixes = [j for j in r.plan if j.role == "decision" and j.worth >= 0.6 and worth_saying(j)
                 and not dangling(j) and same_subject(j.text, [causes[0].text])][:1]
    if causes and not fixes and files_modified and problem(r, slips):
        # "**Root cause**: … `drain()` processed every buffered message …", then the changes made: "`ctx.Done()`
        # now calls `flushDirty()` instead of `drain()`". The change, in the same message, to the very code the
        # cause names is its fix, though it reads as a routine change (of a problem: a feature has no fix).
        subject = _first_span(causes[0].text)
        fixes = [j for j in r.agent if j.role == "change" and j.message == causes[0].message and subject
                 and worth_saying(j) and not dangling(j) and subject in _spans(j.text)
                 and not no_finding.heads_a_cause(j.unit.heading)][:1]
    if not causes:  # a fix that only points back ("This prevents the TypeError …"), with no cause to follow
        fixes = [f for f in fixes if not dangling(f)]
    if not files_modified and not causes:  # "Recommended fix: size each batch …" in a turn that changed nothing:
        fixes = [f for f in fixes if not proposed(f, changed=False)]  # a proposal: a note keeps it until taken
    out: list[ObservationDraft] = []
    used: list[Judged] = []
    if files_modified:  # "**1. Send-on-closed-channel panic** (…):" over the changes that fixed it: one row each
        out, used = _listed_fixes(r, at, where, files_read, files_modified)
        headings = {j.unit.heading for j in used}
        causes = [c for c in causes if not any(c is u for u in used)]
        fixes = [f for f in fixes if not any(f is u for u in used) and f.unit.heading not in headings]
    lone: Judged | None = None  # a fix said apart from the cause, about something else: not its fix
    if causes and fixes:
        pair = next(((c, f) for c in causes[:3] for f in fixes[:4] if together(c, f, bool(files_modified))), None)
        if pair is None:
            lone, fixes = fixes[0], []
            if dangling(lone) or (proposed(lone, changed=False) and not files_modified):
                lone = None  # "This prevents the TypeError …" alone, about no cause said: a note (searchable)
        else:
            causes = [pair[0], *(c for c in causes if c is not pair[0])]
            fixes = [pair[1], *(f for f in fixes if f is not pair[1] and together(pair[0], f, bool(files_modified)))]
    if lone is not None:
        out.append(ObservationDraft(
            type="bugfix", title=titled(lone, r, files_modified),
            subtitle="fix explained by the agent", facts=[lone.text], narrative=lone.text,
            concepts=["problem-solution"], files_read=files_read, files_modified=files_modified, created_at=at,
            kind="fix", why=why_of(lone, where, "agent")))
        used.append(lone)
    remedy: tuple[ObservationDraft, Judged] | None = None  # a cause said without its fix, to pair
    if causes or fixes:
        cause, fix = (causes[0] if causes else None), (fixes[0] if fixes else None)
        lead, as_said = lead_of(r, cause, fix)
        proposal = fix is not None and not files_modified and proposed(fix, changed=False)
        said = cause_and_fix(cause, fix, lead, as_said, proposal=proposal)
        first = cause if cause is not None and not lead and said.startswith(statement(cause.text)[:40]) else None
        # ("That made the tests fail" first: the sentence it points back at goes in front)
        title = self_contained(said, (cause or fix).unit.heading, r, files_modified,  # type: ignore[union-attr]
                               first.unit.before if first is not None else "")
        commit = fixing_commit(r, cause) if cause is not None and fix is None else None
        if commit is not None:  # a cause the turn committed a fix of is history, not how the code is now
            title = clip(f"{title.rstrip('.。')} — fixed in {commit}", TITLE)
        facts = [j.text for j in [*causes[:3], *fixes[:4]]]
        kind = "rootcause" if cause else "fix"
        out.append(ObservationDraft(
            type="bugfix" if (fix is not None and not proposal) or files_modified else "discovery", title=title,
            subtitle="root cause and fix, as the agent explained them" if cause and fix else
            "root cause found by the agent" if cause else "fix explained by the agent",
            facts=facts, narrative=" ".join(facts), concepts=["problem-solution"], files_read=files_read,
            files_modified=files_modified if fix is not None else [], created_at=at, kind=kind,
            why=why_of(cause or fix, where, "agent")))  # type: ignore[arg-type]
        used += [*causes[:3], *fixes[:4]]
        if cause is not None and fix is None:
            remedy = (out[-1], cause)
    for role, typ, concepts in (("gotcha", "discovery", ["gotcha"]), ("decision", "decision", ["why-it-exists"]),
                                ("todo", "decision", ["what-changed"]), ("fact", "discovery", ["how-it-works"])):
        for j in _sure(r, role, asked)[:MAX_EACH[role]]:
            if len(out) >= MAX_AGENT:
                break
            if any(same_thing(j.text, u.text) for u in used):
                continue
            if role == "decision" and "proposal" in cues.signals(j.text) | cues.signals(j.unit.heading):
                continue  # what the agent recommends is decided only once someone takes it (a note keeps it)
            kin = next((d for d in out if same_subject(j.text, d.facts)), None)
            if kin is not None:  # more about what a memory of this turn already holds: one row, both said
                kin.facts.append(j.text)
                kin.narrative = f"{kin.narrative} {j.text}".strip()
                used.append(j)
                if remedy is not None and kin is remedy[0] and role == "decision":
                    # What was decided about the code a cause names, in the turn that found it, is its fix: one
                    # row says both ("`Flush()` is called after every file — fix: move it into the caller").
                    cause_j = remedy[1]
                    kin.title = self_contained(cause_and_fix(cause_j, j, *lead_of(r, cause_j, j)), cause_j.unit.heading,
                                               r, files_modified)
                    kin.subtitle = "root cause and fix, as the agent explained them"
                    remedy = None
                continue
            out.append(ObservationDraft(
                type=typ, title=titled(j, r, files_modified),
                subtitle={"gotcha": "gotcha", "decision": "decided",
                                                                "todo": "open item", "fact": "how it works"}[role],
                facts=[j.text], narrative=j.text, concepts=concepts, files_read=files_read, created_at=at,
                kind=role, tentative=j.tentative, why=why_of(j, where, "agent")))
            used.append(j)
    for j in r.agent:  # where a workstream stands, as the agent reports it ("paused the migration at step 3")
        if j.origin == "final" and is_status(j.text) and _STATUS_CHANGE.search(j.text) \
                and (worth_saying(j) or (gates.reports_done(j.text) and len(j.text.split()) >= MIN_WORDS)) \
                and not any(same_thing(j.text, u.text) for u in used) and not r.relays(j.text):
            out.append(ObservationDraft(
                type="decision", title=clip(statement(j.text), TITLE), subtitle="reported by the agent",
                facts=[j.text], narrative=j.text, concepts=["why-it-exists"], created_at=at, kind="status",
                why={**why_of(j, where, "agent"), "how": "a workstream's status, by its status words"}))
            used.append(j)
            break
    out += _notes(r, used, at, where, files_read)
    return out, used


def _listed_fixes(r: Reading, at: float, where: str, files_read: list[str],
                  files_modified: list[str]) -> tuple[list[ObservationDraft], list[Judged]]:
    """One memory per problem the conclusion lists its changes under: "<problem> — fix: <change>; <change>"."""
    out: list[ObservationDraft] = []
    used: list[Judged] = []
    for heading, items in _headed_fixes(r)[:MAX_AGENT]:
        said = clip(f"{heading} — fix: " + "; ".join(statement(j.text).rstrip(".。") for j in items[:2]), TITLE)
        best = max(items, key=lambda j: j.worth)  # (how sure the observer is: of its surest item)
        out.append(ObservationDraft(
            type="bugfix", title=said, subtitle="problem and fix, as the agent listed them",
            facts=[heading, *(j.text for j in items[:4])], narrative=" ".join(j.text for j in items[:4]),
            concepts=["problem-solution"], files_read=files_read, files_modified=files_modified, created_at=at,
            kind="fix", why={**why_of(best, where, "agent"),
                             "how": f"listed under the problem it fixes (\"{heading}\")"}))
        used += items
    return out, used


def _headed_fixes(r: Reading) -> list[tuple[str, list[Judged]]]:
    """The agent's conclusion listing what it changed under the problem each change fixes ("**2. Periodic checkpoint
    rotation deadlock**:" over "`RotateWALFiles` now returns at once during shutdown"): (the problem, its items),
    for a heading that names a problem and at least one item said to fix or change something."""
    groups: dict[str, list[Judged]] = {}
    for j in r.agent:
        h = j.unit.heading
        if j.origin == "final" and j.unit.bullet and h and not j.unit.label and not GENERIC_HEADING.match(h) \
                and gates.reports_a_problem(h) and not no_finding.heads_a_cause(h) and len(h.split()) >= 2:
            groups.setdefault(h, []).append(j)
    out = []
    for h, items in groups.items():
        said = [j for j in items if worth_saying(j) or j.role in ("fix", "change")]
        if said and any(j.role in ("fix", "change", "rootcause") and j.worth + j.p >= 0.5 for j in said):
            out.append((h, said))
    return out


# A status the agent reports, not a mention: "paused the billing migration", "the refactor is done".
_STATUS_CHANGE = re.compile(r"\b(?:paused|pausing|on hold|resumed|resuming|blocked|unblocked|postponed|shelved|"
                            r"parked|(?:is|are) (?:done|live|finished|complete))\b", re.IGNORECASE)


NOTE_SURE = 0.5      # what the agent stated that the key layer did not take: kept for search, not injected
MAX_NOTES = 4
NOTE_ROLES = ("rootcause", "fix", "gotcha", "decision", "fact")


def _notes(r: Reading, used: list[Judged], at: float, where: str, files_read: list[str]) -> list[ObservationDraft]:
    """The agent's other findings of the turn, less sure or said along the way: the session log's
    notes (searchable, and given next to a prompt that asks about them; not listed at session start)."""
    taken_in = [absorbed(u) for u in used]  # a sentence a memory's title took in front ("X. That was deliberate")
    pool = [j for j in r.agent + r.plan if j.role in NOTE_ROLES and j.worth >= NOTE_SURE
            and (worth_saying(j) or _advice(j)) and not any(same_thing(j.text, u.text) for u in used)
            and not any(a and same_thing(statement(j.text), a) for a in taken_in)]
    pool.sort(key=lambda j: (j.origin != "final", -j.worth))
    looking = gates.ended_looking(r.agent)
    out = []
    for j in distinct(pool)[:MAX_NOTES]:
        # A cause or fix voiced on the way of a turn that ended still looking: a lead, said as one wherever the
        # note is shown (search, next to a prompt), never as a finding.
        lead = looking and j.origin != "final" and j.role in FINAL_ONLY
        why = why_of(j, where, "agent")
        if lead:
            why["how"] = f"{why['how']}; said on the way of a turn that ended before a conclusion"
        out.append(ObservationDraft(
            type="discovery", title=clip(SUSPECTED + titled(j, r, []), TITLE) if lead else titled(j, r, []),
            subtitle=f"suspected by the agent, not confirmed ({j.role})" if lead else f"noted by the agent ({j.role})",
            facts=[j.text], narrative=j.text, concepts=concepts_of(j.role), files_read=files_read, created_at=at,
            kind="note", why=why))
    return out


SUSPECTED = "Suspected, not confirmed: "


def _advice(j: Judged) -> bool:
    """The agent's recommendation in the first person ("I would suggest we move to X since …"): not its
    narration but a proposal, which a note keeps until someone takes it."""
    return j.role == "decision" and not j.unit.table and "proposal" in cues.signals(j.text) \
        and len(j.text.split()) >= MIN_WORDS


ANSWER_SURE = 0.85  # what an answer to a routine question must be, held out, to be more than the session log
_ASKED = re.compile(r"^\s*(?:what|where|which|who|how (?:many|much|do|does|is|are)|does|do|is|are|can|list|show)\b|"
                    r"[?？]\s*$|(?:吗|呢|什么|哪里|哪个|多少)[？?。]?\s*$|(?:ですか|ますか)[？?。]?\s*$",
                    re.IGNORECASE)
_WHY = re.compile(r"\b(?:why|how come|pourquoi|warum|wieso|weshalb|por qu[eéê]|perch[eé]|neden|niye|почему|"
                  r"отчего)\b|为什么|为啥|なぜ|どうして|왜", re.IGNORECASE)


def routine_question(r: Reading, files_modified: list[str]) -> bool:
    """The turn answered a question about the code ("what does f return?", "where is X defined?"): nothing
    changed, nothing failed, and it did not ask why something is so. Its answer is routine Q&A unless it
    states a cause, a decision, a gotcha beyond doubt (DESIGN.md §9: "user asked X, I answered Y" is noise)."""
    words = r.words.strip()
    return bool(words) and bool(_ASKED.search(words)) and not _WHY.search(words) and not files_modified \
        and all(c.ok for c in r.commands) and not gates.reports_a_problem(words) and "issue" not in words.lower()


# The agent's analysis: a root cause and its fix rest on what it read and ran by nature (a diff, a trace);
# what it relays as a rule or a decision is checked (kenning.observer.relayed).
ANALYSIS = frozenset({"rootcause", "fix"})


_CODE_SPAN = re.compile(r"`([^`\s][^`]{0,79})`")


def _spans(text: str) -> set[str]:
    """The code a text quotes (a call and its name are one: `drain()`, `drain`)."""
    return {m.group(1).strip().removesuffix("()").lower() for m in _CODE_SPAN.finditer(text)}


def _first_span(text: str) -> str:
    """The first code a text quotes: what a cause is about ("`drain()` processed every buffered message …")."""
    m = _CODE_SPAN.search(text)
    return m.group(1).strip().removesuffix("()").lower() if m else ""


_YOU_CAN = re.compile(r"\byou (?:can|could|may|might)\b(?!['’]t| not\b)", re.IGNORECASE)
# A test added ("New `TestExchange_ExchangeErrorWithoutDescription` exercises the previously-untested branch …",
# "Added a regression test for …"): work on the tests, no defect's fix (8 labelled such sentences: changes and noise)
_TEST_ADDED = re.compile(r"^\W*(?:new|added|adds|add|wrote|extended|strengthened)\s+(?:an?\s+|the\s+|two\s+|three\s+|"
                         r"\d+\s+)?(?:new\s+)?(?:unit\s+|regression\s+|integration\s+|e2e\s+|table[- ]driven\s+|"
                         r"focused\s+)?(?:tests?|subtests?|test cases?|`Test\w*`)(?!\w)|"
                         # ... or what a test checks, under its name ("`TestBuildEventPayloadPreservesExplicitAgent` -
                         # Verifies explicit agent is preserved": the 5 labelled such sentences are noise)
                         r"(?-i:^\W*`?(?:Test[A-Z_]\w*|test_\w+)(?:\(\))?`?\s*(?:[-—–:;(]|$))", re.IGNORECASE)
_MY = re.compile(r"\bmy\b", re.IGNORECASE)
# One way weighed against another ("This is actually better than `go run` because it only compiles once"): a choice
# and its reason, no cause of anything (of the labelled sentences of the agent that compare so, none is a cause)
_COMPARES = re.compile(r"\b(?:better|worse|faster|slower|simpler|cleaner|safer|easier|nicer)\s+than\b", re.IGNORECASE)
# Merge conflicts resolved ("Resolved conflict in `explain.go` by keeping HEAD features …", "The conflicts were resolved
# by keeping both"): joining two lines of work, no defect found or fixed
_CONFLICTS_RESOLVED = re.compile(
    r"\bmerge conflicts?\b[^.]{0,40}\bresolv|"
    r"\bresolv\w* (?:the |all |both |these |those |remaining |\d+ )?(?:merge |rebase |git )?conflicts? "
    r"(?:in|by|with)\b|"
    r"\bconflicts? (?:in \S+ )?(?:were|was|have been|has been|are) (?:all )?resolved (?:by|with)\b|"
    r"^resolved (?:the |all )?(?:merge |rebase )?conflicts?\b|"
    r"(?:合并|合並)?冲突已?解决|解决(?:了)?(?:合并)?冲突|(?:コンフリクト|競合)を?解消|충돌을? 해결", re.IGNORECASE)


def _sure(r: Reading, role: str, asked: bool = False) -> list[Judged]:
    """The agent's units of a role it is sure enough of: its last message at SURE, before it at more."""
    need = max(SURE[role], ANSWER_SURE) if asked else SURE[role]
    # A conclusion that says nothing ("Done.") leaves the cause and fix to what was said along the way.
    silent = not any(j.origin == "final" and j.role in ("rootcause", "fix", "gotcha", "decision") and
                     j.worth >= SURE[j.role] for j in r.agent)
    # A cause found along the way and a conclusion that only says the fix ("Build succeeds. The fix raises
    # the deadline to 120s"): the conclusion names no cause, so the one found on the way is the turn's.
    unsaid = role == "rootcause" and not any(j.origin == "final" and j.role == "rootcause" and j.worth >= SURE[role]
                                             for j in r.agent)
    along = role not in FINAL_ONLY or (silent and role in ("rootcause", "fix")) or unsaid
    if role in FINAL_ONLY and gates.ended_looking(r.agent):
        along = False  # no conclusion: what it said on the way is a lead it was still following
    pool = [j for j in r.agent if j.role == role and worth_saying(j) and (j.origin == "final" or along)
            and j.worth >= (need if j.origin == "final" else max(need, SURE_ALONG_THE_WAY))
            and (j.p >= UNPLACED or j.worth >= SURE_UNPLACED or names_cause_or_fix(j.text))
            # a guess on the way is no finding, nor a cause guessed in the conclusion ("It's possible Cursor picks
            # those up because …": none of 21 labelled guesses of a conclusion is a cause)
            and ((j.origin == "final" and role != "rootcause") or "hypothesis" not in cues.signals(j.text))
            # "This is safe because …": a note (searchable), never a key memory alone; a cause or fix that points
            # back gets the answer's first sentence in front (agent_memories: the lead)
            and (role in ANALYSIS or not dangling(j))
            # said to be open, in its own words ("what's left to carry forward?" quoted is no work left)
            and (role != "todo" or bool(own_words.todo_words(j.text)))
            and (role != "todo" or not no_finding.reports_an_act(j.text))  # "Then clarified that …": done, not open
            # "PR #221: auto-merge enabled, it merges once CI passes": a report of what was done, no cause
            and (role != "rootcause" or "done" not in cues.signals(j.text) or "cause" in cues.signals(j.text))
            and (role != "rootcause" or not gates.recommends(j.text))  # "… のフローが適切です": advice, no cause
            and (role in ANALYSIS or not r.relays(j.text))  # a file's or a command's rule, relayed: a note at most
            and not gates.retells_a_source(j.text)  # "The public page shows …": the page's word, no finding
            and not gates.user_story(j.text)  # "Story 2.1: … As a developer, I want …, So that …": a requirement
            # what the user can do ("So for the screenshot, you can capture the `plan` output …"): advice for that
            # moment, no cause or fix (11 labelled sentences of the agent say "you can / could / may …", all noise)
            and (role not in ANALYSIS or not _YOU_CAN.search(j.text))
            and (role not in ANALYSIS or not _CONFLICTS_RESOLVED.search(j.text))
            # the agent's own work ("Re-ran my forgery PoC mentally against the new path: …", "my regex won't reject
            # any legitimate names"): of 39 labelled sentences of the agent that say "my", none is a cause, fix or fact
            and (role not in ("rootcause", "fix", "fact") or not _MY.search(j.text))
            and (role != "rootcause" or not _COMPARES.search(j.text))
            and (role not in ANALYSIS or not _TEST_ADDED.match(j.text) or "cause" in cues.signals(j.text))
            and (role != "decision" or not gates.weighs_a_choice(j.text))  # a choice weighed, none made
            and (role != "decision" or not gates.speaks_of_decisions(j.text))  # decisions reviewed, none made
            and (role != "fix" or not no_finding.heads_a_cause(j.unit.heading))  # a defect under "What was wrong"
            and (role not in ("fix", "rootcause") or not no_finding.would_be(j.text))  # "We'd then debug …": a plan
            and (role != "fix" or not no_finding.guessed(j.text))  # "it may be using …": what might be, no fix made
            and (role != "fix" or not no_finding.goes_on_with_the_story(j.text))  # "Then three verifiers attacked …"
            and (role == "gotcha" or not gates.hypothetical(j.text))  # "If you stop sending haves, …": what might be
            and not gates.in_progress(j.text)  # "No failures so far; checks are still pending": that moment's state
            # reasoning in general terms (a gotcha may well be a tool's, said in plain words: "sed wrote a literal t")
            and (role in ANALYSIS or role == "gotcha" or gates.about_the_project(j.text, j.unit.heading))
            # "`mcp.server.fastmcp` → the new module path and a type-check fix are needed": a fix still to make is
            # work to do, no fix (0 of 17 such sentences of the agent in the labelled real sessions is one)
            and (role != "fix" or not {"must", "fix"} <= (sig := cues.signals(j.text)) or "cause" in sig)
            and not _PASSING_RUN.match(statement(j.text))
            and (role == "gotcha" or not _VERIFICATION.match(j.text))]
    pool.sort(key=lambda j: (j.origin != "final", -j.worth))
    return distinct(pool)


# A report of the checks run, under its label ("Verification: `bash -n …` passed, and `rg` found no …", "検証: …"):
# what was checked, no cause, fix or decision (a gotcha it names still is one).
# Nor what it verified ("Verified each bullet is a real delta since v0.4.0 …", "Verified with `bash -n` …": 11 labelled
# sentences of the agent open so, all noise; "Confirmed: …" often brings a finding, and stays).
_VERIFICATION = re.compile(r"^\W*(?:verification|verified|validation|validated|sanity check)\s*[:：]|"
                           r"^\W*(?:verified|validated|double-checked)\b|"
                           r"^\W*(?:验证|驗證|検証|確認結果|검증|확인 결과)\s*[:：]|^\W*已验证", re.IGNORECASE)
# A run reported as passing, and nothing else ("All pre-push checks passed (build, lint, test)."): where that
# moment stood, never a lasting finding. One that goes on to say why, despite what, or under which condition
# ("only when HK_LIBGIT2=0", "on Linux") is not one.
_PASSING_RUN = re.compile(
    r"^(?:all|every)\b[^.;:]{0,40}?\b(?:checks?|tests?|suites?|jobs?|linters?|builds?)\b(?:\s+(?:now|still|all))?\s+"
    r"(?:pass(?:ed|es)?|(?:are|were|is|was|went) green|succeed(?:ed|s)?)\b(?![^.;]*\b(?:because|but|although|"
    r"except|unless|while|since|so|only|when|if|with|without|after|once|on|under)\b)[^.;]{0,120}[.!]?$"
    # the same, whole, in Chinese, Japanese and Korean ("所有测试都通过了", "テストはすべてパス", "모든 테스트 통과")
    r"|^(?:所有|全部)的?(?:测试|检查|用例)(?:都|均)?(?:已经?)?通过了?[。！]?$"
    r"|^(?:すべての|全ての)?(?:テスト|チェック)(?:は|が)?(?:すべて|全て)?(?:パス|通過|成功)(?:しました|した|です)?[。！]?$"
    r"|^모든\s*(?:테스트|검사|체크)(?:가|를|는)?\s*통과(?:했습니다|했다|함|합니다)?[.!]?$",
    re.IGNORECASE)
