"""``kenning open``: the web viewer in a browser, signed in.

The API token never leaves its 0600 file: the browser's URL carries a one-time code (single
use, valid for a minute) in its fragment, which browsers never send to a server. The page
trades it by POST for a viewer session and removes it from the address bar. Whoever reads the
code off a command line (``/proc/<pid>/cmdline``) or the history finds it spent or expired, and
the worker refuses it from another user's connection anyway.
"""

from __future__ import annotations

import argparse
import json
import sys

from kenning import daemon
from kenning.commands.args import seconds
from kenning.hook import client
from kenning.paths import Paths, read_token


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("open", help="open the web viewer (starts the worker if needed)",
                       description="Start the worker if it is not running and open the web viewer in the default "
                                   "browser, signed in with a one-time code (the token itself never leaves its file).")
    s.add_argument("--print", dest="print_only", action="store_true",
                   help="only print the address (its sign-in code works once, within a minute)")
    s.add_argument("--wait", type=seconds, default=10.0, help="seconds to wait for the worker to start (default 10)")
    s.set_defaults(func=cmd_open)


def viewer_url(port: int, code: str) -> str:
    return f"http://127.0.0.1:{port}/#code={code}"


def one_time_code(paths: Paths, port: int) -> str | None:
    """A fresh sign-in code from the worker (asked with the token, in a header)."""
    if not read_token(paths):
        return None
    res = client.authed(paths, port, "POST", "/api/viewer/code", timeout=5.0)
    if res is None or res[0] != 200:
        return None
    try:
        code = json.loads(res[1]).get("code")
    except (ValueError, AttributeError):
        return None
    return code if isinstance(code, str) and code else None


def cmd_open(args: argparse.Namespace) -> int:
    paths = Paths()
    health = daemon.ensure(paths, wait=args.wait)
    if not health:
        print(f"kenning: {daemon.not_started(paths)}", file=sys.stderr)
        return 1
    port = int(health["port"])
    code = one_time_code(paths, port)
    if code is None:
        print(f"kenning: the worker gave no sign-in code (is {paths.token} there? `kenning worker restart` "
              "creates it)", file=sys.stderr)
        return 1
    url = viewer_url(port, code)
    if args.print_only:
        print(url)
        print("(the sign-in code works once, within a minute)", file=sys.stderr)
        return 0
    import webbrowser

    opened = False
    try:
        opened = webbrowser.open(url, new=2)
    except webbrowser.Error:
        opened = False
    if opened:
        print(f"kenning: viewer opened at http://127.0.0.1:{port}/")
    else:
        print(f"kenning: no browser here; open this address within a minute (its code works once):\n{url}")
    return 0
