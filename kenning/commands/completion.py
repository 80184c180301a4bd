"""``kenning completion bash|zsh|fish``: print a shell's completion script (kenning/completion.py makes it)."""

from __future__ import annotations

import argparse

from kenning.completion import SHELLS, script


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                       description="Print the completion script of a shell, generated from Kenning's own "
                                   "commands and options. Load it now: `source <(kenning completion bash)` "
                                   "(zsh: the same with zsh; fish: `kenning completion fish | source`); the "
                                   "script's first lines say where to keep it.")
    s.add_argument("shell", choices=SHELLS, help="the shell to complete in: bash, zsh or fish")
    s.set_defaults(func=cmd_completion)


def cmd_completion(args: argparse.Namespace) -> int:
    from kenning.cli import build_parser

    print(script(args.shell, build_parser()), end="")
    return 0
