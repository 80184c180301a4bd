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
"finish_reason": str, "tool_calls": [tool_call(name, args), ...]}`` (tool calls end the turn with
``finish_reason: "tool_calls"``, as agents expect), or ``error(status, message, ...)``. ``script`` is a list answered
in arrival order (the last step repeats), or a callable ``script(body) -> step | None``
(None: an empty reply).
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from tests.support import fake_http

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


def tool_call(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A function call for a step's ``tool_calls`` (the arguments are sent as a JSON string)."""
    return {"id": "call_" + uuid.uuid4().hex[:20], "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def user_text(body: Mapping[str, Any]) -> str:
    """The content of the last user message."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def in_order(*steps: Step) -> ScriptFn:
    """Answer with ``steps`` in arrival order; the last one repeats."""
    return fake_http.in_order(*steps)


class _Handler(fake_http.FakeHandler):
    server_version = "fake-openai/1"

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_json(status, obj, {"x-request-id": "req_" + uuid.uuid4().hex[:20], **(headers or {})})

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0,
                                                              "owned_by": "fake"}]})
        else:
            self._send_json(404, _error_body("invalid_request_error", f"fake: no route for {self.path}", None))

    def do_POST(self) -> None:
        raw = self.read_body()
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions") or not isinstance(body, dict):
            self._send_json(404, _error_body("invalid_request_error", f"fake: no route for {self.path}", None))
            return
        fake = cast(FakeOpenAI, self.server.fake)
        rec = self.record(body, status=None, bytes=len(raw))
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
        calls = [] if isinstance(step, str) else list(step.get("tool_calls") or [])
        finish = "stop" if isinstance(step, str) else str(step.get("finish_reason") or
                                                           ("tool_calls" if calls else "stop"))
        usage: dict[str, Any] = {"prompt_tokens": max(1, len(raw) // 4), "completion_tokens": max(1, len(content) // 4),
                 "prompt_tokens_details": {"cached_tokens": 0}}
        if isinstance(step, dict) and step.get("usage"):
            usage.update(step["usage"])
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        rec["status"] = 200
        model = str(body.get("model") or "fake-model")
        if body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(model, content, finish, usage if include else None, calls)
        else:
            self._send_json(200, {
                "id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None,
                                                     **({"tool_calls": calls} if calls else {})},
                             "logprobs": None, "finish_reason": finish}],
                "usage": usage})

    def _stream(self, model: str, content: str, finish: str, usage: dict[str, Any] | None,
                calls: list[dict[str, Any]] | None = None) -> None:
        self.start_stream(content_type="text/event-stream; charset=utf-8")
        cid = "chatcmpl-" + uuid.uuid4().hex[:24]

        def chunk(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
            data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                    "system_fingerprint": "fp_fake", "choices": choices, **(extra or {})}
            self.send_event(data)

        chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}])
        for i in range(0, len(content), 64):
            chunk([{"index": 0, "delta": {"content": content[i:i + 64]}, "logprobs": None, "finish_reason": None}])
        for n, call in enumerate(calls or []):
            delta = {"tool_calls": [{"index": n, **call}]}
            chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
        chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}])
        if usage is not None:
            chunk([], {"usage": usage})
        self.send_event("[DONE]")


def _error_body(err_type: str, message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


class FakeOpenAI(fake_http.FakeServer):
    """The fake server; a context manager serving on a background thread.

    ``base_url`` is ``http://127.0.0.1:<port>/v1`` (what the SDK and most servers expect).
    """

    handler = _Handler
    name = "fake-openai"
    api_root = "/v1"

    def __init__(self, script: Sequence[Step] | ScriptFn | None = None) -> None:
        super().__init__()
        self.script = script
        self._count = itertools.count()

    def _pick(self, body: dict[str, Any]) -> Step:
        # A list answers in arrival order.
        step = fake_http.scripted(self.script, body, lambda: next(self._count))
        return "" if step is None else step
