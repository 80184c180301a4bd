"""``kenning doctor``: every check a user needs when memory seems not to work."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from typing import Any

from kenning import daemon, spool
from kenning.integrations import claude_code, command_link, launch
from kenning.paths import Paths, read_token
from kenning.service import Memory
from kenning.settings import load

Check = tuple[str, str, str]  # (level: ok|warn|FAIL, name, detail)


def run_checks(paths: Paths) -> list[Check]:
    out: list[Check] = []
    settings, problems = load(paths)

    if not os.path.isdir(paths.root):
        out.append(("FAIL", "data dir", f"{paths.root} does not exist: run `kenning install`"))
        return out
    mode = stat.S_IMODE(os.stat(paths.root).st_mode)
    out.append(("ok" if not mode & 0o077 else "warn", "data dir",
                f"{paths.root} (mode {mode:o})" + ("" if not mode & 0o077 else ": others can read it; chmod 700")))
    if read_token(paths):
        tmode = stat.S_IMODE(os.stat(paths.token).st_mode)
        out.append(("ok" if tmode == 0o600 else "warn", "API token", f"{paths.token} (mode {tmode:o})"))
    else:
        out.append(("warn", "API token", "not created yet (the worker creates it)"))

    if problems:
        for p in problems:
            out.append(("warn", "settings", p))
    else:
        out.append(("ok", "settings", f"{paths.settings}: valid"))

    health = daemon.running(paths)
    if health:
        out.append(("ok", "worker", f"running, pid {health.get('pid')}, 127.0.0.1:{health.get('port')}, up "
                                    f"{health.get('uptime_s')} s"))
        if health.get("status") != "ok":
            out.append(("warn", "worker health", str((health.get("observer") or {}).get("last_error"))))
    else:
        problem = daemon.start_problem(paths)  # a squatter on the port, or why the last start failed
        out.append(("FAIL", "worker", problem or "not running: `kenning worker start` (SessionStart also starts it)"))

    if health:
        out.extend(_worker_settings(paths, settings, int(health.get("port") or settings.port)))

    handlers = claude_code.installed_handlers()
    missing = [e for e in claude_code.EVENTS if e not in handlers]
    from kenning.integrations import agents

    plugin = claude_code.plugin_enabled()
    if not handlers and plugin:
        out.append(("ok", "Claude Code hooks", f"from the Kenning plugin ({plugin}), which runs the `kenning` "
                                               "command on PATH"))
    elif not handlers and agents.installed_commands():  # set up for other agents only (install --agent)
        out.append(("ok", "Claude Code hooks", "not set up (other agents are): `kenning install --agent "
                                               "claude-code` sets them up"))
    elif not handlers:
        out.append(("FAIL", "Claude Code hooks", f"none in {claude_code.settings_path()}: run `kenning install`"))
    elif missing:
        out.append(("FAIL", "Claude Code hooks", f"missing for {', '.join(missing)}: run `kenning install`"))
    else:
        out.append(("ok", "Claude Code hooks", f"{len(handlers)} events in {claude_code.settings_path()}"))
    out.extend(agents.checks())
    legacy = claude_code.legacy_entries()
    if legacy:
        out.append(("warn", "former install", f"{len(legacy)} entr{'y' if len(legacy) == 1 else 'ies'} of this project "
                    f"under its former name: {'; '.join(legacy)}; `kenning install` removes them"))
    commands = [c for cmds in handlers.values() for c in cmds] + agents.installed_commands()
    checked: set[tuple[str, ...]] = set()
    for command in sorted(set(commands)):
        py = claude_code.interpreter_of(command)
        if not py or not os.access(py, os.X_OK):
            out.append(("FAIL", "hook interpreter", f"{py or '?'} does not exist or is not executable: "
                                                    "reinstall with `kenning install`"))
            continue
        # The registered command itself, its flags and path set-up included, stopped before the hook runs.
        argv = claude_code.handler_argv({"command": command})
        check = launch.import_check(argv, fallback=False) or [py, "-c", "import kenning.hook.main"]
        if tuple(check) in checked:
            continue
        checked.add(tuple(check))
        if _runs(check):
            out.append(("ok", "hook interpreter", py))
        elif (slow := launch.import_check(argv)) is not None and _runs(slow):
            out.append(("warn", "hook interpreter", f"{py}: the package moved since `kenning install`, so every "
                                                    "hook falls back to a slower start-up; run `kenning install`"))
        else:
            out.append(("FAIL", "hook interpreter", f"{py}: cannot import kenning; reinstall the package"))

    out.append(_mcp_check())
    out.append(_claude_cli())
    out.append(command_link.on_path())

    st = Memory(paths, settings).status()
    if st.get("db_ok"):
        c = st.get("counts", {})
        latest = st.get("schema_latest")
        level = "ok" if st.get("schema_version") == latest else "warn"
        out.append((level, "database", f"{paths.db}: integrity ok, schema {st.get('schema_version')}/{latest}, "
                                       f"{c.get('observations', 0)} observations, {st.get('db_bytes', 0) // 1024} KiB"))
        out.extend(_joins(Memory(paths, settings).checkout_joins()))
    elif os.path.exists(paths.db):
        out.append(("FAIL", "database", str(st.get("db_error"))))
    else:
        out.append(("warn", "database", "not created yet (the worker creates it on start)"))
    if health and health.get("db_replaced"):
        out.append(("warn", "database", str(health["db_replaced"])))
    out.extend(saving_checks(paths))

    depth = spool.depth(paths)
    corrupt = spool.corrupt_count(paths)
    out.append(("ok" if depth < 1000 else "warn", "spool",
                f"{depth} event(s) waiting" + (" (is the worker running?)" if depth and not health else "")))
    if corrupt:
        out.append(("warn", "spool", f"{corrupt} unreadable file(s) quarantined in {paths.spool_corrupt}"))
    from kenning.search.doctor import checks as search_checks

    out.extend(search_checks(paths, settings, health))
    from kenning.observer.llm.doctor import checks as observer_checks

    out.extend(observer_checks(paths, settings, health))
    from kenning.team.doctor import checks as team_checks

    out.extend(team_checks(paths))
    return out


def _worker_settings(paths: Paths, settings: Any, port: int) -> list[Check]:
    """The settings the running worker uses (asked of it), against what a worker started now from this
    shell would use: settings.json edited since, or a ``KENNING_*`` variable set in one environment only."""
    import json

    from kenning.hook import client

    got = client.authed(paths, port, "GET", "/api/worker/settings", timeout=2.0)
    if got is None or got[0] != 200:
        return []  # an older worker: the observer line still says what it runs
    try:
        body = json.loads(got[1])
        theirs, their_env = dict(body["settings"]), list(body.get("env") or [])
    except (ValueError, KeyError, TypeError):
        return []
    ours = settings.as_dict()
    differ = [k for k in sorted(ours) if k in theirs and theirs[k] != ours[k]]
    env = f" (set in its environment: {', '.join(their_env)})" if their_env else ""
    if not differ:
        return [("ok", "worker settings", "the worker runs with the settings this shell gives" + env)]
    shown = "; ".join(f"{k}={_short(theirs[k])} (this shell: {_short(ours[k])})" for k in differ[:6])
    more = f"; and {len(differ) - 6} more" if len(differ) > 6 else ""
    return [("warn", "worker settings", f"the worker runs with {shown}{more}{env}; a worker started now from "
                                        "this shell would use the values in brackets: `kenning worker restart`")]


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def _joins(joins: list[Any]) -> list[Check]:
    """Which checkouts share one project's memory although no remote joined them, and why."""
    if not joins:
        return []
    shown = "; ".join(j.line() for j in joins[:10]) + (f"; and {len(joins) - 10} more" if len(joins) > 10 else "")
    return [("ok", "projects", f"{len(joins)} checkout(s) joined to another of the same repository: {shown}")]


