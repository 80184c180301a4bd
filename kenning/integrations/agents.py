"""Which agents ``kenning install`` and ``uninstall`` act on; installing, removing and checking them.

Plain ``kenning install`` sets up every agent of ``AUTO`` found on this machine: its command is on
PATH or its config folder exists (``~/.claude``, ``$CODEX_HOME``, ``~/.gemini``,
``~/.config/opencode``). Cursor and GitHub Copilot CLI are set up only when named with ``--agent``:
Cursor already runs Claude Code's hooks, and Copilot's hooks live in each repository, written where
the command runs. ``--agent NAME`` (repeatable, or ``all``) acts on exactly the agents named, for
install and uninstall alike; plain ``kenning uninstall`` removes our entries from every agent.
"""

from __future__ import annotations

import os
import shutil

from kenning.integrations import AGENTS, LABELS, module
from kenning.integrations.files import Check, Report
from kenning.paths import Paths

ALL = tuple(AGENTS)
OTHERS = tuple(a for a in AGENTS if a != "claude-code")
AUTO = ("claude-code", "codex", "gemini", "opencode")
# The command each agent is run by (any one of them found counts).
COMMANDS: dict[str, tuple[str, ...]] = {"claude-code": ("claude",), "codex": ("codex",), "gemini": ("gemini",),
                                        "opencode": ("opencode",), "cursor": ("cursor-agent", "cursor"),
                                        "copilot": ("copilot",)}


def config_dir(agent: str) -> str:
    """The folder an agent keeps its user settings in (it exists once the agent has run here)."""
    if agent == "claude-code":
        from kenning.integrations.claude_code import claude_dir

        return claude_dir()
    if agent == "codex":
        return str(module(agent).codex_home())
    if agent == "gemini":
        return str(module(agent).gemini_dir())
    if agent == "opencode":
        return str(module(agent).config_dir())
    if agent == "cursor":
        return str(module(agent).cursor_dir())
    return os.path.join(os.path.expanduser("~"), ".copilot")


def _command(agent: str) -> str | None:
    for name in COMMANDS[agent]:
        found = shutil.which(name)
        if found:
            return found
    if agent == "claude-code":  # the native installer's places, which may not be on PATH yet
        for path in (os.path.join(os.path.expanduser("~"), ".local", "bin", "claude"),
                     os.path.join(config_dir(agent), "local", "claude")):
            if os.access(path, os.X_OK):
                return path
    return None


def found(agent: str) -> bool:
    """The agent is on this machine: its command is found or its config folder exists."""
    return _command(agent) is not None or os.path.isdir(config_dir(agent))


def where_looked(agent: str) -> str:
    """What ``found`` looked for, said as a reason: "no `claude` command on PATH and no ~/.claude folder"."""
    home = os.path.expanduser("~")
    folder = config_dir(agent)
    if folder == home or folder.startswith(home + os.sep):
        folder = "~" + folder[len(home):]
    names = " or ".join(f"`{n}`" for n in COMMANDS[agent])
    return f"no {names} command on PATH and no {folder} folder"


def wanted(names: list[str] | None) -> list[str]:
    """The agents to act on: those named (``all``: every one), else those of ``AUTO`` found here."""
    if not names:
        return [a for a in AUTO if found(a)]
    if "all" in names:
        return list(ALL)
    return [a for a in dict.fromkeys(names) if a in ALL]


def install(paths: Paths, agents: list[str], *, python: str | None = None) -> list[Report]:
    """Set up each of ``agents`` but Claude Code (kenning/integrations/claude_code.py has its own report)."""
    out = []
    for agent in agents:
        if agent == "claude-code":
            continue
        try:
            out.append(module(agent).install(paths, python=python))
        except (ValueError, UnicodeDecodeError, OSError) as e:  # tomlkit's parse errors are ValueErrors
            out.append(Report(agent=agent, path="", problems=[f"{LABELS[agent]} not set up: {e}"]))
    return out


def uninstall(paths: Paths, agents: list[str] | None = None) -> list[Report]:
    """Remove our entries from each of ``agents`` (default: every one) but Claude Code."""
    out = []
    for agent in agents if agents is not None else OTHERS:
        if agent == "claude-code":
            continue
        try:
            out.append(module(agent).uninstall(paths))
        except OSError as e:
            out.append(Report(agent=agent, path="", problems=[f"{LABELS[agent]}: {e}"]))
    return out


def checks() -> list[Check]:
    out: list[Check] = []
    for agent in OTHERS:
        m = module(agent)
        if m.installed() or m.detected():
            out.extend(m.checks())
    return out


def installed_commands() -> list[str]:
    """Every hook command of ours in the other agents' config files (doctor checks their interpreter)."""
    out: list[str] = []
    for agent in OTHERS:
        for cmds in module(agent).installed().values():
            out.extend(cmds)
    return out
