"""``kenning search``, ``kenning timeline`` and ``kenning reindex``.

Search and timeline ask the worker when it runs (it holds the embedding model, so results are
hybrid) and read the database directly otherwise (keywords only). Reindex rebuilds the text
indexes here and has the worker (started if needed) recompute the vectors, showing progress.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from kenning import daemon
from kenning.commands.args import count, row_id
from kenning.hook import client
from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("search", help="search memory by words (and by meaning when embeddings are on)",
                       description="Search observations, session summaries and prompts. Plain words: every one "
                                   "is matched literally (no search syntax); rows holding all of them come first.")
    s.add_argument("query", nargs="*", help="words to look for (none: the newest rows)")
    s.add_argument("-p", "--project", help="only this project ('.' = the project of the current directory)")
    s.add_argument("-t", "--type", dest="types", action="append", metavar="TYPE",
                   help="observation type (repeatable), or summary / prompt")
    s.add_argument("--concept", dest="concepts", action="append", metavar="CONCEPT", help="concept (repeatable)")
    s.add_argument("--file", dest="files", action="append", metavar="PATH",
                   help="touched this file, absolute or project-relative (repeatable)")
    s.add_argument("--since", metavar="DATE", help="from this ISO date or datetime, local time")
    s.add_argument("--until", metavar="DATE", help="before this ISO date or datetime, local time")
    s.add_argument("--session", type=row_id, metavar="ID", help="only this session (database id)")
    s.add_argument("--agent", metavar="AGENT", help="only what this coding agent did (claude-code, codex, gemini, "
                                                    "opencode, cursor, copilot)")
    s.add_argument("--kind", dest="kinds", action="append", choices=("observation", "summary", "prompt"),
                   help="kinds of rows (repeatable; default all)")
    s.add_argument("--order", choices=("relevance", "date"), default="relevance",
                   help="best match first (default) or newest first")
    s.add_argument("-n", "--limit", type=count(1, 10_000), default=20, help="results to show (default 20)")
    s.add_argument("--offset", type=count(0, 1_000_000), default=0, help="skip this many results first (paging)")
    s.add_argument("--all", dest="include_inactive", action="store_true",
                   help="include superseded and retracted observations (flagged)")
    s.add_argument("--json", action="store_true", help="print the results as JSON")
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("timeline", help="what happened before and after an observation (by id or by query)")
    s.add_argument("id", nargs="?", type=row_id, help="the observation id")
    s.add_argument("-q", "--query", help="use the best observation for these words as the anchor")
    s.add_argument("-p", "--project", help="only this project ('.' = the current directory's)")
    s.add_argument("-b", "--before", type=count(0, 1000), default=3, help="observations before the anchor (default 3)")
    s.add_argument("-a", "--after", type=count(0, 1000), default=3, help="observations after the anchor (default 3)")
    s.add_argument("--json", action="store_true", help="print the timeline as JSON")
    s.set_defaults(func=cmd_timeline)

    s = sub.add_parser("reindex", help="rebuild the search indexes (full-text, trigram, vectors) from the rows")
    s.add_argument("--force", action="store_true", help="recompute every vector, not only the missing ones")
    s.add_argument("--no-vectors", action="store_true", help="only the text indexes")
    s.set_defaults(func=cmd_reindex)


# --------------------------------------------------------------------------- helpers

def _project(value: str | None) -> str | None:
    """The project argument as the search filter takes it: its key (a name or path is looked up)."""
    if not value:
        return None
    from kenning.project import identify, resolve_key
    from kenning.store import projects

    conn = _read(Paths())
    if conn is None:
        return identify(os.getcwd()).key if value == "." else value
    try:
        if value == ".":
            return resolve_key(conn, identify(os.getcwd()).key)
        return projects.one(conn, value)
    except projects.AmbiguousProject as e:
        raise SystemExit(f"kenning: {e}") from None
    finally:
        conn.close()


def _local_time(value: str | None, flag: str) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value).timestamp()  # naive = local time
    except ValueError:
        raise SystemExit(f"kenning: {flag} must be an ISO date like 2026-01-31 or 2026-01-31T14:00") from None


def _worker(paths: Paths, method: str, path: str, body: bytes = b"", timeout: float = 10.0) -> Any:
    """The decoded JSON answer of the live worker, (status, body); None when it does not answer."""
    info = client.read_pid_file(paths)
    if not info or not daemon.running(paths):
        return None
    res = client.authed(paths, info["port"], method, path, body=body, timeout=timeout)
    if res is None:
        return None
    try:
        return res[0], json.loads(res[1] or b"null")
    except ValueError:
        return None


def _read(paths: Paths) -> sqlite3.Connection | None:
    """A read-only connection, or None without a database. A database of an older schema is
    brought up to date first, once, as the worker would on start (its indexes may hold text
    differently: migration 0026); when it cannot be written, it is read as it is."""
    from kenning.store.db import connect, current_version, migration_files, open_db

    if not os.path.exists(paths.db):
        return None
    conn = connect(paths.db, readonly=True)
    try:
        behind = current_version(conn) < migration_files()[-1][0]
    except sqlite3.Error:
        behind = False
    if behind:
        conn.close()
        try:
            open_db(paths.db).close()
        except (sqlite3.Error, OSError):
            pass
        conn = connect(paths.db, readonly=True)
    return conn


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _label(h: dict[str, Any]) -> str:
    return {"summary": "S", "prompt": "P"}.get(h["kind"], "#") + str(h["id"])


def _with_names(paths: Paths, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with ``project_name``: the display name of their project key."""
    from kenning.store.projects import names

    conn = _read(paths)
    shown = names(conn, [str(r.get("project")) for r in rows]) if conn is not None else {}
    if conn is not None:
        conn.close()
    return [{**r, "project_name": shown.get(str(r.get("project")), r.get("project"))} for r in rows]


