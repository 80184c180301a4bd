"""Building a chat provider from settings, and saying why one is (not) available.

Nothing here imports an SDK: availability is decided with ``importlib.util.find_spec`` and
environment variables, so ``kenning doctor`` stays fast. API keys are read from the
environment only (``api_key_env``, else ``KENNING_<PROVIDER>_API_KEY``, else the provider's
usual variable); settings.json never holds one.

The ``claude`` provider lives in ``kenning.observer.llm.claude_agent``: its
``create(settings, paths)`` when it has one, else ``ClaudeAgentProvider(data_dir=...)``;
its ``available()`` says whether the SDK is installed and the user is logged in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import import_module
from importlib.util import find_spec

from kenning.observer.llm.base import ChatProvider
from kenning.paths import Paths
from kenning.settings import Settings

NETWORK = ("anthropic", "openai", "claude")
KEY_VARS = {"anthropic": ("KENNING_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
            "openai": ("KENNING_OPENAI_API_KEY", "OPENAI_API_KEY")}


def api_key(name: str, settings: Settings, env: Mapping[str, str]) -> tuple[str, str]:
    """(key, the variable it came from); ("", "") when none is set."""
    names = (settings.api_key_env,) if settings.api_key_env else KEY_VARS.get(name, ())
    for var in names:
        if env.get(var):
            return env[var], var
    return "", ""


def default_model(name: str) -> str:
    if name == "anthropic":
        from kenning.observer.llm.anthropic_api import DEFAULT_MODEL as model
    elif name == "openai":
        from kenning.observer.llm.openai_api import DEFAULT_MODEL as model
    else:
        model = ""
    return model


def create(name: str, settings: Settings, *, paths: Paths | None = None,
           env: Mapping[str, str] | None = None) -> tuple[ChatProvider | None, str]:
    """The provider ``name`` if it can run here, and why (or why not)."""
    env = os.environ if env is None else env
    if name == "anthropic":
        if find_spec("anthropic") is None:
            return None, "the anthropic SDK is not installed (kenning extras add anthropic)"
        key, var = api_key(name, settings, env)
        if not key:
            names = (settings.api_key_env,) if settings.api_key_env else KEY_VARS["anthropic"]
            return None, f"no API key in {' or '.join(names)}"
        from kenning.observer.llm.anthropic_api import AnthropicProvider

        where = f" at {settings.base_url}" if settings.base_url else ""
        return AnthropicProvider(key, base_url=settings.base_url), f"API key from {var}{where}"
    if name == "openai":
        if find_spec("openai") is None:
            return None, "the openai SDK is not installed (kenning extras add openai)"
        key, var = api_key(name, settings, env)
        if not key and not settings.base_url:
            return None, "neither an API key (OPENAI_API_KEY) nor a base_url of a compatible server"
        from kenning.observer.llm.openai_api import OpenAIProvider

        why = (f"API key from {var}" if key else "no key (local server)") + (
            f" at {settings.base_url}" if settings.base_url else "")
        return OpenAIProvider(key, base_url=settings.base_url), why
    if name == "claude":
        if find_spec("claude_agent_sdk") is None:
            return None, "claude-agent-sdk is not installed (kenning extras add claude)"
        try:
            module = import_module("kenning.observer.llm.claude_agent")  # light: the SDK loads on first use
            factory = getattr(module, "create", None)
            provider: ChatProvider = (factory(settings, paths or Paths()) if factory is not None
                                      else module.ClaudeAgentProvider(data_dir=(paths or Paths()).root))
            ok, why = provider.available()
        except Exception as e:  # a broken optional extra must never stop the worker
            return None, f"claude provider unusable: {type(e).__name__}: {e}"
        return (provider, why) if ok else (None, why)
    return None, f"unknown provider {name!r}"
