"""The offline observer: deterministic rules over one prompt turn at a time.

A turn runs from a user prompt to the agent's Stop. Its events stay pending until the turn
closes (Stop, the next prompt, SessionEnd, or silence longer than ``turn_idle_seconds``);
then the whole turn is read at once and turned into observations:

* an error, then an edit, then the same command passing → ``bugfix``, titled by the cause the
  agent gave when it gave one;
* an error, then the same command passing run differently (an environment variable, a flag)
  → ``discovery`` of the gotcha and what it needs;
* a command that failed and was not fixed in the turn → ``discovery`` with its error;
* files created / changed → ``feature`` / ``change``, titled by the outcome the agent stated
  (else the request); a change the agent explained with a root cause is a ``bugfix``;
* a turn that only read code → ``discovery`` of what was explored (and what the agent answered);
* what the agent explained in its own words (root causes, fixes, reasons, gotchas; from its
  messages in the transcript and its last message) → facts of the observation they belong to,
  or an observation of their own;
* preferences and rules stated in the prompt ("use pnpm", "don't touch the API"), decisions
  with their reasons, and where a workstream stands ("pause the billing migration") → ``decision``.

At Stop the session summary is (re)written from the prompts, the files touched, the
commands run, what was learned and the agent's last message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kenning.memory.subjects import is_status, supersedes_something
from kenning.memory.text import capitalised, sentences
from kenning.observer import evidence
from kenning.observer.explained import Explained, explain, outcome_title
from kenning.observer.transcript import PAYLOAD_KEY
from kenning.records import Event, ObservationDraft, Outcome, SessionInfo, SummaryDraft, tokens_of

TURN_CLOSERS = ("Stop", "SessionEnd")
LAST_WORD = "Agent's last word: "
MAX_FILES_IN_TITLE = 3


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
        prior_obs = list(session.prior_observations)
        summary_turn: Turn | None = None
        learned: list[str] = []  # what this call's turns taught, turn by turn
        for turn in turns:
            drafts = observe_turn(turn, session)
            learned += [d.title for d in drafts if d.type in ("discovery", "decision", "bugfix")
                        and not d.title.startswith("Explored ")]
            learned += explain_turn(turn).facts(3)
            out.observations.extend(drafts)
            out.done.extend(e.id for e in turn.all)
            prior_obs.extend(_as_prior(d) for d in drafts)
            if turn.prompt is not None or turn.events or (turn.stop is not None and turn.stop.kind == "Stop"):
                summary_turn = turn
        if summary_turn is None and turns and session.prior_summary is None and session.prompts:
            summary_turn = turns[-1]  # the session ended without a Stop: summarise what it did
        if summary_turn is not None and (summary_turn.stop is not None or session.ended or idle):
            out.summary = summarize(session, prior_obs, summary_turn, turns, learned)
        return out


def split_turns(events: list[Event]) -> tuple[list[Turn], list[Event]]:
    """Closed turns, and the events of the turn still open (oldest first)."""
    turns: list[Turn] = []
    current: list[Event] = []
    for ev in events:
        if ev.kind == "UserPromptSubmit" and current:
            turns.append(_as_turn(current))  # a new prompt closes a turn that never got its Stop
            current = []
        current.append(ev)
        if ev.kind in TURN_CLOSERS:
            turns.append(_as_turn(current))
            current = []
    return turns, current


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


def _as_prior(d: ObservationDraft) -> dict[str, object]:
    return {"type": d.type, "title": d.title, "files_read": d.files_read,
            "files_modified": d.files_modified, "facts": d.facts}


# ----------------------------------------------------------------------------- turn rules

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


def explain_turn(turn: Turn) -> Explained:
    """What the agent explained in the turn; its last message first (its conclusion), then the rest."""
    texts = agent_texts(turn)
    if not texts:
        return Explained()
    last, before = explain(texts[-1:]), explain(texts[:-1])
    for name in ("causes", "fixes", "gotchas", "reasons", "outcomes", "statuses"):
        mine = getattr(last, name)
        mine.extend(x for x in getattr(before, name) if x not in mine)
    return last


def observe_turn(turn: Turn, session: SessionInfo) -> list[ObservationDraft]:
    root = session.project_root
    prompt_text = _prompt_text(turn.prompt)
    gist = gist_of(prompt_text)
    prompt_number = turn.prompt.prompt_number if turn.prompt else (
        turn.events[0].prompt_number if turn.events else None)
    agent_id, agent_type = _agent(turn)
    size = sum(e.size_chars for e in turn.all)
    said = explain_turn(turn)
    explained = said.facts()
    stated = statements(prompt_text) if turn.prompt is not None and not _is_notification(prompt_text) else []
    attached = False  # the agent's explanation went into an observation already
    drafts: list[ObservationDraft] = []

    tools = [e for e in turn.events if e.kind in ("PostToolUse", "PostToolUseFailure")]
    commands = [c for c in (evidence.command(e) for e in tools) if c is not None]
    modified: dict[str, float] = {}
    created: set[str] = set()
    edits_per_file: dict[str, int] = {}
    reads: list[str] = []
    searches: list[str] = []
    for e in tools:
        for f in evidence.modified_files(e):
            rel = _rel(f, root)
            modified[rel] = e.occurred_at
            edits_per_file[rel] = edits_per_file.get(rel, 0) + 1
            if evidence.created(e):
                created.add(rel)
        reads.extend(_rel(f, root) for f in evidence.read_files(e))
        s = evidence.searched(e)
        if s:
            searches.append(s)
    reads = _unique(reads)

    # bugfix and unresolved failures
    fixed_ids: set[int] = set()
    for i, fail in enumerate(commands):
        if fail.ok or fail.event_id in fixed_ids:
            continue
        key = evidence.command_key(fail.command)
        later = commands[i + 1:]
        passing = next((c for c in later if c.ok and _same_command(key, c.command)), None)
        if passing is None:
            continue
        between = [e for e in tools if fail.at <= e.occurred_at <= passing.at and evidence.modified_files(e)]
        fix_files = _unique(_rel(f, root) for e in between for f in evidence.modified_files(e))
        headline = evidence.error_headline(fail.output)
        cmd = _short_cmd(fail.command)
        if not fix_files:
            needs = _invocation_change(fail.command, passing.command)
            if not needs:
                continue
            # The same command passed once run differently: what it needs is the gotcha.
            for c in commands[i:]:
                if c.at > passing.at:
                    break
                if not c.ok and _same_command(key, c.command):
                    fixed_ids.add(c.event_id)
            facts = [f"`{cmd}` fails without {needs}" + (f": {headline}" if headline else ""),
                     f"`{_short_cmd(passing.command)}` passes", *explained]
            attached = attached or bool(explained)
            title = f"`{cmd}` needs {needs}" + (f" (else: {headline})" if headline else "")
            best = (said.gotchas or said.causes or said.fixes or [title])[0]
            drafts.append(ObservationDraft(
                type="discovery", title=_cap(best, 180), subtitle=_cap(title, 160),
                facts=_unique(facts), narrative=(f"While working on: {gist}. " if gist else "")
                + f"`{cmd}` failed ({headline or 'non-zero exit'}); run as `{_short_cmd(passing.command)}` it passed.",
                concepts=["gotcha", "problem-solution"], files_read=reads, created_at=passing.at))
            continue
        # every failure of the same command up to the pass belongs to this fix
        for c in commands[i:]:
            if c.at > passing.at:
                break
            if not c.ok and _same_command(key, c.command):
                fixed_ids.add(c.event_id)
        facts = [f"`{cmd}` failed: {headline}" if headline else f"`{cmd}` failed",
                 f"Fixed by changing {', '.join(fix_files[:6])}",
                 f"`{_short_cmd(passing.command)}` passes after the change", *explained]
        attached = attached or bool(explained)
        cause = said.headline().rstrip(".")
        narrative = (f"While working on: {gist}. " if gist else "") + (
            f"Running `{cmd}` failed ({headline or 'non-zero exit'}). After edits to "
            f"{', '.join(fix_files[:6])}, `{_short_cmd(passing.command)}` ran cleanly.") + (
            f" {' '.join(explained)}" if explained else "")
        if cause and re.match(r"^(?:fixed|resolved|solved)\b", cause, re.IGNORECASE):
            title = cause  # the agent's own outcome says it best: "Fixed cross-tenant cache hits: …"
        elif cause:
            title = f"Fixed `{cmd}` failure: {_lower_first(cause)}"
        else:
            title = f"Fixed `{cmd}` failure: {headline}" if headline else f"Fixed `{cmd}`"
        drafts.append(ObservationDraft(
            type="bugfix", title=_cap(title, 200),
            subtitle=_cap(f"{len(fix_files)} file(s) changed to make `{_short_cmd(passing.command)}` pass", 120),
            facts=_unique(facts), narrative=narrative, concepts=["problem-solution", "what-changed"],
            files_read=reads, files_modified=fix_files, created_at=passing.at))

    unresolved: dict[tuple[str, ...], evidence.Command] = {}
    for c in commands:
        if not c.ok and c.event_id not in fixed_ids:
            unresolved.setdefault(evidence.command_key(c.command), c)
        elif c.ok:
            # a later success of the same command without edits still means it works now
            unresolved.pop(evidence.command_key(c.command), None)
    for fail in unresolved.values():
        headline = evidence.error_headline(fail.output)
        cmd = _short_cmd(fail.command)
        facts = [f"`{fail.command[:300]}` exits with an error"]
        if headline:
            facts.append(f"Error: {headline}")
        tail = _error_excerpt(fail.output)
        if tail and tail != headline:
            facts.append(f"Output: {tail}")
        about = [x for x in explained if _about(x, fail.command, headline)]
        if about:
            facts += about
            attached = attached or len(about) == len(explained)
        drafts.append(ObservationDraft(
            type="discovery", title=_cap(f"`{cmd}` fails: {headline}" if headline else f"`{cmd}` fails"),
            subtitle=_cap(fail.description or "command failed", 120), facts=facts,
            narrative=(f"While working on: {gist}. " if gist else "")
            + f"`{cmd}` failed" + (f" with: {headline}." if headline else "."),
            concepts=["gotcha"], files_read=reads, created_at=fail.at))

    fixed_by_edit = any(d.type == "bugfix" for d in drafts)
    if modified:
        files = list(modified)
        listed = _file_list([f for f in files if f in created] + [f for f in files if f not in created])
        facts = [f"Created {f}" for f in files if f in created]
        facts += [f"Modified {f}" + (f" ({edits_per_file[f]} edits)" if edits_per_file[f] > 1 else "")
                  for f in files if f not in created]
        ran = [c for c in commands if not evidence.trivial(c)]
        if ran:
            last = ran[-1]
            facts.append(f"Last check: `{_short_cmd(last.command)}` {'passed' if last.ok else 'failed'}")
        created_at = max(modified[f] for f in files)
        if said.causes and not fixed_by_edit and not attached:
            # The agent found and fixed a root cause without a failing command in view: a fix.
            drafts.append(ObservationDraft(
                type="bugfix", title=_cap(f"Fixed: {_lower_first(said.causes[0])}", 200),
                subtitle=_cap(f"{len(files)} file(s) changed: {listed}", 120), facts=_unique([*explained, *facts]),
                narrative=(f"Asked: {gist}. " if gist else "") + " ".join(explained),
                concepts=["problem-solution", "what-changed"], files_read=reads, files_modified=files,
                created_at=created_at))
            attached = True
        else:
            kind = "feature" if created else "change"
            verb = "Added" if created else "Changed"
            # The outcome the agent stated, unless a fix of this turn already tells it.
            outcome = "" if fixed_by_edit else outcome_title(said)
            title = f"{verb} {listed}" + (f": {outcome}" if outcome else f": {gist}" if gist else "")
            if explained and not attached:
                facts += explained
                attached = True
            narrative = (f"Asked: {gist}. " if gist else "") + (
                f"{verb} {len(files)} file(s): {', '.join(files[:8])}" + ("." if len(files) <= 8 else ", …."))
            drafts.append(ObservationDraft(
                type=kind, title=_cap(title), subtitle=_cap(f"{len(created)} created, "
                                                             f"{len(files) - len(created)} modified", 120),
                facts=facts, narrative=narrative, concepts=["what-changed"], files_read=reads,
                files_modified=files, created_at=created_at))
    answer = _answer(agent_texts(turn)) if not modified and gist and _QUESTION.search(gist) else ""
    if answer:
        # A question the agent answered: the answer is what was learned, and says it best.
        facts = [f"Asked: {gist}", *(explained if not attached else []), *(f"Read {f}" for f in reads[:10])]
        attached = True
        drafts.append(ObservationDraft(
            type="discovery", title=_cap(answer, 200), subtitle=_cap(f"answer to: {gist}", 160),
            facts=_unique(facts), narrative=f"Asked: {gist}. Answer: {answer}",
            concepts=["how-it-works"], files_read=reads, created_at=(turn.stop or turn.all[-1]).occurred_at))
    elif not modified and reads and gist and not unresolved and not drafts and not stated:
        facts = [f"Read {f}" for f in reads[:10]] + [f"Searched: {s}" for s in searches[:5]]
        if explained and not attached:
            facts = [*explained, *facts]
            attached = True
        drafts.append(ObservationDraft(
            type="discovery", title=_cap(f"Explored {_file_list(reads)}: {gist}", 200),
            subtitle=_cap(f"{len(reads)} file(s) read, nothing changed", 120), facts=_unique(facts),
            narrative=f"Asked: {gist}. Read {', '.join(reads[:8])} without changing anything.",
            concepts=["how-it-works"], files_read=reads, created_at=turn.events[-1].occurred_at))

    if explained and not attached and not said.empty:
        # What the agent explained belongs to no observation of the turn: it is one of its own.
        fix = bool(said.fixes) and bool(said.causes)
        drafts.append(ObservationDraft(
            type="bugfix" if fix else "discovery", title=_cap(said.headline(), 200),
            subtitle="explained by the agent", facts=explained, narrative=" ".join(explained),
            concepts=["problem-solution"] if said.causes or said.fixes else ["gotcha"],
            files_read=reads, created_at=(turn.stop or turn.all[-1]).occurred_at))

    for status in ([] if any(kind == "status" for kind, _s in stated) else said.statuses[:2]):
        # Where a workstream stands, as the agent reported it ("paused the migration at step 3").
        drafts.append(ObservationDraft(
            type="decision", title=_cap(status.rstrip("."), 240), subtitle="reported by the agent",
            facts=[status], narrative=status, concepts=["why-it-exists"],
            created_at=(turn.stop or turn.all[-1]).occurred_at))
    if turn.prompt is not None:
        for kind, sentence in stated:
            fact = kind == "fact"
            drafts.append(ObservationDraft(
                type="discovery" if fact else "decision", title=_cap(sentence, 240),
                subtitle="stated by the user",
                facts=[f"User: {sentence}"], narrative=f"The user stated: \"{sentence}\"",
                concepts=["gotcha"] if fact else ["pattern"] if kind == "rule" else ["why-it-exists"],
                created_at=turn.prompt.occurred_at))

    # Spread the size of the turn over what it produced (token economics), stamp attribution.
    for d in drafts:
        d.source_tokens = tokens_of(size // max(1, len(drafts)))
        d.prompt_number = prompt_number
        d.agent_id, d.agent_type = agent_id, agent_type
    return drafts


def _lower_first(s: str) -> str:
    """"The cause was X" → "the cause was X" (only an ordinary first word loses its capital)."""
    first = s.split(" ", 1)[0]
    return s[0].lower() + s[1:] if first.isalpha() and first[1:].islower() else s


def _answer(texts: list[str]) -> str:
    """The first sentences of the agent's last message, when it answered a question."""
    if not texts:
        return ""
    said = [x for x in sentences(_MARKUP.sub("", texts[-1]))
            if not x.endswith("?") and not _PLAN_OR_THANKS.match(x) and len(x.split()) >= 4][:2]
    return _cap(" ".join(said), 300) if said else ""


