"""Sentences as the observer's gates see them: judged a role, said by the agent in its last message (or typed by the
user), and which of them the observer is sure enough of to make a key memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.observer.roles.roles import Judged


def judged(role: str, text: str, speaker: str = "agent") -> Judged:
    """A sentence judged ``role`` with confidence, said in the agent's last message (or typed by the user)."""
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    return Judged(units(text)[0], role=role, p=0.95, speaker=speaker,
                  origin="final" if speaker == "agent" else "typed", worth=0.95)


def taken(role: str, *said: Judged) -> list[Judged]:
    """Which of the agent's sentences of ``role`` the observer is sure enough of to make a key memory."""
    from kenning.observer.compose import _sure
    from kenning.observer.reading import Reading

    return _sure(Reading(agent=list(said)), role)
