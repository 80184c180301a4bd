"""Feature routes of the worker's HTTP API, one module each.

Every module listed in ``MODULES`` exposes ``routes(state) -> list[Route]``; the app mounts
them behind the same security guard as the core routes.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

MODULES: list[str] = ["memory", "search", "context", "viewer"]


def feature_routes(state: Any) -> list[Any]:
    out: list[Any] = []
    for name in MODULES:
        out.extend(import_module(f"engram.worker.routes.{name}").routes(state))
    return out
