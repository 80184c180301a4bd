"""Who may talk to the worker: loopback hosts only, same-origin writes, the per-user token.

A pure ASGI middleware (cheaper than Starlette's BaseHTTPMiddleware): it rejects requests
whose ``Host`` is not localhost (DNS rebinding), state-changing requests from a foreign
``Origin`` (CSRF from a web page), and any memory endpoint without the token.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
# Endpoints that reveal nothing about memory and are needed before a client has the token.
PUBLIC_PATHS = ("/api/health", "/api/readiness")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_ok(host: str, port: int) -> bool:
    host = host.strip().lower()
    return any(host in (h, f"{h}:{port}") for h in LOCAL_HOSTS)


def origin_ok(origin: str, port: int) -> bool:
    origin = origin.strip().lower().rstrip("/")
    return origin in {f"http://{h}:{port}" for h in LOCAL_HOSTS}


class Guard:
    """Wraps the app; ``token_source`` returns the current token (read from the 0600 file)."""

    def __init__(self, app: ASGIApp, port: int, token_source: Callable[[], str]) -> None:
        self.app = app
        self.port = port
        self.token_source = token_source

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        if not host_ok(headers.get("host", ""), self.port):
            await _deny(send, 403, "forbidden host: the worker only answers to localhost")
            return
        origin = headers.get("origin")
        if origin is not None and method not in SAFE_METHODS and not origin_ok(origin, self.port):
            await _deny(send, 403, "forbidden origin")
            return
        if path.startswith("/api/") and path not in PUBLIC_PATHS and not self._authorised(headers, scope):
            await _deny(send, 401, "missing or wrong token: read it from the token file in the data dir")
            return
        await self.app(scope, receive, send)

    def _authorised(self, headers: dict[str, str], scope: Scope) -> bool:
        expected = self.token_source()
        if not expected:
            return False
        auth = headers.get("authorization", "")
        given = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-kenning-token", "")
        return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


async def _deny(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
