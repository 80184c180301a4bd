"""uvicorn's HTTP/1.1 protocol with a deadline for each request's headers.

uvicorn closes a kept-alive connection that stays idle after a response, but not one that
never completes a request: a client (any local user) that connects and sends nothing, or
trickles a header a byte at a time, would hold its connection and its memory for ever. Here
every connection must deliver a request's headers within ``HEADER_TIMEOUT_S`` of opening (or
of the previous response), or it is closed.

The parser is httptools (C, what uvicorn itself prefers) when it is installed: it takes ~0.3 ms
less per request than h11 (pure Python), a tenth of a search; h11 otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 5.0  # also how long an idle kept-alive connection stays open (uvicorn's keep-alive)


class _HeaderDeadline:
    """The deadline, over either of uvicorn's protocols (both set ``cycle`` when a request's
    headers are complete, and call ``on_response_complete`` after each response)."""

    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        deadline = getattr(self, "_header_deadline", None)
        if deadline is not None:
            deadline.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm_header_deadline(self) -> None:
        old = getattr(self, "_header_deadline", None)
        if old is not None:
            old.cancel()
        waiting_for = self.cycle  # a new request replaces the cycle: then the deadline was met
        self._header_deadline: Any = self.loop.call_later(HEADER_TIMEOUT_S, self._header_timeout, waiting_for)

    def _header_timeout(self, waiting_for: Any) -> None:
        if self.cycle is waiting_for and not self.transport.is_closing():
            self.transport.close()


class DeadlineH11Protocol(_HeaderDeadline, H11Protocol):
    pass


def deadline_protocol() -> type[asyncio.Protocol]:
    """The fastest protocol class available, with the header deadline."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools not installed
        return DeadlineH11Protocol

    class DeadlineHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
        pass

    return DeadlineHttpToolsProtocol
