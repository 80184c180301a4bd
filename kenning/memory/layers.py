"""Which layer a memory belongs to, and how much it matters.

Three layers, given back differently:

* ``rule``: standing rules and preferences ("we use pnpm", "never edit generated files, run
  make proto"): always in the session-start context, within their own budget, newest only;
* ``key``: decisions with their reasons, facts, gotchas, root causes and fixes, security notes,
  where a workstream stands: ranked by importance, never displaced by routine work;
* ``log``: the session log (routine edits, explored files): by recency, the first to leave.

The layer follows from the type and what the text says, the same way for every observer:
a decision that prescribes how to work from now on is a rule; one that records a choice and
its reason is key; a discovery is key unless all it says is which files were read; a change
is key when it states a root cause or a reason, log otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kenning.memory.subjects import is_status

RULE, KEY, LOG = "rule", "key", "log"
LAYERS = (RULE, KEY, LOG)

# Prescriptive: how to work from now on.
_PRESCRIPTIVE = re.compile(
    r"\b(?:always|never|must(?:n't| not)?|should(?:n't| not)?|do not|don'?t|avoid|prefer(?:s|red)?|"
    r"stick (?:to|with)|from now on|going forward|make sure|remember to|only (?:use|run|edit)|"
    r"(?:we|i) (?:use|prefer|always|never|only|run|keep|want)|use\s+\S+|run\s+\S+|keep\s+\S+|"
    r"no more|not allowed|required|is forbidden|by hand|instead of|rather than|"
    r"(?:is|are) (?:the|our) (?:standard|convention|default|rule)|convention|policy|house style)\b",
    re.IGNORECASE)
# A choice and its reason (a decision that is not a standing rule).
_CHOICE = re.compile(r"\b(?:chose|chosen|choose|decided|decision|went with|picked|settled on|opted|selected|"
                     r"trade-?off|we will|we'll|plan is)\b", re.IGNORECASE)
REASON = re.compile(r"\b(?:because|since|so that|due to|in order to|otherwise|the reason|reason:|that's why|"
                    r"which is why|as it|as they|to avoid|to keep|to prevent|caused by|root cause|the cause|"
                    r"came from|was due|turned out|it was|were being)\b", re.IGNORECASE)
ROOT_CAUSE = re.compile(r"\b(?:root cause|the cause|caused by|because|came from|was due to|turned out|"
                        r"the (?:problem|issue|bug|crash|error|failure) was|was (?:missing|ignoring|using|not)|"
                        r"ignored|ignores|forgot|fixed by|the fix(?: was| is)?|raising|lowering|setting)\b",
                        re.IGNORECASE)
_GOTCHA = re.compile(r"\b(?:gotcha|careful|watch out|beware|note that|requires?|needs?|only works|must be set|"
                     r"fails (?:unless|when|if|without)|breaks (?:when|if|unless)|otherwise|workaround|"
                     r"flaky|intermittent|environment|env var|locale|timezone|TZ=|PATH)\b", re.IGNORECASE)
_EXPLORED = re.compile(r"^(?:Explored|Read|Looked at|Searched)\b")

KEY_TYPES = ("bugfix", "security_alert", "security_note", "sensitive")
CHANGE_TYPES = ("feature", "change", "refactor")


def is_rule_text(text: str) -> bool:
    """Whether a decision's text prescribes how to work (a standing rule or preference)."""
    return bool(_PRESCRIPTIVE.search(text or "")) and not _CHOICE.search(text or "")


# The layer and importance of a memory whose role the observer judged (DESIGN.md §9): standing rules
# always; causes, gotchas, decisions, open to-dos and durable facts by importance; routine work in the log.
KIND_LAYERS: dict[str, tuple[str, int]] = {
    "rule": (RULE, 8), "preference": (RULE, 8),
    "rootcause": (KEY, 8), "gotcha": (KEY, 8), "fix": (KEY, 7), "decision": (KEY, 6), "todo": (KEY, 7),
    "security": (KEY, 9), "status": (KEY, 5), "fact": (KEY, 5),
    "change": (LOG, 2), "answer": (LOG, 2), "note": (LOG, 3), "explored": (LOG, 1),
    # A rule the agent proposed (the MCP save_memory tool): never a rule by itself, only once the user pins it.
    "proposed": (KEY, 5),
}


def classify(type_: str, title: str, *, facts: Sequence[str] = (), narrative: str = "", concepts: Sequence[str] = (),
             subtitle: str = "", kind: str = "") -> tuple[str, int]:
    """(layer, importance 0-10) of one observation."""
    if kind in KIND_LAYERS:
        layer, importance = KIND_LAYERS[kind]
        if type_ == "security_alert":
            return KEY, 9
        return layer, importance
    text = " ".join([title, subtitle, *facts])
    concepts = [c.lower() for c in concepts]
    explains = bool(REASON.search(text) or ROOT_CAUSE.search(text))
    if type_ == "decision":
        if is_status(title):
            return KEY, 6
        if is_rule_text(title) or ("pattern" in concepts and not _CHOICE.search(title)):
            return RULE, 8
        return KEY, 6 + (2 if explains else 0)
    if type_ in KEY_TYPES:
        base = {"security_alert": 9, "security_note": 6, "sensitive": 5, "bugfix": 6}[type_]
        return KEY, min(10, base + (2 if explains else 0))
    if type_ == "discovery":
        if _EXPLORED.match(title) and not explains and "gotcha" not in concepts:
            return LOG, 1
        gotcha = "gotcha" in concepts or bool(_GOTCHA.search(text))
        return KEY, min(10, 4 + (2 if gotcha else 0) + (2 if explains else 0))
    if type_ in CHANGE_TYPES:
        if explains and ("problem-solution" in concepts or "why-it-exists" in concepts or ROOT_CAUSE.search(text)):
            return KEY, 5
        return LOG, 2 if type_ == "feature" else 1
    return KEY, 3  # a type of a user's own mode: kept, never hidden behind routine work
