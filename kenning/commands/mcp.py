"""``kenning mcp``: run the MCP server on stdin/stdout (Claude Code starts it; see ``kenning install``).

``python -m kenning mcp`` reaches the server before argparse (kenning/__main__.py); this is the
``kenning mcp --help`` entry.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from kenning.mcp.schema import TOOLS  # the names the server lists, so this help cannot miss one

    names = [t.name for t in TOOLS]
    s = sub.add_parser("mcp", help="run the MCP server (stdio) with the memory search tools",
                       description=f"Serve {', '.join(names[:-1])} and {names[-1]} over MCP on stdin/stdout. "
                                   "Claude Code starts it by itself once `kenning install` has registered it; "
                                   "logs go to <data dir>/logs/mcp.log.")
    s.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from kenning.mcp.server import run

    return run()
