"""The ``kenning`` command: a thin shell over the service layer, the worker and the installer."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from typing import Any

from kenning import daemon
from kenning.commands import show
from kenning.commands.args import count, seconds, undecodable
from kenning.hook import client
from kenning.paths import Paths
from kenning.settings import SPECS, load


def _worker_get(paths: Paths, path: str, timeout: float = 5.0) -> tuple[int, Any] | None:
    info = client.read_pid_file(paths)
    if not info:
        return None
    res = client.authed(paths, info["port"], "GET", path, timeout=timeout)
    if res is None:
        return None
    try:
        return res[0], json.loads(res[1] or b"null")
    except ValueError:
        return res[0], None


# ------------------------------------------------------------------------------ commands

def cmd_worker(args: argparse.Namespace) -> int:
    paths = Paths()
    action = args.action
    if action == "run":
        from kenning.worker.server import run

        return run(paths)
    if action == "start":
        blocker = daemon.port_blocker(paths)
        if blocker:  # at once: waiting for a worker that cannot listen only hides the cause
            print(f"kenning: {blocker}", file=sys.stderr)
            return 1
        health = daemon.ensure(paths, wait=args.wait)
        if not health:
            print(f"kenning: {daemon.not_started(paths)}", file=sys.stderr)
            return 1
        print(f"worker running: pid {health['pid']}, 127.0.0.1:{health['port']}")
        return 0
    if action == "stop":
        stopped, left = daemon.stop_workers(paths)
        if left:
            who = ", ".join("an unnamed process (it holds worker.lock)" if p < 0 else f"pid {p}" for p in left)
            print(f"kenning: the worker did not stop: {who} still runs", file=sys.stderr)
            return 1
        print(f"worker stopped (pid {', '.join(str(p) for p in stopped)})" if stopped else "no worker was running")
        return 0
    if action == "restart":
        daemon.stop(paths)
        return cmd_worker(argparse.Namespace(action="start", wait=args.wait))
    if action == "status":
        health = daemon.running(paths)
        if not health:
            print("worker: not running")
            return 3
        print(json.dumps(health, indent=2))
        return 0
    if action == "logs":
        return _print_logs(paths, args.lines)
    return 2


def _print_logs(paths: Paths, lines: int) -> int:
    for path in (paths.worker_log, paths.hook_log):
        print(f"==> {path} <==")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                tail = fh.readlines()[-lines:]
            sys.stdout.write("".join(tail))
        except FileNotFoundError:
            print("(no log yet)")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    """Print exactly what SessionStart would inject for a directory."""
    from urllib.parse import quote

    from kenning import winpath

    paths = Paths()
    # A Windows folder (an imported session's) is never this machine's: realpath would put it under ours.
    cwd = args.cwd if args.cwd and winpath.is_windows(args.cwd) else os.path.realpath(args.cwd or os.getcwd())
    if args.project:
        from kenning.commands.search import _check

        problem = _check(paths, project=args.project)
        if problem:
            print(f"kenning: {problem}", file=sys.stderr)
            return 2
    query = f"project={quote(args.project)}" if args.project else f"cwd={quote(os.fsencode(cwd))}"
    res = _worker_get(paths, f"/api/context?{query}") if daemon.running(paths) else None
    if res and res[0] == 200 and isinstance(res[1], dict):
        body = res[1]
    else:
        from kenning.service import Memory
        from kenning.store.projects import AmbiguousProject

        settings, _ = load(paths)
        try:
            body = Memory(paths, settings).context(cwd, project=args.project or "")
        except AmbiguousProject as e:  # the candidates, with their paths and sessions: pick one by its path
            raise SystemExit(f"kenning: {e}") from None
    from kenning.records import text_tokens

    text = str(body.get("context", ""))
    if args.json:
        print(json.dumps({"project": body.get("project"), "key": body.get("key"),
                          "excluded": bool(body.get("excluded")), "context": text, "chars": len(text),
                          "tokens": text_tokens(text)}, indent=2, ensure_ascii=False))
        return 0
    print(text)
    if args.stats:
        print(f"\n[{len(text)} characters, ~{text_tokens(text)} tokens]", file=sys.stderr)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from kenning.service import Memory

    paths = Paths()
    settings, problems = load(paths)
    health = daemon.running(paths)
    st = Memory(paths, settings).status()
    if args.json:
        from kenning import losses

        print(json.dumps({"worker": health, **st, "settings_problems": problems, "losses": losses.read(paths)},
                         indent=2))
        return 0
    print(f"data dir   {paths.root}")
    if health:
        print(f"worker     running, pid {health.get('pid')}, 127.0.0.1:{health.get('port')}, observer "
              f"{(health.get('observer') or {}).get('provider', '?')}")
    else:
        problem = daemon.start_problem(paths)
        print("worker     not running" + (f": {problem}" if problem else ""))
    c = st.get("counts") or {}
    unreadable = not st.get("db_ok") and os.path.exists(paths.db)
    if unreadable:  # never "0 observations" for memory that exists but cannot be read
        print(f"memory     unavailable: {st.get('db_error')}")
    else:
        print(f"memory     {c.get('observations', 0)} observations, {c.get('session_summaries', 0)} summaries, "
              f"{c.get('sessions', 0)} sessions, {c.get('user_prompts', 0)} prompts")
    print(f"queue      {st['spool_depth']} in spool, {c.get('pending_events', 0)} events waiting for the observer"
          + (f", {st['spool_corrupt']} quarantined" if st["spool_corrupt"] else ""))
    if st.get("observer_trouble"):  # events wait for an observer that cannot work: why, and the fix
        print(f"observer   {st['observer_trouble']['line']}")
    for p in st.get("projects", [])[:10]:
        print(f"project    {p.get('name') or p['project']}: {p['observations']} observations")
    if (health or {}).get("db_replaced"):
        print(f"database   {health['db_replaced']}")  # type: ignore[index]
    from kenning.team.doctor import lag_lines

    for team in lag_lines(paths):
        print(f"team       {team}")
    from kenning.doctor import saving_checks

    for level, name, detail in saving_checks(paths):
        if level != "ok":
            print(f"{name:<10} {detail}")
    return 1 if unreadable else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from kenning.doctor import run_checks

    if args.clear_losses:
        from kenning import losses

        paths = Paths()
        print(f"Cleared: {losses.describe(losses.read(paths)) or 'nothing was on record'}.")
        losses.clear(paths)
        return 0
    checks = run_checks(Paths())
    worst = max([{"ok": 0, "warn": 0, "FAIL": 1}[level] for level, _, _ in checks], default=0)
    if args.json:
        print(json.dumps([_check_record(*c) for c in checks], indent=2, ensure_ascii=False))
        return worst
    for level, name, detail in checks:
        mark = {"ok": "✓", "warn": "!", "FAIL": "✗"}[level]
        print(f"{mark} {name}: {detail}")
    return worst


def _check_record(level: str, name: str, detail: str) -> dict[str, Any]:
    """One doctor check as data; ``fix`` is the command its detail says to run (`kenning install`), if any."""
    import re

    # A command has words: `kenning` or `claude` alone name a program, they are not a fix.
    fix = re.search(r"`([^`\s]+ [^`]+)`", detail) if level != "ok" else None
    return {"check": name, "status": level.lower(), "ok": level == "ok", "detail": detail,
            "fix": fix.group(1) if fix else None}


def cmd_demo(args: argparse.Namespace) -> int:
    from kenning.demo.replay import run_demo

    return run_demo()


def settings_markdown() -> str:
    """The settings table of docs/configuration.md (python -m kenning.docgen writes it there)."""
    from kenning.settings import Settings

    rows = ["| setting | environment | default | meaning |", "| --- | --- | --- | --- |"]
    defaults = Settings().as_dict()
    for name, spec in SPECS.items():
        value = "37800 + uid % 100" if name == "port" else json.dumps(defaults[name])
        rows.append(f"| `{name}` | `KENNING_{name.upper()}` | `{value}` | {spec.help} |")
    return "\n".join(rows)


def cmd_settings(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings_markdown())
        return 0
    paths = Paths()
    settings, problems = load(paths, create=True)
    if args.json:
        values = settings.as_dict()
        print(json.dumps({"settings": {name: values[name] for name in SPECS}, "problems": problems}, indent=2,
                         ensure_ascii=False))
        return 0
    for name, spec in SPECS.items():
        print(f"{name} = {json.dumps(settings.as_dict()[name])}    # {spec.help}")
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from kenning.clihelp import VersionAction, grouped

    p = argparse.ArgumentParser(prog="kenning", usage="kenning [-h] [-V] COMMAND ...",
                                description="Long-term memory for AI coding agents.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-V", "--version", action=VersionAction)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog="kenning")
    s = sub.add_parser("doctor", help="check the whole installation; each problem with its fix")
    s.add_argument("--clear-losses", action="store_true",
                   help="forget the count of captures that could not be saved (after reading it)")
    s.add_argument("--json", action="store_true",
                   help="print the checks as a JSON list of {check, status, ok, detail, fix}")
    s.set_defaults(func=cmd_doctor)
    s = sub.add_parser("status", help="worker, memory counts, queue depth")
    s.add_argument("--json", action="store_true", help="print everything as JSON")
    s.set_defaults(func=cmd_status)
    s = sub.add_parser("worker", help="manage the background worker")
    s.add_argument("action", choices=["start", "stop", "restart", "status", "logs", "run"],
                   help="start, stop or restart it; status (its health as JSON); logs (the worker's and "
                        "hooks' last lines); run (in the foreground)")
    s.add_argument("--wait", type=seconds, default=15.0, help="seconds to wait for start (default 15)")
    s.add_argument("-n", "--lines", type=count(0, 100_000), default=40, help="log lines to show")
    s.set_defaults(func=cmd_worker)
    s = sub.add_parser("context", help="print what SessionStart would inject for a directory")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--cwd", help="project directory (default: current)")
    g.add_argument("--project", help="project name instead of a directory (e.g. kenning-demo)")
    s.add_argument("--stats", action="store_true", help="also print its size")
    s.add_argument("--json", action="store_true",
                   help="print {project, key, excluded, context, chars, tokens} as JSON instead")
    s.set_defaults(func=cmd_context)
    show.register(sub)
    s = sub.add_parser("demo", help="replay a bundled coding story into your memory (project kenning-demo) "
                                    "and show what its next session gets")
    s.set_defaults(func=cmd_demo)
    s = sub.add_parser("settings", help="list every setting with its effective value")
    s.add_argument("--markdown", action="store_true", help="print the documentation table instead")
    s.add_argument("--json", action="store_true", help="print {settings: {name: value}, problems: [...]} as JSON")
    s.set_defaults(func=cmd_settings)
    s = sub.add_parser("hook", help="(run by the agent, not by you) handle one hook event read from stdin")
    s.add_argument("agent", help="the agent sending the event (claude-code, codex, gemini, …)")
    s.add_argument("event", help="the agent's event name (e.g. SessionStart, PostToolUse)")
    from kenning.commands import register_all

    register_all(sub)
    p.epilog = grouped(sub)
    return p


# Commands that work whatever the file at the database path is: they report on it, or never open it.
WITHOUT_DB = {"doctor", "uninstall", "settings", "mcp", "extras", "completion"}
# Arguments that name files: any bytes the file system allows. Every other argument is text
# that gets stored, searched or printed, so it must be UTF-8.
PATH_ARGS = ("cwd", "file", "output")


def main(argv: list[str]) -> int:
    from kenning.store.identity import ForeignDatabase, check

    parser = build_parser()
    if not argv:  # bare `kenning`: the overview, not a usage error
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    for name, value in vars(args).items():
        if name not in PATH_ARGS and undecodable(value):
            print(f"kenning: the {name.replace('_', '-')} argument is not valid UTF-8 text", file=sys.stderr)
            return 2
    try:
        if args.command not in WITHOUT_DB and not (args.command == "worker" and args.action in ("stop", "logs")):
            try:
                check(Paths().db)  # one clear message before anything opens (or starts a worker on) the file
            except ForeignDatabase:
                raise
            except sqlite3.Error:
                pass  # unreadable for another reason: the command itself says so, in its own terms
        return int(args.func(args))
    except ForeignDatabase as e:
        print(f"kenning: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except sqlite3.Error as e:  # a corrupt, read-only or unreadable database: say which, and the fix
        from kenning.store.health import explain

        print(f"kenning: {explain(Paths().db, e)}", file=sys.stderr)
        return 1
    except Exception as e:
        if os.environ.get("KENNING_DEBUG"):
            raise
        print(f"kenning: {args.command} failed: {type(e).__name__}: {e} (KENNING_DEBUG=1 shows where)",
              file=sys.stderr)
        return 1
