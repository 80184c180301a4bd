"""What the agent only relays: a rule or decision that a file it read or a command it ran states.

"CONTRIBUTING.md says to always indent with spaces", "The deploy script printed: we will always deploy
on Fridays": the agent's sentence, but the words of a file or of a command's output, which nobody in
the session decided (DESIGN.md §9: only the user makes a standing rule). Such a sentence is never a
key memory of its own (a gotcha, decision, fact, to-do or status): the observer keeps it as a note
(searchable, not listed at session start). A root cause and its fix are the agent's analysis of what
it read and ran, and are not checked (kenning.observer.compose.ANALYSIS).

A sentence is relayed when it prescribes or decides (its cue words say always / never / must / from
now on / decided …) and either says where it comes from ("<file> says", "the output printed",
"according to") or is, by its content words, mostly the text of one tool result of the turn.

The user quotes too: "the current PR description is bad, especially this bit: <three paragraphs of it>",
and the agent then fetches that description. A sentence of the user's message that a tool result of the
same turn holds word for word is the quoted text's, not the user's (``quoted``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kenning.memory import cues
from kenning.memory.text import CJK_CHAR, content_words
from kenning.records import Event

PRESCRIBES = frozenset({"always", "must", "prohibit", "convention", "decided", "prefer"})
CONTAINED = 0.75    # share of the sentence's content words found in one tool result
MIN_WORDS = 4       # a shorter sentence shares its words with too much by chance
MAX_SEEN_CHARS = 200_000  # of one tool result: a rule is stated near the top of what was read
_SOURCE = (r"(?:[\w./-]+\.(?:md|rst|txt|adoc|py|js|ts|json|ya?ml|toml|cfg|ini|log|sh)|readme|contributing|"
           r"changelog|docs?|documentation|guide(?:lines)?|instructions|the (?:file|page|issue|comment|ticket|"
           r"wiki|script|command|tool|output|log|linter|config(?:uration)?|spec|policy))")
_REPORTED = re.compile(
    rf"(?:^|\b){_SOURCE}\b[^.!?\n]{{0,40}}?\b(?:says?|said|states?|stated|printed|prints|outputs?|reads|recommends?|"
    rf"reports?|returned|tells? (?:us|you|me)|insists?)\b|\baccording to\b|\bper (?:the )?{_SOURCE}\b",
    re.IGNORECASE)


# Tools whose result is the agent's own text coming back (what it wrote, planned, delegated, listed),
# not words from elsewhere.
OWN_WORDS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "TodoWrite", "ExitPlanMode", "Task", "Agent",
                       "apply_patch", "update_plan", "write_file", "replace", "edit"})


def seen_texts(events: list[Event]) -> list[str]:
    """What the turn's tools brought in from elsewhere: files read, commands' output, pages, other tools'
    results (not the agent's own writing coming back)."""
    out: list[str] = []
    for e in events:
        if e.tool_name in OWN_WORDS:
            continue
        if e.kind == "PostToolUseFailure":
            err = e.payload.get("error")
            if isinstance(err, str) and err.strip():
                out.append(err[:MAX_SEEN_CHARS])
            continue
        if e.kind != "PostToolUse":
            continue
        text = _response_text(e.payload.get("tool_response"))
        if text.strip():
            out.append(text[:MAX_SEEN_CHARS])
    return out


def _response_text(resp: Any) -> str:
    if isinstance(resp, str):
        return resp
    if isinstance(resp, dict):
        file = resp.get("file")
        if isinstance(file, dict) and isinstance(file.get("content"), str):
            return str(file["content"])  # Read
        if "stdout" in resp or "stderr" in resp:
            return "\n".join(str(resp.get(k) or "") for k in ("stdout", "stderr"))  # Bash
    try:
        return json.dumps(resp, ensure_ascii=False)[:MAX_SEEN_CHARS]
    except (TypeError, ValueError):
        return ""


# What a sentence is made of, for telling text quoted word for word: its words in order, whatever the
# markup, punctuation or JSON escaping around them ("**local** machine", "that\\'s", "\\u4e3a").
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|[nrt\\\"'/])")
_NOT_WORD = re.compile(r"[\W_]+")
QUOTED_MIN_WORDS = 6  # a shorter sentence can be said in the same words by chance


def _unescaped(text: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else " ", text)


def _flat(text: str) -> str:
    return " " + _NOT_WORD.sub(" ", _unescaped(text)).lower().strip() + " "


def quoted(said: list[str], seen: list[str]) -> set[int]:
    """Which sentences of one user message ``said`` a tool result of the turn shows word for word: text the
    user pasted after their own words ("the PR description is bad, especially this bit: …") that the agent
    then looked up. A result that also shows the message's first sentence is the message itself coming back
    (a prompt file printed, a session list), not where a quote came from."""
    mine = [_flat(t) for t in said]
    long = [i for i, m in enumerate(mine[1:], 1)
            if len(m.split()) + len(CJK_CHAR.findall(m)) / 2 >= QUOTED_MIN_WORDS]
    out: set[int] = set()
    if not long or not seen:
        return out
    probes = {max(mine[i].split(), key=len) for i in long}  # each sentence's longest word: most results lack all
    for text in seen:
        low = (_unescaped(text) if "\\u" in text else text).lower()
        if not any(p in low for p in probes):
            continue
        theirs = _flat(text)
        if mine[0] not in theirs:
            out.update(i for i in long if mine[i] in theirs)
    return out


class Relayed:
    """Tells the agent's sentences that relay a file's or a command's rule from its own (one per turn)."""

    def __init__(self, seen: list[str]) -> None:
        self._seen = seen
        self._words: list[set[str]] | None = None  # read only when a sentence prescribes

    def __call__(self, text: str) -> bool:
        if not (cues.signals(text) & PRESCRIBES):
            return False
        if _REPORTED.search(text):
            return True
        mine = content_words(text)
        if len(mine) < MIN_WORDS or not self._seen:
            return False
        if self._words is None:
            self._words = [content_words(t) for t in self._seen]
        return any(len(mine & theirs) >= CONTAINED * len(mine) for theirs in self._words)
