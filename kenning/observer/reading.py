"""Reading one turn: who said what (each unit judged), and what the commands did.

The user's own words (typed, queued while the agent worked, or said while rejecting a tool call)
are where rules, decisions and corrections come from; a plan the agent wrote and the user accepted
("Implement the following plan:") is the agent's words, read like its other texts; a scripted
(headless) prompt and the notifications the harness sends are nobody's words. The agent's texts
are read along the way and at the end: its last message is its conclusion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from kenning.memory.text import content_words, jaccard
from kenning.observer import evidence, git_actions, ide_request
from kenning.observer.relayed import Relayed, quoted, seen_texts
from kenning.observer.roles.roles import Judged, judge, said_signals
from kenning.observer.transcript import words_of
from kenning.observer.units import Unit, units
from kenning.records import Event

PLAN_PREFIX = re.compile(r"^\s*implement the following plan\s*:?", re.IGNORECASE)
NOT_TYPED = ("<task-notification>", "<command-", "<local-command", "<bash-", "<system-reminder>",
             "Another Claude session sent a message", "<agent-message", "This session is being continued")
USER_ORIGINS = ("typed", "queued", "rejection")
MAX_UNITS = 400  # of one turn's texts: a turn that says more is mostly pasted output
# Units of a user's message that is mostly brought in (a review, an issue, a report they paste), not said:
# of 202 labelled units of such typed prompts in real sessions, 2 are facts or causes.
LONG_PROMPT = 12
# The user's words that hand over someone else's ("what do you think of this?", "I spoke with my other agent and he
# had this to say", "this is the research below:"): what follows in that message is the other author's (a plan, an
# answer, research), and nothing of it is the user's rule, decision or to-do. Read in a message's first two units.
_OTHERS_WORDS = re.compile(
    r"\bwhat do you (?:think|make) (?:of|about) (?:this|these|that|it|the following)\b|"
    r"\b(?:had|has|have) (?:this|the following) to say\b|"
    r"\b(?:research|plan|review|feedback|output|proposal|notes?|summary|report|analysis|response|answer|reply|"
    r"suggestions?|message)\s+(?:is\s+|are\s+)?below\b|\bbelow is\b|\bsee below\b|"
    r"\b(?:from|by|of) (?:my |another |the other |a different |an ?other )(?:agent|session|claude|codex|gemini|llm|"
    r"model|reviewer|colleague|teammate)\b|"
    r"\b(?:my|another|the other) (?:other )?(?:agent|claude|codex|gemini|session|reviewer|colleague)\b[^.?!]{0,60}"
    r"\b(?:said|says|wrote|writes|suggests?|suggested|had|thinks?|came up with|proposed|proposes)\b|"
    r"你怎么看|你觉得(?:这|以下)|以下是(?:另一个|别的)|另一个(?:agent|会话|模型)|どう思(?:う|います)|別のエージェント|"
    r"어떻게 생각|다른 에이전트", re.IGNORECASE)
OTHERS_AFTER = 3  # at least this many units after the words that hand them over
_PLAN_TITLE = re.compile(r"^\s*#\s*(?:plan\s*[:：-]\s*)?(.+)$", re.IGNORECASE | re.MULTILINE)


@dataclass
class Reading:
    """One turn, read."""

    prompt: str = ""
    origin: str = ""                 # typed | queued | rejection | plan | headless | agent | notification | ""
    words: str = ""                  # all the user's own words in the turn (its prompt, what they typed in it)
    user: list[Judged] = field(default_factory=list)    # the user's own words
    plan: list[Judged] = field(default_factory=list)    # an accepted plan (the agent's words)
    agent: list[Judged] = field(default_factory=list)   # the agent's texts, oldest first
    commands: list[evidence.Command] = field(default_factory=list)
    actions: git_actions.Actions = field(default_factory=git_actions.Actions)
    interrupted: bool = False
    plan_title: str = ""
    relays: Relayed = field(default_factory=lambda: Relayed([]))  # the agent's sentence only relays a tool's words
    brought: list[Judged] = field(default_factory=list)  # the user's units of a message that is mostly brought in
    pasted: list[str] = field(default_factory=list)  # sentences of the user's messages that quote a tool's text

    def found(self, *roles: str, final_only: bool = False, min_p: float = 0.0) -> list[Judged]:
        """The agent's units of these roles (its last message first), each said once."""
        pool = [j for j in self.agent if j.role in roles and j.p >= min_p and (not final_only or j.origin == "final")]
        pool.sort(key=lambda j: (j.origin != "final", -j.p))
        return distinct(pool)


def handed_over(message: list[Judged]) -> list[Judged]:
    """The units of a user's message after words that hand over someone else's ("hey I spoke with my other agent
    about this issue and he had this to say. does this change anything for us?" over its answer, "what do you think
    of this?" over a plan): not the user's."""
    for k, j in enumerate(message[:2]):
        if len(message) - k - 1 >= OTHERS_AFTER and _OTHERS_WORDS.search(j.text):
            return message[k + 1:]
    return []