_MARKUP = re.compile(r"\*\*|__|^#+\s*", re.MULTILINE)


def _about(sentence: str, command: str, headline: str) -> bool:
    """Whether an explanation is about a failed command: it names the command or its error."""
    names = {w.lower() for w in re.findall(r"[\w.-]{3,}", " ".join(evidence.command_key(command)) + " " + headline)}
    return bool(names & {w.lower() for w in re.findall(r"[\w.-]{3,}", sentence)})


_QUESTION = re.compile(r"\?\s*$|^(?:how|why|what|where|which|who|when|is|are|does|do|can|explain|tell me|"
                       r"find out|figure out|check whether|check if)\b", re.IGNORECASE)
_PLAN_OR_THANKS = re.compile(r"^(?:let me|i'll|i will|ok|okay|sure|done|thanks|you're welcome|glad|happy to|"
                             r"i (?:could not|couldn't|can't|cannot|don't know))\b", re.IGNORECASE)


def _invocation_change(failed: str, passed: str) -> str:
    """What the passing run added to the failing one: env assignments and flags (``TZ=UTC``, ``--no-cache``)."""
    a, b = failed.split(), passed.split()
    extra = [w for w in b if w not in a and (re.match(r"^[A-Z_][A-Z0-9_]*=", w) or w.startswith("-"))]
    return " ".join(f"`{w}`" for w in extra[:3])