def _mcp_check() -> Check:
    """The MCP registration in ~/.claude.json, and whether its interpreter can run our server."""
    path = claude_code.claude_json_path()
    entry = claude_code.installed_mcp()
    if entry is None:
        return ("warn", "MCP server", f"not registered in {path}: `kenning install` registers it (the agent's "
                                      "memory search tools)")
    py = entry.get("command")
    if not isinstance(py, str) or not os.access(py, os.X_OK):
        return ("FAIL", "MCP server", f"mcpServers.{claude_code.MCP_SERVER_NAME} in {path} runs {py!r}, which does "
                                      "not exist or is not executable: run `kenning install`")
    # The server speaks MCP itself (standard library only): importing it is all it needs.
    probe = "import importlib.util as u, sys; sys.exit(not u.find_spec('kenning.mcp.server'))"
    try:
        ok = subprocess.run([py, "-I", "-c", probe], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        return ("FAIL", "MCP server", f"{py} (mcpServers.{claude_code.MCP_SERVER_NAME} in {path}) cannot import "
                                      "Kenning's MCP server: reinstall with `bash scripts/install.sh`")
    return ("ok", "MCP server", f"mcpServers.{claude_code.MCP_SERVER_NAME} in {path} runs {py}")


def _claude_cli() -> Check:
    found = shutil.which("claude")
    if found:
        return ("ok", "Claude Code", f"`claude` is {found}")
    return ("warn", "Claude Code", "no `claude` command on PATH: Kenning remembers what happens in Claude Code "
                                   "sessions, so install Claude Code (the desktop app and IDE extensions run the "
                                   "same hooks)")


# Below this, forget's compaction (VACUUM needs about the database's size again) and the WAL may fail.
DISK_FAIL_BYTES = 100 * 1024 * 1024
DISK_WARN_BYTES = 1024 * 1024 * 1024


def _disk(paths: Paths) -> Check:
    try:
        free = shutil.disk_usage(paths.root).free
    except OSError as e:
        return ("warn", "disk space", f"cannot tell the free space of {paths.root}: {e}")
    try:
        db = os.path.getsize(paths.db)
    except OSError:
        db = 0
    gib = f"{free / 1024 ** 3:.1f} GiB free in {paths.root}"
    if free < max(DISK_FAIL_BYTES, db):
        return ("FAIL", "disk space", f"{gib}: too little to store new memory or compact the database (it holds "
                                f"{db // 1024 ** 2} MiB); free some space")
    if free < max(DISK_WARN_BYTES, 2 * db):
        return ("warn", "disk space", f"{gib}: running low (the database holds {db // 1024 ** 2} MiB)")
    return ("ok", "disk space", gib)


def saving_checks(paths: Paths) -> list[Check]:
    """Can captures be saved (writable data dir, free space), and were any lost?"""
    from kenning import losses
    from kenning.store.health import writable_dir

    out: list[Check] = []
    if not writable_dir(paths.root):
        out.append(("FAIL", "saving", f"{paths.root} is read-only: nothing is saved (remount it read-write, or set "
                                      "KENNING_DATA_DIR to a writable folder)"))
    out.append(_disk(paths))
    rec = losses.read(paths)
    if rec.get("events"):
        out.append(("FAIL", "lost captures", f"{losses.describe(rec)}; once you have read this, "
                                             "`kenning doctor --clear-losses` clears the count"))
    elif not os.path.exists(losses.path_of(paths)):
        out.append(("warn", "loss counter", f"{losses.path_of(paths)} does not exist yet (the worker creates it): "
                                            "a capture lost now could not be counted"))
    return out


def _runs(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
