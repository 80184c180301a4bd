"""In-process fake of the Anthropic Messages API, for offline end-to-end tests.

Stdlib only; binds 127.0.0.1 on a free port. Clients: the real Claude Code CLI
(``ANTHROPIC_BASE_URL=fake.base_url``) and the ``anthropic`` Python SDK
(``Anthropic(base_url=fake.base_url, api_key="x")``)::

    with FakeAnthropic(script=[[tool_use("Bash", {"command": "echo hi"})],
                               [text("done")]]) as fake:
        ...run the client...
        assert fake.requests_of("main")

Endpoints: ``POST /v1/messages`` (``?beta=true`` too; SSE when ``body["stream"]`` is
true, JSON otherwise), ``POST /v1/messages/count_tokens``; anything else is a 404 with
the API's error shape. Every request is recorded in ``fake.requests``.

Scripting
---------
A *step* is one model reply: a list of content blocks (``text(...)``, ``tool_use(...)``,
``thinking(...)``), or a dict ``{"content": [...], "stop_reason": ..., "usage": {...},
"delay": seconds}``, or a scripted failure ``error(429)`` =
``{"error": {"status": 429, "type": ..., "message": ...}}``.

``script`` is either

* a list of steps, used for **main-loop** requests of Claude Code (those offering a tool
  named ``Bash``). The step index is ``step_index(body)``: the number of ``tool_result``
  blocks after the last plain user prompt in ``messages``. Counting from the prompt (not
  from the start) makes a ``--resume`` run start again at step 0 while the old turns are
  replayed; a new session starts at 0 anyway. Side requests (title generation etc.) get
  ``"ok"``, subagent requests ``"done"``, compaction requests a ``<summary>``, and none of
  them disturbs the index, because it is derived from the conversation, not from request
  order. Past the end, the last step repeats. A ``Stop`` hook's ``decision: block`` turn is
  all ``<system-reminder>`` text, so it does not reset the index either.
* or a callable ``script(body) -> step | None`` called for every messages request (any
  kind); None falls back to the default answer for that kind. Combine it with
  ``step_index``/``prompt_text``/``request_kind``, or use ``script_by_prompt`` (pick a
  list per session by its prompt) and ``in_order`` (answer by arrival order, e.g. a 429
  then a success for SDK retry tests).

Errors and the CLI: Claude Code 2.1.332 retries failed requests itself (401/429/5xx with
growing backoff, well over a minute; a 400 is sent six times in all), and a scripted error
at a fixed step index is answered again on each retry. To test a failure, run the CLI with
``CLAUDE_CODE_MAX_RETRIES=0`` (401/429/5xx: one request, then ``is_error: true``, rc 1;
a 400 still goes out six times, quickly) or script ``in_order(error(429), [...])`` to fail
once and recover.
"""

from __future__ import annotations

import json
import time
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from tests.support import fake_http

Block = dict[str, Any]
Step = list[Block] | dict[str, Any]
ScriptFn = Callable[[dict[str, Any]], Step | None]
Script = Sequence[Step] | ScriptFn

# Status -> error type, as the real API names them.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_REMINDER = "<system-reminder>"
# Texts the CLI itself puts in user turns; they are not prompts typed by anyone.
_SYNTHETIC_PREFIXES = (_REMINDER, "[Request interrupted")
_COMPACT_MARKER = "create a detailed summary"
_RECORDED_HEADER_PREFIXES = ("anthropic-", "x-", "user-agent", "content-type", "authorization")


# ---- step builders ------------------------------------------------------------------------


def text(s: str) -> Block:
    return {"type": "text", "text": s}


def tool_use(name: str, input: Mapping[str, Any]) -> Block:
    return {"type": "tool_use", "name": name, "input": dict(input)}


def thinking(s: str) -> Block:
    return {"type": "thinking", "thinking": s}


