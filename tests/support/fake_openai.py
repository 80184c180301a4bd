"""In-process fake of the OpenAI Chat Completions API, speaking the real wire protocol over HTTP.

Stdlib only; binds 127.0.0.1 on a free port. Use it with the official ``openai`` SDK
(``OpenAI(base_url=fake.base_url, api_key="x")``; ``base_url`` ends in ``/v1``)::

    with FakeOpenAI(script=["<observation>…</observation>", error(429)]) as fake:
        ...
        assert fake.requests[0]["body"]["messages"][-1]["content"]

Endpoints: ``POST /v1/chat/completions`` (SSE chunks ending in ``data: [DONE]`` when
``body["stream"]`` is true, one JSON object otherwise; a final usage chunk when
``stream_options.include_usage`` is set), ``GET /v1/models``; anything else is a 404 with
the API's error shape. Every request is recorded in ``fake.requests`` *when it arrives*
(``status`` is filled in once answered), so a test can act while a slow reply is pending.

Scripting: a *step* is a reply text, a dict ``{"content": str, "delay": s, "usage": {...},
"finish_reason": str}``, or ``error(status, message, ...)``. ``script`` is a list answered
in arrival order (the last step repeats), or a callable ``script(body) -> step | None``
(None: an empty reply).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = str | dict[str, Any]
ScriptFn = Callable[[dict[str, Any]], Step | None]

ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_error",
               404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error", 503: "server_error"}
ERROR_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}


def error(status: int, message: str | None = None, *, type: str | None = None, code: str | None = None,
          retry_after: float | None = None) -> dict[str, Any]:
    """A scripted HTTP error; 429 answers carry ``retry-after`` (default 1 s)."""
    return {"error": {"status": status, "message": message or f"fake: scripted {status}",
                      "type": type or ERROR_TYPES.get(status, "server_error"),
                      "code": code if code is not None else ERROR_CODES.get(status),
                      "retry_after": retry_after}}


def user_text(body: Mapping[str, Any]) -> str:
    """The content of the last user message."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def in_order(*steps: Step) -> ScriptFn:
    lock = threading.Lock()
    counter = itertools.count()

    def pick(body: dict[str, Any]) -> Step:
        with lock:
            i = next(counter)
        return steps[min(i, len(steps) - 1)]

    return pick


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
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

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:20])
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0,
                                                              "owned_by": "fake"}]})
        else:
            self._send_json(404, _error_body("invalid_request_error", f"fake: no route for {self.path}", None))

    def do_POST(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions") or not isinstance(body, dict):
            self._send_json(404, _error_body("invalid_request_error", f"fake: no route for {self.path}", None))
            return
        fake = self.server.fake
        rec = fake._add({"time": time.time(), "method": "POST", "path": self.path, "status": None, "body": body,
                         "bytes": len(raw), "headers": {k.lower(): v for k, v in self.headers.items()}})
        step = fake._pick(body)
        if isinstance(step, dict) and step.get("delay"):
            time.sleep(float(step["delay"]))
        if isinstance(step, dict) and "error" in step:
            err = step["error"]
            status = int(err["status"])
            headers = {}
            if status == 429:
                headers["retry-after"] = str(err.get("retry_after") if err.get("retry_after") is not None else 1)
            rec["status"] = status
            self._send_json(status, _error_body(err["type"], err["message"], err.get("code")), headers)
            return
        content = step if isinstance(step, str) else str(step.get("content") or "")
        finish = "stop" if isinstance(step, str) else str(step.get("finish_reason") or "stop")
        usage = {"prompt_tokens": max(1, len(raw) // 4), "completion_tokens": max(1, len(content) // 4),
                 "prompt_tokens_details": {"cached_tokens": 0}}
        if isinstance(step, dict) and step.get("usage"):
            usage.update(step["usage"])
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        rec["status"] = 200
        model = str(body.get("model") or "fake-model")
        if body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(model, content, finish, usage if include else None)
        else:
            self._send_json(200, {
                "id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                             "logprobs": None, "finish_reason": finish}],
                "usage": usage})

    def _stream(self, model: str, content: str, finish: str, usage: dict[str, Any] | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        cid = "chatcmpl-" + uuid.uuid4().hex[:24]

        def chunk(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
            data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                    "system_fingerprint": "fp_fake", "choices": choices, **(extra or {})}
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}])
        for i in range(0, len(content), 64):
            chunk([{"index": 0, "delta": {"content": content[i:i + 64]}, "logprobs": None, "finish_reason": None}])
        chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}])
        if usage is not None:
            chunk([], {"usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def _error_body(err_type: str, message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


class FakeOpenAI:
    """The fake server; a context manager serving on a background thread.

    ``base_url`` is ``http://127.0.0.1:<port>/v1`` (what the SDK and most servers expect).
    """

    def __init__(self, script: Sequence[Step] | ScriptFn | None = None) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._count = itertools.count()
        self._server: _Server | None = None

    def start(self) -> FakeOpenAI:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _add(self, rec: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(rec)
        return rec

    def _pick(self, body: dict[str, Any]) -> Step:
        script = self.script
        step: Step | None
        if callable(script):
            step = script(body)
        elif script:
            steps = list(script)
            step = steps[min(next(self._count), len(steps) - 1)]
        else:
            step = None
        return "" if step is None else step