def _same_command(key: tuple[str, ...], other: str) -> bool:
    k2 = evidence.command_key(other)
    if not key or not k2:
        return False
    return key[0] == k2[0]


def _agent(turn: Turn) -> tuple[str | None, str | None]:
    for e in turn.events:
        if e.agent_id:
            return e.agent_id, e.agent_type
    return None, None


# ------------------------------------------------------------------------------- prompts

_DECISION_CUES = re.compile(
    r"\b(?:(?:we|i)\s+(?:use|prefer|always|never|don't|do not|only)|prefer|always|never|"
    r"(?:i|we)(?:'d| would) rather|(?:i|we) (?:like|want|hate|dislike|don't like|do not like) (?!to know|you to)|"
    r"don't|do not|must(?: not)?|should(?:n't| not)|avoid|stick (?:to|with)|from now on|going forward|instead of|"
    r"rather than|keep using|no more|no longer|is gone|are gone|"
    r"(?:switched|moved|migrated|changed) (?:[\w.-]+ ){0,3}(?:to|from)|"
    r"only (?:on|in|from|with|via|after|before|through)|"
    r"keep (?:[\w.-]+ ){0,3}(?:small|short|simple|clean|fast|focused|minimal|consistent|sorted|in sync|under|below)|"
    r"not\s+\w+\s*,|use\s+\S+(?:\s+\S+)?\s*(?:,\s*)?(?:not|over|instead))\b",
    re.IGNORECASE)
