"""How a memory's title is made from what was said (DESIGN.md §9: a memory names what it rests on): the
statement without its lead-in, the sentence before it when it only points back, the heading, commit or file
it is about when it names nothing; and which sentences cannot stand alone (they point back at what their
title does not take in, or leave their subject to a list item's label).
"""

from __future__ import annotations

import re

from kenning.memory.text import clip
from kenning.observer.reading import Reading
from kenning.observer.roles.roles import Judged

TITLE = 320        # a key memory's title: its subject, the cause and the fix in one line


# "The fix is simple: …", "Fix: …", "The change is done — …": what follows is the statement.
_LEAD_IN = re.compile(r"^(?:(?:the|my|our|a) )?(?:(?:recommended|suggested|proposed|possible|simplest|minimal|"
                      r"temporary|quick) )?(?:fix|fixed|resolved|change|solution|root cause|cause|problem|issue|"
                      r"workaround)"
                      r"(?: (?:is|was|here is|itself))?(?: (?:simple|done|straightforward|clear))?\s*[:—–-]+\s*|"
                      # a word that ties the sentence to the one before ("However, `f` is not called …")
                      r"^(?:however|also|additionally|moreover|furthermore|in addition|that said),\s+|"
                      # the agent saying what it looks at, before what it found ("문제 맥락을 다시 확인합니다: …")
                      r"^[^:：.。]{0,40}(?:확인합니다|확인하겠습니다|살펴보겠습니다|確認します|見てみます|看一下|检查一下)[:：]\s*|"
                      # the agent's interjection ("Good — the implementer noticed …", "Excellent - there's already …")
                      r"^(?:good|great|perfect|excellent|nice|awesome|ok(?:ay)?|alright|right)(?: point| catch| news)?"
                      r"\s*(?:[—–:!]|-(?=\s)|,)\s*",
                      re.IGNORECASE)
# A sentence about something an earlier one named ("This is safe because …", "That made the tests fail",
# "You were getting minimal info"): a fragment on its own, unless its title takes that sentence in front.
_DANGLING = re.compile(r"^(?:this|that|these|those|it|they|you|such)\b|"
                       # the other way to what was said before ("Or if that doesn't work, create the tap by hand":
                       # 7 labelled sentences of the agent open with "Or", all noise)
                       r"^or\b|"
                       # a predicate of what was said before ("Out of scope for this PR but worth filing as a
                       # follow-up", "Worth watching on the first release run": 0 of 3 labelled such are kept)
                       r"^(?:out of scope|(?:probably |also |maybe )?worth (?:\w+ing|a|an|it)\b)|"
                       # the items before it, by how many ("Neither warrants a PR of its own", "Both are needed")
                       r"^(?:neither|either|both|none)(?: of (?:them|these|those|the (?:two|three)))?\s+(?:is|are|was|"
                       r"were|has|have|had|warrants?|needs?|works?|would|will|should|can|could|seems?|looks?|matters?)"
                       r"\b|"
                       r"^(?:at |on |in )?(?:lines?|l)\s*~?\d+\b|"  # "Line ~297 (…): …": a place in a file of that day
                       # a verdict on someone's text, which it does not say ("The diagnosis is credible, but …")
                       r"^(?:the|your|their) (?:diagnosis|analysis|assessment|reasoning|approach|proposal|suggestion|"
                       r"plan|idea|review|explanation|theory) (?:is|seems|looks|sounds) (?:\w+ )?(?:credible|correct|"
                       r"right|sound|valid|plausible|reasonable|good|fine|solid|wrong|incorrect|off)\b|"
                       r"^(?:这|那|它|此|それ|これ|あれ|그것|이것|그래서|이는)", re.IGNORECASE)


NAMED = re.compile(r"`[^`]+`|\b[A-Za-z]+[_-][A-Za-z0-9_-]+\b|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b\w+\.\w{1,5}\b|"
                    r"\b[A-Z]{2,}[A-Z0-9_]*\b|--?\w[\w-]*")
GENERIC_HEADING = re.compile(
    r"^(?:root cause|cause|(?:(?:bug|critical|security|other|additional|minor|major|key|more) )?(?:bug ?)?fix(?:es)?|"
    r"the fix|solution|summary|changes?(?: made)?|what (?:changed|was done|i did)|"
    r"result|findings?|details|overview|why|problem|issue|notes?|verification|review|next steps?|status|gotchas?|"
    r"decisions?|files? changed|原因|根因|修复|修正|결과|원인)\b", re.IGNORECASE)
CONTEXT_CHARS = 70


