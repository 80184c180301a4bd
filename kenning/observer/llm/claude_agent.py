"""The ``claude`` chat provider: the user's Claude Code login as the observer's model.

Drives the Claude Code CLI that ``claude-agent-sdk`` bundles (optional extra ``claude``), so
a user who is logged in to Claude Code needs no API key. One conversation is one long-lived
CLI subprocess in streaming-input mode: the system prompt goes in once at spawn, each
``send()`` is one more user turn on the same process.

The observer's own CLI must never be captured by Kenning or disturb the user, so it runs:

* with ``setting_sources=[]``: none of the user's or the project's settings load, so none of
  their hooks fire (otherwise SessionStart…SessionEnd of the user's hooks run, Kenning's
  included, and the observer captures itself), no CLAUDE.md, no plugins; and, as a second
  guard, ``{"disableAllHooks": true}`` in the flag settings;
* with ``KENNING_INTERNAL=1`` (Kenning's hooks exit at once) and inherited Claude Code session
  variables blanked (the worker is started from a hook, so it inherits them);
* in ``<data>/observer-sessions`` (Kenning's hooks ignore any cwd inside the data dir);
* with no tools at all, permission mode ``dontAsk``, no MCP servers, verbatim prompts (event
  text such as ``@/etc/passwd`` is never expanded into a file read), thinking off,
  ``--no-session-persistence`` (no transcript of the observer in ``~/.claude/projects``).

The SDK is async (anyio). Each conversation runs its own event loop in its own thread and
``send()`` blocks the caller (a worker thread) with a timeout. The subprocess always dies with
the conversation: ``close()``, a failed or timed-out turn, garbage collection of the
conversation and interpreter exit all end it, escalating to SIGKILL.

The SDK is imported lazily, in the conversation thread, on the first ``send()``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.observer.llm.base import ProviderError, Usage
from kenning.paths import DIR_MODE, Paths

SDK_MODULE = "claude_agent_sdk"
SESSIONS_DIRNAME = "observer-sessions"
INSTALL_HINT = "kenning extras add claude"

# Every built-in tool of Claude Code 2.1.x (the ``tools`` list of the init message, plus
# older names). ``tools=[]`` already offers none; disallowing them too means a CLI that
# ignored ``--tools ""`` still could not run one.
BUILTIN_TOOLS = (
    "Agent", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "Edit",
    "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillBash", "KillShell",
    "LS", "ListAgents", "ListMcpResourcesTool", "Monitor", "MultiEdit", "NotebookEdit",
    "NotebookRead", "Read", "ReadMcpResourceTool", "ReportFindings", "ScheduleWakeup",
    "SendMessage", "Skill", "SlashCommand", "Task", "TaskStop", "TodoWrite", "ToolSearch",
    "WebFetch", "WebSearch", "Workflow", "Write",
)  # fmt: skip

# Variables a Claude Code session sets for its hooks and children. The worker is spawned by
# a hook and inherits them; the observer's CLI must not believe it runs inside that session.
_SESSION_VARS = frozenset({
    "CLAUDECODE", "CLAUDE_PID", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE", "CLAUDE_EFFORT",
    "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_SESSION_ID",
})  # fmt: skip
_SESSION_PREFIXES = ("CLAUDE_CODE_", "CLAUDE_AGENT_SDK_")
# Set by the SDK itself after the inherited environment (or only when absent): blanking them
# would override or suppress the SDK's own values.
_SDK_MANAGED = frozenset({
    "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SDK_READS_SESSION_STATE", "CLAUDE_AGENT_SDK_VERSION",
})  # fmt: skip
# CLAUDE_CODE_* variables that are the user's own configuration for reaching the model (a
# long-lived OAuth token from `claude setup-token`, Bedrock/Vertex/Foundry routing, mTLS):
# dropping them would break exactly the login this provider exists to use.
_KEEP_VARS = frozenset({
    "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH", "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
    "CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "CLAUDE_CODE_CLIENT_CERT", "CLAUDE_CODE_CLIENT_KEY",
    "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE", "CLAUDE_CODE_MAX_RETRIES",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
})  # fmt: skip
# Environment variables that authenticate the CLI without a stored login.
_CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_PROVIDER_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

# Text of the CLI's synthetic error replies, for failures that carry no structured code.
_QUOTA_PATTERNS = (
    "usage limit", "rate limit", "rate_limit", "hit your limit", "limit reached",
    "credit balance", "quota", "too many requests",
)  # fmt: skip
_AUTH_PATTERNS = (
    "invalid api key", "/login", "not logged in", "oauth token", "authentication",
    "unauthorized", "forbidden", "failed to authenticate", "api key",
)  # fmt: skip

_HAS_PROCFS = os.path.isdir("/proc/self")
_STOP = object()  # inbox sentinel: leave the loop and shut the CLI down


@dataclass
class ClaudeAgentConfig:
    """Everything a conversation needs to spawn its CLI (shared, immutable in practice)."""

    data_dir: str
    env: dict[str, str] = field(default_factory=dict)
    cli_path: str | None = None
    timeout: float = 180.0  # one turn, from the user message to the result
    start_timeout: float = 60.0  # spawn + initialize handshake
    max_retries: int = 2  # the CLI's own API retries; the observer core backs off itself

    @property
    def cwd(self) -> str:
        return os.path.join(self.data_dir, SESSIONS_DIRNAME)


class ClaudeAgentProvider:
    """``ChatProvider`` backed by the Claude Code CLI that claude-agent-sdk bundles."""

    name = "claude"

    def __init__(
        self,
        *,
        data_dir: str | None = None,
        env: Mapping[str, str] | None = None,
        cli_path: str | None = None,
        timeout: float = 180.0,
        start_timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        """``env`` is applied last, over the sanitised environment (tests point the CLI at a
        fake API with it); ``cli_path`` overrides the bundled CLI."""
        self.config = ClaudeAgentConfig(
            data_dir=Paths(data_dir).root,
            env=dict(env or {}),
            cli_path=cli_path,
            timeout=timeout,
            start_timeout=start_timeout,
            max_retries=max_retries,
        )

    def open(self, system: str) -> ClaudeAgentConversation:
        return ClaudeAgentConversation(self, system)

    def available(self) -> tuple[bool, str]:
        spec = importlib.util.find_spec(SDK_MODULE)  # no import: the SDK takes seconds to load
        if spec is None or not spec.origin:
            return False, f"claude-agent-sdk is not installed ({INSTALL_HINT})"
        cli = self.cli_path(Path(spec.origin).parent)
        if cli is None:
            return False, "claude-agent-sdk has no bundled Claude Code CLI and none is on PATH"
        ok, how = credentials_present({**os.environ, **self.config.env})
        if not ok:
            return False, how
        return True, f"Claude Code CLI {cli}; {how}"

    def cli_path(self, sdk_dir: Path | None = None) -> str | None:
        """The CLI the SDK will run: ``cli_path``, else the bundled one, else ``claude`` on PATH."""
        if self.config.cli_path:
            return self.config.cli_path if os.access(self.config.cli_path, os.X_OK) else None
        if sdk_dir is None:
            spec = importlib.util.find_spec(SDK_MODULE)
            if spec is None or not spec.origin:
                return None
            sdk_dir = Path(spec.origin).parent
        bundled = sdk_dir / "_bundled" / ("claude.exe" if sys.platform == "win32" else "claude")
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
        return shutil.which("claude")

    def child_env(self, *, max_tokens: int) -> dict[str, str]:
        """What ``options.env`` carries. The SDK merges it OVER ``os.environ`` and offers no
        way to unset a variable, so inherited session variables are blanked (""), which the
        CLI treats as unset."""
        env = {k: "" for k in os.environ if _is_session_var(k)}
        env.update(
            {
                "KENNING_INTERNAL": "1",  # Kenning's hooks exit at once (second line of defence)
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
                "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
                # The core bounds the conversation and restarts it; a silent compaction would
                # cost a large extra call and change what the model remembers.
                "DISABLE_AUTO_COMPACT": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
        )
        if "CLAUDE_CODE_MAX_RETRIES" not in os.environ:
            # The CLI's default retries 429/5xx with backoff for over a minute, blocking the
            # turn; the core has its own backoff and puts the events back.
            env["CLAUDE_CODE_MAX_RETRIES"] = str(self.config.max_retries)
        env.update(self.config.env)
        return env

    def options(self, system: str, *, model: str, max_tokens: int) -> Any:
        """The ``ClaudeAgentOptions`` of one conversation's CLI (imports the SDK)."""
        from claude_agent_sdk import ClaudeAgentOptions

        cwd = ensure_private_dir(self.config.cwd, self.config.data_dir)
        return ClaudeAgentOptions(
            system_prompt=system,
            model=model or None,
            tools=[],  # `--tools ""`: the model is offered no tool at all
            allowed_tools=[],
            disallowed_tools=list(BUILTIN_TOOLS),
            permission_mode="dontAsk",  # anything not pre-approved is denied, never prompted
            setting_sources=[],  # no user/project/local settings: none of their hooks fire
            # Second, independent guard (flag-settings layer): hooks from any source that
            # still loads (plugins, skills) are off too. Each alone suffices (tested).
            settings=json.dumps({"disableAllHooks": True}),
            strict_mcp_config=True,  # and no MCP server from ~/.claude.json or .mcp.json
            mcp_servers={},
            verbatim_prompts=True,  # no @path expansion or slash commands in event text
            thinking={"type": "disabled"},
            cwd=cwd,
            cli_path=self.config.cli_path,
            env=self.child_env(max_tokens=max_tokens),
            extra_args={"no-session-persistence": None},
            stderr=None,  # replaced per session (keeps a tail for error messages)
        )


