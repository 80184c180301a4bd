"""Entry point of ``kenning hook <agent> <event>``.

Contract with the agent: exit 0 whatever happens, print one JSON object or nothing, and
return within budget. Capture events are spooled (durable) and the worker is poked with
a short timeout; capture never starts or waits for the worker. SessionStart makes sure a
worker runs and returns the context, building it straight from SQLite when the worker
cannot answer in time.
"""

from __future__ import annotations

import posix  # not os: ~1 ms of this process's start (kenning.paths has the path operations)
import sys
import time

from kenning import fastjson, spool
from kenning.context.fence import neutralise_value
from kenning.integrations import hook_adapter
from kenning.paths import Paths, env, exists, join
from kenning.privacy.tags import is_entirely_private, strip_value
from kenning.project import find_root, glob_match, is_excluded, project_key
from kenning.settings import Settings, load

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any

CAPTURE_EVENTS = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd")
CONTEXT_EVENTS = ("SessionStart", "PreToolUse")
KNOWN_EVENTS = CAPTURE_EVENTS + CONTEXT_EVENTS
ELISION = "\n[... {n} characters elided by kenning ...]\n"
# Fields copied into the header of a payload too large to parse in full.
HEADER_FIELDS = ("session_id", "cwd", "hook_event_name", "tool_name", "tool_use_id", "prompt_id",
                 "agent_id", "agent_type", "source", "reason", "transcript_path")


class HookLog:
    """Append-only log lines in ``logs/hook.log`` (rotated by size, never raises)."""

    def __init__(self, paths: Paths, max_bytes: int = 1_000_000) -> None:
        self.paths = paths
        self.path = paths.hook_log
        self.max_bytes = max_bytes

    def write(self, event: str, message: str) -> None:
        try:
            line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={posix.getpid()} {event}: {message}\n"
            try:
                if posix.stat(self.path).st_size > self.max_bytes:
                    posix.replace(self.path, self.path + ".1")
            except OSError:
                pass
            try:
                fd = posix.open(self.path, posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND, 0o600)
            except FileNotFoundError:  # no data dir yet (never installed, or deleted): make it
                self.paths.ensure()
                fd = posix.open(self.path, posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND, 0o600)
            try:
                data = line.encode("utf-8", "replace")
                # Cut long lines but keep their newline, so the next line does not run on.
                posix.write(fd, data if len(data) <= 4000 else data[:3999] + b"\n")
            finally:
                posix.close(fd)
        except Exception:
            pass


def main(argv: list[str]) -> int:
    """Run one hook; never raises, always returns 0."""
    out: dict[str, Any] | None = None
    try:
        out = run(argv, sys.stdin.buffer)
    except BaseException:
        try:
            import traceback

            HookLog(Paths()).write(" ".join(argv[:2]), "crash: " + traceback.format_exc(limit=3)
                                   .replace("\n", " | "))
        except BaseException:
            pass
    if out is not None:
        try:
            sys.stdout.write(fastjson.dumps(out))  # ASCII: valid whatever the terminal encoding
            sys.stdout.flush()
        except BaseException:
            pass
    return 0


def cli(argv: list[str] | None = None) -> None:
    """Process entry point used by installed hooks: ``python -I -c "…cli()" <agent> <event>``."""
    code = main(sys.argv[1:] if argv is None else argv)
    try:
        sys.stdout.flush()
    finally:
        # Skip interpreter teardown (~5 ms): everything the hook wrote is fsynced and closed.
        posix._exit(code)


def run(argv: list[str], stdin: Any) -> dict[str, Any] | None:
    """The hook's logic; returns the JSON to print or None."""
    if env("KENNING_INTERNAL") == "1":
        return None  # our own observer's agent must never be captured
    agent = argv[0] if argv else ""
    host_event = argv[1] if len(argv) > 1 else ""
    paths = Paths()
    log = HookLog(paths)
    raw = _read_stdin(stdin)
    adapter = hook_adapter(agent)
    if adapter is None:
        log.write(host_event or "?", f"unknown agent {agent[:40]!r}; ignored")
        return None
    if host_event not in adapter.events:
        log.write(host_event[:60] or "?", "unknown event; ignored")
        return None
    settings, _problems = load(paths)
    payload, truncated = _parse(raw, settings.hook_max_stdin_bytes)
    mapped = adapter.translate(host_event, payload) if payload is not None else None
    if payload is not None and mapped is None:
        return None  # an event of the host's that carries nothing we keep
    if mapped is None or not _has_session(mapped[1]) or mapped[0] not in KNOWN_EVENTS:
        log.write(host_event, f"invalid input ({len(raw)} bytes); nothing stored")
        return None
    event, payload = mapped
    out = _run(paths, settings, log, event, payload, truncated, adapter.agent_of(payload))
    if out is None or adapter.name == "claude-code":
        return out  # Claude Code reads our answer as is
    text = out.get("hookSpecificOutput", {}).get("additionalContext")
    return adapter.respond(host_event, event, text) if isinstance(text, str) and text else None


