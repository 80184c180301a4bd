"""What a memory draft records of the sentence it rests on: its cue signals, its concepts, and why it was judged
one (the sentence, who said it, where, how and how sure), which the viewer and `kenning show` say."""

from __future__ import annotations

import re

from kenning.memory import cues
from kenning.observer.roles.roles import Judged

_DECISION_NOUN = re.compile(r"\bdecisions?\b", re.IGNORECASE)


def signals_of(text: str) -> frozenset[str]:
    """The cue signals of a sentence, where the noun "decision" alone does not say something was decided
    ("overriding the decision criteria", "a decision tree"): of 24 labelled sentences whose only such cue it
    is, none is a decision."""
    sig = cues.signals(text)
    if "decided" in sig and "decided" not in cues.signals(_DECISION_NOUN.sub(" ", text)):
        return sig - {"decided"}
    return sig


def concepts_of(kind: str) -> list[str]:
    return {"rule": ["pattern"], "decision": ["why-it-exists"], "fact": ["how-it-works"], "todo": ["what-changed"],
            "rootcause": ["problem-solution"], "status": ["what-changed"]}.get(kind, [])


def why_of(j: Judged, where: str, by: str) -> dict[str, object]:
    sig = sorted(cues.signals(j.text) - {"narrate", "request", "praise"})
    how = j.how or (f"judged {j.role} (role model: {j.p:.2f}, worth keeping {j.worth:.2f})"
                    + (f"; cues: {', '.join(sig)}" if sig else ""))
    if j.scope == "user":
        how += "; said to hold for all of the user's work"
    if j.tentative:
        how += "; said to be provisional"
    return {"said": j.text, "by": by, "origin": j.origin, "where": where, "how": how, "sure": round(j.worth, 2)}