def origin_of(prompt_event: Event | None) -> str:
    if prompt_event is None:
        return ""
    p = prompt_event.payload
    raw = p.get("prompt")
    text = raw if isinstance(raw, str) else ""
    declared = p.get("prompt_origin")
    if isinstance(declared, str) and declared:
        return declared
    if text.lstrip().startswith(NOT_TYPED):
        return "notification"
    if PLAN_PREFIX.match(text):
        return "plan"
    return "typed"


def read_turn(prompt: Event | None, events: list[Event], stop: Event | None, texts: list[str]) -> Reading:
    """Judge every unit of the turn's prompt and of the agent's ``texts`` (its last message last)."""
    r = Reading()
    messages: list[list[Judged]] = []  # the user's units, message by message
    if prompt is not None:
        raw = prompt.payload.get("prompt")
        r.prompt = raw if isinstance(raw, str) else ""
        r.origin = origin_of(prompt)
        if r.origin in USER_ORIGINS:
            r.words = ide_request.request(r.prompt)  # (what an editor attached in front of them is not theirs)
            r.user = judge_user(r.words, r.origin)
            messages.append(list(r.user))  # (a copy: the words said later in the turn are added to r.user)
            r.brought = list(r.user) if len(r.user) >= LONG_PROMPT else []
        elif r.origin == "plan":
            body = PLAN_PREFIX.sub("", r.prompt, count=1)
            m = _PLAN_TITLE.search(body)
            r.plan_title = m.group(1).strip() if m else ""
            r.plan = [judge(u, speaker="user", origin="plan") for u in units(body)[:MAX_UNITS]]
    # Typed while the agent worked, or said refusing a tool call: the user's words too (an imported
    # turn holds them as prompts of their own; a live one's Stop brings them from the transcript).
    said = [(origin, e.payload["prompt"]) for e in events if e.kind == "UserPromptSubmit"
            and isinstance(e.payload.get("prompt"), str) and (origin := origin_of(e)) in USER_ORIGINS]
    said += words_of(stop.payload) if stop is not None else []
    for origin, text in said:
        text = ide_request.request(text)
        judged = judge_user(text, origin)
        messages.append(judged)
        r.user += judged
        r.brought += judged if len(judged) >= LONG_PROMPT else []
        r.words = (r.words + "\n" + text).strip()
    budget = MAX_UNITS
    for k, text in enumerate(texts):
        last = k == len(texts) - 1
        for u in units(text):
            if budget <= 0:
                break
            budget -= 1
            j = judge(u, speaker="agent", origin="final" if last else "progress", last=last)
            r.agent.append(replace(j, message=k))
    tools = [e for e in events if e.kind in ("PostToolUse", "PostToolUseFailure")]
    r.commands = [c for c in (evidence.command(e) for e in tools) if c is not None]
    seen = seen_texts(tools)
    r.relays = Relayed(seen)
    # Pasted, then looked up (a PR's description the user quotes to criticise): the quoted text's words,
    # not the user's.
    pasted = {id(m[i]) for m in messages for i in quoted([j.text for j in m], seen)}
    pasted |= {id(j) for m in messages for j in handed_over(m)}
    if pasted:
        r.pasted = [j.text for j in r.user if id(j) in pasted]
        r.user = [j for j in r.user if id(j) not in pasted]
        r.brought = [j for j in r.brought if id(j) not in pasted]
    r.actions = git_actions.read(r.commands)
    r.actions.merged += git_actions.said_merged(r.words)  # "1066 is merged": the user saw it merged
    r.interrupted = bool(stop is not None and stop.payload.get("interrupted"))
    return r


def judge_user(text: str, origin: str) -> list[Judged]:
    """The user's words, a clause at a time where ";" joins two statements ("don't touch the API; the
    export stays a plain module for now") but not where it joins a correction to what replaces it
    ("`make test` is gone; run `just test`")."""
    from kenning.observer.stated import _clauses

    out: list[Judged] = []
    span, cursor = pasted_trace(text), 0
    for u in units(text)[:MAX_UNITS]:
        if span is not None:
            at = text.find(u.text[:20], cursor)
            cursor = at if at >= 0 else cursor
            if cursor + len(u.text) > span[0] and cursor < span[1]:
                continue  # the program's output, not the user's words (what they write after the trace is)
        parts = _clauses(u.text) if ";" in u.text else [u.text]
        said = [p for p in parts if not _OWN_NEXT_STEP.match(p)]
        if 0 < len(said) < len(parts):
            # "don't add a CLI — the API is the interface; I'll point the customer at …": what the user
            # will do next themselves is no part of the statement (nor a memory of its own)
            u, parts = replace(u, text="; ".join(said)), said
        whole = standing(judge(u, speaker="user", origin=origin))
        # "Don't touch the API; the export stays a plain module for now": said to hold for now, the
        # sentence is one provisional decision; its restriction alone would read as a standing rule.
        if len(parts) > 1 and not whole.tentative and all(len(p.split()) >= 3 for p in parts):
            each = [standing(judge(Unit(p, u.heading, u.index, u.bullet, u.label, u.table), speaker="user",
                                   origin=origin)) for p in parts]
            if sum(1 for j in each if j.role != "noise") >= 2:
                out += each  # two statements ("don't touch the API; the export stays a module for now")
                continue
        out.append(whole)  # one ("never edit api_pb2.py by hand; run `make proto` instead")
    return out