class ClaudeAgentConversation:
    """One observer conversation: a CLI subprocess, spawned on the first ``send()``.

    The CLI keeps a failed user turn in its history (observed with 2.1.332: the next prompt
    is merged into the same user message) and offers no way to take it back. So after any
    failed turn the process is dropped and the next ``send()`` starts a fresh one: the
    failed text is never in the history, but neither are the turns before it
    (``size_chars`` starts again from the system prompt).
    """

    def __init__(self, provider: ClaudeAgentProvider, system: str) -> None:
        self._provider = provider
        self._system = system
        self._box = _SessionBox()
        self._lock = threading.Lock()  # turns of one conversation never interleave
        self._history_chars = len(system)
        # Collected without close(): the CLI must still die. The finalizer holds the box,
        # never the conversation, so it does not keep the conversation alive.
        self._finalizer = weakref.finalize(self, self._box.close)

    @property
    def size_chars(self) -> int:
        return self._history_chars

    @property
    def pid(self) -> int | None:
        """Pid of the live CLI subprocess, if any (tests and diagnostics)."""
        session = self._box.session
        return session.pid if session is not None else None

    def send(self, text: str, *, model: str, max_tokens: int) -> tuple[str, Usage]:
        with self._lock:
            session = self._box.session
            if session is None:
                try:
                    options = self._provider.options(self._system, model=model, max_tokens=max_tokens)
                except ImportError as exc:
                    raise ProviderError("fatal", f"claude-agent-sdk is not installed ({INSTALL_HINT})") from exc
                session = _Session(options, model=model, start_timeout=self._provider.config.start_timeout)
                self._box.install(session)  # raises once closed
                self._history_chars = len(self._system)
                try:
                    session.start()
                except BaseException:
                    self._box.drop(session)
                    raise
            try:
                reply, usage = session.turn(text, model=model, timeout=self._provider.config.timeout)
            except BaseException:
                self._box.drop(session)  # see the class docstring: no retry on this process
                raise
            self._history_chars += len(text) + len(reply)
            return reply, usage

    def close(self) -> None:
        # Not under self._lock: close() must be able to end a turn that hangs in send().
        self._finalizer()


