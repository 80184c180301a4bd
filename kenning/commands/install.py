"""``kenning install`` and ``kenning uninstall``: set up (or remove) exactly the agents asked for.

Plain ``install`` acts on the agents found on this machine (kenning/integrations/agents.py);
``--agent NAME`` on exactly those named. An agent that is not on this machine is said up front:
on a terminal, install asks whether to set it up anyway (``--yes`` answers yes); without one (a
script, CI) it goes on and says so, since the hooks start working once the agent is installed.
Nothing ever claims that a session "will be remembered" by an agent that is not there.
"""

from __future__ import annotations

import argparse
import sys

from kenning import daemon
from kenning.paths import Paths, ensure_token

INSTALL_HELP = ("set up Kenning's hooks for the agents on this machine (or those named with --agent) "
                "and start the worker")
INSTALL_DESCRIPTION = (
    "Set up Kenning for your coding agents and start its worker. Without --agent, every agent found on "
    "this machine is set up (its command is on PATH or its config folder exists): Claude Code, Codex CLI, "
    "Gemini CLI, OpenCode. Cursor and GitHub Copilot CLI are set up only when named: Cursor already runs "
    "Claude Code's hooks, and Copilot's hooks are written into the repository you run this in. When none "
    "is found, Claude Code is the one set up; with Kenning's Claude Code plugin enabled, Claude Code is "
    "left to the plugin. An agent named or chosen but not on this machine is said "
    "first: on a terminal you are asked whether to set it up anyway (--yes answers yes); without a "
    "terminal (a script) install goes on, says so, and the hooks work once the agent is installed.")
UNINSTALL_HELP = ("remove exactly the hooks and MCP server install added (every agent, or those named with "
                  "--agent); with every agent also the ~/.local/bin/kenning link, and stop the worker")


def register(sub: argparse._SubParsersAction) -> None:
    from kenning.integrations.agents import ALL

    s = sub.add_parser("install", help=INSTALL_HELP, description=INSTALL_DESCRIPTION)
    s.add_argument("--agent", dest="agents", action="append", choices=[*ALL, "all"], metavar="AGENT",
                   help="set up exactly this agent (repeatable: " + ", ".join(ALL) + ", all); "
                        "default: those found on this machine")
    s.add_argument("-y", "--yes", action="store_true",
                   help="do not ask: set up an agent that is not on this machine (yet) anyway")
    s.add_argument("--no-start", action="store_true", help="do not start the worker")
    s.set_defaults(func=cmd_install)
    s = sub.add_parser("uninstall", help=UNINSTALL_HELP,
                       description=UNINSTALL_HELP[0].upper() + UNINSTALL_HELP[1:] + ".")
    s.add_argument("--agent", dest="agents", action="append", choices=[*ALL, "all"], metavar="AGENT",
                   help="remove only this agent's hooks (repeatable: " + ", ".join(ALL) + ", all); other "
                        "agents, the worker and the link are left as they are")
    s.add_argument("--keep-worker", action="store_true", help="leave the worker running")
    s.set_defaults(func=cmd_uninstall)


# ------------------------------------------------------------------------------------ install

