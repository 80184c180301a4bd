"""Feature commands of the ``kenning`` CLI, one module each.

Every module listed in ``MODULES`` exposes ``register(sub)`` which adds its sub-command(s)
to the argparse sub-parsers (each with ``set_defaults(func=...)``). Keeping features in
their own modules keeps ``kenning/cli.py`` small and lets them grow independently.
"""

from __future__ import annotations

import argparse
from importlib import import_module

MODULES: list[str] = ["install", "extras", "memory", "mcp", "repair", "search", "stats", "supersede", "pin", "viewer",
                     "history", "completion", "team", "stale", "audit"]


def register_all(sub: argparse._SubParsersAction) -> None:
    for name in MODULES:
        import_module(f"kenning.commands.{name}").register(sub)