class _SessionBox:
    """The conversation's current session; what the finalizer closes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.session: _Session | None = None
        self.closed = False

    def install(self, session: _Session) -> None:
        with self._lock:
            if self.closed:
                raise ProviderError("fatal", "the conversation is closed")
            self.session = session

    def drop(self, session: _Session) -> None:
        with self._lock:
            if self.session is session:
                self.session = None
        session.shutdown()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            session, self.session = self.session, None
        if session is not None:
            session.shutdown()


@dataclass
class _Turn:
    text: str
    model: str
    future: concurrent.futures.Future[tuple[str, Usage]]


class _Session:
    """One CLI subprocess and the thread whose event loop drives it."""

    def __init__(self, options: Any, *, model: str, start_timeout: float) -> None:
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        options.stderr = self.stderr_tail.append
        self._options = options
        self._model = model
        self._start_timeout = start_timeout
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[Any] | None = None
        self._task: asyncio.Task[Any] | None = None  # connect or the current turn
        self._stopping = False
        self._client: Any = None
        self._process: Any = None  # the SDK's anyio Process, once spawned
        # Daemon: a non-daemon thread would make interpreter exit wait for it before the
        # atexit finalizers that stop it could run.
        self._thread = threading.Thread(target=self._run, name="kenning-claude-observer", daemon=True)

    # ---- caller side (any thread) ----------------------------------------------------------

    def start(self) -> None:
        self._thread.start()
        try:
            self._ready.result(timeout=self._start_timeout)
        except concurrent.futures.TimeoutError:
            self.shutdown()
            raise ProviderError(
                "transient", f"Claude Code CLI did not start within {self._start_timeout:g} s"
            ) from None
        except ProviderError:
            self.shutdown()
            raise

    def turn(self, text: str, *, model: str, timeout: float) -> tuple[str, Usage]:
        fut: concurrent.futures.Future[tuple[str, Usage]] = concurrent.futures.Future()
        if not self._post(_Turn(text, model, fut)):
            raise ProviderError("transient", "Claude Code CLI is gone")
        try:
            return fut.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self.shutdown()  # a late reply would be taken for the next turn's: end it all
            raise ProviderError("transient", f"no reply from Claude Code within {timeout:g} s") from None
        except concurrent.futures.CancelledError:
            raise ProviderError("transient", "the conversation was closed during the turn") from None

    def shutdown(self, grace: float = 1.0) -> None:
        """Stop the loop, close the CLI (stdin EOF, then SIGTERM/SIGKILL); idempotent."""
        with self._lock:
            self._stopping = True
            loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(self._stop_in_loop)
        if threading.current_thread() is self._thread:
            return  # called from our own loop (e.g. GC there): _run's finally kills
        if self._thread.ident is not None:
            self._thread.join(grace)
            if self._thread.is_alive():
                # The SDK's graceful close waits up to 5 s for EOF, then 5 s after SIGTERM:
                # do not wait for that; once the CLI is dead the SDK returns at once.
                self._kill()
                self._thread.join(5.0)
        self._kill()
        self._wait_gone(2.0)

    # ---- loop side --------------------------------------------------------------------------

    def _post(self, item: Any) -> bool:
        with self._lock:
            if self._stopping or self._loop is None or self._inbox is None:
                return False
            inbox, loop = self._inbox, self._loop
        try:
            loop.call_soon_threadsafe(inbox.put_nowait, item)
        except RuntimeError:
            return False
        return True

    def _stop_in_loop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._inbox is not None:
            self._inbox.put_nowait(_STOP)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # the thread must never die with a caller still waiting
            if not self._ready.done():
                self._ready.set_exception(_as_provider_error(exc))
        finally:
            with self._lock:
                self._stopping = True
                self._loop = None
            if not self._ready.done():
                self._ready.set_exception(ProviderError("transient", "the conversation was closed"))
            self._kill()

    async def _main(self) -> None:
        from claude_agent_sdk import ClaudeSDKClient

        inbox: asyncio.Queue[Any] = asyncio.Queue()
        with self._lock:
            if self._stopping:
                return
            self._loop = asyncio.get_running_loop()
            self._inbox = inbox
        client = self._client = ClaudeSDKClient(options=self._options)
        try:
            self._task = asyncio.ensure_future(self._connect(client))
            await asyncio.wait({self._task})
            if self._task.cancelled() or self._task.exception() is not None:
                exc = None if self._task.cancelled() else self._task.exception()
                if not self._ready.done():
                    self._ready.set_exception(
                        _as_provider_error(exc) if exc else ProviderError("transient", "closed while starting")
                    )
                return
            self._ready.set_result(None)
            while True:
                item = await inbox.get()
                if item is _STOP:
                    break
                self._task = asyncio.ensure_future(self._turn(client, item))
                await asyncio.wait({self._task})
                if self._task.cancelled() and not item.future.done():
                    item.future.cancel()
            # Turns posted after the stop: nobody will answer them.
            while not inbox.empty():
                item = inbox.get_nowait()
                if isinstance(item, _Turn) and not item.future.done():
                    item.future.cancel()
        finally:
            self._task = None
            with contextlib.suppress(Exception):
                await client.disconnect()  # stdin EOF; the SDK escalates to SIGTERM/SIGKILL

    async def _connect(self, client: Any) -> None:
        await client.connect()
        self._find_process()

    async def _turn(self, client: Any, turn: _Turn) -> None:
        try:
            result = await self._exchange(client, turn)
        except asyncio.CancelledError:
            if not turn.future.done():
                turn.future.cancel()
            raise
        except ProviderError as exc:
            turn.future.set_exception(exc)
        except Exception as exc:
            turn.future.set_exception(_as_provider_error(exc, self.stderr_tail))
        else:
            turn.future.set_result(result)

    async def _exchange(self, client: Any, turn: _Turn) -> tuple[str, Usage]:
        from claude_agent_sdk import AssistantMessage, RateLimitEvent, ResultMessage, TextBlock

        if turn.model and turn.model != self._model:
            await client.set_model(turn.model)  # the cheaper tier for read-only batches
            self._model = turn.model
        await client.query(turn.text)
        texts: list[str] = []
        error: str | None = None
        resets_at: float | None = None
        result: Any = None
        async for msg in client.receive_response():
            if isinstance(msg, AssistantMessage):
                if msg.parent_tool_use_id is None:
                    texts.extend(b.text for b in msg.content if isinstance(b, TextBlock))
                error = error or msg.error
            elif isinstance(msg, RateLimitEvent):
                info = msg.rate_limit_info
                if info.status == "rejected" and info.resets_at:
                    resets_at = float(info.resets_at)
            elif isinstance(msg, ResultMessage):
                result = msg
        if result is None:
            message = "Claude Code CLI ended the turn without a result"
            raise ProviderError("transient", _with_stderr(message, self.stderr_tail))
        reply = "".join(texts) if texts else (result.result or "")
        if result.is_error or error:
            status = getattr(result, "api_error_status", None)
            message = (result.result or reply or result.subtype or "error")[:500]
            if result.errors:
                message = f"{message} ({'; '.join(map(str, result.errors))[:300]})"
            kind = classify_failure(error, status, message)
            retry_after = max(0.0, resets_at - time.time()) if kind == "quota" and resets_at else None
            raise ProviderError(kind, f"Claude Code: {message}", retry_after=retry_after)
        return reply, usage_from(result.usage)

    # ---- killing ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return getattr(self._find_process(), "pid", None)

    def _find_process(self) -> Any:
        # The SDK keeps its subprocess on a private attribute of the transport, which exists
        # as soon as connect() has spawned it, before the handshake: a hung handshake can
        # be killed too. Kept once found (the SDK drops it on close).
        if self._process is None and self._client is not None:
            self._process = getattr(getattr(self._client, "_transport", None), "_process", None)
        return self._process

    def _kill(self) -> None:
        """SIGKILL the CLI if it is still our live child (never a recycled pid)."""
        pid = self.pid
        if pid is None or not _is_live_child(pid, self._process):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)

    def _wait_gone(self, timeout: float) -> None:
        pid = self.pid
        deadline = time.monotonic() + timeout
        while pid is not None and _is_live_child(pid, self._process) and time.monotonic() < deadline:
            time.sleep(0.02)


# ---- helpers (pure, unit-tested) ---------------------------------------------------------


def classify_failure(error: str | None, status: int | None, message: str) -> str:
    """``quota`` | ``auth`` | ``transient`` | ``fatal`` for a failed turn.

    ``error`` is the CLI's code on its synthetic assistant message (authentication_failed,
    billing_error, rate_limit, invalid_request, server_error, unknown), ``status`` the HTTP
    status of the failing API call; the message text decides when neither does.
    """
    if error == "authentication_failed" or status in (401, 403):
        return "auth"
    if error in ("rate_limit", "billing_error") or status == 429:
        return "quota"
    if error == "server_error" or (status is not None and status >= 500):
        return "transient"
    low = message.lower()
    if any(p in low for p in _QUOTA_PATTERNS):
        return "quota"
    if any(p in low for p in _AUTH_PATTERNS):
        return "auth"
    if error == "invalid_request" or (status is not None and 400 <= status < 500):
        return "fatal"  # a prompt too long or malformed: the same request fails again
    return "transient"


def usage_from(raw: Mapping[str, Any] | None) -> Usage:
    """The turn's usage from a ResultMessage (per turn in streaming mode, not cumulative)."""
    raw = raw or {}

    def num(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, int | float) else 0

    return Usage(
        tokens_in=num("input_tokens"),
        tokens_out=num("output_tokens"),
        cache_read=num("cache_read_input_tokens"),
        cache_write=num("cache_creation_input_tokens"),
    )


