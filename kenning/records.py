"""The records the store and the observers share: captured events, what an observer drafts, outcomes.

The worker hands an observer the pending events of one agent session, in order, with what
is already known about that session (:class:`SessionInfo`). The observer answers with an
:class:`Outcome`: observation and summary drafts, and which events it has fully handled.
The store writes those drafts and marks the events done in one transaction. Plain data
only: the store imports this module, never the observer package.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """One captured hook event, as stored in the ``events`` table."""

    id: int
    kind: str
    occurred_at: float
    payload: dict[str, Any]
    tool_name: str | None = None
    prompt_number: int = 0
    agent_id: str | None = None
    agent_type: str | None = None
    size_chars: int = 0


@dataclass
class SessionInfo:
    """What the observer may know about the session besides its pending events."""

    id: int
    agent_session_id: str
    project: str
    project_root: str
    prompts: list[str] = field(default_factory=list)
    prior_observations: list[dict[str, Any]] = field(default_factory=list)
    prior_summary: dict[str, Any] | None = None
    ended: bool = False
    # The project's current standing rules and key memories ({id, type, layer, title}): what an LLM
    # observer is shown so it can name what a new observation makes no longer true.
    memories: list[dict[str, Any]] = field(default_factory=list)
    # When one of its memories was last forgotten (0: never): an observer holding the session's text
    # in a live conversation must start afresh, or it could write the memory again.
    forgotten_at: float = 0.0


@dataclass
class ObservationDraft:
    type: str
    title: str
    created_at: float
    subtitle: str = ""
    facts: list[str] = field(default_factory=list)
    narrative: str = ""
    concepts: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    prompt_number: int | None = None
    tokens_spent: int = 0
    source_tokens: int = 0
    agent_id: str | None = None
    agent_type: str | None = None
    # Ids of older memories this one makes no longer true (named by an LLM observer, validated by it).
    supersedes: list[int] = field(default_factory=list)
    # What the observer judged it to be (DESIGN.md §9): its role ("rule", "decision", "rootcause", "fix",
    # "change", "gotcha", "todo", "status", "fact", "answer", "explored"; "" = judged by type and text),
    # for this project or for all of the user's work, said to be provisional, and why it was judged so.
    kind: str = ""
    scope: str = "project"
    tentative: bool = False
    why: dict[str, Any] = field(default_factory=dict)

    def content_hash(self) -> str:
        """Identity of the content, so re-observing the same work never stores it twice."""
        raw = json.dumps([self.type, self.title, self.narrative, self.facts], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


@dataclass
class SummaryDraft:
    created_at: float
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    notes: str = ""
    files_read: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    prompt_number: int | None = None
    tokens_spent: int = 0
    source_tokens: int = 0


@dataclass
class Outcome:
    """What a provider produced from one call."""

    observations: list[ObservationDraft] = field(default_factory=list)
    summary: SummaryDraft | None = None
    done: list[int] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    model: str = ""


def tokens_of(chars: int) -> int:
    """The usual ~4 characters per token estimate."""
    return (chars + 3) // 4


def text_tokens(text: str) -> int:
    """What reading ``text`` costs: the one token count every surface reports (CLI, context, HTTP, viewer)."""
    return tokens_of(len(text))
