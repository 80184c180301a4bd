"""``python -m kenning`` / the ``kenning`` command.

``hook`` and ``mcp`` are dispatched first, before argparse or anything heavy is imported: a
hook runs on every tool call of the agent, and the agent waits for the MCP server's handshake.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        from kenning.hook.main import cli
        from kenning.hook.main import main as hook_main

        if argv is None:
            cli(args[1:])  # a real hook process: exits without interpreter teardown
        return hook_main(args[1:])
    if args == ["mcp"]:
        # The MCP server: the agent waits for its handshake, so no argparse or CLI imports first.
        from kenning.mcp.server import run

        return run()
    if args in (["--version"], ["-V"]):  # before the CLI's imports: nothing else is needed
        from kenning.clihelp import version

        print(f"kenning {version()}")
        return 0
    problem = unsupported(sys.platform)
    if problem:
        print(f"kenning: {problem}", file=sys.stderr)
        return 1
    from kenning.cli import main as cli_main

    return cli_main(args)


def unsupported(platform: str) -> str | None:
    """Why Kenning cannot run on ``platform`` (``sys.platform``), or None. The hooks, the worker's
    files and its locks are POSIX (``posix``, ``fcntl``, named pipes, 0600 modes)."""
    if platform.startswith(("linux", "darwin")) or "bsd" in platform:
        return None
    if platform in ("win32", "cygwin", "msys"):
        return ("Windows is not supported (Linux and macOS are); under WSL Kenning runs as it does on Linux: "
                "install it inside the WSL distribution")
    return f"{platform} is not supported (Linux and macOS are)"


if __name__ == "__main__":
    sys.exit(main())
