"""Provider ``openai``: Chat Completions through the official SDK, against any compatible server.

OpenAI itself, or whatever ``base_url`` points at: Ollama, vLLM, LM Studio, OpenRouter. The
history is resent each turn (the prefix stays identical, so servers that cache prompt
prefixes, OpenAI's included, reuse it). Local servers need no key. Streaming is supported
for servers that prefer it; usage then comes from the final chunk, or is estimated.
"""

from __future__ import annotations

import threading
from typing import Any

from kenning.observer.llm.base import ProviderError, Usage
from kenning.observer.llm.errors import classify
from kenning.records import tokens_of

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_HOST = "api.openai.com"
TIMEOUT_S = 120.0
NO_KEY = "not-needed"  # local servers accept any key; the SDK insists on one


class OpenAIConversation:
    def __init__(self, provider: OpenAIProvider, system: str) -> None:
        self._provider = provider
        self._messages: list[dict[str, str]] = [{"role": "system", "content": system}]
        self._chars = len(system)
        self._closed = False

    @property
    def size_chars(self) -> int:
        return self._chars

    def send(self, text: str, *, model: str, max_tokens: int) -> tuple[str, Usage]:
        if self._closed:
            raise ProviderError("transient", "conversation closed")
        p = self._provider
        messages = [*self._messages, {"role": "user", "content": text}]
        # OpenAI's newer models refuse max_tokens; most compatible servers only know it.
        limit = {"max_completion_tokens": max_tokens} if p.is_openai else {"max_tokens": max_tokens}
        try:
            if p.stream:
                reply, usage = _streamed(p.client(), model, messages, limit)
            else:
                resp = p.client().chat.completions.create(model=model, messages=messages, **limit)
                choice = resp.choices[0] if resp.choices else None
                reply = (choice.message.content if choice and choice.message else "") or ""
                usage = _usage(getattr(resp, "usage", None))
        except ProviderError:
            raise
        except Exception as e:
            raise classify(e) from e
        if usage is None:
            chars = sum(len(m["content"]) for m in messages)
            usage = Usage(tokens_in=tokens_of(chars), tokens_out=tokens_of(len(reply)))
        self._messages.append({"role": "user", "content": text})
        self._messages.append({"role": "assistant", "content": reply})
        self._chars += len(text) + len(reply)
        return reply, usage

    def close(self) -> None:
        self._closed = True
        self._messages = self._messages[:1]


def _usage(u: Any) -> Usage | None:
    if u is None:
        return None
    prompt = int(getattr(u, "prompt_tokens", 0) or 0)
    details = getattr(u, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(tokens_in=max(0, prompt - cached), tokens_out=int(getattr(u, "completion_tokens", 0) or 0),
                 cache_read=cached)


def _streamed(client: Any, model: str, messages: list[dict[str, str]],
              limit: dict[str, int]) -> tuple[str, Usage | None]:
    parts: list[str] = []
    usage: Usage | None = None
    stream = client.chat.completions.create(model=model, messages=messages, stream=True,
                                            stream_options={"include_usage": True}, **limit)
    try:
        for chunk in stream:
            for choice in chunk.choices or []:
                delta = getattr(choice, "delta", None)
                if delta is not None and getattr(delta, "content", None):
                    parts.append(delta.content)
            if getattr(chunk, "usage", None) is not None:
                usage = _usage(chunk.usage)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return "".join(parts), usage


class OpenAIProvider:
    name = "openai"

    def __init__(self, api_key: str, *, base_url: str = "", stream: bool = False, timeout: float = TIMEOUT_S) -> None:
        self._api_key = api_key or NO_KEY
        self._has_key = bool(api_key)
        self._base_url = base_url or None
        self.stream = stream
        self.is_openai = not base_url or OPENAI_HOST in base_url
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai  # heavy: only ever in the worker, on the first call

                self._client = openai.OpenAI(api_key=self._api_key, base_url=self._base_url, max_retries=0,
                                             timeout=self._timeout)
            return self._client

    def open(self, system: str) -> OpenAIConversation:
        return OpenAIConversation(self, system)

    def available(self) -> tuple[bool, str]:
        from importlib.util import find_spec

        if find_spec("openai") is None:
            return False, "the openai SDK is not installed (kenning extras add openai)"
        if not self._has_key and self.is_openai:
            return False, "no API key and no base_url of a local server"
        return True, "ok"