def _has_session(payload: dict[str, Any]) -> bool:
    sid = payload.get("session_id")
    return isinstance(sid, str) and bool(sid)


def _run(paths: Paths, settings: Settings, log: HookLog, event: str, payload: dict[str, Any], truncated: bool,
         agent: str) -> dict[str, Any] | None:
    """One event in the event model, whichever agent sent it."""
    raw_cwd = payload.get("cwd")
    cwd = raw_cwd if isinstance(raw_cwd, str) and raw_cwd else posix.getcwd()
    if cwd is not raw_cwd:
        # A missing or mistyped cwd: the hook runs in the session's directory, so use that
        # (else SessionStart would build the context of a project named "123").
        payload = {**payload, "cwd": cwd}
    if paths.contains(cwd):
        return None  # work happening inside the data dir is Kenning's own
    name, root = find_root(cwd)
    if is_excluded(name, root, cwd, settings.excluded_projects):
        return None
    session_id = str(payload["session_id"])
    if _opted_out(paths, session_id):
        return None  # the user typed the opt-out marker earlier in this session
    if event == "UserPromptSubmit" and settings.optout_marker:
        prompt = payload.get("prompt")
        if isinstance(prompt, str) and settings.optout_marker in prompt:
            _opt_out(paths, log, session_id)
            return None
    if event == "SessionStart":
        return _session_start(paths, settings, log, payload, name, root, truncated, agent)
    if event == "PreToolUse":
        return _file_context(paths, settings, log, payload, cwd, name, root, agent)
    if event in ("PostToolUse", "PostToolUseFailure"):
        tool = payload.get("tool_name")
        if isinstance(tool, str) and _skipped_tool(tool, settings.skip_tools):
            return None
    if event == "UserPromptSubmit" and settings.prompt_context:
        # Captured first, exactly as without context; the worker is poked only after it answered,
        # so ingesting (and embedding) this very prompt does not compete with the answer.
        _capture(paths, settings, log, event, payload, name, root, truncated, poke=False, agent=agent)
        try:
            return _prompt_context(paths, settings, log, payload, cwd, agent)
        finally:
            _poke(paths, settings)
    _capture(paths, settings, log, event, payload, name, root, truncated, agent=agent)
    return None


def _read_stdin(stdin: Any) -> bytes:
    try:
        if posix.isatty(stdin.fileno()):
            return b""
    except (AttributeError, OSError, ValueError):
        pass
    try:
        data = stdin.read()
    except (OSError, ValueError):
        return b""
    return data if isinstance(data, bytes) else str(data).encode("utf-8", "replace")


def _parse(raw: bytes, limit: int) -> tuple[dict[str, Any] | None, bool]:
    """Decode the payload; a payload over ``limit`` keeps only its header fields."""
    if not raw.strip():
        return None, False
    if len(raw) > limit:
        return _salvage_header(raw), True
    try:
        value = fastjson.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser allows
        return None, False
    if not isinstance(value, dict):
        return None, False
    return value, False  # the session id is checked once the agent's adapter has mapped the payload


def _salvage_header(raw: bytes) -> dict[str, Any] | None:
    """Claude Code writes identity fields first: read them from the head of a huge payload."""
    import re

    head = raw[:65536].decode("utf-8", "replace")
    found: dict[str, Any] = {}
    for key in HEADER_FIELDS:
        m = re.search(r'"' + key + r'"\s*:\s*"((?:[^"\\]|\\.){0,2000})"', head)
        if m:
            try:
                found[key] = fastjson.loads('"' + m.group(1) + '"')
            except ValueError:
                continue
    if not isinstance(found.get("session_id"), str) or not found["session_id"]:
        return None
    found["kenning_note"] = f"payload of {len(raw)} bytes was too large; only its header was kept"
    return found


def _skipped_tool(tool: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_match(tool, p) for p in patterns)


def _safe_id(session_id: str) -> str:
    """A session id usable as a file name (hashed when it holds anything unusual)."""
    if session_id.replace("-", "").replace("_", "").isalnum() and len(session_id) < 200:
        return session_id
    import hashlib

    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


