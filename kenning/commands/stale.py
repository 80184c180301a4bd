"""``kenning stale``: memories whose evidence is gone, proposed for review.

A memory about code whose cited file, identifier or command was found gone from the working
tree at several session starts (``evidence_review_sessions``) is listed with what is gone and
since when; fix it with `kenning supersede`, or drop it with `kenning forget`.
"""

from __future__ import annotations

import argparse
import json
import time

from kenning.paths import Paths
from kenning.settings import load


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("stale", help="list memories whose cited files, identifiers or commands are gone (review)")
    s.add_argument("--project", default="", help="only this project (its key, path or name)")
    s.add_argument("--sessions", type=int, default=None, metavar="N",
                   help="found gone in at least N session starts (default: the evidence_review_sessions setting)")
    s.add_argument("--json", action="store_true", help="print them as JSON")
    s.set_defaults(func=cmd_stale)


def cmd_stale(args: argparse.Namespace) -> int:
    from kenning.service import Memory

    paths = Paths()
    settings, _ = load(paths)
    rows = Memory(paths, settings).stale(args.project, args.sessions)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("No memory's evidence is gone.")
        return 0
    for r in rows:
        when = time.strftime("%Y-%m-%d", time.localtime(r["since"]))
        print(f"#{r['id']} {r['title'][:100]}")
        print(f"    evidence gone since {when} ({r['sessions']} sessions): {'; '.join(r['notes'])}")
    print("\nStill true? Nothing to do. Outdated: `kenning supersede ID --by NEW` or `kenning forget --id ID`.")
    return 0
