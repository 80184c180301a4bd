"""Sentences of the agent that are no finding of the kind they sound like (DESIGN.md §9): what is said under a
heading over what was wrong is a cause, not a fix; a step the agent reports having taken is no open item; what we
would do, what may be and what happened next are no fix. Each shape was a key memory of a project nobody here
trained on; the counts are of the labelled sentences of the development sessions.
"""

from __future__ import annotations

import re

from kenning.memory import cues
from kenning.observer import gates

# A heading over what was wrong ("What was actually wrong", "Root cause", "Why it broke", "原因"): what is said under
# it is a cause, never the fix (of the labelled sentences under a heading that names a cause, none is a fix).
_WHAT_WAS_WRONG = re.compile(r"^(?:what (?:was|went) (?:actually |really )?wrong|why (?:it|this|that) (?:failed|broke|"
                             r"happened)|ce qui (?:n'allait pas|clochait)|was (?:schief ?(?:lief|ging)|falsch war)|"
                             r"qué (?:fallaba|falló|estaba mal))\b|"
                             # the problem itself, as a label ("**Problem:** Seven files duplicate …"): 0 of 10
                             # labelled sentences under such a heading is a fix
                             r"^(?:the )?(?:problem|issue|bug|symptom|problème|problema|问题|問題|문제)s?\W*$",
                             re.IGNORECASE)


# A label that names the cause of something ("CI lint failure cause", "Root causes"): of the labelled sentences of the
# agent under one, 33 are causes and 10 noise, none a fix
_CAUSE_LABEL = re.compile(r"\b(?:root )?causes?\W*$", re.IGNORECASE)


def heads_a_cause(heading: str) -> bool:
    """Whether a heading says that what is under it is the cause of a problem."""
    return bool(_WHAT_WAS_WRONG.match(heading.strip())) or "cause" in cues.signals(heading) \
        or bool(_CAUSE_LABEL.search(heading.strip()))


# The agent reporting what it did, with the "I" left out ("Then continued one step and clarified that …", "Added the
# flag"): done in that run, never an open item (none of 262 labelled sentences that open so is a to-do). Past
# participles that say the work waits ("Blocked on …", "Deferred: …") are not reports.
_DID = re.compile(r"^(?:then |and |also |next |finally )?(?!(?:blocked|deferred|parked|postponed|paused|needed|"
                  r"required|planned|scheduled|proposed|suggested|unresolved|untested|unverified|unfinished|"
                  r"unimplemented)\b)[a-z]+ed\b(?! (?:by|to|for|on|in|until|because)\b)", re.IGNORECASE)


def reports_an_act(text: str) -> bool:
    """Whether a sentence reports a step the agent took, its subject left out."""
    return bool(_DID.match(text))


# What we would do ("We'd then debug the manifest", "we would capture the branch at …"): a plan or a thought, no
# fix made and no cause found (none of the labelled sentences of the agent so is either). "We'd been …" is "had".
# So is a fix that would be ("The fix would be to set `state.FilesTouched` even when …").
_WOULD = re.compile(r"\b(?:we|you)(?:['’]d(?!\s+(?:been|had|already|never|just)\b)| would)\b|"
                    r"\b(?:fix|solution|workaround|remedy)\s+(?:would|could|might)\s+be\b", re.IGNORECASE)


def would_be(text: str) -> bool:
    """Whether a sentence says what we or you would do, not what was done or found."""
    return bool(_WOULD.search(text))


def guessed(text: str) -> bool:
    """A possibility or a guess ("it may be using the shared workflow's `license_finder`"), not a report of a step
    taken: no fix (1 of the 125 labelled sentences of the agent so is one, itself hedged)."""
    return (gates.possible(text) or "hypothesis" in cues.signals(text)) and not reports_an_act(text)


# A sentence that goes on with the story ("Then three verifiers attacked the fix …", "But two rounds have now …"):
# what happened next, not the change that fixed something (none of 77 labelled sentences of the agent so is a fix).
_NEXT_IN_STORY = re.compile(r"^(?:then|but|and|after that|afterwards|meanwhile|finally)\b[, ]", re.IGNORECASE)


def goes_on_with_the_story(text: str) -> bool:
    """Whether a sentence opens by going on from the one before it (then, but, and, meanwhile …)."""
    return bool(_NEXT_IN_STORY.match(text.strip()))
