"""``kenning pin``, ``kenning unpin`` and ``kenning unarchive``: saying by hand which layer a memory is in.

A pinned memory is a standing rule: every session of its project is given it first. Unpinning
makes a rule an ordinary memory (ranked with the others, no longer always given). Unarchiving
brings routine work older than ``archive_after_days`` back as a key memory. The decision is
kept over rebuilds of the memory index (kenning/store/decisions.py). Like ``supersede``, these
write to the database directly, also while the worker runs.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from kenning.commands.args import row_id
from kenning.commands.supersede import _conn
from kenning.paths import Paths
from kenning.settings import load
from kenning.store import decisions

DONE = {"pin": "pinned: a standing rule, given to every session of its project",
        "unpin": "unpinned: an ordinary memory now",
        "unarchive": "back from the archive: a key memory, given to sessions again"}


def register(sub: argparse._SubParsersAction) -> None:
    for name, help_, what in (
            ("pin", "make memories standing rules, given to every session of their project", "to pin"),
            ("unpin", "make standing rules ordinary memories again", "to unpin"),
            ("unarchive", "bring archived routine work back into what sessions are given", "to bring back")):
        s = sub.add_parser(name, help=help_, description=help_[0].upper() + help_[1:] + ". The decision is kept "
                           "when the memory index is rebuilt.")
        s.add_argument("ids", nargs="+", type=row_id, metavar="ID", help=f"observations {what}")
        s.add_argument("--project", default=None, help="refuse ids of any other project (its name or key)")
        s.add_argument("--json", action="store_true", help="print the result as JSON")
        s.set_defaults(func=cmd_decide, action=name)


def cmd_decide(args: argparse.Namespace) -> int:
    from kenning.memory_service import MemoryService

    paths = Paths()
    conn = _conn(paths)
    if conn is None:
        return 1
    done: list[dict[str, Any]] = []
    failed: dict[int, str] = {}
    days = load(paths)[0].archive_after_days
    door = MemoryService(conn, "cli")
    try:
        for oid in dict.fromkeys(args.ids):
            try:
                if args.action == "unarchive":
                    done.append(door.unarchive(oid, archive_after_days=days, project=args.project))
                else:
                    fn = door.pin if args.action == "pin" else door.unpin
                    done.append(fn(oid, project=args.project))
            except decisions.DecisionError as e:
                failed[oid] = str(e)
    except sqlite3.OperationalError as e:
        print(f"kenning: the database is busy ({e}); try again", file=sys.stderr)
        return 1
    finally:
        conn.close()
    if args.json:
        print(json.dumps({"done": done, "failed": {str(k): v for k, v in failed.items()}}, indent=2))
    else:
        for d in done:
            group = f" (with {d['rows'] - 1} restatement(s) of it)" if d["rows"] > 1 else ""
            print(f"#{d['id']} {DONE[args.action]}{group}.")
        for why in failed.values():
            print(f"kenning: {why}", file=sys.stderr)
    return 0 if not failed else 1
