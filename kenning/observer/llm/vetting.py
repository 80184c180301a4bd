"""What the model says a memory is, checked against what it was shown (DESIGN.md §9).

The model proposes a kind, a scope, a provisional flag and the sentence the memory rests on
(``why``); the events decide what is kept:

* the sentence must occur in the events the conversation was shown (whitespace, case and curly
  quotes aside; ``…`` may stand for a cut); one found nowhere is cleared, so no invented quote
  ever reaches the viewer;
* who said it (``by``), in what kind of message (``origin``) and where come from the event the
  sentence was found in, never from the model: a prompt the user typed, queued or said refusing a
  tool call is the ``user``'s; an accepted plan is the ``plan``'s (the agent's words); the agent's
  messages are the ``agent``'s; tool calls and their output are the ``commands``'; a scripted or
  harness prompt is the ``harness``'s (nobody's words);
* a ``rule`` rests on the user's own words: any other rule (from a plan, the agent, output, or no
  sentence at all) is kept as a ``decision``, and so is one whose sentence only sounds like a rule
  (kenning/observer/own_words.py ``not_a_rule``: its rule words are quoted, it assents to the work at hand, it asks,
  it bans what it only points at …), or
  orders a task of this turn (``one_off``, ``builds_once``: "Implement X in this repository"), is a user story
  ("As an operator, I want …, so that …") or a line of code pasted;
* scope ``user`` only for a user's rule whose sentence says it holds beyond this project;
* ``tentative`` only for rules and decisions.

A reply in the format before kinds existed (none of kind, scope, tentative, why) is left as it
was: no kind, no why; its layer follows from its type and text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kenning.memory import cues
from kenning.observer import gates, own_words
from kenning.observer.parse import ParsedObservation
from kenning.observer.prompts import elide, render_event
from kenning.observer.reading import USER_ORIGINS, origin_of
from kenning.observer.transcript import PAYLOAD_KEY, words_of
from kenning.records import Event

MIN_QUOTE = 6  # non-space characters of a sentence and of each piece around a … ("yes" is found anywhere)
MAX_QUOTE = 600
RANK = {"user": 0, "plan": 1, "agent": 2, "commands": 3, "harness": 4}
TENTATIVE_KINDS = ("rule", "decision")
_SURROUNDING = "\"'`“”‘’„«»「」『』 "
_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*")
_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " "})


@dataclass(frozen=True)
class Source:
    """One text the model was shown, and who wrote it."""

    text: str  # normalised (see :func:`_norm`)
    by: str    # user | plan | agent | commands | harness
    origin: str
    event: Event


@dataclass
class Verdict:
    kind: str
    scope: str = "project"
    tentative: bool = False
    why: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was corrected, and why
    by: str = ""


_OPENING = re.compile(r"(?<=[.!?。！？:：])\s|\n")  # where a message's first sentence ends


def _norm(text: str) -> str:
    return " ".join(text.translate(_FOLD).split()).casefold()


def sources(events: Sequence[Event]) -> list[Source]:
    """The texts of ``events`` as rendered to the model: the user's first, newest first within each speaker."""
    out: list[Source] = []
    for e in events:
        p = e.payload
        if e.kind == "UserPromptSubmit" and isinstance(p.get("prompt"), str):
            origin = origin_of(e)
            by = "user" if origin in USER_ORIGINS else "plan" if origin == "plan" else "harness"
            out.append(Source(_norm(elide(p["prompt"])), by, origin, e))
        elif e.kind == "Stop":
            out += [Source(_norm(elide(text)), "user", origin, e) for origin, text in words_of(p)]
            said = [t for t in p.get(PAYLOAD_KEY) or [] if isinstance(t, str) and t.strip()]
            if said:
                out.append(Source(_norm(elide("\n---\n".join(said))), "agent", "progress", e))
            last = p.get("last_assistant_message")
            if isinstance(last, str) and last.strip():
                out.append(Source(_norm(elide(last)), "agent", "final", e))
        elif e.kind in ("PostToolUse", "PostToolUseFailure"):
            out.append(Source(_norm(render_event(e)), "commands", e.tool_name or "", e))
    out.reverse()
    out.sort(key=lambda s: RANK[s.by])  # stable: newest first within a speaker
    return out


def clean_quote(text: str) -> str:
    """The model's sentence without the quotation marks around it."""
    return " ".join(text.split()).strip(_SURROUNDING)


