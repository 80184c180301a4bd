"""Choosing the observer provider from settings, and saying why.

``auto`` takes the first model that can run here: an Anthropic API key, then an OpenAI key
or an OpenAI-compatible ``base_url``, then a Claude Code login through claude-agent-sdk;
otherwise the offline ``rules`` observer, which serves every feature.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from kenning.observer.base import Observer
from kenning.observer.llm import providers
from kenning.observer.llm.base import ChatProvider
from kenning.observer.providers.rules import RulesObserver
from kenning.paths import Paths
from kenning.settings import Settings


def resolve(settings: Settings, *, paths: Paths | None = None,
            env: Mapping[str, str] | None = None) -> tuple[ChatProvider | None, str]:
    """The chat provider to use (None: rules) and a one-line reason, without importing any SDK."""
    env = os.environ if env is None else env
    wanted = settings.provider
    if wanted == "rules":
        return None, "rules: offline observer (chosen in settings)"
    order = providers.NETWORK if wanted == "auto" else (wanted,)
    reasons: list[str] = []
    for name in order:
        provider, why = providers.create(name, settings, paths=paths, env=env)
        if provider is not None:
            model = settings.model or providers.default_model(name)
            how = "picked by auto" if wanted == "auto" else "chosen in settings"
            label = f"{name} ({model})" if model else name
            return provider, f"{label}: {how}; {why}"
        reasons.append(f"{name}: {why}")
    if wanted == "auto":
        return None, "rules: offline observer (no model available; " + "; ".join(reasons) + ")"
    return None, f"rules: provider {wanted!r} is not available ({reasons[0]}); using the offline observer"


def choose(settings: Settings, *, paths: Paths | None = None,
           env: Mapping[str, str] | None = None) -> tuple[Observer, str]:
    """The observer to run and why. Without a usable model, ``rules`` serves every feature."""
    rules = RulesObserver(turn_idle_seconds=settings.turn_idle_seconds)
    provider, why = resolve(settings, paths=paths, env=env)
    if provider is None:
        return rules, why
    from kenning.observer.llm.observer import Config, LLMObserver
    from kenning.observer.modes import load_mode

    paths = paths or Paths()
    config = Config(model=settings.model or providers.default_model(provider.name), cheap_model=settings.cheap_model,
                    max_concurrent=settings.max_concurrent_conversations, idle_timeout_s=settings.idle_timeout_s,
                    max_conversation_chars=settings.max_conversation_chars,
                    max_output_tokens=settings.max_output_tokens, daily_token_budget=settings.daily_token_budget,
                    prompt_wait_s=settings.turn_idle_seconds, endpoint=settings.base_url,
                    key_var=providers.api_key(provider.name, settings, os.environ if env is None else env)[1])
    return LLMObserver(provider, config, load_mode(settings.mode, paths.modes), fallback=rules), why
