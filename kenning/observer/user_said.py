"""The user's own words as memories (DESIGN.md §9): each standing rule, decision, durable fact, open to-do or
workstream status they state is a memory of its own, recording the sentence and where it was said; a correction
of a standing rule is its new version."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from kenning.memory import cues
from kenning.memory.text import capitalised, clip
from kenning.observer import gates, own_words
from kenning.observer.conclusion import worth_saying
from kenning.observer.reading import Reading, distinct
from kenning.observer.roles.roles import Judged
from kenning.observer.titles import TITLE
from kenning.observer.units import report_section
from kenning.observer.why import concepts_of, signals_of, why_of
from kenning.records import ObservationDraft

USER_SURE = {"rule": 0.5, "decision": 0.5, "fact": 0.55, "todo": 0.5, "rootcause": 0.5, "status": 0.6}
RULE_SIGNALS = own_words.RULE_SIGNALS
WEAK_RULE_SIGNALS = frozenset({"must", "correction", "convention", own_words.SCOPE})
MAX_USER = 4        # memories from one prompt


def user_memories(r: Reading, at: float, where: str, rules: Sequence[str] = ()) -> list[ObservationDraft]:
    """The user's rules, decisions, facts, to-dos and statuses, one memory each; ``rules``: the project's standing
    rules as they are now (what a correction may be of)."""
    out: list[ObservationDraft] = []
    # A message of many sentences is mostly something the user brings in (a review, an issue, a report they
    # paste): what it says is how things looked to its author, not a fact the user states; its decisions and
    # to-dos are still theirs.
    brought = {id(j) for j in r.brought}
    judged = [_weak_rule_as_decision(corrects_a_rule(j, rules)) for j in r.user]
    # The sentence right after a rule or decision that only gives its reason ("We decided to move to ClickHouse.
    # The reason is …", "…に移すことに決めました。…遅すぎるためです。") is part of it, not a memory of its own.
    keeps = {id(j) for j in judged if _user_keeps(j)}
    reason = {id(a): b for a, b in pairwise(judged) if a.role in ("rule", "decision") and b.unit.before
              == a.unit.text and b.unit.index == a.unit.index + 1 and _GIVES_REASON.search(b.text)}
    told = {id(b) for key, b in reason.items() if key in keeps}
    for j in distinct([j for j in judged if id(j) in keeps and not j.unit.table and id(j) not in told
                       and not (id(j) in brought and j.role in ("fact", "rootcause", "status"))])[:MAX_USER]:
        kind = j.role
        # A rule keeps the label it was said under ("Korrektur: … auf Englisch, nicht auf Deutsch", "In allen
        # Projekten: antworte mir auf Deutsch"): it is part of what the user said, and the supersession of rules
        # reads a correction in the rule's words.
        labelled = kind == "rule" and (j.unit.label or _CORRECTION_LABEL.search(j.unit.heading))
        text = _with_label(j) if labelled else j.text
        if id(j) in reason:  # (no space after a Chinese or Japanese full stop)
            text = f"{text}{'' if text.endswith(('。', '！', '？')) else ' '}{reason[id(j)].text}"
        title = clip(said_plainly(text), TITLE)
        who = {"queued": "typed by the user while the agent worked", "rejection":
               "said by the user when rejecting a tool call"}.get(j.origin, "stated by the user")
        out.append(ObservationDraft(
            type="discovery" if kind in ("fact", "rootcause") else "decision", title=title, subtitle=who,
            facts=[f"User: {text}"], narrative=f"The user stated: \"{text}\"",
            concepts=concepts_of(kind), created_at=at, kind=kind, scope=j.scope, tentative=j.tentative,
            why=why_of(j, where, "user")))
    return out


# What the user means to do ("we need to research how the repo works"), never how things are
_WE_NEED_TO = re.compile(r"\b(?:we|i) (?:still |really |first |also )?(?:need|have) to\b", re.IGNORECASE)
# The order of steps ("… first, then …", "before the release"): a choice about the work, whatever its verbs
_IN_ORDER = re.compile(r"\bfirst\b|\bbefore\b|\bafter\b|\bonly then\b", re.IGNORECASE)
# A sentence that only gives the reason for the one before it
_GIVES_REASON = re.compile(
    r"^\W*(?:because|the reason (?:is|was)|that'?s because|this is because|since|parce que|car|la raison|weil|denn|"
    r"der grund|porque|la raz[oó]n|o motivo|perch[eé]|il motivo|çünkü|sebebi|потому что|причина в том)\b|"
    r"^\W*(?:因为|原因是|理由是|由于|なぜなら|理由は|왜냐하면|이유는)|(?:ためです|からです|ためだ|때문입니다|때문이에요|때문이다)[。.!]?$",
    re.IGNORECASE)
# A correction said to be one, by its label ("Correction:", "更正：", "Korrektur:" …)
# (alone, as a heading, or before a colon)
_CORRECTION_LABEL = re.compile(r"^\W*(?:correction|korrektur|correcci[oó]n|corre[cç][aã]o|correzione|d[uü]zeltme|"
                               r"поправка|исправление|更正|订正|訂正|정정)(?:\W*$|\s*[:：])", re.IGNORECASE)
# What holds for once, a trial or this piece of work only ("just this once", "for this script", "let's try …")
_FOR_ONCE = re.compile(
    r"\b(?:(?:just |only )?this (?:once|one time|time)|for (?:this|the) (?:one )?(?:script|file|pr|branch|task|run|"
    r"change|test|commit|release)(?: only)?|for now|today|let'?s (?:try|see)|try (?:out )?|for a test|"
    r"as an experiment|nur (?:dieses|diesmal|heute)|(?:dieses|ein) (?:eine )?mal|solo (?:esta vez|hoy|por ahora)|"
    r"juste (?:cette fois|pour)|seulement cette fois|só (?:desta|esta) vez|solo (?:questa volta|per ora)|"
    r"sadece bu (?:sefer|kez)|только (?:в этот раз|сейчас))\b|"
    r"这次|这一次|只这|先试|今回だけ|今回は|試しに|이번만|이번에는|일단", re.IGNORECASE)


def corrects_a_rule(j: Judged, rules: Sequence[str]) -> Judged:
    """The user's correction of a standing rule, said to be one ("Correction: we manage the dependencies with uv
    instead of poetry", "更正：依赖管理改用 uv", "Korrektur: … mit uv statt poetry") and about what that rule is
    about: the rule's new version, whatever the model made of a sentence that has no "always" in it. Never a
    question, nor what holds for once ("Correction: just this once use pip instead of poetry", "let's try uv")."""
    from dataclasses import replace

    from kenning.memory.supersession import corrects

    if j.speaker != "user" or j.role == "rule" or "question" in signals_of(j.text):
        return j
    if not (_CORRECTION_LABEL.search(j.unit.heading) or _CORRECTION_LABEL.search(j.text)):
        return j
    # (the label counts as the correction's word: "Correction: … in English, not German" is one in the label only)
    said = _with_label(j)
    if _FOR_ONCE.search(j.text) or gates.one_off(j.text) or not any(corrects(said, rule) for rule in rules):
        return j
    return replace(j, role="rule", p=max(j.p, 0.5), worth=max(j.worth, 0.5), how=CORRECTS)


def _with_label(j: Judged) -> str:
    """The sentence with the label it was said under in front, unless it says its correction label itself."""
    return j.text if not j.unit.heading or _CORRECTION_LABEL.search(j.text) else f"{j.unit.heading}: {j.text}"


CORRECTS = "corrects a standing rule"


def said_plainly(text: str) -> str:
    """The user's sentence without its lead-in ("And please: …", "Two things: …") or closing full stop."""
    from kenning.observer.stated import _LEAD_IN

    out = _LEAD_IN.sub("", text.strip()).strip().rstrip(".。")
    return capitalised(out) if len(out.split()) >= 3 or not out.isascii() else text


