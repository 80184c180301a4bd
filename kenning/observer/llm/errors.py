"""SDK exceptions to ProviderError kinds (the anthropic and openai SDKs share their shapes)."""

from __future__ import annotations

import errno
import socket

from kenning.observer.llm.base import ProviderError

# What a refused or impossible connection says, from the OS up through httpx and the SDKs.
DNS = "host name not found (DNS)"
UNREACHABLE = (("connection refused", "connection refused"), ("name or service not known", DNS),
               ("nodename nor servname", DNS), ("getaddrinfo failed", DNS), ("no address associated", DNS),
               ("temporary failure in name resolution", "host name not resolved (DNS)"),
               ("network is unreachable", "network unreachable"), ("no route to host", "no route to host"))
ERRNOS = {errno.ECONNREFUSED: "connection refused", errno.ENETUNREACH: "network unreachable",
          errno.EHOSTUNREACH: "no route to host"}


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it was raised from or during (the SDK wraps httpx, which wraps the OS)."""
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in out and len(out) < 10:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def connection_cause(exc: BaseException) -> str:
    """'connection refused', 'host name not found (DNS)' …, or "" when a connection was made."""
    for e in _chain(exc):
        if isinstance(e, socket.gaierror):
            return DNS
        no = getattr(e, "errno", None)
        if isinstance(e, OSError) and isinstance(no, int) and no in ERRNOS:
            return ERRNOS[no]
        low = str(e).lower()
        for needle, phrase in UNREACHABLE:
            if needle in low:
                return phrase
    return ""


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
        cause = f"HTTP {status}"
        if status in (402, 429) or "credit balance" in low or "insufficient_quota" in low or "usage limit" in low:
            return ProviderError("quota", message, retry_after, cause=cause)
        if status in (401, 403):
            return ProviderError("auth", message, cause=cause)
        if status in (408, 409) or status >= 500:
            return ProviderError("transient", message, retry_after, cause=cause)
        return ProviderError("fatal", message, cause=cause)
    unreachable = connection_cause(exc)
    if unreachable:
        return ProviderError("transient", message, cause=unreachable, unreachable=True)
    timed_out = "timed out" in low or "timeout" in type(exc).__name__.lower()
    return ProviderError("transient", message, cause="timed out" if timed_out else "")  # reset, timeout
