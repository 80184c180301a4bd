"""``kenning forget``, ``kenning export`` and ``kenning import``: the user's control over their memory.

The CLI writes to the database directly, also while the worker runs: SQLite in WAL mode lets
one writer in at a time and every connection waits (``busy_timeout``) for the other's
transaction; the worker's pipeline treats a lock it cannot get in time as "retry next cycle",
so nothing is lost. Going through the worker's HTTP API instead would need a fallback for
when it is down anyway (two paths to test), an HTTP timeout for a VACUUM that grows with the
database, and a body limit an import file can exceed. When the worker runs, ``forget`` first
asks it to drain the spool, so events captured a moment ago are forgotten too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3
import stat
import sys
import time
from typing import Any, TextIO

from kenning.commands.args import row_id
from kenning.paths import FILE_MODE, Paths
from kenning.privacy import ingress
from kenning.search import known
from kenning.settings import load
from kenning.store import forget as fg
from kenning.store import projects, transfer
from kenning.store.db import connect, open_db


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("forget", help="delete memories (and what derives from them) by id, query, project or dates",
                       description="Forget observations, summaries and prompts matching every given filter, with "
                                   "the raw events of the same turns; then compact the database so the text is "
                                   "gone from the file. Lists what would go and asks first; --yes skips the "
                                   "question (required when stdin is not a terminal).")
    s.add_argument("--id", dest="ids", type=row_id, action="append", default=[], metavar="N",
                   help="an observation id (repeatable)")
    s.add_argument("--query", default="", help="words that must all appear (plain words, never search syntax)")
    s.add_argument("--project", default="", help="a project name; alone, it forgets the project's whole sessions")
    _date_args(s)
    s.add_argument("--dry-run", action="store_true", help="only list what would be forgotten")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    s.add_argument("--json", action="store_true", help="print the selection and the result as JSON")
    s.set_defaults(func=cmd_forget)

    s = sub.add_parser("export", help="write memory as JSON Lines (all, or filtered)")
    s.add_argument("--project", default="", help="only this project")
    _date_args(s)
    s.add_argument("--include-sensitive", action="store_true", help="also export observations of type sensitive")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE (created 0600) instead of stdout")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("import", help="add the records of an export file (idempotent)")
    s.add_argument("file", help="a JSONL file written by `kenning export` (- for stdin)")
    s.set_defaults(func=cmd_import)


def _date_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--since", metavar="DATE", help="from this ISO date or datetime, local time (inclusive)")
    s.add_argument("--until", metavar="DATE", help="up to this ISO date (the whole day) or datetime (exclusive)")


def _fail(message: str, code: int = 1) -> int:
    print(f"kenning: {message}", file=sys.stderr)
    return code


def _dates(args: argparse.Namespace) -> tuple[float | None, float | None]:
    since = fg.parse_date(args.since) if args.since else None
    until = fg.parse_date(args.until, end=True) if args.until else None
    if since is not None and until is not None and since >= until:
        raise ValueError("--since must be before --until")
    return since, until


# ---------------------------------------------------------------------------------- forget

def cmd_forget(args: argparse.Namespace) -> int:
    from kenning.memory_service import MemoryService

    paths = Paths()
    try:
        since, until = _dates(args)
        filters = fg.Filters(ids=tuple(args.ids), query=args.query, project=args.project, since=since, until=until)
        filters.check()
    except ValueError as e:
        return _fail(str(e), 2)
    if not os.path.exists(paths.db):
        return _report_empty(args, "there is no memory yet")
    _drain_worker_spool(paths)
    conn: sqlite3.Connection | None = None
    try:
        conn = open_db(paths.db)
        if filters.project:  # a name or path names a key
            known.check_project(conn, filters.project)
            filters = dataclasses.replace(filters, project=projects.one(conn, filters.project))
        sel = fg.select(conn, filters)
        if args.json and (args.dry_run or sel.empty):
            print(json.dumps({"dry_run": True, "selection": sel.as_dict(), "deleted": None}, indent=2))
            return 0
        # With --json, stdout carries only the JSON result: the listing a human confirms goes to stderr.
        _print_selection(sel, sys.stderr if args.json else sys.stdout)
        if sel.empty or args.dry_run:
            if args.dry_run and not sel.empty and not args.json:
                print("Dry run: nothing was changed.")
            return 0
        if not args.yes:
            if not sys.stdin.isatty():
                return _fail("not forgetting anything: stdin is not a terminal; add --yes to confirm")
            try:
                answer = input(f"Forget these {_total(sel)} item(s) for good? [y/N] ")
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                print("Nothing forgotten.")
                return 1
        deleted = MemoryService(conn, "cli").forget_selected(sel)
        result = {"dry_run": False, "selection": sel.as_dict(), "deleted": deleted,
                  **fg.reclaim_report(conn, paths.db)}
        if sel.damaged_copies:
            result["warning"] = "; ".join(filter(None, [result.get("warning"), fg.damaged_warning(sel.damaged_copies)]))
    except (projects.AmbiguousProject, known.UnknownName) as e:
        return _fail(str(e), 2)
    except sqlite3.OperationalError as e:
        return _fail(f"the database is busy ({e}); nothing was forgotten, try again")
    except sqlite3.Error as e:
        return _fail(f"cannot use the database {paths.db}: {e}")
    finally:
        if conn is not None:
            conn.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        parts = [f"{n} {k.replace('_', ' ')}" for k, n in deleted.items() if n and k != "made_current"]
        print("Forgot " + (", ".join(parts) or "nothing") + ".")
        if deleted.get("made_current"):
            print(f"{deleted['made_current']} memory(ies) the forgotten one(s) had superseded are current again.")
        if result.get("reclaimed"):
            print(f"Database compacted: {_size(result['bytes_before'])} → {_size(result['bytes_after'])}.")
    if result.get("warning"):
        print(f"kenning: {result['warning']}", file=sys.stderr)
        return 1
    return 0


def _report_empty(args: argparse.Namespace, why: str) -> int:
    if args.json:
        print(json.dumps({"dry_run": True, "selection": fg.Selection().as_dict(), "deleted": None}, indent=2))
    else:
        print(f"Nothing to forget: {why}.")
    return 0


def _drain_worker_spool(paths: Paths) -> None:
    """Ask a running worker to ingest what is still in the spool (best effort, bounded)."""
    from kenning.hook import client

    info = client.read_pid_file(paths)
    if info:
        client.authed(paths, info["port"], "POST", "/api/flush", timeout=12.0)


def _total(sel: fg.Selection) -> int:
    c = sel.counts()
    return c["observations"] + c["summaries"] + c["prompts"] + c["sessions"] + c["summaries_rewritten"]


def _print_selection(sel: fg.Selection, out: TextIO) -> None:
    def say(line: str) -> None:
        print(line, file=out)

    if sel.missing_ids:
        say("No observation " + ", ".join(f"#{i}" for i in sel.missing_ids) + ".")
    if sel.empty:
        say("Nothing matches: nothing to forget.")
        return
    say("Would forget:")
    for item in sel.sessions:
        say(f"  session {item.title}  ({item.project}, started {_when(item.created_at)}) with everything in it")
    for label, items in (("#", sel.observations), ("S", sel.summaries), ("P", sel.prompts)):
        for item in items:
            say(f"  {label}{item.id:<6} {item.type:<14} {_clip(item.title)}  ({item.project}, "
                f"{_when(item.created_at)})")
    if sel.summary_rewrites:
        say(f"  and its text in {len(sel.summary_rewrites)} session summary(ies), rewritten without it: "
            + ", ".join(f"S{i}" for i in sorted(sel.summary_rewrites)))
    if sel.event_ids:
        say(f"  and the raw captured payloads of {len(sel.event_ids)} event(s)")


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def _clip(text: str, limit: int = 70) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _size(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB" if n >= 1_048_576 else f"{n / 1024:.0f} KB"


# ---------------------------------------------------------------------------------- export

def cmd_export(args: argparse.Namespace) -> int:
    paths = Paths()
    try:
        since, until = _dates(args)
    except ValueError as e:
        return _fail(str(e), 2)
    try:
        conn = connect(paths.db, readonly=True) if os.path.exists(paths.db) else None
    except sqlite3.Error as e:
        return _fail(f"cannot read the database: {e}")
    project = args.project
    if conn is not None and project:
        try:
            known.check_project(conn, project)
            project = projects.one(conn, project)
        except (projects.AmbiguousProject, known.UnknownName) as e:
            conn.close()
            return _fail(str(e), 2)
    records = transfer.export(conn, project=project or None, since=since, until=until,
                              include_sensitive=args.include_sensitive) if conn else iter([_empty_header()])
    counts: dict[str, int] = {}

    def counted() -> Any:
        for rec in records:
            counts[rec["kind"]] = counts.get(rec["kind"], 0) + 1
            yield rec

    try:
        if args.output and args.output != "-":
            _write_private_stream(args.output, transfer.export_lines(counted()))
            print(f"Exported {_describe(counts)} to {args.output}", file=sys.stderr)
        else:
            for line in transfer.export_lines(counted()):
                sys.stdout.write(line)
            sys.stdout.flush()
    except sqlite3.Error as e:
        return _fail(f"cannot read the database: {e}")
    except OSError as e:
        return _fail(f"cannot write {args.output}: {e}")
    finally:
        if conn is not None:
            conn.close()
    return 0


def _empty_header() -> dict[str, Any]:
    return {"kind": "header", "format": transfer.FORMAT_VERSION, "exported_at": time.time()}


def _write_private_stream(path: str, lines: Any) -> None:
    """Stream lines into ``path`` as a 0600 file: a temp file beside it, fsync, rename."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _describe(counts: dict[str, int]) -> str:
    parts = [f"{counts.get(k, 0)} {k}{'s' if counts.get(k, 0) != 1 else ''}"
             for k in ("session", "prompt", "observation", "summary")]
    return ", ".join(parts).replace("summarys", "summaries")


