"""What a unit says, as the observer judges it: its role, how sure the model is, and its flags.

Roles (DESIGN.md §9): ``rule`` (a durable instruction about how to work), ``decision`` (a choice,
with its reason), ``rootcause``, ``fix``, ``change`` (routine work), ``gotcha``, ``todo`` (an open
item), ``status`` (where work stands), ``fact`` (a durable fact about the project), ``noise``.

The model proposes; explicit signals dispose where the definitions are strict: a question is never
a rule or decision; a rule comes only from the user's own words (never from a plan the agent wrote
or a scripted prompt); "for every project" must be said for a rule to hold everywhere; a decision
is tentative only when it says it is provisional.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.memory import cues
from kenning.observer.roles.features import features
from kenning.observer.roles.model import load
from kenning.observer.units import Unit

ROLES = ("rule", "decision", "rootcause", "fix", "change", "gotcha", "todo", "status", "fact", "noise")
# Worth remembering beyond the session log: what the definitions call key (and rules).
WORTH = ("rule", "decision", "rootcause", "fix", "gotcha", "todo", "fact")
USER_WORDS = ("typed", "queued", "rejection", "")  # prompts the user wrote (not a plan, not a script)


@dataclass(frozen=True)
class Judged:
    unit: Unit
    role: str
    p: float                 # the model's probability of that role
    speaker: str
    origin: str
    scope: str = "project"   # "user": an instruction for all of the user's work
    tentative: bool = False
    worth: float = 0.0       # the model's probability that it is worth keeping at all (any role of WORTH)
    how: str = ""            # judged by something else than the model alone (said in ``why``)
    message: int = 0         # which of the turn's texts it is in (the agent's, in order)

    @property
    def text(self) -> str:
        return self.unit.text


def said_signals(unit: Unit, speaker: str) -> frozenset[str]:
    """The cue signals of what was said: the user's run-in label is said too ("In allen Projekten: antworte mir auf
    Deutsch" holds in every project)."""
    sig = cues.signals(unit.text)
    return sig | cues.signals(unit.heading) if speaker == "user" and unit.label else sig


def judge(unit: Unit, *, speaker: str, origin: str, last: bool = False) -> Judged:
    """The role of one unit said by ``speaker`` ("user" / "agent") in a message of ``origin``."""
    model = load()
    text = unit.text
    sig = said_signals(unit, speaker)
    if model is None:
        probs = _fallback(sig, speaker)
    else:
        probs = model.probabilities(features(text, unit.heading, speaker=speaker, origin=origin, bullet=unit.bullet,
                                             label=unit.label, first=unit.index == 0, last=last))
    role = max(probs, key=lambda r: probs[r])
    worth = sum(probs.get(r, 0.0) for r in WORTH)
    if worth >= 0.5 and role not in WORTH:
        # Held out, the model spreads a keeper's probability over several roles (a cause or a fix?)
        # while noise alone can still come first: worth keeping decides, then the likeliest such role.
        role = max(WORTH, key=lambda r: probs.get(r, 0.0))
    if "question" in sig and role in ("rule", "decision", "todo", "status", "fact"):
        role = "noise"
    if role == "rule" and (speaker != "user" or origin not in USER_WORDS):
        role = "decision" if origin == "plan" and "decided" in sig else "noise" if speaker == "user" else role
    scope = "user" if role == "rule" and "user_scope" in sig else "project"
    tentative = role in ("rule", "decision") and "tentative" in sig
    return Judged(unit, role, probs.get(role, 0.0), speaker, origin, scope, tentative, worth)


def _fallback(sig: frozenset[str], speaker: str) -> dict[str, float]:
    """Roles from the cue signals alone (no model file): cautious, most things are noise."""
    role = "noise"
    if "question" in sig or "narrate" in sig:
        role = "noise"
    elif speaker == "user" and ("always" in sig or "prohibit" in sig or "must" in sig) and "request" not in sig:
        role = "rule"
    elif "cause" in sig:
        role = "rootcause"
    elif "fix" in sig:
        role = "fix"
    elif "gotcha" in sig:
        role = "gotcha"
    elif "decided" in sig:
        role = "decision"
    elif "todo" in sig:
        role = "todo"
    return {r: (0.6 if r == role else 0.4 / (len(ROLES) - 1)) for r in ROLES}
