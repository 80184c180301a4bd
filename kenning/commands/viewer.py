"""``kenning open``: the web viewer in a browser, signed in.

The token travels in the URL's fragment (``#token=…``): browsers never send a fragment to
the server, so it stays out of request lines and logs; the page moves it to its own storage
and removes it from the address bar.
"""

from __future__ import annotations

import argparse
import sys

from kenning import daemon
from kenning.paths import Paths, read_token


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("open", help="open the web viewer (starts the worker if needed)",
                       description="Start the worker if it is not running and open the web viewer, signed in "
                                   "with this user's token, in the default browser.")
    s.add_argument("--print", dest="print_only", action="store_true",
                   help="only print the URL (it holds the token: do not share it)")
    s.add_argument("--wait", type=float, default=10.0, help="seconds to wait for the worker to start (default 10)")
    s.set_defaults(func=cmd_open)


def viewer_url(port: int, token: str) -> str:
    return f"http://127.0.0.1:{port}/#token={token}"


def cmd_open(args: argparse.Namespace) -> int:
    paths = Paths()
    health = daemon.ensure(paths, wait=args.wait)
    if not health:
        print("kenning: the worker did not start in time; see `kenning worker logs`", file=sys.stderr)
        return 1
    token = read_token(paths)
    if not token:
        print(f"kenning: no token in {paths.token}; `kenning worker restart` creates one", file=sys.stderr)
        return 1
    url = viewer_url(int(health["port"]), token)
    if args.print_only:
        print(url)
        return 0
    import webbrowser

    opened = False
    try:
        opened = webbrowser.open(url, new=2)
    except webbrowser.Error:
        opened = False
    if opened:
        print(f"kenning: viewer opened at http://127.0.0.1:{health['port']}/")
    else:
        print(f"kenning: no browser here; open this URL (it holds your token, do not share it):\n{url}")
    return 0
