"""The small interface every chat provider implements (Anthropic, OpenAI-compatible, Claude Agent SDK).

A provider opens conversations; a conversation keeps its own history (or a live subprocess
for the Claude Agent SDK) so the init prompt is sent once and each batch of events is one
more user turn. Failures are classified so the caller knows whether the events go back to
the queue (quota, rate limit, auth, transient) or the reply is simply unusable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass
class Usage:
    """Tokens one call consumed (cache counts when the provider reports them)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.tokens_in + self.tokens_out + self.cache_read + self.cache_write


class ProviderError(Exception):
    """A call that produced no usable reply.

    ``kind``: ``quota`` (usage limit / rate limit / 429), ``auth`` (401/403, bad key, logged
    out), ``transient`` (network, 5xx, timeout), ``fatal`` (bad request: retrying won't help).
    Events of a failed call always stay pending; only the back-off differs. ``cause``: a short
    phrase for the user ("connection refused", "HTTP 429"); ``unreachable``: no connection was made
    (refused, no such host, no route), as opposed to a server that answered badly.
    """

    def __init__(self, kind: str, message: str, retry_after: float | None = None, *, cause: str = "",
                 unreachable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.cause = cause
        self.unreachable = unreachable


class Conversation(Protocol):
    """One observer conversation, bound to one agent session."""

    def send(self, text: str, *, model: str, max_tokens: int) -> tuple[str, Usage]:
        """Append ``text`` as a user turn, return the assistant's reply text and the usage.

        On success both turns stay in the history; on ProviderError the history is unchanged.
        """
        ...

    @property
    def size_chars(self) -> int:
        """Characters of history sent with each call (the caller restarts past a bound)."""
        ...

    def close(self) -> None:
        """Free everything (HTTP client, subprocess). Idempotent."""
        ...


class ChatProvider(Protocol):
    name: str

    def open(self, system: str) -> Conversation:
        """A fresh conversation whose system prompt is ``system``."""
        ...

    def available(self) -> tuple[bool, str]:
        """Whether this provider can run here (SDK importable, credentials present) and why not."""
        ...