def _weak_rule_as_decision(j: Judged) -> Judged:
    """A sentence judged a rule on a weak sign alone ("should", "need to", "instead"), the model not leaning to a
    rule: what the user requires of this work ("The WAL journals have to be deleted before shutdown!"), their
    decision if it is one at all, never a standing rule."""
    from dataclasses import replace

    if j.role != "rule" or j.p >= 0.5 or j.how == CORRECTS:
        return j
    own = own_words.own_rule_signals(j.text)
    if not own or not own <= WEAK_RULE_SIGNALS:
        return j
    # (a step of what the user plans to build, "we need to store this prompt and then we run …", stays none)
    shaped = not (gates.planned(j.text) or gates.one_off(j.text) or gates.builds_once(j.text)
                  or own_words.not_a_rule(j.text) or "hypothesis" in signals_of(j.text))
    return replace(j, role="decision") if shaped else j


# A suggestion to weigh ("To reduce the risk of exposing the key, consider removing these fields …"): no choice made
_CONSIDER = re.compile(r"(?:^|[,;:]\s*|\b(?:so|and|then|please)\s+)consider\s+(?:\w+ing|whether|if)\b", re.IGNORECASE)
# What might be done, mused ("we could have prompts that …", "maybe we should add an intermediate step", "I wonder
# if we could …", "perhaps …", "也许…"): a brainstorm (17 of 17 labelled such sentences of the user are noise);
# "for now" marks a choice made, and provisional.
_MUSING = re.compile(r"\b(?:we|you|i) (?:could|might|may)\b(?!\s+not\b)|\bmaybe\b|\bperhaps\b|\bi wonder\b|"
                     r"也许|或许|说不定|かもしれ|もしかしたら|아마|어쩌면", re.IGNORECASE)
