"""Install, remove and check every agent other than Claude Code (whose installer predates this).

``kenning install`` sets up Claude Code and every other agent found on the machine (its config
folder exists), or exactly the agents named with ``--agent``; ``kenning uninstall`` removes our
entries from all of them; ``kenning doctor`` checks those that are set up or found.
"""

from __future__ import annotations

from kenning.integrations import AGENTS, LABELS, module
from kenning.integrations.files import Check, Report
from kenning.paths import Paths

OTHERS = tuple(a for a in AGENTS if a != "claude-code")


def wanted(names: list[str] | None) -> list[str]:
    """The agents ``kenning install`` sets up besides Claude Code."""
    if not names:
        return [a for a in OTHERS if module(a).detected()]
    if "all" in names:
        return list(OTHERS)
    return [a for a in dict.fromkeys(names) if a in OTHERS]


def install(paths: Paths, agents: list[str], *, python: str | None = None) -> list[Report]:
    out = []
    for agent in agents:
        try:
            out.append(module(agent).install(paths, python=python))
        except (ValueError, UnicodeDecodeError, OSError) as e:  # tomlkit's parse errors are ValueErrors
            out.append(Report(agent=agent, path="", problems=[f"{LABELS[agent]} not set up: {e}"]))
    return out


def uninstall(paths: Paths) -> list[Report]:
    out = []
    for agent in OTHERS:
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