def credentials_present(env: Mapping[str, str], home: str | None = None) -> tuple[bool, str]:
    """Whether the CLI will find credentials, and which kind. Never reads a secret.

    Order as the CLI's: an API key / auth token / OAuth token in the environment, a cloud
    provider switch, then the login of ``claude /login``: ``$CLAUDE_CONFIG_DIR`` (default
    ``~/.claude``) ``/.credentials.json`` on Linux and Windows, the login keychain item
    ``Claude Code-credentials`` on macOS (checked for existence only). An ``apiKeyHelper``
    in settings.json does not count: the observer's CLI loads no settings.
    """
    for var in _CREDENTIAL_VARS:
        if env.get(var):
            return True, f"credentials from ${var}"
    for var in _PROVIDER_VARS:
        if env.get(var, "").lower() in ("1", "true", "yes"):
            return True, f"cloud provider via ${var}"
    home = home or env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    creds = os.path.join(config_dir, ".credentials.json")
    with contextlib.suppress(OSError):
        if os.path.isfile(creds) and os.path.getsize(creds) > 2:  # "{}" is no login
            return True, f"Claude Code login in {creds}"
    if sys.platform == "darwin" and _keychain_has_login():
        return True, "Claude Code login in the macOS keychain"
    return False, "no Claude Code login found (run `claude` and /login) and no ANTHROPIC_API_KEY"


