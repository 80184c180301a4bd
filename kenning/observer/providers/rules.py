"""The offline observer: deterministic rules over one prompt turn at a time.

A turn runs from a user prompt to the agent's Stop. Its events stay pending until the turn
closes (Stop, the next prompt, SessionEnd, or silence longer than ``turn_idle_seconds``);
then the whole turn is read at once and turned into observations:

* an error, then an edit, then the same command passing → ``bugfix``;
* a command that failed and was not fixed in the turn → ``discovery`` with its error;
* files created / changed → ``feature`` / ``change``;
* a turn that only read code → ``discovery`` of what was explored;
* preferences and rules stated in the prompt ("use pnpm", "don't touch the API") → ``decision``.

At Stop the session summary is (re)written from the prompts, the files touched, the
commands run and the agent's last message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kenning.observer import evidence
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
        for turn in turns:
            drafts = observe_turn(turn, session)
            out.observations.extend(drafts)
            out.done.extend(e.id for e in turn.all)
            prior_obs.extend(_as_prior(d) for d in drafts)
            if turn.prompt is not None or turn.events or (turn.stop is not None and turn.stop.kind == "Stop"):
                summary_turn = turn
        if summary_turn is None and turns and session.prior_summary is None and session.prompts:
            summary_turn = turns[-1]  # the session ended without a Stop: summarise what it did
        if summary_turn is not None and (summary_turn.stop is not None or session.ended or idle):
            out.summary = summarize(session, prior_obs, summary_turn, turns)
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

def observe_turn(turn: Turn, session: SessionInfo) -> list[ObservationDraft]:
    root = session.project_root
    prompt_text = _prompt_text(turn.prompt)
    gist = gist_of(prompt_text)
    prompt_number = turn.prompt.prompt_number if turn.prompt else (
        turn.events[0].prompt_number if turn.events else None)
    agent_id, agent_type = _agent(turn)
    size = sum(e.size_chars for e in turn.all)
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
        if not fix_files:
            continue
        # every failure of the same command up to the pass belongs to this fix
        for c in commands[i:]:
            if c.at > passing.at:
                break
            if not c.ok and _same_command(key, c.command):
                fixed_ids.add(c.event_id)
        headline = evidence.error_headline(fail.output)
        cmd = _short_cmd(fail.command)
        facts = [f"`{cmd}` failed: {headline}" if headline else f"`{cmd}` failed",
                 f"Fixed by changing {', '.join(fix_files[:6])}",
                 f"`{_short_cmd(passing.command)}` passes after the change"]
        narrative = (f"While working on: {gist}. " if gist else "") + (
            f"Running `{cmd}` failed ({headline or 'non-zero exit'}). After edits to "
            f"{', '.join(fix_files[:6])}, `{_short_cmd(passing.command)}` ran cleanly.")
        drafts.append(ObservationDraft(
            type="bugfix", title=_cap(f"Fixed `{cmd}` failure: {headline}" if headline else f"Fixed `{cmd}`"),
            subtitle=_cap(f"{len(fix_files)} file(s) changed to make `{_short_cmd(passing.command)}` pass", 120),
            facts=facts, narrative=narrative, concepts=["problem-solution", "what-changed"],
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
        drafts.append(ObservationDraft(
            type="discovery", title=_cap(f"`{cmd}` fails: {headline}" if headline else f"`{cmd}` fails"),
            subtitle=_cap(fail.description or "command failed", 120), facts=facts,
            narrative=(f"While working on: {gist}. " if gist else "")
            + f"`{cmd}` failed" + (f" with: {headline}." if headline else "."),
            concepts=["gotcha"], files_read=reads, created_at=fail.at))

    if modified:
        files = list(modified)
        kind = "feature" if created else "change"
        verb = "Added" if created else "Changed"
        listed = _file_list([f for f in files if f in created] + [f for f in files if f not in created])
        title = f"{verb} {listed}" + (f": {gist}" if gist else "")
        facts = [f"Created {f}" for f in files if f in created]
        facts += [f"Modified {f}" + (f" ({edits_per_file[f]} edits)" if edits_per_file[f] > 1 else "")
                  for f in files if f not in created]
        ran = [c for c in commands if not evidence.trivial(c)]
        if ran:
            last = ran[-1]
            facts.append(f"Last check: `{_short_cmd(last.command)}` {'passed' if last.ok else 'failed'}")
        narrative = (f"Asked: {gist}. " if gist else "") + (
            f"{verb} {len(files)} file(s): {', '.join(files[:8])}" + ("." if len(files) <= 8 else ", …."))
        drafts.append(ObservationDraft(
            type=kind, title=_cap(title), subtitle=_cap(f"{len(created)} created, "
                                                         f"{len(files) - len(created)} modified", 120),
            facts=facts, narrative=narrative, concepts=["what-changed"], files_read=reads,
            files_modified=files, created_at=max(modified.values())))
    elif reads and gist and not unresolved:
        facts = [f"Read {f}" for f in reads[:10]] + [f"Searched: {s}" for s in searches[:5]]
        drafts.append(ObservationDraft(
            type="discovery", title=_cap(f"Explored {_file_list(reads)}: {gist}"),
            subtitle=_cap(f"{len(reads)} file(s) read, nothing changed", 120), facts=facts,
            narrative=f"Asked: {gist}. Read {', '.join(reads[:8])} without changing anything.",
            concepts=["how-it-works"], files_read=reads, created_at=turn.events[-1].occurred_at))

    if turn.prompt is not None and not _is_notification(prompt_text):
        for sentence in decisions_in(prompt_text):
            drafts.append(ObservationDraft(
                type="decision", title=_cap(sentence), subtitle="stated by the user",
                facts=[f"User: {sentence}"], narrative=f"The user stated: \"{sentence}\"",
                concepts=["pattern", "why-it-exists"], created_at=turn.prompt.occurred_at))

    # Spread the size of the turn over what it produced (token economics), stamp attribution.
    for d in drafts:
        d.source_tokens = tokens_of(size // max(1, len(drafts)))
        d.prompt_number = prompt_number
        d.agent_id, d.agent_type = agent_id, agent_type
    return drafts


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
    r"don't|do not|must(?: not)?|should(?:n't| not)|avoid|stick (?:to|with)|from now on|instead of|"
    r"rather than|keep using|no more|not\s+\w+\s*,|use\s+\S+(?:\s+\S+)?\s*(?:,\s*)?(?:not|over|instead))\b",
    re.IGNORECASE)
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# "I don't know why it fails" has a cue word but states no rule.
_NOT_A_RULE = re.compile(r"\b(?:i|we)\s+(?:don't|do not|didn't|did not)\s+(?:know|understand|think|see|get|remember)\b",
                         re.IGNORECASE)


_LEAD_IN = re.compile(r"^(?:(?:and|also|but|so|oh|plus|btw|please|pls|ok|okay|one more thing|"
                      r"(?:one|two|three|a few|some) things?|note|important|remember)\b[\s,:\-—]*)+", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Split prose into sentences (code blocks removed)."""
    text = _CODE_BLOCK.sub(" ", text)
    return [s.strip(" \t-*•>").strip() for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if s.strip()]