def find(quote: str, found_in: Sequence[Source]) -> Source | None:
    """Where ``quote`` was said: the first source holding all its pieces (cut at ``…``) in order."""
    pieces = [x for x in _ELLIPSIS.split(_norm(quote)) if x]
    if not pieces or any(_weight(x) < MIN_QUOTE for x in pieces):
        return None  # too short to be a sentence, or stitched from scraps
    for s in found_in:
        at = 0
        for piece in pieces:
            at = s.text.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return s
    return None


def _pasted(quote: str, src: Source, found_in: Sequence[Source]) -> Source | None:
    """The tool result of the same turn that shows the user's ``quote`` too when the user pasted it from there
    (a PR's description they criticise, then looked up): not one that shows the message's opening as well,
    which is the message coming back (a prompt file printed). The offline observer reads it the same way
    (kenning.observer.relayed.quoted)."""
    opening = _OPENING.split(src.text, maxsplit=1)[0][:60]
    if not opening or quote.startswith(opening) or src.event is None:
        return None
    for s in found_in:
        if s.by == "commands" and s.event is not None and s.event.prompt_number == src.event.prompt_number \
                and find(quote, [s]) is not None and opening not in s.text:
            return s
    return None


def _weight(text: str) -> int:
    """Non-space characters, a CJK one counting twice ("别用npm" is a whole rule)."""
    return sum(2 if "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" else 1 for c in text if not c.isspace())


def _whose(src: Source | None, quoted: bool) -> str:
    if src is None:
        return "its sentence is not in what it was shown" if quoted else "it quotes no sentence"
    return {"plan": "its sentence is from a plan the agent wrote", "agent": "its sentence is the agent's",
            "commands": "its sentence is tool output"}.get(
        src.by, f"its sentence is from a {src.origin or 'scripted'} prompt, not the user's words")


def vet(obs: ParsedObservation, found_in: Sequence[Source], *, where: Callable[[Event | None], str],
        judge: str) -> Verdict:
    """The kind, scope, tentative flag and why of one observation, as far as the events bear them out."""
    if not obs.roles_given:
        return Verdict(kind=obs.kind, notes=list(obs.notes))
    v = Verdict(kind=obs.kind, notes=list(obs.notes))
    quote = clean_quote(obs.why)
    src = find(quote, found_in) if quote else None
    if src is not None and src.by == "user":
        src = _pasted(_norm(quote), src, found_in) or src
    if quote and src is None:
        v.notes.append("its sentence is not in what the model was shown: cleared")  # never stored, not even here
    said = quote if src is not None else ""
    if v.kind == "rule" and (src is None or src.by != "user"):
        v.kind = "decision"
        v.notes.append(f"judged a rule, but {_whose(src, bool(quote))}: kept as a decision")
    elif v.kind == "rule" and (own_words.not_a_rule(said) or gates.one_off(said) or gates.builds_once(said)
                               or gates.user_story(said) or own_words.pasted_code(said)):
        v.kind = "decision"
        v.notes.append("judged a rule, but its sentence quotes or tells what happened, assents to the work at hand, "
                       "asks, bans what it does not name, says what a document is to say, orders a task of this "
                       "turn or is a user story or code: kept as a decision")
    if obs.scope == "user":
        if v.kind == "rule" and src is not None and cues.has(said, "user_scope"):
            v.scope = "user"
        else:
            v.notes.append("scope user, but its sentence does not say it holds for all of the user's work: "
                           "kept for this project")
    if obs.tentative:
        if v.kind in TENTATIVE_KINDS:
            v.tentative = True
        else:
            v.notes.append(f"tentative, but a {v.kind or 'memory without a kind'} is not a rule or decision: "
                           "not marked")
    how = f"judged {v.kind} by the {judge}" if v.kind else f"judged by the {judge}, without a kind"
    if v.scope == "user":
        how += "; said to hold for all of the user's work"
    if v.tentative:
        how += "; said to be provisional"
    if v.notes:
        how += "; corrected: " + "; ".join(v.notes)
    if len(said) > MAX_QUOTE:
        said = said[:MAX_QUOTE - 1].rstrip() + "…"
    v.by = src.by if src is not None else ""
    v.why = {"said": said, "by": v.by, "origin": src.origin if src is not None else "",
             "where": where(src.event if src is not None else None), "how": how}
    return v