def _optout_path(paths: Paths, session_id: str) -> str:
    return join(paths.optout, _safe_id(session_id))


def _opted_out(paths: Paths, session_id: str) -> bool:
    return exists(_optout_path(paths, session_id))


def _opt_out(paths: Paths, log: HookLog, session_id: str) -> None:
    """Remember that this session asked not to be remembered (a marker file per session)."""
    try:
        import os  # (once a session, when its user opts out)

        os.makedirs(paths.optout, mode=0o700, exist_ok=True)
        posix.close(posix.open(_optout_path(paths, session_id), posix.O_WRONLY | posix.O_CREAT, 0o600))
    except OSError as e:
        log.write("UserPromptSubmit", f"cannot record the opt-out: {e}")


def _truncate(value: Any, limit: int) -> tuple[Any, bool]:
    """Cap every string at ``limit`` characters: 60% head, an elision marker, 30% tail."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value, False
        head, tail = int(limit * 0.6), int(limit * 0.3)
        return value[:head] + ELISION.format(n=len(value) - head - tail) + value[-tail:], True
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[k], c = _truncate(v, limit)
            changed = changed or c
        return out, changed
    if isinstance(value, list):
        items = []
        changed = False
        for v in value[:1000]:
            nv, c = _truncate(v, limit)
            items.append(nv)
            changed = changed or c
        return items, changed or len(value) > 1000
    return value, False


def _clean(settings: Settings, payload: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Strip private/echo blocks, cap sizes, redact secrets: nothing else reaches the disk."""
    session_id = payload["session_id"]  # an id the agent made up, not content: it must stay usable
    payload = strip_value(payload)
    payload, truncated = _truncate(payload, settings.max_field_chars)
    # After the cut: what is kept is what is checked (a join of head and tail included), and a
    # hostile 32 MB output costs the fence no more than its 32,000 kept characters.
    payload = neutralise_value(payload)  # a lone fence or system tag left over can never close a fence later
    if settings.redact_secrets:
        from kenning.privacy import quick

        # Most payloads hold nothing a detector could take: proven without loading them (~0.5 ms).
        if settings.redact_custom or not quick.plain_payload(payload, "claude-code"):
            from kenning.privacy.ingress import redactor

            redact = redactor(settings)
            if redact is not None:  # only the fields that can hold the user's content (privacy.fields)
                payload = redact.payload(payload, "claude-code")
    payload["session_id"] = _truncate(session_id, settings.max_field_chars)[0]
    return payload, truncated


clean = _clean  # public: history import cleans past events exactly as capture cleans live ones


def _capture(paths: Paths, settings: Settings, log: HookLog, event: str, payload: dict[str, Any],
             name: str, root: str, truncated: bool, poke: bool = True, agent: str = "claude-code") -> str | None:
    prompt = payload.get("prompt")
    private = event == "UserPromptSubmit" and isinstance(prompt, str) and is_entirely_private(prompt)
    payload, cut = _clean(settings, payload)
    record = {"v": 1, "agent": agent, "event": event, "at": time.time(), "project": name,
              "project_key": project_key(root, name), "project_root": root, "truncated": truncated or cut,
              "payload": payload}
    if private:
        record["private"] = True  # the whole turn is private: no observation, no summary from it
    try:
        path = spool.write(paths, record)
    except OSError as e:
        try:
            paths.ensure()
            path = spool.write(paths, record)
        except OSError:
            _lost(paths, log, event, str(payload["session_id"]), e)
            return None
    if poke:
        _poke(paths, settings)
    return path


def _lost(paths: Paths, log: HookLog, event: str, session_id: str, err: OSError) -> None:
    """An event that could not be spooled is gone: count it where doctor, status and the next
    session's context will find it (the count survives a full disk), and log it if we can."""
    from kenning import losses

    kept = losses.record(paths, session_id, event, err)
    log.write(event, f"spool write failed: {err}; event dropped" + ("" if kept else " (and not counted)"))


