"""Settings as the viewer's form describes them, and which take effect without a restart.

Hooks read settings.json on every call, so whatever only they use is live at once; the
worker re-reads the file after a save and swaps in the new values for context building and
search. The observer, the port, logging and the embedding model are built when the worker
starts: changing them says "restart needed".
"""

from __future__ import annotations

import os
from typing import Any

from kenning.settings import ENV_PREFIX, SPECS, Settings, _default, _to_json

# Shown by default in the viewer; the rest sit behind "show all settings".
COMMON = ("provider", "model", "cheap_model", "daily_token_budget", "max_concurrent_conversations",
          "context_observations", "context_sessions", "context_max_chars", "file_context", "prompt_context",
          "prompt_context_limit", "excluded_projects", "skip_tools", "redact_secrets", "optout_marker",
          "embedding_backend", "search_trigram", "log_level")
# Read by the worker only when it starts (everything else is read per hook call or per request).
RESTART = frozenset({"port", "provider", "mode", "model", "cheap_model", "base_url", "api_key_env",
                     "max_concurrent_conversations", "idle_timeout_s", "max_conversation_chars", "max_output_tokens",
                     "daily_token_budget", "log_level", "log_max_bytes", "log_backups", "turn_idle_seconds",
                     "embedding_backend", "embedding_model", "embedding_url", "search_trigram"})


def kind(name: str) -> str:
    default = _default(name)
    if SPECS[name].choices:
        return "choice"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, tuple):
        return "list"
    return "str"


def describe(settings: Settings, environ: dict[str, str] | None = None) -> list[dict[str, Any]]:
    env = os.environ if environ is None else environ
    out = []
    for name, spec in SPECS.items():
        d: dict[str, Any] = {"name": name, "value": _to_json(getattr(settings, name)),
                             "default": _to_json(_default(name)), "help": spec.help, "kind": kind(name),
                             "common": name in COMMON, "live": name not in RESTART}
        if spec.choices:
            d["choices"] = list(spec.choices)
        if spec.min is not None:
            d["min"] = spec.min
        if spec.max is not None:
            d["max"] = spec.max
        var = ENV_PREFIX + name.upper()
        if var in env:
            d["env"] = var  # the environment wins over the file: a saved value will not show
        out.append(d)
    return out


def problems_by_name(errors: list[str]) -> dict[str, str]:
    """``settings.save`` errors ("name: message") keyed by setting name."""
    out: dict[str, str] = {}
    for e in errors:
        name, sep, message = e.partition(": ")
        if sep and name in SPECS:
            # settings.load's wording ("…; ignored") is about a bad file; a refused save keeps nothing.
            out[name] = message.removesuffix("; ignored").removesuffix(" ignored")
        elif e.startswith("unknown setting "):
            out[e[len("unknown setting "):].strip("'\"")] = "unknown setting"
        else:
            out.setdefault("_", e)
    return out