# ---------------------------------------------------------------------------------- import

def cmd_import(args: argparse.Namespace) -> int:
    from kenning.memory_service import MemoryService

    paths = Paths()
    try:
        fh = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115 - closed below
    except OSError as e:
        return _fail(f"cannot read {args.file}: {e.strerror or e}")
    mode = os.fstat(fh.fileno()).st_mode
    if fh is not sys.stdin.buffer and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):  # /dev/zero never ends
        fh.close()
        return _fail(f"nothing imported: {args.file} is a device, not an export file")
    try:
        paths.ensure()
        conn = open_db(paths.db)
        try:
            added = MemoryService(conn, "cli").import_records(transfer.read_jsonl(transfer.bounded_lines(fh)),
                                                             ingress.cleaner(load(paths)[0]).text)
        finally:
            conn.close()
        from kenning.hook import client

        client.poke_embedder(paths)  # a running worker embeds the imported rows now
    except transfer.BadRecord as e:
        return _fail(f"nothing imported: {e}")
    except sqlite3.OperationalError as e:
        return _fail(f"nothing imported: the database is busy ({e}); try again")
    except sqlite3.Error as e:
        return _fail(f"nothing imported: cannot use the database {paths.db}: {e}")
    except OSError as e:
        return _fail(f"nothing imported: cannot read {args.file}: {e}")
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
    print(f"Imported {added['sessions']} sessions, {added['prompts']} prompts, {added['observations']} observations, "
          f"{added['summaries']} summaries; {added['skipped']} already present.")
    return 0