def _ask(question: str) -> bool:
    print(f"{question} [y/N] ", end="", flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        print()
        return False
    return answer.strip().lower() in ("y", "yes")


def choose(names: list[str] | None, *, yes: bool, interactive: bool) -> tuple[list[str], list[str]]:
    """(agents to set up, those of them not on this machine), after saying and asking about the missing."""
    from kenning.integrations import LABELS, agents

    targets = agents.wanted(names)
    if not names and not targets:
        targets = ["claude-code"]  # nothing found: the default agent, said and asked about below
    missing = [a for a in targets if not agents.found(a)]
    for a in missing:
        print(f"kenning: {LABELS[a]} is not on this machine ({agents.where_looked(a)}).", file=sys.stderr)
    if not missing or yes:
        return targets, missing
    labels = " and ".join(LABELS[a] for a in missing)
    if interactive:
        if _ask(f"Set Kenning up for {labels} anyway (its hooks start working once it is installed)?"):
            return targets, missing
        return [a for a in targets if a not in missing], []
    undo = " ".join(f"--agent {a}" for a in missing)
    print(f"kenning: setting it up anyway (no terminal to ask; `kenning uninstall {undo}` removes it); "
          f"nothing is captured until {labels} is installed.", file=sys.stderr)
    return targets, missing


def cmd_install(args: argparse.Namespace) -> int:
    from kenning import losses
    from kenning.integrations import LABELS
    from kenning.settings import load

    targets, missing = choose(args.agents, yes=args.yes, interactive=sys.stdin.isatty())
    if not targets:
        print("Nothing was set up.")
        return 1
    paths = Paths()
    paths.ensure()
    settings, problems = load(paths, create=True)
    ensure_token(paths)
    losses.prepare(paths)  # the count of lost captures, sized now so that a full disk cannot stop it
    failed: list[str] = []
    plugin = _plugin_sets_up_claude_code(args.agents)
    if "claude-code" in targets and not plugin and not _install_claude_code(paths, settings.skip_tools):
        failed.append("claude-code")
    for p in problems:
        print(f"settings: {p}")
    failed += _install_others(paths, targets)
    if not args.agents:
        _name_the_others()
    _offer_history(paths)
    done = [a for a in targets if a not in failed]
    rc = 2 if failed else 0
    if args.no_start:
        return rc
    health = daemon.ensure(paths, wait=15.0)
    if not health:
        print(f"kenning: {daemon.not_started(paths)}", file=sys.stderr)
        return 1
    print(f"Worker running on 127.0.0.1:{health['port']} (pid {health['pid']}).")
    ready = [LABELS[a] for a in done if a not in missing]
    waiting = [LABELS[a] for a in done if a in missing]
    if ready:
        print(f"Start a new {' or '.join(ready)} session: it will be remembered.")
    if waiting:
        print(f"{' and '.join(waiting)}: not on this machine yet; its sessions are remembered once it is installed.")
    return rc


def _plugin_sets_up_claude_code(names: list[str] | None) -> bool:
    """Plain ``install`` leaves Claude Code to the Kenning plugin when it is enabled (its hooks and MCP
    server); ``--agent claude-code`` writes ours into settings.json all the same (the plugin's stand aside)."""
    from kenning.integrations import claude_code

    plugin = claude_code.plugin_enabled()
    if names or not plugin:
        return False
    print(f"Claude Code: set up by the Kenning plugin ({plugin}): hooks and MCP server "
          "(`kenning install --agent claude-code` writes them into settings.json instead).")
    return True


def _install_claude_code(paths: Paths, skip_tools: tuple[str, ...]) -> bool:
    from kenning.integrations import claude_code

    try:
        report = claude_code.install(paths, skip_tools=skip_tools)
    except (ValueError, UnicodeDecodeError) as e:
        print(f"kenning: Claude Code not set up: {e}", file=sys.stderr)
        return False
    print(f"Hooks for {', '.join(report.events)} are in {report.path}"
          + (" (unchanged)" if not report.changed else ""))
    plugin = claude_code.plugin_enabled()
    if plugin:
        print(f"The Kenning plugin ({plugin}) is enabled too: its hooks stand aside while these are installed.")
    if report.backup:
        print(f"Backup of the previous file: {report.backup}")
    legacy = report.legacy_removed + (report.mcp.legacy_removed if report.mcp else [])
    if legacy:
        print(f"Removed what an install under this project's former name left: {', '.join(legacy)}")
    if report.mcp is not None:
        for p in report.mcp.problems:
            print(f"kenning: {p}", file=sys.stderr)
        if not report.mcp.problems:
            print(f"MCP server 'kenning' (memory search tools) is registered in {report.mcp.path}"
                  + (" (unchanged)" if not report.mcp.changed else ""))
    return True


def _install_others(paths: Paths, targets: list[str]) -> list[str]:
    """Codex, Gemini CLI, …: set up; returns those that could not be."""
    from kenning.integrations import LABELS, agents

    failed = []
    for r in agents.install(paths, targets):
        for p in r.problems:
            print(f"kenning: {p}", file=sys.stderr)
        if r.problems:
            failed.append(r.agent)
        else:
            print(f"{LABELS[r.agent]}: hooks for {', '.join(r.events)} are in {r.path}"
                  + (" (unchanged)" if not r.changed else ""))
        for note in r.notes:
            print(f"{LABELS[r.agent]}: {note}")
        if r.backup:
            print(f"Backup of the previous file: {r.backup}")
    return failed


# Agents plain `install` does not set up, and why: said when they are found.
ON_REQUEST = {"cursor": "it already runs Claude Code's hooks; this gives it its own ~/.cursor/hooks.json instead",
              "copilot": "its hooks are written into the repository you run it in, one repository at a time"}


def _name_the_others() -> None:
    from kenning.integrations import LABELS, agents

    for agent, why in ON_REQUEST.items():
        if agents.found(agent):
            print(f"{LABELS[agent]} is on this machine too: `kenning install --agent {agent}` sets it up ({why}).")


def _offer_history(paths: Paths) -> None:
    """Say how many past sessions could be imported (``kenning import-history``)."""
    from kenning.history.importer import pending_sessions
    from kenning.integrations import LABELS

    found = pending_sessions(paths)
    if found:
        per = ", ".join(f"{LABELS.get(a, a)} {n}" for a, n in sorted(found.items()))
        print(f"Found {sum(found.values())} past session(s) not in memory yet ({per}): "
              "`kenning import-history` imports them (`--dry-run` first shows what it would store).")


# ---------------------------------------------------------------------------------- uninstall

def cmd_uninstall(args: argparse.Namespace) -> int:
    from kenning.integrations import agents

    paths = Paths()
    every = not args.agents or "all" in args.agents
    targets = list(agents.ALL) if every else agents.wanted(args.agents)
    failed = _uninstall_claude_code(paths) if "claude-code" in targets else False
    failed = _uninstall_others(paths, targets) or failed
    if every:
        from kenning.integrations import command_link

        link = command_link.remove_link()
        if link:
            print(f"Removed the link {link}")
        tool = command_link.manager()
        if tool is not None:
            print(f"The `kenning` command stays: `{command_link.MANAGERS[tool][1]}` removes it.")
        if not args.keep_worker:
            daemon.stop(paths)
            print("Worker stopped.")
        print(f"Your memory stays in {paths.root}; delete that folder to erase it.")
    else:
        print("Other agents and the worker are left as they are (`kenning uninstall` removes everything).")
    return 1 if failed else 0


def _uninstall_claude_code(paths: Paths) -> bool:
    from kenning.integrations import claude_code

    report = claude_code.uninstall(paths)
    for p in report.problems:
        print(f"kenning: {p}", file=sys.stderr)
    print(f"Removed Kenning's hooks from {report.path}" if report.changed else f"No Kenning hooks in {report.path}")
    if report.mcp is not None:
        for p in report.mcp.problems:
            print(f"kenning: {p}", file=sys.stderr)
        if report.mcp.changed:
            print(f"Removed Kenning's MCP server from {report.mcp.path}")
    if report.backup:
        print(f"Backup of the previous file: {report.backup}")
    plugin = claude_code.plugin_enabled()
    if plugin:
        print(f"The Kenning plugin ({plugin}) is still enabled in Claude Code: `claude plugin uninstall {plugin}` "
              "removes it.")
    return bool(report.problems)


def _uninstall_others(paths: Paths, targets: list[str]) -> bool:
    from kenning.integrations import LABELS, agents

    failed = False
    for r in agents.uninstall(paths, targets):
        for p in r.problems:
            print(f"kenning: {p}", file=sys.stderr)
            failed = True
        if r.changed:
            print(f"Removed Kenning's {LABELS[r.agent]} hooks from {r.path}")
    return failed
