"""Feature routes of the worker's HTTP API, one module each.

Every module listed in ``MODULES`` exposes ``routes(state) -> list[Route]``; the app mounts
them behind the same security guard as the core routes.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any


class BadRequest(ValueError):
    """A client error every route module raises: 400 (or ``status``) with the message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


MODULES: list[str] = ["memory", "search", "context", "viewer", "ledger", "bulk", "written", "team"]


def feature_routes(state: Any) -> list[Any]:
    out: list[Any] = []
    for name in MODULES:
        out.extend(import_module(f"kenning.worker.routes.{name}").routes(state))
    return out