# A choice on the condition that what was said before holds ("If that's the case we need to …", "if so we can use
# remote and drop the alias", "in that case …", "如果是这样"): it hangs on a sentence the next session does not see
_IF_SO = re.compile(r"^\W*(?:(?:ok(?:ay)?|so|and|yes|yeah|alright|right)[,]?\s+)*"
                    r"(?:if (?:that|this|it)(?:['’]s| is) (?:the case|true|correct|right|so)|if so|in that case|"
                    r"then in that case|如果是这样|如果这样|その場合|それなら|그렇다면)\b", re.IGNORECASE)
# Work said to be for later, in the user's words ("later", "next time", "a follow-up")
_FOR_LATER = re.compile(r"\b(?:later|next time|follow[- ]?up|todo|to-do|afterwards|another (?:time|day|session))\b|"
                        r"下次|以后|回头|後で|次回|나중에|다음에", re.IGNORECASE)


def _user_keeps(j: Judged) -> bool:
    if j.role not in USER_SURE or max(j.p, j.worth) < USER_SURE[j.role] or not worth_saying(j):
        return False
    if j.role in ("rule", "decision") and cues.picks_option(j.text):
        return False  # "A for all calls": unreadable without the options it picks from (the session's line keeps it)
    if own_words.pasted_code(j.text):
        return False  # "accumulatedToAgentFiles := accumulatedUserAdded - … Calculate precisely": code pasted
    if j.role in ("rule", "decision", "fact") and gates.user_story(j.text):
        return False  # "As an operator, I want the export to retry, so that …": a requirement, as a template
    if j.role in ("rule", "decision") and report_section(j.unit.heading):
        return False  # "Expected behavior: cleanup should tolerate file locks": what this work is to achieve
    sig = signals_of(j.text)
    if j.role != "todo" and own_words.asks(j.text):
        # "Could we create a summary of the options … (I'd go with option 4 now)", "…不自然でないか（…）": it asks
        # (of 138 labelled sentences of the user that read as a question, 137 are noise or open on "when", a
        # condition that states; one is a fact); "could you add a follow-up to …" still leaves work for later
        return False
    if j.role in ("fact", "rootcause") and (own_words.an_order(j.text) or _WE_NEED_TO.search(j.text)):
        # "Mention that skills can hold docs", "For git sync..we need to research how the repo works": what the
        # user asks for or means to do, not how things are (no labelled fact of a user says "we need to")
        return False
    if j.role == "rule":
        own = own_words.own_rule_signals(j.text)
        # A rule says how to work from now on: a cue of that in some language, or a model that is sure;
        # never a musing ("maybe run some examples in this repo"), never a task for this turn ("find a way to
        # make the URL always visible", "analyse which folders should be excluded").
        # "should", "need to", "instead" alone are weak signs: most such sentences of the user are a spec, a task
        # or a finding ("… hooks should use 'go run', but settings.json doesn't contain it": a pasted test
        # failure; 3 of 66 labelled are rules), so the model must lean to a rule as well.
        return "hypothesis" not in sig and not gates.one_off(j.text) and not gates.builds_once(j.text) \
            and not gates.planned(j.text) \
            and not own_words.not_a_rule(j.text) and (
            bool(own - WEAK_RULE_SIGNALS) or (bool(own & WEAK_RULE_SIGNALS) and j.p >= 0.5)
            or j.p >= 0.8 or j.how == CORRECTS)
    if j.role == "decision":
        if _MUSING.search(j.text) and "tentative" not in sig:
            return False  # "… and we could have prompts that do several things": a brainstorm, nothing chosen
        if _IF_SO.match(j.text.strip()):
            return False  # "If that's the case we need to rename X to Y": a choice that hangs on what was said before
        if _CONSIDER.search(j.text):
            return False  # "…; consider adding a non-Unix implementation …": a suggestion (a review's), none taken
        acts = ("request" in sig and gates.acts_once(j.text)) or gates.opens_with_an_act(j.text)
        if gates.one_off(j.text) or (acts and not sig & {"decided", "reason", "cause", "tentative"}
                                     and not _IN_ORDER.search(j.text)):
            # "check PRs #221 and #222 and merge them", "open an issue that we need to address this as well": a
            # task for this turn, not a choice (of 27 labelled such orders of users, 2 are decisions: the order
            # of steps, "Merge and deploy the service change first, …")
            return False
        # A choice, not a musing: "I think maybe we should…" is a brainstorm unless it says it was decided.
        return "decided" in sig or "tentative" in sig or ("hypothesis" not in sig and (
            "reason" in sig or "cause" in sig or bool(sig & RULE_SIGNALS) or j.p >= 0.75))
    if j.role == "todo":  # "next time we must…", "later", "下次…": said to be for later (not in what it quotes)
        # never what is asked of this turn ("… Open Items per Checkpoint are empty … could you please check if we
        # parse properly": the agent works on it now; "open items" named a chart)
        return "todo" in own_words.todo_words(j.text) and not (
            "request" in sig and gates.acts_once(j.text) and not _FOR_LATER.search(j.text))
    if j.role == "status":  # where work stands, said; never what is asked of this turn ("check PR #221 and merge it")
        return "request" not in sig and not gates.one_off(j.text)
    return True
