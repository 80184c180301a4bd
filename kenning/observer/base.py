"""The observer provider interface.

The worker hands a provider the pending events of one agent session, in order, with what
is already known about that session. The provider answers with observations, maybe a
session summary, and which events it has fully handled. The worker stores the outputs and
marks those events done in one transaction; events not reported as handled stay pending and
come back with the next call (that is how a provider waits for a turn to finish, and how a
crash never loses an event). The records themselves live in :mod:`kenning.records`.
"""

from __future__ import annotations

from typing import Protocol

# Re-exported for code written against the old location; new code imports kenning.records.
from kenning.records import Event, ObservationDraft, Outcome, SessionInfo, SummaryDraft, tokens_of

__all__ = ["Event", "ObservationDraft", "Observer", "Outcome", "SessionInfo", "SummaryDraft", "tokens_of"]


class Observer(Protocol):
    """A provider: ``rules`` (offline), or an LLM behind the same call."""

    name: str

    def observe(self, session: SessionInfo, events: list[Event], *, now: float) -> Outcome:
        """Handle the session's pending events (oldest first)."""
        ...