def decisions_in(prompt: str) -> list[str]:
    """Sentences of a prompt that state a rule or a preference."""
    out: list[str] = []
    for s in sentences(prompt):
        if s.endswith("?") or len(s) > 240:
            continue
        s = _LEAD_IN.sub("", s).strip().rstrip(".!; ")
        probe = _NOT_A_RULE.sub("", s.replace("\u2019", "'"))  # "don’t" typed with a curly apostrophe
        if len(s.split()) < 3 or not _DECISION_CUES.search(probe):
            continue
        s = s[0].upper() + s[1:]
        if s not in out:
            out.append(s)
    return out[:3]


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
        s = s[0].upper() + s[1:]
        return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
    return ""


# ------------------------------------------------------------------------------- summary

_NEXT_CUES = re.compile(r"\b(?:next|todo|to do|remaining|follow[- ]up|should|could|consider|still need|"
                        r"not yet|left to|would need)\b", re.IGNORECASE)


def summarize(session: SessionInfo, observations: list[dict[str, object]], last: Turn,
              turns: list[Turn]) -> SummaryDraft | None:
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

    learned = [str(o["title"]) for o in observations if o.get("type") in ("discovery", "decision", "bugfix")]
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
        learned="; ".join(_unique(learned)[:6]), completed=completed,
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
