"""In-process fake of the OpenAI Responses API (``POST /v1/responses``, SSE), for the Codex CLI.

Stdlib only; binds 127.0.0.1 on a free port. Codex is pointed at it through a custom model
provider in ``$CODEX_HOME/config.toml`` (``wire_api = "responses"``, ``base_url`` = ``fake.base_url``)::

    with FakeResponses(script=[[call("exec_command", {"cmd": "echo hi"})], [text("done")]]) as fake:
        ...run codex exec...
        assert fake.requests

The stream is the one the real API sends: ``response.created``, then per output item
``response.output_item.added`` → deltas → ``response.output_item.done``, then
``response.completed`` with usage. Every request is recorded in ``fake.requests``.

Scripting: a *step* is one model reply, a list of items built with ``text(...)`` (an assistant
message), ``call(name, arguments)`` (a ``function_call``) or ``custom(name, input)`` (a
``custom_tool_call``, how Codex offers ``apply_patch``). ``script`` is a list of steps indexed
by ``step_index(body)`` (tool outputs since the last user message: a new session starts at 0),
or a callable ``script(body) -> step | None``; ``script_by_prompt`` picks a list per session.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from tests.support import fake_http

Item = dict[str, Any]
Step = list[Item]
ScriptFn = Callable[[dict[str, Any]], Step | None]
Script = Sequence[Step] | ScriptFn
_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


def text(s: str) -> Item:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": s,
                                                                   "annotations": []}]}


def call(name: str, arguments: Mapping[str, Any]) -> Item:
    return {"type": "function_call", "name": name, "arguments": json.dumps(dict(arguments))}


def custom(name: str, input: str) -> Item:
    return {"type": "custom_tool_call", "name": name, "input": input}


def _user_texts(item: Mapping[str, Any]) -> list[str]:
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return []
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [str(c.get("text", "")) for c in content or [] if isinstance(c, dict) and "text" in c]


def _is_prompt(s: str) -> bool:
    # Codex sends its environment and AGENTS.md as user messages in tags: not typed by anyone.
    return not s.lstrip().startswith("<")


def user_prompts(body: Mapping[str, Any]) -> list[str]:
    out = []
    for item in body.get("input") or []:
        texts = [t for t in _user_texts(item) if _is_prompt(t)]
        if texts:
            out.append("\n".join(texts))
    return out


def prompt_text(body: Mapping[str, Any]) -> str:
    prompts = user_prompts(body)
    return prompts[-1] if prompts else ""


def step_index(body: Mapping[str, Any]) -> int:
    """Tool outputs since the last user prompt in ``input``."""
    n = 0
    for item in body.get("input") or []:
        if item.get("type") in _OUTPUT_TYPES:
            n += 1
        elif any(_is_prompt(t) for t in _user_texts(item)):
            n = 0
    return n


def tool_outputs(body: Mapping[str, Any]) -> list[str]:
    """The outputs of the tool calls in the conversation so far, oldest first."""
    out = []
    for item in body.get("input") or []:
        if item.get("type") in _OUTPUT_TYPES:
            o = item.get("output")
            out.append(o if isinstance(o, str) else json.dumps(o))
    return out


def all_text(body: Mapping[str, Any]) -> str:
    """Instructions and every input item, for marker assertions."""
    return json.dumps([body.get("instructions"), body.get("input")], ensure_ascii=False)


def script_by_prompt(scripts: Mapping[str, Sequence[Step]]) -> ScriptFn:
    """Answer with the step list whose key occurs in the session's first prompt."""
    return fake_http.script_by_first_prompt(scripts, user_prompts, step_index)


class _Handler(fake_http.FakeHandler):
    server_version = "fake-responses/1"

    def _body(self) -> Any:
        raw = self.read_body()
        if self.headers.get("content-encoding") == "zstd":
            raise ValueError("zstd request bodies are not supported by the fake")
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return raw.decode("utf-8", "replace")

    def do_GET(self) -> None:
        self.record(None)
        if self.path.split("?")[0].endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
            return
        self._not_found()

    def do_POST(self) -> None:
        body = self._body()
        rec = self.record(body)
        if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
            self._not_found()
            return
        items = cast(FakeResponses, self.server.fake)._pick(body)
        rec["reply"] = items
        self._stream(str(body.get("model") or "fake-model"), items)

    def _not_found(self) -> None:
        self.send_json(404, {"error": {"message": f"fake: no route {self.path}", "type": "invalid_request_error"}})

    def _stream(self, model: str, items: Step) -> None:
        self.start_stream()
        seq = iter(range(1_000_000))
        rid = "resp_" + uuid.uuid4().hex[:24]

        def send(kind: str, data: dict[str, Any]) -> None:
            data = {"type": kind, "sequence_number": next(seq), **data}
            self.send_event(data, event=kind)

        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
        send("response.created", {"response": {**base, "status": "in_progress", "output": []}})
        done: list[Item] = []
        for index, raw in enumerate(items):
            item = _materialize(raw)
            done.append(item)
            if item["type"] == "message":
                send("response.output_item.added", {"output_index": index,
                                                    "item": {**item, "content": [], "status": "in_progress"}})
                part = item["content"][0]
                send("response.content_part.added", {"item_id": item["id"], "output_index": index,
                                                     "content_index": 0, "part": {**part, "text": ""}})
                send("response.output_text.delta", {"item_id": item["id"], "output_index": index,
                                                    "content_index": 0, "delta": part["text"]})
                send("response.output_text.done", {"item_id": item["id"], "output_index": index,
                                                   "content_index": 0, "text": part["text"]})
                send("response.content_part.done", {"item_id": item["id"], "output_index": index,
                                                    "content_index": 0, "part": part})
            elif item["type"] == "function_call":
                send("response.output_item.added", {"output_index": index,
                                                    "item": {**item, "arguments": "", "status": "in_progress"}})
                send("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index,
                                                                "delta": item["arguments"]})
                send("response.function_call_arguments.done", {"item_id": item["id"], "output_index": index,
                                                               "arguments": item["arguments"]})
            else:
                send("response.output_item.added", {"output_index": index,
                                                    "item": {**item, "input": "", "status": "in_progress"}})
                send("response.custom_tool_call_input.delta", {"item_id": item["id"], "output_index": index,
                                                               "delta": item["input"]})
                send("response.custom_tool_call_input.done", {"item_id": item["id"], "output_index": index,
                                                              "input": item["input"]})
            send("response.output_item.done", {"output_index": index, "item": item})
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
        send("response.completed", {"response": {**base, "status": "completed", "output": done, "usage": usage}})


def _materialize(raw: Item) -> Item:
    item = {**raw, "status": "completed"}
    if item["type"] == "message":
        item["id"] = "msg_" + uuid.uuid4().hex[:24]
    else:
        item["id"] = "fc_" + uuid.uuid4().hex[:24]
        item["call_id"] = "call_" + uuid.uuid4().hex[:24]
    return item


class FakeResponses(fake_http.FakeServer):
    """The fake server; ``base_url`` ends in ``/v1``."""

    handler = _Handler
    name = "fake-responses"
    api_root = "/v1"

    def __init__(self, script: Script | None = None) -> None:
        super().__init__()
        self.script = script

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"].split("?")[0].endswith("/responses")]

    def _pick(self, body: dict[str, Any]) -> Step:
        step = fake_http.scripted(self.script, body, lambda: step_index(body))
        return step if step else [text("ok")]
