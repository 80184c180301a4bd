"""Who may talk to the worker: loopback hosts only, same-origin writes, the per-user token.

A pure ASGI middleware (cheaper than Starlette's BaseHTTPMiddleware): it rejects requests
whose ``Host`` is not localhost (DNS rebinding), state-changing requests from a foreign
``Origin`` (CSRF from a web page), and any memory endpoint without a credential.

Two credentials open memory: the raw token of the 0600 file (hooks, CLI, MCP) and a *viewer
session* (the browser). The browser never sees the raw token: ``kenning open`` asks the
worker for a one-time code (single use, valid for a minute) and puts that in the URL; the
page trades it by POST for a session, an HMAC of an expiry and a nonce keyed by the token
(so rotating the token ends every session, and a worker restart keeps them).
"""

from __future__ import annotations

import hmac
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
# Endpoints that reveal nothing about memory and are needed before a client has the token
# (the last one trades a one-time code for a viewer session).
PUBLIC_PATHS = ("/api/health", "/api/readiness", "/api/viewer/session")
CODE_TTL_S = 60.0
SESSION_TTL_S = 30 * 24 * 3600.0
MAX_CODES = 32
SESSION_PREFIX = "s1."
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def host_ok(host: str, port: int) -> bool:
    host = host.strip().lower()
    return any(host in (h, f"{h}:{port}") for h in LOCAL_HOSTS)


def origin_ok(origin: str, port: int) -> bool:
    origin = origin.strip().lower().rstrip("/")
    return origin in {f"http://{h}:{port}" for h in LOCAL_HOSTS}


class Guard:
    """Wraps the app; ``token_source`` returns the current token (read from the 0600 file).

    An authorised request carries ``scope["kenning.auth"]``: ``"token"`` or ``"session"``.
    """

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
        if path.startswith("/api/") and path not in PUBLIC_PATHS:
            kind = self._authorised(headers)
            if kind is None:
                await _deny(send, 401, "missing or wrong token: read it from the token file in the data dir")
                return
            scope["kenning.auth"] = kind
        await self.app(scope, receive, send)

    def _authorised(self, headers: dict[str, str]) -> str | None:
        expected = self.token_source()
        if not expected:
            return None
        auth = headers.get("authorization", "")
        given = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-kenning-token", "")
        if not given:
            return None
        if hmac.compare_digest(given.encode(), expected.encode()):
            return "token"
        if given.startswith(SESSION_PREFIX) and session_valid(expected, given):
            return "session"
        return None


def new_session(token: str, now: float | None = None) -> str:
    """A viewer session credential: expiry, nonce and their HMAC keyed by the API token."""
    expires = int((time.time() if now is None else now) + SESSION_TTL_S)
    body = f"{expires}.{os.urandom(16).hex()}"
    return f"{SESSION_PREFIX}{body}.{_mac(token, body)}"


def session_valid(token: str, credential: str, now: float | None = None) -> bool:
    parts = credential[len(SESSION_PREFIX):].split(".")
    if len(parts) != 3 or not parts[0].isdigit() or len(parts[0]) > 12:
        return False
    body = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(parts[2].encode(), _mac(token, body).encode()):
        return False
    return int(parts[0]) > (time.time() if now is None else now)


def _mac(token: str, body: str) -> str:
    return hmac.new(token.encode(), b"kenning-viewer-session:" + body.encode(), "sha256").hexdigest()


class OneTimeCodes:
    """Codes ``kenning open`` puts in the browser's URL: single use, valid for ``CODE_TTL_S``.

    Only a digest of each code is kept, in memory: a code dies with the worker.
    """

    def __init__(self, ttl: float = CODE_TTL_S) -> None:
        self.ttl = ttl
        self._codes: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self) -> str:
        code = os.urandom(16).hex()
        now = time.monotonic()
        with self._lock:
            self._drop_expired(now)
            while len(self._codes) >= MAX_CODES:  # the oldest gives way
                self._codes.pop(min(self._codes, key=self._codes.__getitem__))
            self._codes[_digest(code)] = now + self.ttl
        return code

    def redeem(self, code: str) -> bool:
        """True once for a live code; it is gone afterwards whether or not it had expired."""
        if not code or len(code) > 128:
            return False
        with self._lock:
            expires = self._codes.pop(_digest(code), None)
        return expires is not None and time.monotonic() < expires

    def _drop_expired(self, now: float) -> None:
        for k in [k for k, t in self._codes.items() if t <= now]:
            del self._codes[k]


def _digest(code: str) -> str:
    import hashlib

    return hashlib.sha256(code.encode("utf-8", "replace")).hexdigest()


async def _deny(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