def _line(h: dict[str, Any]) -> str:
    flag = f" [{h['status']}]" if h.get("status", "active") != "active" else ""
    return (f"{_label(h):<7} {_when(h['created_at'])}  {h['type']:<14} {h['title']}{flag}  "
            f"({h.get('project_name') or h['project']}, ~{h['tokens']} tokens)")


# -------------------------------------------------------------------------- commands

def _check(paths: Paths, *, project: str | None = None, types: list[str] | None = None,
           agent: str | None = None, query: str = "") -> str | None:
    """The error for a filter that names nothing known, or a query without words (None: fine)."""
    from kenning.search import known
    from kenning.settings import load

    if query.strip() and not known.has_words(query):
        return known.no_words(query)
    conn = _read(paths) if project and project != "." else None
    try:
        valid = known.observation_types(load(paths)[0], paths) if types else None
        known.check(conn, project=None if project == "." else project, types=types, valid_types=valid, agent=agent)
    except known.UnknownName as e:
        return str(e)
    finally:
        if conn is not None:
            conn.close()
    return None


def cmd_search(args: argparse.Namespace) -> int:
    paths = Paths()
    query = " ".join(args.query)
    problem = _check(paths, project=args.project, types=args.types, agent=args.agent, query=query)
    if problem:
        print(f"kenning: {problem}", file=sys.stderr)
        return 2
    kw: dict[str, Any] = {"project": _project(args.project), "types": args.types, "concepts": args.concepts,
                          "files": args.files, "since": _local_time(args.since, "--since"),
                          "until": _local_time(args.until, "--until"), "session": args.session,
                          "agent": args.agent,
                          "order": args.order, "limit": args.limit, "offset": args.offset,
                          "include_inactive": args.include_inactive}
    if args.kinds:
        kw["kinds"] = args.kinds
    params = {k: v for k, v in kw.items() if v not in (None, False, [])}
    res = _worker(paths, "GET", "/api/search?" + urlencode({"query": query, **params}, doseq=True))
    semantic = False
    if res is not None and res[0] == 200:
        hits = res[1]["results"]
        semantic = bool(res[1].get("semantic"))
    elif res is not None and res[0] == 400:
        print(f"kenning: {res[1].get('error')}", file=sys.stderr)
        return 2
    else:
        from kenning.search.config import SearchConfig
        from kenning.search.service import search
        from kenning.settings import load

        conn = _read(paths)
        if conn is None:
            hits = []
        else:
            try:
                config = SearchConfig.from_settings(load(paths)[0])
                hits = [h.as_dict() for h in search(conn, query, config=config, **kw)]
            except ValueError as e:
                print(f"kenning: {e}", file=sys.stderr)
                return 2
            finally:
                conn.close()
    hits = _with_names(paths, hits)
    if args.json:
        print(json.dumps({"query": query, "semantic": semantic, "results": hits}, indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No memory matches." if query else "No memory yet.")
        return 0
    for h in hits:
        print(_line(h))
    print(f"\n{len(hits)} result(s){' (keywords + meaning)' if semantic else ''}. "
          "`kenning show ID` prints an observation in full; `kenning timeline ID` what happened around it.",
          file=sys.stderr)
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    if args.id is None and not args.query:
        print("kenning: give an observation id or --query WORDS", file=sys.stderr)
        return 2
    paths = Paths()
    problem = _check(paths, project=args.project, query=args.query or "")
    if problem:
        print(f"kenning: {problem}", file=sys.stderr)
        return 2
    kw: dict[str, Any] = {"anchor": args.id, "query": args.query, "before": args.before, "after": args.after,
                          "project": _project(args.project)}
    params = {k: v for k, v in kw.items() if v is not None}
    res = _worker(paths, "GET", "/api/timeline?" + urlencode(params))
    if res is not None and res[0] == 200:
        body = res[1]
    elif res is not None and res[0] in (400, 404):
        print(f"kenning: {res[1].get('error')}", file=sys.stderr)
        return 1
    else:
        from kenning.search.service import timeline

        conn = _read(paths)
        if conn is None:
            print("kenning: no memory yet", file=sys.stderr)
            return 1
        try:
            body = timeline(conn, **kw)
        except ValueError as e:
            print(f"kenning: {e}", file=sys.stderr)
            return 1
        finally:
            conn.close()
    body = {**body, "anchor": _with_names(paths, [body["anchor"]])[0], "before": _with_names(paths, body["before"]),
            "after": _with_names(paths, body["after"])}
    if args.json:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    for h in body["before"]:
        print("  " + _line(h))
    print("> " + _line(body["anchor"]))
    for h in body["after"]:
        print("  " + _line(h))
    return 0


class Bar:
    """A progress bar on stderr; plain lines (every 10%) when stderr is not a terminal."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.stage = ""
        self.last_decile = -1

    def __call__(self, stage: str, done: int, total: int) -> None:
        pct = 100 if total <= 0 else min(100, int(done * 100 / total))
        if self.tty:
            filled = pct * 30 // 100
            self.stream.write(f"\r{stage:<16} [{'#' * filled}{'.' * (30 - filled)}] {pct:3d}% {done}/{total}")
            if pct >= 100:
                self.stream.write("\n")
            self.stream.flush()
            return
        if stage != self.stage:
            self.stage, self.last_decile = stage, -1
        decile = pct // 10
        if decile != self.last_decile:
            self.last_decile = decile
            self.stream.write(f"{stage}: {pct}% ({done}/{total})\n")
            self.stream.flush()


def cmd_reindex(args: argparse.Namespace) -> int:
    from kenning.search import reindex
    from kenning.settings import load
    from kenning.store.db import open_db

    paths = Paths()
    settings, _problems = load(paths)
    if not os.path.exists(paths.db):
        print("kenning: no database yet: nothing to index", file=sys.stderr)
        return 1
    bar = Bar()
    conn = open_db(paths.db)
    try:
        out = reindex.rebuild_text(conn, use_trigram=settings.search_trigram, progress=bar)
        derived = "".join(f"; {name.replace('_', ' ')}: {out[name]:,} rows" for name in
                          ("observation_files", "observation_concepts") if name in out)
        print(f"Full-text index rebuilt in {out['fts_seconds']} s{derived}; trigram index: {out['trigram']}.")
        from kenning.memory_service import MemoryService

        t0 = time.monotonic()
        mem = MemoryService(conn, "cli").reindex()
        print(f"Memory index rebuilt in {time.monotonic() - t0:.1f} s: layers and subjects of "
              f"{mem['observations']:,} observations, {mem['duplicates']:,} of them near-duplicates of another.")
        if args.no_vectors or settings.embedding_backend == "none":
            print("Vectors: skipped" + (" (embedding_backend is none)." if not args.no_vectors else "."))
            return 0
        return _reindex_vectors(paths, settings, conn, args.force, bar)
    finally:
        conn.close()


def _reindex_vectors(paths: Paths, settings: Any, conn: sqlite3.Connection, force: bool, bar: Bar) -> int:
    from kenning.search import embedders, reindex

    health = daemon.ensure(paths, wait=15.0)
    res = _worker(paths, "POST", "/api/search/reindex", json.dumps({"force": force}).encode(),
                  timeout=120.0) if health else None
    if res is None or res[0] != 200:
        # No worker to do it: compute here (the one time the CLI loads a model).
        print("The worker is not available: computing vectors in this process.", file=sys.stderr)
        emb = embedders.make(settings, paths.root)
        try:
            emb.load()
        except embedders.Unavailable as e:
            print(f"Vectors: not rebuilt: {e}", file=sys.stderr)
            return 0
        reindex.reset_vectors(conn, emb.model, force=force)
        n = reindex.embed_all(conn, emb.model, emb.embed, progress=bar)
        print(f"Vectors: {n} computed with {emb.describe()}.")
        return 0
    total = None
    while True:
        st = _worker(paths, "GET", "/api/search/status?fresh=1", timeout=30.0)
        if st is None or st[0] != 200:
            print("kenning: the worker stopped answering; run `kenning reindex` again", file=sys.stderr)
            return 1
        emb = st[1]["embeddings"]
        if emb["state"] == "failed":
            # Not a reindex failure: the model cannot run here, and keyword search does not need it.
            print(f"Vectors: not rebuilt: {emb['detail']}", file=sys.stderr)
            return 0
        missing = max(0, int(emb.get("missing", 0)))
        total = max(total or 0, missing + 0)
        bar("vectors", total - missing, total)
        if missing == 0 and emb["state"] == "ready":
            print(f"Vectors: {emb['vectors']} up to date ({emb['backend']} {emb['model']}).")
            return 0
        time.sleep(0.5)
