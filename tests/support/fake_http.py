"""The HTTP plumbing the fake model APIs share: a server on a background thread, body reading,
request recording, JSON answers and server-sent events.

Stdlib only; binds 127.0.0.1 on a free port. Each fake (``fake_anthropic``, ``fake_openai``,
``fake_gemini``, ``fake_responses``, ``fake_embeddings_api``) subclasses :class:`FakeServer` and
:class:`FakeHandler` and keeps its own wire protocol: routes, answer shapes, error bodies,
headers and event framing are its own, only the mechanics live here.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

S = TypeVar("S")
Body = dict[str, Any]


def in_order(*steps: S, when: Callable[[Body], bool] | None = None) -> Callable[[Body], S | None]:
    """A script answering requests with ``steps`` in arrival order; the last one repeats.

    ``when`` limits which requests consume a step (the others get None: the fake's default).
    """
    lock = threading.Lock()
    counter = itertools.count()

    def pick(body: Body) -> S | None:
        if when is not None and not when(body):
            return None
        with lock:
            i = next(counter)
        return steps[min(i, len(steps) - 1)]

    return pick


def script_by_first_prompt(scripts: Mapping[str, Sequence[S]], prompts: Callable[[Body], list[str]],
                           index: Callable[[Body], int]) -> Callable[[Body], S | None]:
    """A script answering with the step list whose key occurs in the session's first prompt,
    at ``index(body)`` (the last step repeats); None for a session no key matches."""

    def pick(body: Body) -> S | None:
        found = prompts(body)
        first = found[0] if found else ""
        for key, steps in scripts.items():
            if key in first:
                return steps[min(index(body), len(steps) - 1)]
        return None

    return pick


def scripted(script: Sequence[S] | Callable[[Body], S | None] | None, body: Body,
             index: Callable[[], int]) -> S | None:
    """The step a script gives for ``body``: a callable's answer, or the list's step at ``index()``
    (past the end the last one repeats); None without a script."""
    if callable(script):
        return script(body)
    if script:
        steps = list(script)
        return steps[min(index(), len(steps) - 1)]
    return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer


class FakeHandler(BaseHTTPRequestHandler):
    """Keep-alive for JSON answers; a stream (:meth:`start_stream`) closes its connection."""

    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # SSE events must not sit in the kernel waiting for more
    # Header names (lowercased) whose prefixes are kept in a request's record; None keeps all.
    recorded_headers: tuple[str, ...] | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # pytest output stays clean; everything is in fake.requests

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout, abort): nothing to answer

    def read_body(self) -> bytes:
        """The request body, whether sent with a content-length or chunked."""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def record(self, body: Any, **fields: Any) -> dict[str, Any]:
        """Record this request in ``fake.requests`` now (a test can act while the answer is pending)
        and return the record, for fields known only once answered."""
        keep = self.recorded_headers
        headers = {k.lower(): v for k, v in self.headers.items() if keep is None or k.lower().startswith(keep)}
        rec = {"time": time.time(), "method": self.command, "path": self.path, **fields,
               "headers": headers, "body": body}
        return self.server.fake._add(rec)

    def send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None, *,
                  content_type: str = "application/json") -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, headers: Mapping[str, str] | None = None, *,
                     content_type: str = "text/event-stream") -> None:
        """Begin a 200 event stream. No content-length and no chunking: the end of the stream is
        the end of the connection, so the connection closes after it."""
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_event(self, data: Any, *, event: str | None = None, end: str = "\n\n") -> None:
        """One server-sent event, flushed: ``data`` is sent as is when a string, else as JSON."""
        line = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event is not None else ""
        self.wfile.write(f"{head}data: {line}{end}".encode())
        self.wfile.flush()


F = TypeVar("F", bound="FakeServer")


class FakeServer:
    """A fake API server; a context manager serving on a background thread.

    Subclasses set ``handler`` and ``name``, and ``api_root`` (the path ``base_url`` ends in).
    """

    handler: type[FakeHandler]
    name = "fake-http"
    api_root = ""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def start(self: F) -> F:
        server = _Server(("127.0.0.1", 0), self.handler)
        server.fake = self
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=self.name,
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self: F) -> F:
        return self.start()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.api_root}"

    def _add(self, rec: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(rec)
        return rec

