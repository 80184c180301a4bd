"""From a parsed model reply to the drafts the store takes, with facts taken from evidence.

The model's words are kept; everything checkable is checked: ``files_modified`` only lists
files a tool call really changed, ``files_read`` is the evidence plus what the model names,
timestamps are those of the events (not of the reply), attribution (prompt number, subagent)
comes from the events the observation is about, and the call's tokens are split over what
it produced. What the model says each memory is (kind, scope, tentative, the sentence it rests
on) is checked against the events by :mod:`kenning.observer.llm.vetting`; a standing rule the
model names as superseded stays unless the new memory rests on the user's own words (only the
user replaces a rule, DESIGN.md §9).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kenning.observer import evidence
from kenning.observer.llm import vetting
from kenning.observer.parse import ParsedObservation, Reply
from kenning.project import relative
from kenning.records import Event, ObservationDraft, SessionInfo, SummaryDraft, tokens_of

log = logging.getLogger("kenning.observer")


@dataclass
class Touch:
    path: str  # relative to the project root when inside it
    at: float
    event: Event


def rel(path: str, root: str) -> str:
    p = path.strip()
    inside = relative(p, root)  # a Windows checkout's files too, with / between names
    if inside != p:
        return inside
    return p[2:] if p.startswith("./") else p


def _touches(events: list[Event], root: str) -> tuple[list[Touch], list[Touch]]:
    mods: list[Touch] = []
    reads: list[Touch] = []
    for e in events:
        mods.extend(Touch(rel(f, root), e.occurred_at, e) for f in evidence.modified_files(e))
        reads.extend(Touch(rel(f, root), e.occurred_at, e) for f in evidence.read_files(e))
    return mods, reads


def _same_file(evidence_path: str, claim: str) -> bool:
    if not claim:
        return False
    return evidence_path == claim or evidence_path.endswith("/" + claim) or claim.endswith("/" + evidence_path)


def _mentioned(t: Touch, claims: list[str], text: str) -> bool:
    return any(_same_file(t.path, c) for c in claims) or os.path.basename(t.path) in text


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def observation_drafts(reply: Reply, events: list[Event], session: SessionInfo, *,
                       tokens: int, earlier: list[Event] | None = None,
                       shown: set[int] | None = None, said: Sequence[Event] = (),
                       judge: str = "LLM observer") -> list[ObservationDraft]:
    """Drafts for the reply's observations; ``tokens`` is this call's share for observations.

    ``shown``: ids of the memories this conversation was shown; what an observation says it
    supersedes is kept only among them (the store then checks the project and the status).

    ``earlier``: events of the same prompt turn sent in previous calls. A model often writes
    up a fix when it sees the passing run, one batch after the edit: files it names from those
    events are evidence too (only when named — never the unnamed fallback).

    ``said``: the prompts and turn ends sent earlier in this conversation: a memory's sentence
    may be quoted from them. ``judge`` names the observer and model in each memory's why.
    """
    if not reply.observations:
        return []
    root = session.project_root
    mods, reads = _touches(events, root)
    old_mods, old_reads = _touches(earlier or [], root)
    tools = [e for e in events if e.kind in ("PostToolUse", "PostToolUseFailure")] or events
    n = len(reply.observations)
    batch_chars = sum(e.size_chars for e in events)
    found_in = vetting.sources([*said, *events])
    rules = {int(m["id"]) for m in session.memories if m.get("layer") == "rule"}
    out: list[ObservationDraft] = []
    for obs in reply.observations:
        claims = [rel(f, root) for f in obs.files_read + obs.files_modified]
        text = " ".join([obs.title, obs.subtitle, obs.narrative, *obs.facts])
        my_mods = [t for t in mods if _mentioned(t, claims, text)] or (mods if n == 1 else [])
        my_mods += [t for t in old_mods if _mentioned(t, claims, text)]
        my_reads = [t for t in reads if _mentioned(t, claims, text)] or (reads if n == 1 else [])
        my_reads += [t for t in old_reads if _mentioned(t, claims, text)]
        touched = my_mods + my_reads
        related = [t.event for t in touched] or tools
        modified = _unique([t.path for t in my_mods])
        files_read = _unique([t.path for t in my_reads] + [rel(f, root) for f in obs.files_read])
        files_read = [f for f in files_read if f not in modified] or files_read
        d = _draft(obs, related, modified, files_read, tokens // max(1, n), tokens_of(batch_chars // n))
        v = vetting.vet(obs, found_in, where=_where_of(session, related[-1]), judge=judge)
        d.kind, d.scope, d.tentative, d.why = v.kind, v.scope, v.tentative, v.why
        d.supersedes = [i for i in obs.supersedes if i in (shown or set())]
        if v.why and v.by != "user" and any(i in rules for i in d.supersedes):
            kept = [i for i in d.supersedes if i not in rules]
            note = (f"named standing rule(s) {sorted(set(d.supersedes) - set(kept))} as superseded, but only "
                    "the user's words replace a rule: left as they are")
            v.notes.append(note)
            d.why["how"] += f"; {note}" if "corrected:" in d.why["how"] else f"; corrected: {note}"
            d.supersedes = kept
        for note in v.notes:
            # Not the title: the log is kept apart from the database, and a memory the user forgets
            # must not stay there (SECURITY.md, "forget"). The note itself names no text.
            log.info("observer (%s), a memory of session %s: %s", judge, session.id, note)
        out.append(d)
    return out


def _where_of(session: SessionInfo, default: Event) -> Callable[[Event | None], str]:
    """Where a sentence was said (the event it was found in, else the last one the memory is about)."""
    sid = session.agent_session_id[:8]

    def where(e: Event | None) -> str:
        e = e or default
        return f"prompt {e.prompt_number} of session {sid}" if e.prompt_number else f"session {sid}"
    return where


def _draft(obs: ParsedObservation, related: list[Event], modified: list[str], files_read: list[str],
           tokens: int, source_tokens: int) -> ObservationDraft:
    agents = {(e.agent_id, e.agent_type) for e in related}
    agent_id, agent_type = next(iter(agents)) if len(agents) == 1 else (None, None)
    prompt_numbers = [e.prompt_number for e in related if e.prompt_number]
    facts = list(obs.facts)
    if obs.original_type:  # flagged, never invisible: the mapped row says what the model meant
        facts.append(f"(observer wrote type {obs.original_type!r})")
    return ObservationDraft(
        type=obs.type, title=obs.title, subtitle=obs.subtitle, facts=facts, narrative=obs.narrative,
        concepts=obs.concepts, files_read=files_read, files_modified=modified,
        created_at=max(e.occurred_at for e in related), prompt_number=prompt_numbers[-1] if prompt_numbers else None,
        tokens_spent=tokens, source_tokens=source_tokens, agent_id=agent_id, agent_type=agent_type)


def summary_draft(reply: Reply, events: list[Event], session: SessionInfo, drafts: list[ObservationDraft], *,
                  tokens: int, source_tokens: int) -> SummaryDraft | None:
    s = reply.summary
    if s is None:
        return None
    files_read: list[str] = []
    files_modified: list[str] = []
    for o in [*session.prior_observations, *({"files_read": d.files_read, "files_modified": d.files_modified}
                                              for d in drafts)]:
        files_read.extend(str(f) for f in o.get("files_read") or [])
        files_modified.extend(str(f) for f in o.get("files_modified") or [])
    numbers = [e.prompt_number for e in events if e.prompt_number]
    return SummaryDraft(
        created_at=events[-1].occurred_at, request=s.request, investigated=s.investigated, learned=s.learned,
        completed=s.completed, next_steps=s.next_steps, notes=s.notes,
        files_read=_unique(files_read)[:50], files_modified=_unique(files_modified)[:50],
        prompt_number=numbers[-1] if numbers else None, tokens_spent=tokens, source_tokens=source_tokens)