# A choice and its reason: "we chose Postgres because …", "let's go with Redis since …".
_CHOICE_CUES = re.compile(r"\b(?:(?:we|i)(?:'ve| have)?\s+(?:chose|chosen|decided|picked|settled on|went with|"
                          r"are going with|will go with|agreed)|let's (?:go|stick) with|the decision is|"
                          r"decision:|we'll use|we will use)\b", re.IGNORECASE)
_REASON_START = re.compile(r"^(?:because|since|that's because|this is because|the reason|reason:|so that|"
                           r"otherwise|it's because|as it|as they|due to)\b", re.IGNORECASE)
# Where a piece of work stands, said by the user: "pause the billing migration until Q3".
_STATUS_CUES = re.compile(r"\b(?:pause|paused|pausing|put .{1,40} on hold|on hold|resume|resumed|resuming|"
                          r"unblocked|blocked (?:on|by)|postpone|postponed|shelve|shelved|park|parked|"
                          r"(?:is|are) (?:done|finished|shipped|cancelled|canceled|dropped|abandoned|live)|"
                          r"we(?:'re| are) (?:back on|done with|resuming|pausing))\b", re.IGNORECASE)
# A fact about the environment, said by the user: "the integration tests need Docker running".
_FACT_CUES = re.compile(r"\b(?:needs?|requires?|only works?|won't work|fails? (?:unless|without|when|if)|"
                        r"breaks? (?:unless|without|when|if)|must be set|has to be set|heads up|fyi|note that|"
                        r"gotcha)\b", re.IGNORECASE)