# A sentence that only points back at the one before it: "That was deliberate: …", "This is why …".
_POINTS_BACK = re.compile(
    r"^(?:that|this|it|these|those)(?:'s|’s)?\s+(?:is|was|were|are|has|had|means?|meant|makes?|made|keeps?|kept|"
    r"would|will|does|did|also|way|why|because|happens?|happened|explains?|matters?|broke|breaks|caused?|causes)\b|"
    r"^(?:that's|this's|it's)\b|^(?:这(?:是|样|就)|那(?:是|样)|这个|因此|所以|それ(?:は|が|で)|これ(?:は|が|で)|"
    r"그것|이것|이는|그래서)|^(?:c'est|cela|ceci|ça)\b|^(?:das|dies(?:es|er)?)\s+(?:ist|war|hat|wird|liegt|bedeutet)\b|"
    r"^(?:esto|eso)\b|^(?:bu|şu|bunun|bunu)\s", re.IGNORECASE)


# A list item that leaves its subject to the item's label ("Uses a 256-byte stack buffer for small records"):
# a verb of the third person first, then what it acts on.
_NO_SUBJECT = re.compile(r"^(?!(?i:always|sometimes|perhaps|thus|besides|unless|postgres|redis|kubernetes)\b)"
                         r"[A-Z][a-z]+[^s\W]s\s+(?:a|an|the|its|their|all|each|every|only|one|two|\d[\w.-]*|`)")


# A short subject doing something to "it" or "them", named only before ("The example config intentionally omits
# it since …"): what it acts on is not said.
_IT_OBJECT = re.compile(r"^(?:(?:the|a|an|our|this|that) )?[\w`./-]+(?: [\w`./-]+){0,3} (?:\w+ly )?"
                        r"(?:omits|includes|sets|uses|adds|removes|keeps|needs|calls|reads|enables|disables|skips|"
                        r"leaves|exposes|ignores|excludes|requires|supports|passes|returns|drops|handles|overrides)"
                        r" (?:it|them)\b", re.IGNORECASE)


def dangling(j: Judged) -> bool:
    """A unit that only makes sense after the sentence before it, which its title does not take in, or that
    leaves its subject to a list item's label, or what it acts on to a pronoun."""
    text = statement(j.text)
    if (_NO_SUBJECT.match(text) and not j.unit.heading) or _IT_OBJECT.match(text):
        return True
    return bool(_DANGLING.match(text)) and not (j.unit.before and _POINTS_BACK.match(clip(text, TITLE))
                                                 and len(j.unit.before) <= TITLE // 2)


def absorbed(j: Judged) -> str:
    """The sentence before ``j`` that its title takes in front, because ``j`` only points back at it."""
    before = j.unit.before
    return before if before and _POINTS_BACK.match(clip(statement(j.text), TITLE)) and len(before) <= TITLE // 2 \
        else ""


def titled(j: Judged, r: Reading, files: list[str]) -> str:
    """The title of a memory of one unit: the statement it makes, naming what it is about."""
    return self_contained(clip(statement(j.text), TITLE), j.unit.heading, r, files, j.unit.before,
                          work=j.role in ("rootcause", "fix", "change"))


def self_contained(title: str, heading: str, r: Reading, files: list[str], before: str = "",
                   work: bool = True) -> str:
    """A title that names what it is about (§9: a memory names what it rests on): one that only points
    back ("That was deliberate: …") gets the sentence it points at in front; one that names nothing
    (no identifier, file, command or setting) gets the specific heading it was said under, else (for a
    cause, a fix or a change: ``work``) the turn's commit, else the file it changed, in front. A gotcha or
    a fact is about the code, not about the commit that happened to be made in its turn."""
    if before and _POINTS_BACK.match(title) and len(before) <= TITLE // 2:
        return clip(f"{before.rstrip()} {title}", TITLE)
    specific = bool(heading) and not GENERIC_HEADING.match(heading) and len(heading) <= CONTEXT_CHARS
    if specific and (title[:1].islower() or _NO_SUBJECT.match(title)) and heading.lower() not in title.lower():
        # a list item that goes on from its label ("**More prominent buttons** — larger text, bigger icons"),
        # or leaves its subject to it ("**Encoder**: Uses a 256-byte stack buffer"): the label first
        return clip(f"{heading}: {title}", TITLE)
    if NAMED.search(title):
        return title
    about = ""
    if specific:
        about = heading
    elif work and r.actions.commits:
        about = clip(r.actions.commits[-1].subject, CONTEXT_CHARS)
    elif len(files) == 1:
        about = files[0]
    return clip(f"{about}: {title}", TITLE) if about and about.lower() not in title.lower() else title


def statement(text: str) -> str:
    """A unit's text without a lead-in that only announces it ("The fix is simple: …")."""
    out = _LEAD_IN.sub("", text, count=1)
    return out[:1].upper() + out[1:] if out and out is not text else text


def lower_first(s: str) -> str:
    first = s.split(" ", 1)[0]
    return s[0].lower() + s[1:] if first.isalpha() and first[1:].islower() else s
