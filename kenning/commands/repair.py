"""``kenning repair``: a database that cannot be read is set aside and rebuilt from what survives."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time

from kenning import daemon, spool
from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("repair", help="rebuild a damaged database from what can still be read, then the spool",
                       description="Stop the worker, move the damaged database aside (kept, never deleted), "
                                   "recover every row SQLite can still read into a fresh database, re-ingest the "
                                   "events still in the spool, and report what was saved.")
    s.add_argument("--force", action="store_true", help="rebuild even when the database reads fine")
    s.add_argument("--no-start", action="store_true", help="do not start the worker afterwards")
    s.set_defaults(func=cmd_repair)


def cmd_repair(args: argparse.Namespace) -> int:
    from kenning.store import health, repair

    paths = Paths()
    if not os.path.exists(paths.db):
        print(f"Nothing to repair: there is no database at {paths.db} yet.")
        return 0
    kind, message = health.probe(paths.db)
    if kind == health.OK and not args.force:
        kind, message = _integrity(paths.db)
    if kind == health.OK and not args.force:
        print(f"Nothing to repair: {paths.db} reads fine (integrity ok). `--force` rebuilds it anyway.")
        return 0
    if kind in (health.READ_ONLY, health.FULL, health.LOCKED):
        print(f"kenning: not a damaged database: {message}", file=sys.stderr)
        return 1
    print(f"Repairing {paths.db} ({_cause(message) or 'rebuilt on request'})")
    if not daemon.stop(paths):
        print("kenning: the worker did not stop; nothing was changed", file=sys.stderr)
        return 1
    from kenning.store import backup

    good, passed_over = backup.newest_good(paths)
    for why in passed_over:
        print(f"  note: backup passed over: {why}")
    damaged = repair.move_aside(paths.db)
    health.clear_damage(paths.db)
    print(f"The damaged file is kept as {damaged} (a later `kenning forget` does not reach it: delete it once you "
          "no longer need it)")
    try:
        report = repair.recover(damaged, paths.db, backup=good.path if good else None)
    except (sqlite3.Error, OSError) as e:
        print(f"kenning: recovery failed: {type(e).__name__}: {e}; the damaged file stays at {damaged}, and a new "
              "database starts with the next worker (the spool is kept)", file=sys.stderr)
        return 1
    for p in report.problems:
        print(f"  note: {p}")
    saved = report.saved
    if not any(saved.values()):
        print("Nothing could be read back from the damaged file (the damage reaches its structure: the notes above "
              "say where); it is kept for other tools.")
    main = ("sessions", "user_prompts", "observations", "session_summaries", "events")
    print(f"Recovered ({report.method}): " + ", ".join(f"{saved.get(t, 0)} {t.replace('_', ' ')}" for t in main)
          + "".join(f", {n} {t.replace('_', ' ')}" for t, n in saved.items() if t not in main and n))
    if report.pages_lost:
        print(f"Lost with the damaged file: {report.pages_lost} page(s) its tables point at are missing or unreadable.")
    if good is None:
        print(f"No backup to restore the rest from (none good in {paths.backups}; the worker takes one a day, "
              "`backups_keep` in settings.json).")
    elif any(v > 0 for v in report.from_backup.values()):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(good.taken_at))
        print(f"Restored from the backup of {when} ({os.path.basename(good.path)}), rows the damaged file lost: "
              + ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in report.from_backup.items() if n > 0)
              + ". They are as they were then: what changed in them since, and what was captured between the "
                "backup and the damage and not read back above, is lost."
              + (f" {report.resuperseded} of them are marked superseded again by newer memories read back above."
                 if report.resuperseded else "")
              + " A memory superseded by hand or by an LLM observer after the backup may be shown again: "
                "`kenning supersede` marks it.")
    else:
        print(f"The backup {os.path.basename(good.path)} holds nothing the recovered rows lack.")
    if report.orphans:
        print("Left out (their session or parent row was lost): "
              + ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in report.orphans.items()))
    if report.unreadable:
        print("Unreadable and lost: " + ", ".join(f"{n} row(s) or page(s) of {t.replace('_', ' ')}"
                                                  for t, n in report.unreadable.items()))
    waiting = spool.depth(paths)
    ingested = _ingest_spool(paths) if waiting else 0
    print(f"Re-ingested {ingested} event(s) from the spool (captured but not yet saved before the damage).")
    if args.no_start:
        return 0
    started = daemon.ensure(paths, wait=15.0)
    print("Worker running." if started else f"kenning: {daemon.not_started(paths)}",
          file=sys.stdout if started else sys.stderr)
    return 0 if started else 1


def _cause(message: str) -> str:
    """The SQLite error inside a message of ``kenning.store.health`` ('database disk image is malformed')."""
    if "(" in message and ")" in message:
        return message[message.index("(") + 1:message.rindex(")")]
    return message


def _integrity(db: str) -> tuple[str, str]:
    from kenning.store import health

    try:
        conn = health.open_readonly(db)
        try:
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as e:
        return health.classify(db, e)
    return (health.OK, "") if check == "ok" else (health.CORRUPT, f"integrity check: {check}")


def _ingest_spool(paths: Paths) -> int:
    """The spool into the rebuilt database (ingest only: the worker's observer takes it from there)."""
    from kenning.observer.providers.rules import RulesObserver
    from kenning.store import switch
    from kenning.store.db import open_db
    from kenning.worker.pipeline import INGEST_BATCH, Pipeline

    conn = open_db(paths.db)
    try:
        pipe = Pipeline(paths, conn, RulesObserver())
        while pipe.ingest() >= INGEST_BATCH:
            pass
        pipe.settle(force=True)
        return pipe.stats.ingested
    finally:
        switch.forget(paths.db)  # this process writes no more: nothing to follow
        conn.close()
