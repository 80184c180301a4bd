"""``kenning supersede`` and ``kenning restore``: saying by hand which memories are no longer true.

A superseded memory is never injected again and stays searchable (``kenning search --all``),
flagged with what replaced it; ``restore`` undoes it (and brings back a retracted one). Like
``forget``, these write to the database directly, also while the worker runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys

from kenning.commands.args import row_id
from kenning.paths import Paths
from kenning.store import supersede
from kenning.store.db import open_db


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("supersede", help="mark memories as no longer true, replaced by a newer one",
                       description="Mark observations as superseded by a newer observation of the same project: "
                                   "they are no longer given to sessions, and stay searchable (--all), flagged.")
    s.add_argument("ids", nargs="+", type=row_id, metavar="ID", help="observations that are no longer true")
    s.add_argument("--by", type=row_id, required=True, metavar="ID", help="the observation that replaces them")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.set_defaults(func=cmd_supersede)

    s = sub.add_parser("restore", help="make superseded or retracted memories current again (undo)")
    s.add_argument("ids", nargs="+", type=row_id, metavar="ID", help="observations to restore")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.set_defaults(func=cmd_restore)


def _conn(paths: Paths) -> sqlite3.Connection | None:
    if not os.path.exists(paths.db):
        print("kenning: there is no memory yet", file=sys.stderr)
        return None
    return open_db(paths.db)


def cmd_supersede(args: argparse.Namespace) -> int:
    from kenning.memory_service import MemoryService

    conn = _conn(Paths())
    if conn is None:
        return 1
    try:
        res = MemoryService(conn, "cli").supersede(args.ids, args.by)
    except supersede.SupersedeError as e:
        print(f"kenning: {e}", file=sys.stderr)
        return 2
    except sqlite3.OperationalError as e:
        print(f"kenning: the database is busy ({e}); nothing changed, try again", file=sys.stderr)
        return 1
    finally:
        conn.close()
    if args.json:
        print(json.dumps(res.as_dict(), indent=2))
    elif res.superseded:
        print(f"Superseded by #{res.by}: " + ", ".join(f"#{i}" for i in res.superseded)
              + ". They are no longer injected; `kenning search --all` still finds them.")
    for oid, why in res.skipped.items():
        print(f"kenning: #{oid} not changed: {why}", file=sys.stderr)
    return 0 if res.superseded else 1


def cmd_restore(args: argparse.Namespace) -> int:
    from kenning.memory_service import MemoryService

    conn = _conn(Paths())
    if conn is None:
        return 1
    try:
        done = MemoryService(conn, "cli").restore(args.ids)
    except sqlite3.OperationalError as e:
        print(f"kenning: the database is busy ({e}); nothing changed, try again", file=sys.stderr)
        return 1
    finally:
        conn.close()
    missed = [i for i in args.ids if i not in done]
    if args.json:
        print(json.dumps({"restored": done, "unchanged": missed}, indent=2))
    elif done:
        print("Restored: " + ", ".join(f"#{i}" for i in done) + ".")
    if missed and not args.json:
        print("kenning: not restored (no such observation, or already current): "
              + ", ".join(f"#{i}" for i in missed), file=sys.stderr)
    return 0 if done else 1
