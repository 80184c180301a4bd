"""How many HTTP requests the worker is answering right now.

A route may do a short piece of work on the event loop's own thread when no other request
waits for that loop (see ``kenning.worker.routes.search``); this counter is how it knows.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class Requests:
    """The number of requests in flight. Only the event loop's thread changes or reads it (ASGI
    calls run there), so it needs no lock."""

    def __init__(self) -> None:
        self.active = 0

    def alone(self) -> bool:
        """True when the request asking is the only one in flight."""
        return self.active <= 1


class InFlight:
    """Wraps an ASGI app and counts its HTTP and WebSocket connections in ``requests``; an open
    WebSocket or event stream counts for as long as it is open."""

    def __init__(self, app: ASGIApp, requests: Requests) -> None:
        self.app = app
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        self.requests.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.requests.active -= 1
