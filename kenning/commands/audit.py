"""``kenning why SESSION`` (what a session was told and why, and what it used) and ``kenning review`` (a
check-up in the terminal: standing rules to confirm or demote, memories never used, memories that
may contradict each other). Both read the injection ledger (kenning/store/injections.py); every change
``review`` makes goes through the memory service, logged as the CLI's.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from kenning.paths import Paths

VIA = {"session_start": "session start", "prompt": "prompt recall", "file": "file history", "mcp": "MCP answer"}
CANDIDATES = 400  # the newest rules and key memories looked at for contradictions
REVIEW_AFTER_DAYS = 180  # a memory never used in half a year is proposed for review (never deleted unasked)


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("why", help="what a session was told from memory, why, and what it used",
                       description="Every memory handed to one agent session (session start, prompt recall, file "
                                   "history, MCP answers) with the reason and its size, and whether the agent used "
                                   "it (fetched it, cited its id, edited a file or ran a command it names) or it was "
                                   "superseded since. Handings a hook built without the worker are not recorded.")
    s.add_argument("session", help="the agent's session id (or the start of it, as `kenning stats` lists it)")
    s.add_argument("--json", action="store_true", help="print {session, injections, uses, given, used} as JSON")
    s.set_defaults(func=cmd_why)
    s = sub.add_parser("review", help="a memory check-up: confirm or demote rules, forget what is never used",
                       description="Walks through the standing rules (confirm, demote to an ordinary memory, "
                                   "forget), the memories never used in --older-than days (keep or forget) and the "
                                   "pairs of memories about the same thing that may contradict each other (keep "
                                   "both, or let the newer supersede the older). Reads one answer a line: "
                                   "the letter in brackets; an empty line skips, q stops.")
    s.add_argument("-p", "--project", help="review one project only (its name or path)")
    s.add_argument("--older-than", type=int, default=REVIEW_AFTER_DAYS, metavar="DAYS",
                   help=f"never-used memories older than this many days are proposed (default {REVIEW_AFTER_DAYS})")
    s.add_argument("--limit", type=int, default=20, help="at most this many items of each kind (default 20)")
    s.set_defaults(func=cmd_review)


def _open(paths: Paths, readonly: bool = True) -> sqlite3.Connection | None:
    from kenning.store.db import connect, open_db

    if not os.path.exists(paths.db):
        return None
    return connect(paths.db, readonly=True) if readonly else open_db(paths.db)


def _when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "never"


# ------------------------------------------------------------------------------------------- why

def session_report(conn: sqlite3.Connection, wanted: str) -> dict[str, Any] | None:
    """The ledger of the session ``wanted`` names (its id or a unique start of it); None: none known."""
    from kenning.store import injections

    found = [str(r[0]) for r in conn.execute(
        "SELECT DISTINCT session FROM injections WHERE session = ? OR (session >= ? AND session < ?) LIMIT 2",
        (wanted, wanted, wanted + "\uffff"))]
    session = wanted if wanted in found else (found[0] if len(found) == 1 else None)
    if session is None:
        return None
    told = injections.for_session(conn, session)
    uses = injections.uses_in(conn, session)
    return {"session": session, "given": len(told), "used": sum(t["used"] for t in told),
            "contradicted": sum(t["contradicted"] for t in told), "tokens": sum((t["chars"] + 3) // 4 for t in told),
            "injections": told, "uses": uses}


def render_session(rep: dict[str, Any]) -> str:
    told = rep["injections"]
    agents = sorted({t["agent"] for t in told if t["agent"]})
    lines = [f"Session {rep['session']}" + (f" ({', '.join(agents)})" if agents else "")
             + f": told {rep['given']} {'memory' if rep['given'] == 1 else 'memories'} (~{rep['tokens']:,} tokens); "
             f"{rep['used']} used, "
             f"{rep['contradicted']} superseded or retracted since."]
    uses: dict[int, list[str]] = {}
    for u in rep["uses"]:
        uses.setdefault(u["id"], []).append(f"{u['kind']} {u['detail']}".strip())
    last = None
    for t in told:
        head = (_when(t["at"]), t["via"])
        if head != last:
            lines.append(f"\n{head[0]}  {VIA.get(t['via'], t['via'])}")
            last = head
        fate = []
        if t["used"]:
            fate.append("used: " + "; ".join(dict.fromkeys(uses.get(t["id"], ["yes"]))))
        if t["contradicted"]:
            fate.append(t["status"] + " since")
        title = t["title"] if len(t["title"]) <= 70 else t["title"][:69] + "…"
        lines.append(f"  #{t['id']:<6} {title or '(forgotten)'}")
        lines.append(f"          why: {t['reason'] or '-'}" + (f" · {' · '.join(fate)}" if fate else ""))
    return "\n".join(lines)


def cmd_why(args: argparse.Namespace) -> int:
    paths = Paths()
    conn = _open(paths)
    if conn is None:
        print("No memory yet: the worker creates the database on its first start.")
        return 1
    try:
        rep = session_report(conn, args.session.strip())
    except sqlite3.Error as e:
        print(f"kenning why: cannot read {paths.db}: {e}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    if rep is None:
        print(f"kenning why: nothing recorded as given to session {args.session!r} (a context the hook built "
              "without the worker is not recorded)", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2, ensure_ascii=False) if args.json else render_session(rep))
    return 0


# ------------------------------------------------------------------------------------------- review

def contradictions(conn: sqlite3.Connection, project: str | None, limit: int) -> list[tuple[dict[str, Any],
                                                                                          dict[str, Any]]]:
    """Pairs of active rules or key memories of one project about the same subject (older, newer)."""
    extra, args = ("AND project = ?", [project]) if project else ("", [])
    # Among the newest rules and key memories only: a subject hundreds of memories share must not make
    # the check-up pair them all.
    rows = conn.execute(
        "WITH recent (id) AS MATERIALIZED (SELECT id FROM observations WHERE status = 'active' "
        f"AND duplicate_of IS NULL AND layer IN ('rule', 'key') {extra} ORDER BY id DESC LIMIT {CANDIDATES}) "
        "SELECT DISTINCT a.observation_id, b.observation_id, a.subject FROM observation_subjects a "
        "JOIN observation_subjects b ON b.subject = a.subject AND b.project = a.project "
        "AND b.observation_id > a.observation_id "
        "WHERE a.observation_id IN recent AND b.observation_id IN recent "
        "ORDER BY b.observation_id DESC LIMIT ?", (*args, limit * 4)).fetchall()
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    seen: set[tuple[int, int]] = set()
    for a, b, subject in rows:
        if (a, b) in seen:
            continue
        seen.add((a, b))
        pair = [dict(r) | {"subject": subject} for r in conn.execute(
            "SELECT id, title, type, layer, created_at FROM observations WHERE id IN (?, ?) ORDER BY created_at, id",
            (a, b))]
        if len(pair) == 2:
            out.append((pair[0], pair[1]))
        if len(out) >= limit:
            break
    return out


def checkup(conn: sqlite3.Connection, project: str | None, limit: int, older_than_days: int) -> dict[str, Any]:
    """What a check-up walks through (the viewer's Check-up tab; ``kenning review`` asks the same): the
    standing rules with how often each was given and used, the memories never used in ``older_than_days``
    (rules are asked about above), and pairs of current memories about the same subject."""
    from kenning.store import injections

    extra, pargs = ("AND project = ?", [project]) if project else ("", [])
    rules = []
    for r in conn.execute(
            f"SELECT id, title, type, project, created_at, user_layer FROM observations WHERE layer = 'rule' "
            f"AND status = 'active' AND duplicate_of IS NULL {extra} ORDER BY created_at DESC LIMIT ?",
            (*pargs, limit)).fetchall():
        led = injections.for_memory(conn, int(r[0]), limit=1)
        rules.append({"id": r[0], "title": r[1], "type": r[2], "project": r[3], "created_at": r[4],
                      "confirmed": r[5] == "rule", "given": led["given"], "used": led["used"]})
    older = time.time() - max(0, older_than_days) * 86400
    never = [m for m in injections.never_used(conn, older_than=older, project=project, limit=limit)
             if m["layer"] != "rule"]
    total = injections.never_used_count(conn, older_than=older, project=project) if never else 0
    pairs = [{"subject": old["subject"], "older": old, "newer": new}
             for old, new in contradictions(conn, project, limit)]
    return {"project": project, "older_than_days": older_than_days, "rules": rules, "never_used": never,
            "never_used_total": total, "contradictions": pairs}


class Walk:
    """One check-up: questions to ``ask``, answers read from ``read`` (stdin, or a test's script)."""

    def __init__(self, conn: sqlite3.Connection, paths: Paths, read: Callable[[str], str | None],
                 out: Callable[[str], None]) -> None:
        from kenning.memory_service import MemoryService

        self.conn = conn
        self.paths = paths
        self.door = MemoryService(conn, "cli")
        self.read = read
        self.out = out
        self.done: list[str] = []
        self.stopped = False

    def ask(self, prompt: str, choices: str) -> str:
        while not self.stopped:
            answer = self.read(f"{prompt} [{'/'.join(choices)}/s/q] ")
            if answer is None:
                self.stopped = True
                return ""
            a = answer.strip().lower()[:1]
            if a in ("", "s"):
                return ""
            if a == "q":
                self.stopped = True
                return ""
            if a in choices:
                return a
            self.out(f"  answer one of {', '.join(choices)}, s (skip) or q (stop)")
        return ""

    def forget(self, oid: int) -> None:
        from kenning.store import forget as fg

        self.door.forget_selected(fg.select(self.conn, fg.Filters(ids=(oid,))))

    def act(self, what: str, fn: Callable[[], Any]) -> None:
        from kenning.store.decisions import DecisionError
        from kenning.store.supersede import SupersedeError

        try:
            fn()
            self.done.append(what)
            self.out(f"  {what}")
        except (DecisionError, SupersedeError) as e:
            self.out(f"  not done: {e}")


def cmd_review(args: argparse.Namespace) -> int:
    from kenning.store import injections, projects

    paths = Paths()
    conn = _open(paths, readonly=False)
    if conn is None:
        print("No memory yet: the worker creates the database on its first start.")
        return 0

    def read(prompt: str) -> str | None:
        print(prompt, end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            print()
            return None
        return line

    try:
        project = projects.one(conn, args.project) if args.project else None
        walk = Walk(conn, paths, read, print)
        limit = max(1, args.limit)
        extra, pargs = ("AND project = ?", [project]) if project else ("", [])
        rules = conn.execute(
            f"SELECT id, title, created_at, user_layer FROM observations WHERE layer = 'rule' AND status = 'active' "
            f"AND duplicate_of IS NULL {extra} ORDER BY created_at DESC LIMIT ?", (*pargs, limit)).fetchall()
        print(f"Standing rules ({len(rules)}): given to every session. c = confirm, d = demote to an ordinary "
              "memory, f = forget.")
        for r in rules:
            if walk.stopped:
                break
            led = injections.for_memory(conn, int(r[0]), limit=1)
            print(f"\n#{r[0]} {r[1]}\n  since {_when(r[2])}; given {led['given']} times, used {led['used']}"
                  + ("; confirmed by you" if r[3] == "rule" else ""))
            a = walk.ask("  ", "cdf")
            oid = int(r[0])
            if a == "c":
                walk.act(f"confirmed #{oid}", partial(walk.door.confirm, oid))
            elif a == "d":
                walk.act(f"demoted #{oid}", partial(walk.door.unpin, oid))
            elif a == "f":
                walk.act(f"forgot #{oid}", partial(walk.forget, oid))
        older = time.time() - max(0, args.older_than) * 86400
        never = injections.never_used(conn, older_than=older, project=project, limit=limit) if not walk.stopped else []
        total = injections.never_used_count(conn, older_than=older, project=project) if never else 0
        if never:
            print(f"\nNever used in {args.older_than} days ({total:,}; the oldest {len(never)} here). "
                  "k = keep, f = forget.")
        for m in never:
            if walk.stopped or m["layer"] == "rule":  # (the rules were asked about above)
                break
            print(f"\n#{m['id']} [{m['type']}] {m['title']}\n  since {_when(m['created_at'])}; "
                  f"given {m['given']} times, never used")
            if walk.ask("  ", "kf") == "f":
                walk.act(f"forgot #{m['id']}", partial(walk.forget, int(m["id"])))
        pairs = contradictions(conn, project, limit) if not walk.stopped else []
        if pairs:
            print(f"\nAbout the same thing ({len(pairs)} pairs): b = both hold, n = the newer supersedes the older.")
        for old, new in pairs:
            if walk.stopped:
                break
            print(f"\n  {old['subject']}\n  older #{old['id']} {old['title']}\n  newer #{new['id']} {new['title']}")
            if walk.ask("  ", "bn") == "n":
                walk.act(f"#{new['id']} supersedes #{old['id']}",
                         partial(walk.door.supersede, [int(old["id"])], int(new["id"])))
        print(f"\nReview done: {len(walk.done)} change(s)" + (": " + "; ".join(walk.done) if walk.done else "."))
    except projects.AmbiguousProject as e:
        print(f"kenning review: {e}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    return 0
