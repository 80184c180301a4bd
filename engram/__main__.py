"""``python -m engram`` / the ``engram`` command.

``hook`` is dispatched first, before argparse or anything heavy is imported: it runs on
every tool call of the agent and must start in a few milliseconds.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        from engram.hook.main import main as hook_main

        code = hook_main(args[1:])
        if argv is None:
            # A real hook process: skip interpreter teardown (~5 ms). Everything it wrote is
            # already fsynced and closed; only stdout needs flushing.
            import os

            try:
                sys.stdout.flush()
            finally:
                os._exit(code)
        return code
    from engram.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
