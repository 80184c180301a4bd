"""What the agent explained in its own words: root causes, fixes, reasons, gotchas, outcomes.

Read from the agent's text of a turn (its messages along the way, from the transcript, and its
last message, from the Stop payload). Each sentence that states something worth knowing later
is sorted into one kind; planning ("Let me look at…"), questions and pleasantries are not.
The observers attach these sentences to the observation of the turn they belong to, or make
an observation of their own from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kenning.memory.subjects import is_status
from kenning.memory.text import capitalised, clip, sentences

MAX_SENTENCE = 320

CAUSE = re.compile(
    r"\b(?:root cause|the cause|caused by|because|was due to|due to|came from|comes from|turned out|"
    r"the (?:problem|issue|bug|crash|error|failure|culprit|reason)s? (?:was|is|were|are)|"
    r"(?:was|were|is|are) (?:missing|ignoring|ignored|using|not|never|wrong|stale|empty|null|none)|"
    r"ignored|ignores|wasn'?t|weren'?t|didn'?t|doesn'?t|forgot to|never (?:set|called|passed|reset))\b",
    re.IGNORECASE)
FIX = re.compile(
    r"\b(?:fixed (?:it |this )?by|the fix (?:was|is)|fix(?:es|ed)? (?:it|this|the)|solved|resolved|"
    r"(?:raising|lowering|setting|adding|removing|changing|bumping|pinning|switching|passing|increasing|"
    r"decreasing|upgrading|downgrading|restarting|clearing)\b.*\b(?:fix(?:ed|es)?|solv(?:ed|es)|resolv(?:ed|es)|"
    r"works?|passes|passed)|now (?:works|passes|pass|returns|handles|includes|uses|succeeds)|"
    r"makes? (?:it|them|this|the [\w-]+) (?:pass|work|succeed))\b", re.IGNORECASE)
GOTCHA = re.compile(
    r"\b(?:needs?|requires?|must (?:be|have|run)|only works|won'?t work|fails? (?:unless|without|when|if)|"
    r"breaks? (?:unless|without|when|if)|make sure|remember to|note that|careful|gotcha|workaround|"
    r"otherwise it|has to be|have to be|is required)\b", re.IGNORECASE)
REASON = re.compile(r"\b(?:i|we)\s+(?:chose|used|went with|picked|decided|opted|kept|avoided|prefer(?:red)?)\b.*"
                    r"\b(?:because|since|so that|to avoid|to keep|as it|as they|instead of)\b|"
                    r"\b(?:that|this|it) (?:was|is) (?:deliberate|intentional|on purpose|by design)\b|"
                    r"\bso (?:that )?(?:the|we|it|they|each|every)\b.*\b(?:have to|has to|must|need to|needs to)\b",
                    re.IGNORECASE)
OUTCOME = re.compile(
    r"^(?:fixed|added|implemented|changed|updated|refactored|removed|renamed|moved|created|wrote|made|switched|"
    r"migrated|replaced|extracted|split|merged|converted|rewrote|deleted|introduced|enabled|disabled|bumped)\b|"
    r"\b(?:now (?:works|passes|returns|handles|includes|uses|supports|succeeds|rounds|raises|accepts|rejects))\b",
    re.IGNORECASE)
_PLANNING = re.compile(
    r"^(?:let me|let's|i'll|i will|i'm going to|i am going to|now i'll|now let me|next,? i|first,? i|first,? let|"
    r"looking at|i need to|i should|i'd|i would|i can|i see|i found the|here(?:'s| is)|ok|okay|sure|great|"
    r"perfect|alright|all done|done|now,? |checking|reading|running|searching)\b", re.IGNORECASE)
_MARKDOWN = re.compile(r"\*\*|__|^#+\s*")
# A status the agent reports, not a mention: "paused the billing migration", "the refactor is done".
_STATUS_CHANGE = re.compile(r"\b(?:paused|pausing|on hold|resumed|resuming|blocked|unblocked|postponed|shelved|"
                            r"parked|finished|completed|shipped|(?:is|are) (?:done|live|finished|complete))\b",
                            re.IGNORECASE)


@dataclass
class Explained:
    causes: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    gotchas: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)  # where a piece of work stands now

    @property
    def empty(self) -> bool:
        return not (self.causes or self.fixes or self.gotchas or self.reasons)

    def facts(self, limit: int = 5) -> list[str]:
        """The sentences worth keeping, causes and fixes first, each once."""
        out: list[str] = []
        for s in (*self.causes, *self.fixes, *self.gotchas, *self.reasons):
            if s not in out:
                out.append(s)
        return out[:limit]

    def headline(self) -> str:
        """The one sentence that says what was found or done (for a title)."""
        for pool in (self.causes, self.fixes, self.gotchas, self.reasons):
            if pool:
                return pool[0]
        return ""


def explain(texts: list[str]) -> Explained:
    """Sort the sentences of the agent's texts of one turn into what they explain."""
    out = Explained()
    seen: set[str] = set()
    for text in texts:
        for raw in sentences(text):
            s = _MARKDOWN.sub("", raw).strip().rstrip(":")
            if not s or s in seen or s.endswith("?") or len(s) > MAX_SENTENCE or len(s.split()) < 4:
                continue
            seen.add(s)
            outcome = bool(OUTCOME.search(s))
            fix = bool(FIX.search(s))
            if _PLANNING.match(s) and not (outcome or fix):
                continue
            s = capitalised(s)
            if is_status(s) and _STATUS_CHANGE.search(s):
                out.statuses.append(s)
                continue
            if REASON.search(s):
                out.reasons.append(s)
            elif CAUSE.search(s):
                out.causes.append(s)
            elif fix:
                out.fixes.append(s)
            elif GOTCHA.search(s):
                out.gotchas.append(s)
            if outcome:
                out.outcomes.append(s)
    return out


def outcome_title(ex: Explained, limit: int = 140) -> str:
    """The first outcome the agent stated ("cache_key() now includes tenant_id"), clipped."""
    return clip(ex.outcomes[0].rstrip("."), limit) if ex.outcomes else ""
