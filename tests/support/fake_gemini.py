"""In-process fake of the Gemini API (``models/<m>:streamGenerateContent?alt=sse``), for the Gemini CLI.

Stdlib only; binds 127.0.0.1 on a free port. The CLI is pointed at it with
``GOOGLE_GEMINI_BASE_URL=fake.base_url`` and ``GEMINI_API_KEY``::

    with FakeGemini(script=[[call("run_shell_command", {"command": "echo hi"})], [text("done")]]) as fake:
        ...run gemini -p...

Streaming answers are SSE ``data:`` lines, each a ``GenerateContentResponse`` (candidates with
``content.parts``, ``finishReason``, ``usageMetadata``), as the real API sends them. The CLI's
side requests (``:generateContent`` for routing or checks, ``:countTokens``) get small valid
answers. Every request is recorded in ``fake.requests``.

Scripting: a *step* is one model reply, a list of parts built with ``text(...)`` and
``call(name, args)`` (a ``functionCall``). ``script`` is a list of steps indexed by
``step_index(body)`` (function responses since the last user prompt), or a callable
``script(body) -> step | None``; ``script_by_prompt`` picks a list per session.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from tests.support import fake_http

Part = dict[str, Any]
Step = list[Part]
ScriptFn = Callable[[dict[str, Any]], Step | None]
Script = Sequence[Step] | ScriptFn


def text(s: str) -> Part:
    return {"text": s}


def call(name: str, args: Mapping[str, Any]) -> Part:
    return {"functionCall": {"name": name, "args": dict(args)}}


def _parts(content: Mapping[str, Any]) -> list[Part]:
    return [p for p in content.get("parts") or [] if isinstance(p, dict)]


def _prompt_texts(content: Mapping[str, Any]) -> list[str]:
    """The user's own text parts: the CLI's ``<session_context>`` part and the ``<hook_context>``
    blocks that hooks put in front of a prompt are not typed by anyone."""
    if content.get("role") != "user":
        return []
    out = []
    for p in _parts(content):
        t = str(p.get("text", "")) if "text" in p else None
        if t is None or t.lstrip().startswith("<session_context>"):
            continue
        while t.startswith("<hook_context>") and "</hook_context>" in t:
            t = t[t.index("</hook_context>") + len("</hook_context>"):].lstrip("\n")
        if t.strip():
            out.append(t)
    return out


def user_prompts(body: Mapping[str, Any]) -> list[str]:
    """User turns that hold text (hook context arrives inside them too)."""
    out = []
    for content in body.get("contents") or []:
        texts = _prompt_texts(content)
        if texts:
            out.append("\n".join(texts))
    return out


def step_index(body: Mapping[str, Any]) -> int:
    n = 0
    for content in body.get("contents") or []:
        if content.get("role") != "user":
            continue
        for p in _parts(content):
            if "functionResponse" in p:
                n += 1
            elif "text" in p:
                n = 0
    return n


def function_responses(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p["functionResponse"] for c in body.get("contents") or [] for p in _parts(c) if "functionResponse" in p]


def all_text(body: Mapping[str, Any]) -> str:
    return json.dumps([body.get("systemInstruction"), body.get("contents")], ensure_ascii=False)


def offered_tools(body: Mapping[str, Any]) -> list[str]:
    return [str(f.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)
            for f in t.get("functionDeclarations") or [] if isinstance(f, dict)]


def script_by_prompt(scripts: Mapping[str, Sequence[Step]]) -> ScriptFn:
    """Answer with the step list whose key occurs in the session's first user text."""
    return fake_http.script_by_first_prompt(scripts, user_prompts, step_index)


class _Handler(fake_http.FakeHandler):
    server_version = "fake-gemini/1"

    @property
    def fake(self) -> FakeGemini:
        return cast(FakeGemini, self.server.fake)

    def _body(self) -> Any:
        raw = self.read_body()
        try:
            return json.loads(raw or b"null")
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, status: int, obj: Any) -> None:
        self.send_json(status, obj, content_type="application/json; charset=UTF-8")

    def do_GET(self) -> None:
        self.record(None)
        self._json(404, _error(404, f"fake: no route {self.path}"))

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?")[0]
        rec = self.record(body)
        if not isinstance(body, dict):
            self._json(400, _error(400, "fake: body is not JSON"))
            return
        model = path.rsplit("/", 1)[-1].split(":")[0]
        if path.endswith(":countTokens"):
            self._json(200, {"totalTokens": len(json.dumps(body)) // 4})
        elif path.endswith(":streamGenerateContent"):
            parts = self.fake._pick(body)
            rec["reply"] = parts
            self._stream(model, parts)
        elif path.endswith(":generateContent"):
            # Side calls (model routing, next-speaker and loop checks) ask for JSON by schema.
            answer = self.fake.side_answer(body)
            rec["reply"] = answer
            self._json(200, _response(model, [text(answer)]))
        else:
            self._json(404, _error(404, f"fake: no route {self.path}"))

    def _stream(self, model: str, parts: Step) -> None:
        self.start_stream()
        # One chunk per part, the finish reason and usage on the last, as the API streams them.
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            chunk = _response(model, [part], finished=last)
            self.send_event(chunk, end="\r\n\r\n")


def _response(model: str, parts: Step, finished: bool = True) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {"candidates": [cand], "modelVersion": model, "responseId": uuid.uuid4().hex[:20]}
    if finished:
        cand["finishReason"] = "STOP"
        out["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
    return out


def _error(status: int, message: str) -> dict[str, Any]:
    names = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}


def _default_side_answer(body: Mapping[str, Any]) -> str:
    schema = json.dumps((body.get("generationConfig") or {}).get("responseJsonSchema")
                        or (body.get("generationConfig") or {}).get("responseSchema") or {})
    if "next_speaker" in schema:
        return json.dumps({"reasoning": "The model finished its turn.", "next_speaker": "user"})
    if "model_choice" in schema:
        return json.dumps({"reasoning": "Simple task.", "model_choice": "flash"})
    return json.dumps({"reasoning": "ok"}) if schema != "{}" else "ok"


class FakeGemini(fake_http.FakeServer):
    """The fake server; ``base_url`` is the API root (no path)."""

    handler = _Handler
    name = "fake-gemini"

    def __init__(self, script: Script | None = None) -> None:
        super().__init__()
        self.script = script
        self.side_answer: Callable[[Mapping[str, Any]], str] = _default_side_answer

    def model_requests(self) -> list[dict[str, Any]]:
        """The main-loop requests (streamed, with tools offered)."""
        return [r for r in self.requests if r["path"].split("?")[0].endswith(":streamGenerateContent")]

    def _pick(self, body: dict[str, Any]) -> Step:
        step = fake_http.scripted(self.script, body, lambda: step_index(body))
        return step if step else [text("ok")]