# An imperative that holds beyond this turn: "run `make test` before every commit".
_STANDING = re.compile(r"\b(?:every|each time|always|whenever|any ?time|by default|in this (?:repo|repository|project|"
                       r"codebase)|going forward|from now on|before (?:any|committing|pushing|merging|a commit|a push)|"
                       r"after (?:any|committing|pulling))\b", re.IGNORECASE)
# What a fact about the environment is about (else "totals need VAT rounding" would be one).
_SETUP = re.compile(r"\b(?:running|installed|install|set|env|environment|variable|locale|timezone|version|port|path|"
                    r"docker|container|service|daemon|server|node|python|java|ruby|go|rust|vpn|network|credentials?|"
                    r"token|key|permissions?|root|sudo|ci|machine|os|linux|macos|windows|database|db|cache|disk|"
                    r"memory|cpu|gpu|browser|headless|display)\b|`[^`]+`|\b[A-Z][A-Z0-9_]+=", re.IGNORECASE)
_USER_CAUSE = re.compile(r"\b(?:was|were|is|are) caused by|\broot cause\b|\bthe (?:cause|culprit|problem|issue|bug) "
                         r"(?:was|is)\b|\bturned out\b|\bcame from\b", re.IGNORECASE)
# "I don't know why it fails" has a cue word but states no rule.
_NOT_A_RULE = re.compile(r"\b(?:i|we)\s+(?:don't|do not|didn't|did not)\s+(?:know|understand|think|see|get|remember)\b",
                         re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:(?:and|also|but|so|oh|plus|btw|please|pls|ok|okay|one more thing|fyi|heads up|"
                      r"(?:one|two|three|a few|some) things?|note|important|remember|keep in mind)"
                      r"(?: that)?\b[\s,:\-—]*)+",
                      re.IGNORECASE)
_REQUEST = re.compile(r"^(?:can|could|would|will) you\b|^(?:fix|add|implement|write|refactor|rename|explain|"
                      r"investigate|find|check|look|make|create|update|change|remove|delete|run)\b(?!.*\b(?:always|"
                      r"never|from now on|instead of|no longer|going forward)\b)", re.IGNORECASE)


def statements(prompt: str) -> list[tuple[str, str]]:
    """(kind, sentence) of what a prompt states: ``rule``, ``choice`` (with its reason), ``status``, ``fact``.

    One sentence each, however it is punctuated inside ("e.g.", ``make proto``); a reason in
    the next sentence ("Use Redis. Because …") stays with its decision; two rules joined by a
    semicolon are two, a correction and what replaces it ("`make test` is gone; run …") one.
    """
    out: list[tuple[str, str]] = []
    parts = sentences(prompt)
    consumed: set[int] = set()
    for i, raw in enumerate(parts):
        if i in consumed:
            continue
        kinds = [_clause_kind(c) for c in _clauses(raw)]
        for j, (kind, s) in enumerate(kinds):
            if kind is None or raw.endswith("?") or len(s) > 300 or len(s.split()) < 3:
                continue
            if kind in ("fact", "status") and j + 1 < len(kinds) and kinds[j + 1][0] is None:
                s = f"{s}; {kinds[j + 1][1]}"  # "… was caused by X; we fixed it with Y": the fix goes along
            following = parts[i + 1] if i + 1 < len(parts) else ""
            if kind in ("choice", "rule") and _REASON_START.match(following) and len(s) + len(following) < 300:
                s = f"{s}: {_lower_first(following.rstrip('.'))}"
                consumed.add(i + 1)
            s = capitalised(s)
            if all(s != x for _k, x in out):
                out.append((kind, s))
    return out[:4]


def _clause_kind(clause: str) -> tuple[str | None, str]:
    s = _LEAD_IN.sub("", clause).strip().rstrip(".!; ")
    probe = _NOT_A_RULE.sub("", s.replace("\u2019", "'"))  # "don’t" typed with a curly apostrophe
    return (_kind_of(s, probe) if len(s.split()) >= 3 else None), s


def _clauses(sentence: str) -> list[str]:
    """A sentence's ';'-separated clauses; a correction ("`make test` is gone") keeps what replaces it."""
    parts = [re.sub(r"^and\s+", "", p.strip()) for p in sentence.split(";") if p.strip()]
    out: list[str] = []
    for p in parts:
        if out and supersedes_something(out[-1]) and not _DECISION_CUES.search(_GONE.sub("", out[-1])):
            out[-1] = f"{out[-1]}; {p}"
        else:
            out.append(p)
    return out


_GONE = re.compile(r"\b(?:is|are) gone|no longer \w+|was removed|has been removed\b", re.IGNORECASE)


# "Use pnpm for all installs": a tool for a kind of work (plural, -ing, "all/every …"), not for this task.
_USE_FOR = re.compile(r"^(?:(?:actually|correction|scratch that|instead|so)[\s,:;—-]+)?(?:always |please |we )?"
                      r"(?:use|prefer|stick to|go with) [\w.@/+-]+(?: [\w.@/+-]+)? (?:for|to|when|in|on) "
                      r"(?:all |every |any |new |our |the )?(?:[\w-]+ )?[\w-]+(?:s|ing)\b", re.IGNORECASE)


def _kind_of(s: str, probe: str) -> str | None:
    if _CHOICE_CUES.search(probe):
        return "choice"
    if _USE_FOR.search(probe):
        return "rule"
    if _STATUS_CUES.search(probe) and is_status(probe):
        return "status"
    if _REQUEST.match(probe) and not (_STANDING.search(probe) and not probe.lower().startswith(
            ("can ", "could ", "would ", "will "))):
        return None  # "fix the bug in parser.py", "can you use pnpm?": asked for, not stated
    if _DECISION_CUES.search(probe) or _STANDING.search(probe):
        return "rule"
    if _FACT_CUES.search(probe) and _SETUP.search(probe) and not probe.lower().startswith(("i ", "we ")):
        return "fact"
    if _USER_CAUSE.search(probe):
        return "fact"  # a root cause the user found: "the flaky test was caused by the shared tmp dir"
    return None


def decisions_in(prompt: str) -> list[str]:
    """Sentences of a prompt that state a rule or preference, a decision, or a workstream's status."""
    return [s for kind, s in statements(prompt) if kind != "fact"][:3]


def _prompt_text(ev: Event | None) -> str:
    if ev is None:
        return ""
    p = ev.payload.get("prompt")
    return p if isinstance(p, str) else ""


def _is_notification(text: str) -> bool:
    t = text.strip()
    return t.startswith("<task-notification>") or t.startswith("<command-")


def gist_of(prompt: str, limit: int = 90) -> str:
    """A one-line gist of a prompt: its first real sentence, without pleasantries."""
    if _is_notification(prompt):
        return ""
    for sentence in sentences(prompt):
        s = re.sub(r"^(?:(?:hi|hey|hello|ok|okay|great|nice|thanks|thank you|cool|perfect|please|pls|can you|"
                   r"could you|would you|i want you to|i'd like you to|let's)\b[\s,!.]*)+", "", sentence,
                   flags=re.IGNORECASE)  # repeated: "ok, please could you …"
        s = _LEAD_IN.sub("", s).strip().rstrip(".!")
        s = re.sub(r"\s+", " ", s)
        if len(s.split()) < 2:
            continue  # "Nice." / "Thanks!" say nothing about the work
        s = capitalised(s)
        return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
    return ""


# ------------------------------------------------------------------------------- summary

_NEXT_CUES = re.compile(r"\b(?:next|todo|to do|remaining|follow[- ]up|should|could|consider|still need|"
                        r"not yet|left to|would need)\b", re.IGNORECASE)


def summarize(session: SessionInfo, observations: list[dict[str, object]], last: Turn,
              turns: list[Turn], learned_now: list[str] | None = None) -> SummaryDraft | None:
    """The session's summary so far, or None when the session did nothing worth one."""
    prior = session.prior_summary or {}
    prompts = [p for p in session.prompts if p and not _is_notification(p)]
    gists = [g for g in (gist_of(p, 120) for p in prompts) if g]
    request = gists[0] if gists else ""
    if len(gists) > 1:
        request += "; then: " + "; ".join(gists[1:4])
    files_read: list[str] = _unique(_strs(prior.get("files_read")) + [
        f for o in observations for f in _strs(o.get("files_read"))])
    files_modified: list[str] = _unique(_strs(prior.get("files_modified")) + [
        f for o in observations for f in _strs(o.get("files_modified"))])
    prior_notes = str(prior.get("notes") or "")
    commands: list[str] = prior_notes[len("Commands: "):].split(", ") if prior_notes.startswith(
        "Commands: ") else []
    for t in turns:
        for e in t.events:
            c = evidence.command(e)
            if c is not None and not evidence.trivial(c):
                commands.append(f"{_short_cmd(c.command)} ({'ok' if c.ok else 'failed'})")
    commands = _unique(commands)

    # What earlier calls' turns taught (their summary), then this call's, in the order they came.
    learned = [x for x in str(prior.get("learned") or "").split("\n") if x]
    if learned_now is None:
        learned_now = [str(o["title"]) for o in observations if o.get("type") in ("discovery", "decision", "bugfix")]
    learned += learned_now
    done = [str(o["title"]) for o in observations if o.get("type") in ("bugfix", "feature", "change",
                                                                      "refactor")]
    last_msg = ""
    for t in turns:
        if t.stop is not None and t.stop.kind == "Stop":
            m = t.stop.payload.get("last_assistant_message")
            if isinstance(m, str) and m.strip():
                last_msg = m.strip()
    if not last_msg and LAST_WORD in str(prior.get("completed") or ""):
        last_msg = str(prior["completed"]).split(LAST_WORD, 1)[1]
    completed = "; ".join(_unique(done)[:6])
    if last_msg:
        completed = (completed + ". " if completed else "") + LAST_WORD + _cap(
            re.sub(r"\s+", " ", last_msg), 400)
    next_steps = [s for s in re.split(r"(?<=[.!?])\s+|\n+", last_msg) if _NEXT_CUES.search(s)]
    still_failing = [str(o["title"]) for o in observations if o.get("type") == "discovery"
                     and str(o.get("title", "")).startswith("`") and " fails" in str(o.get("title", ""))]
    steps = [_cap(s.strip(), 200) for s in next_steps[:3]] + [f"Still failing: {t}" for t in still_failing[-2:]]
    investigated = ", ".join(f for f in files_read if f not in files_modified)[:600]
    stop_at = last.stop.occurred_at if last.stop else (last.all[-1].occurred_at if last.all else 0.0)
    size = sum(e.size_chars for t in turns for e in t.all)
    if not (request or files_modified or commands or last_msg):
        return None
    return SummaryDraft(
        created_at=stop_at, request=_cap(request, 400),
        investigated=("Read " + investigated) if investigated else "",
        learned="\n".join(_unique(learned)[-8:])[-1500:], completed=completed,
        next_steps="; ".join(steps), notes=("Commands: " + ", ".join(commands[:12])) if commands else "",
        files_read=files_read[:50], files_modified=files_modified[:50],
        prompt_number=last.prompt.prompt_number if last.prompt else None,
        # The summary covers the whole session: add this call's turns to what earlier calls saw.
        source_tokens=tokens_of(size) + int(prior.get("source_tokens") or 0),
    )


# ------------------------------------------------------------------------------- helpers

def _rel(path: str, root: str) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def _file_list(files: list[str]) -> str:
    names = [os.path.basename(f) or f for f in files]
    shown = ", ".join(names[:MAX_FILES_IN_TITLE])
    more = len(names) - MAX_FILES_IN_TITLE
    return shown + (f" and {more} more" if more > 0 else "")


def _short_cmd(cmd: str, limit: int = 60) -> str:
    first = cmd.strip().splitlines()[0] if cmd.strip() else cmd
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _error_excerpt(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith("Exit code")]
    return _cap(" | ".join(lines[-3:]), 300) if lines else ""


def _cap(text: str, limit: int = 140) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _unique(items: object) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))  # type: ignore[attr-defined]


def _strs(v: object) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []
