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

# The form's sections, in order, each setting with the label a person reads (the key is shown small).
SECTIONS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("observer", "Observer: the model that writes memory", (
        ("provider", "Who writes the memories"), ("mode", "Mode (what is worth remembering)"),
        ("model", "Model"), ("cheap_model", "Model for read-only work"), ("base_url", "API address"),
        ("api_key_env", "Environment variable with the API key"),
        ("daily_token_budget", "Daily token budget"), ("max_concurrent_conversations", "Conversations at once"),
        ("idle_timeout_s", "Close an idle conversation after (seconds)"),
        ("max_conversation_chars", "Start a conversation afresh past (characters)"),
        ("max_output_tokens", "Longest reply (tokens)"),
        ("turn_idle_seconds", "Close a turn with no answer after (seconds)"))),
    ("session-start", "What a new session is told", (
        ("context_observations", "Observations listed"), ("context_sessions", "Session summaries listed"),
        ("context_max_chars", "Size limit (characters)"),
        ("context_timeout_ms", "Wait for the worker at most (ms)"))),
    ("file-context", "When the agent reads a file", (
        ("file_context", "Tell the agent the file's history"),
        ("file_context_min_bytes", "Only for files of at least (bytes)"),
        ("file_context_limit", "Observations in a file's history"),
        ("file_context_timeout_ms", "Wait for the history at most (ms)"))),
    ("prompt-context", "Next to each prompt", (
        ("prompt_context", "Give relevant memories with each prompt"),
        ("prompt_context_limit", "Memories per prompt"),
        ("prompt_context_min_chars", "Only for prompts of at least (characters)"),
        ("prompt_context_min_relevance", "Minimum keyword relevance (%)"),
        ("prompt_context_min_similarity", "Minimum similarity in meaning"),
        ("prompt_context_timeout_ms", "Wait for memories at most (ms)"),
        ("prompt_context_semantic_ms", "Wait for the meaning search at most (ms)"))),
    ("privacy", "Privacy and what is captured", (
        ("redact_secrets", "Redact secrets before they are saved"), ("optout_marker", "Opt-out marker in a prompt"),
        ("excluded_projects", "Projects never captured"), ("skip_tools", "Tools never captured"),
        ("redact_disabled", "Built-in secret detectors turned off"), ("redact_custom", "Extra secret patterns"),
        ("max_field_chars", "Longest captured text field (characters)"),
        ("hook_max_stdin_bytes", "Largest hook payload read in full (bytes)"),
        ("poke_timeout_ms", "Capture hook waits for the worker at most (ms)"))),
    ("search", "Search", (
        ("embedding_backend", "Search by meaning with"), ("embedding_model", "Embedding model"),
        ("embedding_url", "Embedding server address"), ("embedding_threads", "Threads embedding a backlog"),
        ("search_trigram", "Also match parts of words"),
        ("search_fts_weight", "Weight of keyword matches"), ("search_vector_weight", "Weight of meaning matches"),
        ("search_some_terms_weight", "Weight of partial keyword matches"),
        ("search_rrf_k", "Fusion constant (k)"), ("search_recency_weight", "Boost for recent memories"),
        ("search_recency_half_life_days", "Recency half-life (days)"),
        ("search_min_similarity", "Ignore meaning matches below"))),
    ("worker", "Worker", (
        ("port", "Port on 127.0.0.1"), ("log_level", "Log detail"), ("log_max_bytes", "Rotate the log at (bytes)"),
        ("log_backups", "Old log files kept"))),
)
LABEL = {name: label for _, _, fields in SECTIONS for name, label in fields}
SECTION = {name: sid for sid, _, fields in SECTIONS for name, _ in fields}

# Shown by default in the viewer; the rest sit behind "show all settings".
COMMON = ("provider", "mode", "model", "cheap_model", "daily_token_budget", "max_concurrent_conversations",
          "context_observations", "context_sessions", "context_max_chars", "file_context", "prompt_context",
          "prompt_context_limit", "excluded_projects", "skip_tools", "redact_secrets", "optout_marker",
          "embedding_backend", "search_trigram", "log_level")
# Read by the worker only when it starts (everything else is read per hook call or per request).
RESTART = frozenset({"port", "provider", "mode", "model", "cheap_model", "base_url", "api_key_env",
                     "max_concurrent_conversations", "idle_timeout_s", "max_conversation_chars", "max_output_tokens",
                     "daily_token_budget", "log_level", "log_max_bytes", "log_backups", "turn_idle_seconds",
                     "embedding_backend", "embedding_model", "embedding_url", "embedding_threads",
                     "search_trigram"})


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


def sections() -> list[dict[str, str]]:
    return [{"id": sid, "title": title} for sid, title, _ in SECTIONS]


def describe(settings: Settings, environ: dict[str, str] | None = None,
             modes: list[str] | None = None) -> list[dict[str, Any]]:
    """Every setting as the form shows it; ``modes`` (the modes that exist) makes ``mode`` a choice."""
    env = os.environ if environ is None else environ
    out = []
    for name, spec in SPECS.items():
        d: dict[str, Any] = {"name": name, "label": LABEL.get(name, name.replace("_", " ").capitalize()),
                             "section": SECTION.get(name, "worker"), "value": _to_json(getattr(settings, name)),
                             "default": _to_json(_default(name)), "help": spec.help, "kind": kind(name),
                             "common": name in COMMON, "live": name not in RESTART}
        if spec.choices:
            d["choices"] = list(spec.choices)
        elif name == "mode" and modes:
            d["kind"] = "choice"
            d["choices"] = list(modes)  # an unknown current one runs as `code`, which the form then shows
        if spec.min is not None:
            d["min"] = spec.min
        if spec.max is not None:
            d["max"] = spec.max
        var = ENV_PREFIX + name.upper()
        if var in env:
            d["env"] = var  # the environment wins over the file: a saved value will not show
        out.append(d)
    return out


def check_mode(changes: dict[str, Any], modes: list[str]) -> list[str]:
    """Errors (``settings.save``'s shape) for a mode that does not exist."""
    mode = changes.get("mode")
    if mode is None or mode in modes:
        return []
    return [f"mode: there is no mode {str(mode)[:80]!r}; the modes are {', '.join(modes)}"]


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
