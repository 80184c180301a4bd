"""SDK exceptions to ProviderError kinds (the anthropic and openai SDKs share their shapes)."""

from __future__ import annotations

from kenning.observer.llm.base import ProviderError


def classify(exc: Exception) -> ProviderError:
    """Map an SDK exception to a ProviderError kind (works for the anthropic and openai SDKs alike)."""
    status = getattr(exc, "status_code", None)
    message = str(exc) or type(exc).__name__
    low = message.lower()
    retry_after: float | None = None
    response = getattr(exc, "response", None)
    if response is not None:
        raw = getattr(response, "headers", {}).get("retry-after")
        try:
            retry_after = float(raw) if raw is not None else None
        except ValueError:
            retry_after = None
    if isinstance(status, int):
        if status in (402, 429) or "credit balance" in low or "insufficient_quota" in low or "usage limit" in low:
            return ProviderError("quota", message, retry_after)
        if status in (401, 403):
            return ProviderError("auth", message)
        if status in (408, 409) or status >= 500:
            return ProviderError("transient", message, retry_after)
        return ProviderError("fatal", message)
    return ProviderError("transient", message)  # connection refused, timeout, reset