def _keychain_has_login() -> bool:
    security = shutil.which("security")
    if security is None:
        return False
    try:
        # Without -w/-g the item's secret is not printed; only existence is checked.
        proc = subprocess.run(
            [security, "find-generic-password", "-s", "Claude Code-credentials"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def ensure_private_dir(path: str, data_dir: str) -> str:
    """Create ``path`` (and the data dir) 0700; return it."""
    for d in (data_dir, path):
        os.makedirs(d, mode=DIR_MODE, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path, DIR_MODE)
    return path


def _is_session_var(name: str) -> bool:
    if name in _KEEP_VARS or name in _SDK_MANAGED:
        return False
    return name in _SESSION_VARS or name.startswith(_SESSION_PREFIXES)


def _is_live_child(pid: int, process: Any) -> bool:
    """True while ``pid`` is still our unreaped, running child."""
    if process is not None and getattr(process, "returncode", None) is not None:
        return False  # reaped: the pid may already belong to someone else
    if not _HAS_PROCFS:
        return process is not None  # macOS: the SDK's returncode is all there is
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[-1].split()
    return len(fields) > 1 and fields[0] not in ("Z", "X") and fields[1] == str(os.getpid())


def _with_stderr(message: str, tail: collections.deque[str] | None) -> str:
    if tail:
        return f"{message}; CLI stderr: {' | '.join(list(tail)[-3:])[:400]}"
    return message


def _as_provider_error(exc: BaseException, tail: collections.deque[str] | None = None) -> ProviderError:
    """Map an SDK/process failure to a ProviderError."""
    if isinstance(exc, ProviderError):
        return exc
    name = type(exc).__name__
    text = f"{name}: {exc}"
    if name == "CLINotFoundError":
        return ProviderError("fatal", _with_stderr(f"Claude Code CLI not found ({INSTALL_HINT})", tail))
    kind = classify_failure(None, None, text)
    if kind == "fatal":
        kind = "transient"
    if name in ("CLIConnectionError", "ProcessError", "CLIJSONDecodeError") and kind not in ("auth", "quota"):
        kind = "transient"  # the process died or spoke garbage: a fresh one may do better
    return ProviderError(kind, _with_stderr(f"Claude Code CLI failed: {text[:400]}", tail))
