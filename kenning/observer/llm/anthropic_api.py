"""Provider ``anthropic``: the Messages API through the official SDK, with prompt caching.

The conversation keeps its history here and resends it each turn, so the request prefix
(system prompt + every earlier turn) is identical from one call to the next: it is marked
cacheable twice, on the system block and on the newest user turn, so each call reads the
previous call's prefix from the cache and only pays full price for the new events.

The SDK is imported on first use, in the worker only. Its own retries are off: a failed
call leaves the events pending and the observer backs off (a retry loop inside the SDK
would hide a usage limit and burn time).
"""

from __future__ import annotations

import threading
from typing import Any

from kenning.observer.llm.base import ProviderError, Usage
from kenning.observer.llm.errors import classify

DEFAULT_MODEL = "claude-haiku-4-5"
TIMEOUT_S = 120.0
EMPTY_REPLY = "<skip/>"  # the API refuses empty assistant turns in the history
_CACHE = {"type": "ephemeral"}


class AnthropicConversation:
    def __init__(self, provider: AnthropicProvider, system: str) -> None:
        self._provider = provider
        self._system = system
        self._history: list[dict[str, Any]] = []
        self._chars = len(system)
        self._closed = False

    @property
    def size_chars(self) -> int:
        return self._chars

    def send(self, text: str, *, model: str, max_tokens: int) -> tuple[str, Usage]:
        if self._closed:
            raise ProviderError("transient", "conversation closed")
        client = self._provider.client()
        turn = {"role": "user", "content": [{"type": "text", "text": text, "cache_control": _CACHE}]}
        try:
            resp = client.messages.create(
                model=model, max_tokens=max_tokens,
                system=[{"type": "text", "text": self._system, "cache_control": _CACHE}],
                messages=[*self._history, turn])
        except Exception as e:
            raise classify(e) from e
        reply = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", "") == "text")
        u = resp.usage
        usage = Usage(tokens_in=int(u.input_tokens or 0), tokens_out=int(u.output_tokens or 0),
                      cache_read=int(getattr(u, "cache_read_input_tokens", 0) or 0),
                      cache_write=int(getattr(u, "cache_creation_input_tokens", 0) or 0))
        # History without the cache marks: only the newest turn carries one (the API allows four).
        self._history.append({"role": "user", "content": [{"type": "text", "text": text}]})
        self._history.append({"role": "assistant", "content": [{"type": "text", "text": reply.strip() or EMPTY_REPLY}]})
        self._chars += len(text) + len(reply)
        return reply, usage

    def close(self) -> None:
        self._closed = True
        self._history = []


class AnthropicProvider:
    """Opens Messages API conversations; one SDK client shared by all of them."""

    name = "anthropic"

    def __init__(self, api_key: str, *, base_url: str = "", timeout: float = TIMEOUT_S) -> None:
        self._api_key = api_key
        self._base_url = base_url or None
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                import anthropic  # ~1 s: only ever in the worker, on the first call

                self._client = anthropic.Anthropic(api_key=self._api_key, base_url=self._base_url,
                                                   max_retries=0, timeout=self._timeout)
            return self._client

    def open(self, system: str) -> AnthropicConversation:
        return AnthropicConversation(self, system)

    def available(self) -> tuple[bool, str]:
        from importlib.util import find_spec

        if find_spec("anthropic") is None:
            return False, "the anthropic SDK is not installed (kenning extras add anthropic)"
        if not self._api_key:
            return False, "no API key"
        return True, "ok"