def _poke(paths: Paths, settings: Settings) -> None:
    """Tell the worker there is work, never waiting for an answer: a byte into its pipe, or where it
    has none (an older worker, no worker, no FIFOs here) one UDP datagram to the port of its pid file.

    A lost poke costs nothing but latency: the worker also drains the spool every 2 s.
    """
    try:
        # O_NONBLOCK: no reader (no worker) fails at once with ENXIO; a full pipe (a stalled worker
        # with 64 KiB of pokes unread) fails with EAGAIN. Neither ever waits.
        fd = posix.open(paths.poke_fifo, posix.O_WRONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            if posix.fstat(fd).st_mode & 0o170000 == 0o010000:  # S_IFIFO: never write into a file put there
                posix.write(fd, b"p")
                return
        except OSError:
            return  # the pipe is full: the worker has pokes waiting already
        finally:
            posix.close(fd)
    from kenning.hook import client  # (_socket: ~0.5 ms, only where the pipe cannot be used)

    info = client.read_pid_file(paths)
    if info:
        client.poke_udp(info["port"])


def _session_start(paths: Paths, settings: Settings, log: HookLog, payload: dict[str, Any],
                   name: str, root: str, truncated: bool, agent: str = "claude-code") -> dict[str, Any]:
    from kenning.hook import client  # (not on the capture path: _socket costs a hook ~0.5 ms)

    started = time.monotonic()
    at = time.time()
    budget = settings.context_timeout_ms / 1000
    text = None
    # Spooled first: a capture that cannot be saved (a full disk) is told in this very context.
    # ``spooled=1`` tells a worker of an earlier version that this event is in the spool, so it
    # does not wait for a cycle (today's never waits for the spool).
    spooled = _capture_quiet(paths, settings, log, payload, name, root, truncated, at, agent) is None
    info = client.read_pid_file(paths)
    health = None
    if info:  # one round trip: the context's answer carries the proof a health check would ask for
        answer = client.proven_get(paths, info, _context_path(payload, agent, spooled), budget)
        text = answer.get("context") if answer else None
        if isinstance(text, str):
            health = answer
        else:
            text = None
    left = budget - (time.monotonic() - started)
    if text is None and info and left > 0.05:
        health = client.worker_health(paths, info["port"], timeout=min(0.3, left))
    try:
        # A worker our kernel vouched for that used up the budget is slow, not missing: no start.
        if text is None and not health and (not info or left > 0.05):
            from kenning import daemon  # only when a worker must be started (fcntl, subprocess)
            from kenning.store.identity import ForeignDatabase

            # Start it in the background; wait only if the spool holds events it should see first.
            wait = budget - (time.monotonic() - started) if spool.depth(paths) > int(spooled) else 0.0
            try:
                health = daemon.ensure(paths, wait=max(0.0, wait), blocking_lock=False)
            except OSError as e:
                log.write("SessionStart", f"cannot start worker: {e}")
            except ForeignDatabase as e:
                # Shown to the user, not the model. The events stay in the spool until the file is moved.
                log.write("SessionStart", str(e))
                return {"systemMessage": f"Kenning: {e}",
                        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ""}}
        if text is None and health:
            text = _context_from_worker(paths, health, payload, budget - (time.monotonic() - started), agent,
                                        spooled)
        if text is None:
            text = _context_from_file(paths, settings, log, str(payload.get("cwd") or root), name, agent)
    finally:
        # Poked only now: the cycle that stores the event does not compete with the answer.
        if health and isinstance(health.get("port"), int):
            client.poke_udp(health["port"])
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _context_from_file(paths: Paths, settings: Settings, log: HookLog, cwd: str, name: str, agent: str) -> str:
    """The index read from the database file; whatever stops it, the reason every surface gives
    (``kenning.store.health.explain``), never silence."""
    from kenning.context.session_start import build_for_cwd, unavailable_note

    try:
        return build_for_cwd(paths, settings, cwd, agent=agent)
    except Exception as e:  # sqlite3.Error past the builder's own checks (a ForeignDatabase included), OSError
        from kenning.store.health import explain
        from kenning.store.identity import ForeignDatabase

        log.write("SessionStart", f"no context from the file: {type(e).__name__}: {e}")
        return unavailable_note(name, str(e) if isinstance(e, ForeignDatabase) else explain(paths.db, e))


def _capture_quiet(paths: Paths, settings: Settings, log: HookLog, payload: dict[str, Any],
                   name: str, root: str, truncated: bool, at: float, agent: str = "claude-code") -> OSError | None:
    payload, cut = _clean(settings, payload)
    record = {"v": 1, "agent": agent, "event": "SessionStart", "at": at,
              "project": name, "project_key": project_key(root, name), "project_root": root,
              "truncated": truncated or cut, "payload": payload}
    try:
        spool.write(paths, record)
    except OSError:
        try:
            paths.ensure()  # first event in a fresh (or deleted) data dir
            spool.write(paths, record)
        except OSError as e:
            _lost(paths, log, "SessionStart", str(payload["session_id"]), e)
            return e
    return None


