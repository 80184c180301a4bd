"""Choosing the observer provider from settings."""

from __future__ import annotations

from engram.observer.base import Observer
from engram.observer.providers.rules import RulesObserver
from engram.settings import Settings


def choose(settings: Settings) -> tuple[Observer, str]:
    """The provider to use and why. Without a configured model, ``rules`` serves every feature."""
    wanted = settings.provider
    rules = RulesObserver(turn_idle_seconds=settings.turn_idle_seconds)
    if wanted in ("auto", "rules"):
        why = "no model configured" if wanted == "auto" else "chosen in settings"
        return rules, f"rules: offline observer ({why})"
    return rules, f"rules: provider {wanted!r} is not available in this version; using the offline observer"
