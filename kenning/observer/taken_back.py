"""What a later turn of the same session takes back: a revert (``git revert``, changes discarded, the
user asking to undo the last change) makes a fix or change no longer one; a fix after the user said
the last one did not work replaces it; the same cause, gotcha or decision said again replaces the
earlier memory of it. Drafts of the current call are dropped; stored rows are named as superseded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.memory.text import clip, content_words, jaccard, strings
from kenning.observer.reading import Reading
from kenning.records import ObservationDraft, SessionInfo

_DID_NOT_WORK = re.compile(r"\b(?:still|again|didn'?t (?:work|help|fix)|doesn'?t work|not fixed|same (?:error|issue|"
                           r"problem)|no change)\b|还是|仍然|依然|没有解决|まだ|直っていない|여전히|아직도",
                           re.IGNORECASE)
_REVERT_SAID = re.compile(r"\b(?:revert(?:ed)?|undo|undid|roll(?:ed)? back|rolled back|back out|backed out)\b|"
                          r"撤销|回滚|还原|元に戻|되돌", re.IGNORECASE)


@dataclass
class Done:
    """A fix or change of this session that a later turn may take back."""

    item: ObservationDraft | dict[str, object]
    files: set[str]
    turn: int
    committed: bool = False

    def mentions(self, commit: str) -> bool:
        facts = self.item.facts if isinstance(self.item, ObservationDraft) else strings(self.item.get("facts"))
        return any(commit[:7] in f for f in facts) if commit[:1].isalnum() and len(commit) >= 7 else False


class Undoable:
    def __init__(self, session: SessionInfo) -> None:
        self.items = [Done(o, set(strings(o.get("files_modified"))), -1, committed=True)
                      for o in session.prior_observations
                      if o.get("kind") in ("fix", "rootcause", "change") and o.get("status", "active") == "active"]
        self.turn = 0

    def apply(self, drafts: list[ObservationDraft], r: Reading, earlier: list[ObservationDraft]) -> set[str]:
        """A revert takes back what it undoes (the commit it names; changes not committed yet; what the user
        asks to revert: the last turn's); a fix after the user said the last one did not work replaces that
        one. Drafts of this call are dropped from ``earlier``; stored rows are named as superseded."""
        self.turn += 1
        user = bool(r.words) and not r.words.rstrip().endswith(("?", "？"))
        new_fix = next((d for d in drafts if d.kind in ("fix", "rootcause")), None)
        undone: list[Done] = []
        for commit in r.actions.reverted:
            named = [d for d in self.items if d.mentions(commit)]
            undone += named or [d for d in self.items if d.committed][-1:]
        if r.actions.discarded:
            undone += [d for d in self.items if not d.committed]
        if user and _REVERT_SAID.search(r.words) and not undone:
            last = max((d.turn for d in self.items), default=None)
            undone += [d for d in self.items if d.turn == last and last is not None and last >= 0]
        if user and new_fix is not None and _DID_NOT_WORK.search(r.words):
            undone += [d for d in self.items if d.files & set(new_fix.files_modified)
                       and (d.item.kind if isinstance(d.item, ObservationDraft) else d.item.get("kind"))
                       in ("fix", "rootcause")]
        titles: set[str] = set()
        for d in dict.fromkeys(id(x) for x in undone):
            done = next(x for x in undone if id(x) == d)
            if done in self.items:
                self.items.remove(done)
            retire(done.item, drafts, r, earlier, new_fix, "Reverted", "Took back")
            titles.add(title_of(done.item))
        if r.actions.commits:
            for item in self.items:
                item.committed = True
        self.items += [Done(d, set(d.files_modified), self.turn, committed=bool(r.actions.commits))
                       for d in drafts if d.kind in ("fix", "rootcause", "change")]
        return titles


def retire(old: ObservationDraft | dict[str, object], drafts: list[ObservationDraft], r: Reading,
           earlier: list[ObservationDraft], target: ObservationDraft | None, label: str, fact: str) -> None:
    """What a later turn made no longer true: a draft of this call is dropped from ``earlier``; a stored row is named
    as superseded by ``target``, or by a change row "<label>: <its title>" (fact "<fact> #<id>") when there is none."""
    if isinstance(old, ObservationDraft):
        if old in earlier:
            earlier.remove(old)
        return
    oid = old.get("id")
    if not isinstance(oid, int):
        return
    if target is None:
        at = max((c.at for c in r.commands), default=0.0)
        target = ObservationDraft(type="change", title=clip(f"{label}: {old.get('title')}", 200), created_at=at,
                                  kind="change", facts=[f"{fact} #{oid}"])
        drafts.append(target)
    target.supersedes.append(oid)


def title_of(o: ObservationDraft | dict[str, object]) -> str:
    """A memory's title, drafted or stored."""
    return o.title if isinstance(o, ObservationDraft) else str(o.get("title"))


FAMILIES = {"rootcause": "cause", "fix": "cause", "gotcha": "gotcha", "decision": "decision", "fact": "fact",
            "todo": "todo", "status": "status"}
SAID_AGAIN = 0.55


class Restated:
    """The same thing said again later in the session (a cause explained once more, with the fix that
    finally worked; a gotcha found twice): the newer memory replaces the older one."""

    def __init__(self, session: SessionInfo) -> None:
        self.items: list[tuple[str, set[str], ObservationDraft | dict[str, object]]] = []
        for o in session.prior_observations:
            fam = FAMILIES.get(str(o.get("kind") or ""))
            if fam and o.get("status", "active") == "active":
                self.items.append((fam, content_words(said_of(o)), o))

    def apply(self, drafts: list[ObservationDraft], earlier: list[ObservationDraft]) -> None:
        for d in drafts:
            fam = FAMILIES.get(d.kind)
            if fam is None:
                continue
            words = content_words(said_of(d))
            subject = _proved_subject(d)
            for item in [x for x in self.items if x[0] == fam and jaccard(words, x[1]) >= SAID_AGAIN
                         and _proved_subject(x[2]) == subject]:
                old = item[2]
                if isinstance(old, ObservationDraft) and any(old is x for x in drafts):
                    continue  # the same turn says both: composing kept them apart on purpose
                self.items.remove(item)
                if isinstance(old, ObservationDraft):
                    if old in earlier:
                        earlier.remove(old)
                elif isinstance(old_id := old.get("id"), int):
                    d.supersedes.append(old_id)
            self.items.append((fam, words, d))


def _proved_subject(o: ObservationDraft | dict[str, object]) -> str | None:
    """What a memory the commands proved is about (its first code span: "`hk` is not on the PATH here …"), None
    for one a sentence said. Such memories share their wording: only the same subject says one again."""
    why = o.why if isinstance(o, ObservationDraft) else o.get("why")
    if isinstance(why, str) and why.startswith("{"):
        try:
            import json

            why = json.loads(why)
        except ValueError:
            why = None
    if not isinstance(why, dict) or why.get("by") != "commands":
        return None
    title = o.title if isinstance(o, ObservationDraft) else str(o.get("title") or "")
    span = re.search(r"`([^`]+)`", title)
    return span.group(1) if span else title


def said_of(o: ObservationDraft | dict[str, object]) -> str:
    """The sentence a memory was judged from (its title when it records none)."""
    if isinstance(o, ObservationDraft):
        return str(o.why.get("said") or o.title)
    why = o.get("why")
    if isinstance(why, str) and why.startswith("{"):
        try:
            import json

            return str(json.loads(why).get("said") or o.get("title") or "")
        except ValueError:
            pass
    return str(o.get("title") or "")