def _context_from_worker(paths: Paths, health: dict[str, Any], payload: dict[str, Any],
                         left: float, agent: str = "claude-code", spooled: bool = False) -> str | None:
    from kenning.hook import client

    if left <= 0.05:
        return None
    port = health.get("port")
    if not isinstance(port, int):
        return None
    body = client.json_answer(client.authed(paths, port, "GET", _context_path(payload, agent, spooled),
                                            timeout=left))
    text = body.get("context") if body else None
    return text if isinstance(text, str) else None


def _context_path(payload: dict[str, Any], agent: str, spooled: bool) -> str:
    from kenning.hook import client

    cwd = str(payload.get("cwd") or "")
    # ``session``: the worker records in its ledger which memories this session was given.
    return f"/api/context?cwd={client.quote(cwd)}" + (f"&agent={client.quote(agent)}" if agent != "claude-code"
                                                      else "") + ("&spooled=1" if spooled else "") + \
        f"&session={client.quote(str(payload.get('session_id') or ''))}"


def _file_context(paths: Paths, settings: Settings, log: HookLog, payload: dict[str, Any], cwd: str,
                  name: str, root: str, agent_name: str = "claude-code") -> dict[str, Any] | None:
    """PreToolUse(Read): the file's history as additionalContext. Never a permission decision:
    the Read goes ahead exactly as it would without Kenning."""
    if not settings.file_context or payload.get("tool_name") != "Read":
        return None
    tool_input = payload.get("tool_input")
    file_path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(file_path, str) or not file_path or "\x00" in file_path or len(file_path) > 4096:
        return None
    from kenning.context.file_history import for_read

    # A subagent keeps its own "already told" list: it does not see its parent's context.
    agent = payload.get("agent_id")
    key = _safe_id(str(payload["session_id"]) + (f".{agent}" if isinstance(agent, str) and agent else ""))
    try:
        text = for_read(paths, settings, file_path, cwd, project_key(root, name), root, key,
                        session=(str(payload["session_id"]), agent_name))
    except Exception as e:  # sqlite3.Error (interrupted at the deadline, no schema yet), OSError
        log.write("PreToolUse", f"no file history: {type(e).__name__}: {e}")
        return None
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


def _prompt_context(paths: Paths, settings: Settings, log: HookLog, payload: dict[str, Any],
                    cwd: str, agent: str = "claude-code") -> dict[str, Any] | None:
    """UserPromptSubmit: the memories relevant to the prompt, from the worker within a short timeout.

    Worker down or slow: nothing (the prompt is already captured). Only the prompt as it would
    be stored (private blocks stripped, secrets redacted) leaves the hook, and only to our own
    worker: its start token is checked before the API token is sent.
    """
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or is_entirely_private(prompt):
        return None
    from kenning.context.prompt import OPEN, worth_asking
    from kenning.hook import client

    if not worth_asking(prompt, settings.prompt_context_min_chars):
        return None
    started = time.monotonic()
    budget = settings.prompt_context_timeout_ms / 1000
    info = client.read_pid_file(paths)
    if not info or not client.pid_alive(info.get("pid")):
        return None
    if not client.worker_health(paths, info["port"], timeout=min(0.2, budget)):
        log.write("UserPromptSubmit", "no prompt context: the worker did not pass its health check in time")
        return None
    # Cleaned exactly as the capture cleaned it (the same function, the same fields).
    text = _clean(settings, {"session_id": str(payload["session_id"]), "prompt": prompt})[0].get("prompt")
    if not isinstance(text, str) or not worth_asking(text, settings.prompt_context_min_chars):
        return None
    body = fastjson.dumps({"prompt": text, "cwd": cwd, "session_id": str(payload["session_id"]), "agent": agent,
                           "limit": settings.prompt_context_limit,
                           "min_relevance": settings.prompt_context_min_relevance,
                           "min_similarity": settings.prompt_context_min_similarity,
                           "semantic_ms": settings.prompt_context_semantic_ms}).encode("ascii")
    left = budget - (time.monotonic() - started)
    res = client.authed(paths, info["port"], "POST", "/api/context/prompt", body=body,
                        timeout=left) if left > 0.01 else None
    if not res or res[0] != 200:
        log.write("UserPromptSubmit", "no prompt context: " + ("timed out" if not res else f"HTTP {res[0]}"))
        return None
    try:
        answer = fastjson.loads(res[1].decode("utf-8", "replace"))
    except ValueError:
        return None
    context = answer.get("context") if isinstance(answer, dict) else None
    if not isinstance(context, str) or not context.startswith(OPEN):
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}

