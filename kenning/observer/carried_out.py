"""To-dos that a later turn of the same session carried out: the user asked for that very work ("Make a separate
pr" after "… this should be a separate follow-up PR") and the turn committed, pushed or opened a pull request. The
to-do is done: a draft of this call is dropped, a stored row is named as superseded by the turn's work.
"""

from __future__ import annotations

from kenning.memory.text import content_words
from kenning.observer.reading import Reading
from kenning.observer.taken_back import retire, said_of, title_of
from kenning.records import ObservationDraft, SessionInfo

# Words of an order that say nothing of the work asked for ("make", "please", "go ahead")
_ASKING = frozenset(("make", "do", "please", "can", "could", "would", "you", "go", "ahead", "let", "now",
                     "then", "also", "just", "ok", "okay", "yes", "sure", "create", "open", "want", "need", "try"))
SHARED = 2  # words of substance the order and the to-do share at least (and half of the order's)


def _asks_for(words: frozenset[str], todo: frozenset[str]) -> bool:
    """Whether the user's order (its words of substance) asks for the work a to-do names."""
    ask = words - _ASKING
    common = ask & todo
    return len(common) >= SHARED and 2 * len(common) >= len(ask)


class CarriedOut:
    """The session's open to-dos, and the turns that carry them out."""

    def __init__(self, session: SessionInfo) -> None:
        self.items: list[tuple[frozenset[str], ObservationDraft | dict[str, object]]] = [
            (frozenset(content_words(said_of(o))), o) for o in session.prior_observations
            if o.get("kind") == "todo" and o.get("status", "active") == "active"]

    def apply(self, drafts: list[ObservationDraft], r: Reading, earlier: list[ObservationDraft]) -> set[str]:
        """Close the earlier to-dos this turn carried out (their titles are returned); then remember this turn's."""
        asked = r.words.strip()
        worked = bool(r.actions.commits or r.actions.pushed or r.actions.prs)
        closed: set[str] = set()
        if asked and worked and not asked.endswith(("?", "？")):
            words = frozenset(content_words(asked))
            for item in [x for x in self.items if _asks_for(words, x[0])]:
                self.items.remove(item)
                retire(item[1], drafts, r, earlier, next((d for d in drafts if d.kind != "todo"), None), "Done",
                       "Carried out to-do")
                closed.add(title_of(item[1]))
        self.items += [(frozenset(content_words(said_of(d))), d) for d in drafts if d.kind == "todo"]
        return closed