def error(
    status: int,
    type: str | None = None,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A scripted HTTP error step. 429 answers carry ``retry-after`` (default 1 s)."""
    err: dict[str, Any] = {
        "status": status,
        "type": type or ERROR_TYPES.get(status, "api_error"),
        "message": message or f"fake: scripted {status}",
    }
    if retry_after is not None:
        err["retry_after"] = retry_after
    if headers:
        err["headers"] = dict(headers)
    return {"error": err}


# ---- request inspection -------------------------------------------------------------------


def _blocks(message: Mapping[str, Any]) -> list[Block]:
    content = message.get("content")
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)]


def _is_prompt_block(block: Block) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).lstrip().startswith(
        _SYNTHETIC_PREFIXES
    )


def step_index(body: Mapping[str, Any]) -> int:
    """tool_result blocks since the last plain (non-system-reminder) user prompt text."""
    n = 0
    for msg in body.get("messages") or []:
        if msg.get("role") != "user":
            continue
        for block in _blocks(msg):
            if block.get("type") == "tool_result":
                n += 1
            elif _is_prompt_block(block):
                n = 0
    return n


def _prompts(body: Mapping[str, Any]) -> list[str]:
    out = []
    for msg in body.get("messages") or []:
        if msg.get("role") == "user":
            texts = [b["text"] for b in _blocks(msg) if _is_prompt_block(b)]
            if texts:
                out.append("\n".join(texts))
    return out


def prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt of the current run: the last plain user text (reminders stripped).

    In a fresh session this is also the first prompt; after ``--resume`` it is the new one.
    """
    prompts = _prompts(body)
    return prompts[-1] if prompts else ""


def first_prompt_text(body: Mapping[str, Any]) -> str:
    prompts = _prompts(body)
    return prompts[0] if prompts else ""


def all_text(body: Mapping[str, Any]) -> str:
    """Every user-side text (reminders, tool results) joined: for marker assertions."""
    return json.dumps(body.get("messages") or [], ensure_ascii=False)


def offered_tools(body: Mapping[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or [] if isinstance(t, dict) and "name" in t]


def _system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(str(b.get("text", "")) for b in system or [] if isinstance(b, dict))


def request_kind(body: Mapping[str, Any]) -> str:
    """``main`` | ``subagent`` | ``compact`` | ``side`` for a /v1/messages body."""
    messages = body.get("messages") or []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if last_user and any(_COMPACT_MARKER in str(b.get("text", "")) for b in _blocks(last_user)):
        return "compact"  # compaction requests carry the full tool list, so check first
    if "Bash" not in offered_tools(body):
        return "side"
    # Subagents also get Bash; the CLI flags them in its billing header system block.
    if "cc_is_subagent=true" in _system_text(body):
        return "subagent"
    return "main"


# ---- script combinators -------------------------------------------------------------------


def script_by_prompt(
    scripts: Mapping[str, Sequence[Step]], default: Sequence[Step] | None = None
) -> ScriptFn:
    """Pick a step list per session: the first key contained in the current prompt wins.

    Only main-loop requests are scripted; everything else gets the default answers.
    """

    def pick(body: dict[str, Any]) -> Step | None:
        if request_kind(body) != "main":
            return None
        prompt = prompt_text(body)
        steps = next((s for key, s in scripts.items() if key in prompt), default)
        if not steps:
            return None
        return steps[min(step_index(body), len(steps) - 1)]

    return pick


def in_order(*steps: Step, kinds: Sequence[str] | None = None) -> ScriptFn:
    """Answer matching requests with ``steps`` in arrival order; the last one repeats.

    ``kinds`` limits which request kinds consume steps (default: all).
    """
    wanted = None if kinds is None else set(kinds)
    return fake_http.in_order(*steps, when=None if wanted is None else lambda body: request_kind(body) in wanted)


# ---- server -------------------------------------------------------------------------------


def _default_answer(kind: str) -> Step:
    if kind == "compact":
        return [text("<analysis>fake</analysis>\n<summary>Fake summary of the conversation.</summary>")]
    if kind == "subagent":
        return [text("done")]
    return [text("ok")]


def _normalize(step: Step) -> dict[str, Any]:
    if isinstance(step, list):
        return {"content": step}
    if "error" in step or "content" in step:
        return step
    raise ValueError(f"not a step: {step!r}")


class _Handler(fake_http.FakeHandler):
    server_version = "fake-anthropic/1"
    recorded_headers = _RECORDED_HEADER_PREFIXES

    @property
    def fake(self) -> FakeAnthropic:
        return cast(FakeAnthropic, self.server.fake)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_json(status, obj, {"request-id": _new_id("req_"), **(headers or {})})

    def _not_found(self, body: Any = None) -> None:
        self.record(body, kind="not_found", status=404)
        self._send_json(404, _error_body("not_found_error", f"fake: no route for {self.path}"))

    def do_GET(self) -> None:
        self._not_found()

    def do_HEAD(self) -> None:
        self._not_found()

    def do_POST(self) -> None:
        raw = self.read_body()
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/messages/count_tokens":
            self.record(body, kind="count_tokens", status=200)
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif path == "/v1/messages" and isinstance(body, dict):
            self._messages(body)
        else:
            self._not_found(body)

    def _messages(self, body: dict[str, Any]) -> None:
        fake = self.fake
        kind = request_kind(body)
        step_no = step_index(body) if kind == "main" else None
        try:
            step = fake._pick(body, kind, step_no)
        except Exception as exc:  # surface script bugs in the test, not as CLI retries
            fake.script_errors.append(exc)
            msg = "fake: script raised\n" + traceback.format_exc()
            self.record(body, kind=kind, step=step_no, status=400, script_error=repr(exc))
            self._send_json(400, _error_body("invalid_request_error", msg))
            return
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if "error" in step:
            err = step["error"]
            status = int(err.get("status", 500))
            headers = dict(err.get("headers") or {})
            if status == 429:
                headers.setdefault("retry-after", str(err.get("retry_after", 1)))
            self.record(body, kind=kind, step=step_no, status=status)
            self._send_json(
                status,
                _error_body(
                    err.get("type") or ERROR_TYPES.get(status, "api_error"),
                    err.get("message", f"fake: scripted {status}"),
                ),
                headers,
            )
            return
        self.record(body, kind=kind, step=step_no, status=200)
        content = [_materialize(b) for b in step["content"]]
        stop_reason = step.get("stop_reason") or (
            "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        )
        usage = {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **(step.get("usage") or {}),
        }
        message = {
            "id": _new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-fake",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if body.get("stream"):
            self._stream(message)
        else:
            self._send_json(200, message)

    def _stream(self, message: dict[str, Any]) -> None:
        self.start_stream({"request-id": _new_id("req_")}, content_type="text/event-stream; charset=utf-8")

        def event(name: str, data: dict[str, Any]) -> None:
            self.send_event(data, event=name)

        usage = message["usage"]
        start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        event("message_start", {"type": "message_start", "message": start})
        event("ping", {"type": "ping"})
        for i, block in enumerate(message["content"]):
            for delta in _block_events(i, block):
                event(delta["type"], delta)
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        event("message_stop", {"type": "message_stop"})


def _block_events(index: int, block: Block) -> list[dict[str, Any]]:
    """content_block_start + deltas for one block, as the API streams it."""

    def start(cb: Block) -> dict[str, Any]:
        return {"type": "content_block_start", "index": index, "content_block": cb}

    def delta(d: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": d}

    kind = block["type"]
    if kind == "text":
        return [start({"type": "text", "text": ""}), delta({"type": "text_delta", "text": block["text"]})]
    if kind == "tool_use":
        return [
            start({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            delta({"type": "input_json_delta", "partial_json": json.dumps(block["input"])}),
        ]
    if kind == "thinking":
        return [
            start({"type": "thinking", "thinking": "", "signature": ""}),
            delta({"type": "thinking_delta", "thinking": block["thinking"]}),
            delta({"type": "signature_delta", "signature": block["signature"]}),
        ]
    return [start(block)]  # anything else is sent whole


def _materialize(block: Block) -> Block:
    block = dict(block)
    if block["type"] == "tool_use":
        block.setdefault("id", _new_id("toolu_"))
    elif block["type"] == "thinking":
        block.setdefault("signature", "fake-signature")
    return block


def _new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def _error_body(err_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": err_type, "message": message}, "request_id": _new_id("req_")}


class FakeAnthropic(fake_http.FakeServer):
    """The fake API server; a context manager that serves on a background thread.

    Attributes: ``base_url`` (``http://127.0.0.1:<port>``, no trailing slash), ``port``,
    ``requests`` (every request: ``method, path, kind, headers, body, status, step,
    time``; ``kind`` is main/subagent/compact/side/count_tokens/not_found),
    ``script_errors`` (exceptions raised by a callable script; re-raised on exit).
    """

    handler = _Handler
    name = "fake-anthropic"

    def __init__(self, script: Script | None = None) -> None:
        super().__init__()
        self.script = script
        self.script_errors: list[Exception] = []

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.stop()
        if exc_type is None and self.script_errors:
            raise self.script_errors[0]

    # inspection
    def requests_of(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["kind"] == kind]

    def _pick(self, body: dict[str, Any], kind: str, step_no: int | None) -> dict[str, Any]:
        # A list scripts main-loop requests only; a callable sees every request.
        script = self.script if callable(self.script) or (kind == "main" and step_no is not None) else None
        step = fake_http.scripted(script, body, lambda: step_no or 0)
        return _normalize(step if step is not None else _default_answer(kind))
