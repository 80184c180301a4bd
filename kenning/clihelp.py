"""The top-level ``kenning`` help: every command under the task it serves, and ``--version``.

argparse lists sub-commands in one flat, unsorted block; a newcomer looks for a task first
("start here", "find something"), so the top-level help is built here from ``GROUPS``.
Only the standard library: ``kenning --version`` must not import the store or the worker.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from collections.abc import Sequence
from typing import Any

# Every sub-command in exactly one group (tests/unit/test_cli_help.py checks it); listed sorted.
GROUPS: dict[str, tuple[str, ...]] = {
    "Start here": ("demo", "doctor", "install", "open", "status"),
    "Memory": ("forget", "pin", "restore", "review", "show", "stale", "supersede", "unarchive", "unpin", "why"),
    "Search and context": ("context", "reindex", "search", "stats", "timeline"),
    "Agents and install": ("completion", "extras", "hook", "mcp", "uninstall"),
    "Worker and health": ("repair", "settings", "worker"),
    "Import/export": ("export", "import", "import-history"),
    "Team": ("team",),
}


def version() -> str:
    """The installed distribution's version; ``kenning.__version__`` when there is no metadata."""
    from importlib import metadata

    try:
        return metadata.version("kenning")
    except metadata.PackageNotFoundError:
        import kenning

        return str(getattr(kenning, "__version__", "unknown"))


class VersionAction(argparse.Action):
    """``--version`` that reads the version only when asked (argparse's own wants it up front)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0,
                         help="print Kenning's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"kenning {version()}")
        parser.exit()


def grouped(sub: argparse._SubParsersAction) -> str:
    """The commands of ``sub`` under their task headings, each with its one-line help."""
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    width = max(40, min(shutil.get_terminal_size().columns, 100))
    name_w = max(len(n) for n in helps) + 2
    out: list[str] = []
    for title, names in GROUPS.items():
        out.append(f"{title}:")
        for name in sorted(names):
            text = textwrap.wrap(helps.get(name, ""), width - name_w - 2, break_on_hyphens=False) or [""]
            out.append(f"  {name:<{name_w}}{text[0]}")
            out.extend(" " * (name_w + 2) + line for line in text[1:])
        out.append("")
    out.append("`kenning COMMAND --help` describes a command and each of its options.")
    return "\n".join(out)