# A stack trace the user pastes: two frames or more ("    at TreeNodeRenderer (http://localhost:3000/c.js:33190:27)",
# '  File "app.py", line 3, in main', "   3: 0x10f2a…", "#4 0x…"). From the log line it starts with on ("Warning:
# Encountered two children with the same key …", "Error: …", "Traceback …"), the message is the program's output,
# never the user's rule or decision (all 56 labelled units of such messages in the real sessions are noise); what
# they write after its last frame is theirs again.
_FRAME = re.compile(r"^\s+at \S|^\s*File \"[^\"\n]+\", line \d+|^\s*\d+: 0x[0-9a-f]+|^\s*#\d+ 0x[0-9a-f]+",
                    re.MULTILINE)
_LOG_START = re.compile(r"(?:\bwarn(?:ing)?|arning|\berror|\bexception|\btraceback|\bpanic(?:ked)?|\bfatal)\b\s*[:(]|"
                        r"^\s+at \S|^\s*File \"", re.IGNORECASE | re.MULTILINE)


def pasted_trace(text: str) -> tuple[int, int] | None:
    """Where a pasted stack trace lies in a user's message: from its log line to the end of its last frame's line
    (None when the message holds none)."""
    frames = list(_FRAME.finditer(text or ""))
    if len(frames) < 2:
        return None
    m = _LOG_START.search(text, 0, frames[0].end())
    end = text.find("\n", frames[-1].end())
    return (m.start() if m else frames[0].start()), (len(text) if end < 0 else end)


# A clause in which the user says what they will do themselves next ("I'll tell the team", "我去问一下").
_OWN_NEXT_STEP = re.compile(r"^\s*(?:(?:and|then|also|but)\s+)?(?:i(?:['’]ll| will| am going to|['’]m going to)\b|"
                            r"je vais\b|ich werde\b|voy a\b|我(?:会|去|来)|제가\s)", re.IGNORECASE)
DURABLE = frozenset({"always", "convention", "user_scope"})
NOT_STANDING = frozenset({"question", "hypothesis", "request", "narrate", "praise"})


_PREMISE = re.compile(r"^(?:(?:please|and|also)\s+)?(?:assume|keep in mind|bear in mind|be aware|remember that|"
                      r"for context|partez du principe|gehe? davon aus|beachte|asume|ten en cuenta)\b|"
                      r"^(?:假设|假定|请注意|注意|记住|前提是|前提として|念頭に|참고로|가정하)", re.IGNORECASE)


def standing(j: Judged) -> Judged:
    """The user's sentence the model calls noise but that says, in cue words, how to work from now on
    ("run the tests with `make test` before every commit", "we use npm for installs"): a rule when the
    grammar of rules agrees and nothing says it is a question, a musing or a request."""
    from dataclasses import replace

    from kenning.memory.cues import english
    from kenning.observer.stated import statements

    if j.role != "noise" or j.speaker != "user":
        return j
    sig = said_signals(j.unit, j.speaker)
    if _PREMISE.match(j.text.strip()) and "question" not in sig and (len(j.text.split()) >= 3 or
                                                                       (not j.text.isascii() and len(j.text) >= 6)):
        # "Assume thousands of nodes", "Keep in mind that prod runs on ARM", "假设每个集群有上千个节点": a premise
        # the user gives the work, which the next session must start from too
        return replace(j, role="fact", p=max(j.p, 0.55), worth=max(j.worth, 0.55), how="a premise the user gave")
    # ("please" in what holds in every project is politeness, not a request for this turn)
    if not (sig & DURABLE) or sig & (NOT_STANDING - ({"request"} if "user_scope" in sig else set())):
        return j
    if english(j.text) and not any(kind == "rule" for kind, _s in statements(j.text)):
        return j  # (the grammar of rules reads English; elsewhere the cue words alone say it)
    if not english(j.text) and not sig & {"always", "must", "prohibit", "user_scope"}:
        return j
    return replace(j, role="rule", p=max(j.p, 0.5), worth=max(j.worth, 0.5), scope="user" if "user_scope" in sig
                   else "project", tentative="tentative" in sig, how="cue words of a standing rule")


def distinct(items: list[Judged], threshold: float = 0.6) -> list[Judged]:
    """Items without the ones that say again what an earlier one said (word overlap)."""
    out: list[Judged] = []
    seen: list[set[str]] = []
    for j in items:
        words = content_words(j.text)
        if not words or any(jaccard(words, s) >= threshold for s in seen):
            continue
        seen.append(words)
        out.append(j)
    return out
