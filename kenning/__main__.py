"""``python -m kenning`` / the ``kenning`` command.

``hook`` is dispatched first, before argparse or anything heavy is imported: it runs on
every tool call of the agent and must start in a few milliseconds.
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
    from kenning.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
