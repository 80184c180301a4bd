"""Search: safe FTS5 queries, filters, embeddings and vectors, fusion, timeline, full records.

The public API lives in :mod:`kenning.search.service` (``search``, ``timeline``,
``get_observations``, ``Hit``); it is re-exported here lazily so importing the package
stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Hit", "get_observations", "search", "timeline"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kenning.search import service

        return getattr(service, name)
    raise AttributeError(name)
