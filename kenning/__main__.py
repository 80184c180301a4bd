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
    from kenning.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
