"""The injection ledger at 100k handings (issue 29): its size on disk, what recording and reading it
cost, and that its retention keeps it bounded.

    .venv/bin/python bench/ledger.py [--quick] [--write] [--keep]

A database made through the real migrations with 10,000 observations (bench/common.py ``populate``)
gets 100,000 handings as the worker records them (kenning/store/injections.py ``record``): sessions of
~50 (an index of ~40 rows, a few recalls and file histories), with one use for about one handing in
four. Measured: bytes per handing (file growth, indexes included), the time to record one session
start of 40 rows (p50), ``kenning why`` of one session, ``kenning show`` of one memory, the health
dashboard over everything and over 30 days, and then 200,000 more handings with the retention's
prune (at most ``MAX_ROWS``) run as the worker runs it (hourly, here after every 10,000): the
file stops growing once the cap is reached (freed pages are reused).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import command_line, fmt, md_table, percentile, populate, run_header, write_section

from kenning.store import injections
from kenning.store.db import open_db
from kenning.store.injections import Given

REASONS = ("standing rule", "key rank 3", "recent work", "shares 62% of the prompt's rarer terms: vat, invoice",
           "file read: src/billing/totals.py (changed it)", "search result (search_memory)")


def file_bytes(db: str) -> int:
    return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))


def fill(conn: sqlite3.Connection, rng: random.Random, n: int, ids: list[int], start: float, span: float,
         first_session: int) -> int:
    """``n`` handings in sessions of ~50, spread over ``span`` seconds from ``start``; returns sessions made."""
    done = s = 0
    while done < n:
        session = f"bench-{first_session + s:06d}-4c7d-8e9f"
        at = start + span * done / n
        rows = min(n - done, 50)
        with conn:
            injections.record(conn, via="session_start", session=session, agent="claude-code", project="/src/shop",
                              at=at, items=[Given(rng.choice(ids), rng.choice(REASONS[:3]), rng.randint(40, 200))
                                            for _ in range(min(rows, 40))])
            if rows > 40:
                injections.record(conn, via=rng.choice(("prompt", "file", "mcp")), session=session,
                                  agent="claude-code", project="/src/shop", at=at + 60,
                                  items=[Given(rng.choice(ids), rng.choice(REASONS[3:]), rng.randint(40, 200))
                                         for _ in range(rows - 40)])
            given = [int(r[0]) for r in conn.execute("SELECT observation_id FROM injections WHERE session = ?",
                                                     (session,))]
            injections.use(conn, observation_ids=rng.sample(given, max(1, len(given) // 4)), kind="edited",
                           session=session, detail="src/billing/totals.py", at=at + 120)
        done += rows
        s += 1
    return s


def timed(fn, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 handings instead of 100,000")
    ap.add_argument("--write", action="store_true", help="replace this section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary database")
    args = ap.parse_args()
    n = 10_000 if args.quick else 100_000
    extra = 20_000 if args.quick else 200_000  # past the cap by half its size again
    cap = 20_000 if args.quick else injections.MAX_ROWS
    root = tempfile.mkdtemp(prefix="kenning-bench-ledger-")
    db = os.path.join(root, "kenning.db")
    started = time.time()
    try:
        populate(db, {"/src/shop": 10_000})
        conn = open_db(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM observations")]
        rng = random.Random(29)
        before = file_bytes(db)
        now = time.time()
        t = time.perf_counter()
        sessions = fill(conn, rng, n, ids, now - 90 * 86400, 90 * 86400, 0)
        fill_s = time.perf_counter() - t
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = file_bytes(db)
        rows = int(conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0])
        used = int(conn.execute("SELECT COUNT(*) FROM injection_uses").fetchone()[0])
        per_row = (after - before) / rows

        def one_start() -> None:
            with conn:
                injections.record(conn, via="session_start", session="bench-timed", agent="claude-code",
                                  project="/src/shop", items=[Given(rng.choice(ids), "recent work", 80)
                                                              for _ in range(40)])

        some = f"bench-{sessions // 2:06d}-4c7d-8e9f"
        hot = int(conn.execute("SELECT observation_id FROM injections GROUP BY observation_id "
                               "ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0])
        table = [
            ("record a session start of 40 rows (one transaction)", timed(one_start, 50)),
            ("`kenning why`: one session's handings and uses", timed(lambda: (
                injections.for_session(conn, some), injections.uses_in(conn, some)), 50)),
            (f"`kenning show`: the most given memory (#{hot})", timed(lambda: injections.for_memory(conn, hot), 50)),
            ("health over everything", timed(lambda: injections.health(conn), 5)),
            ("health over the last 30 days", timed(lambda: injections.health(conn, since=now - 30 * 86400), 5)),
            ("never used count (older than 180 days)", timed(lambda: injections.never_used_count(
                conn, older_than=now - 180 * 86400), 5)),
        ]
        # Past the cap: the worker's prune keeps it bounded (the file reuses the freed pages).
        sizes = []
        made = 0
        t = time.perf_counter()
        prune_ms = []
        while made < extra:
            step = min(10_000 if not args.quick else 1_000, extra - made)
            fill(conn, rng, step, ids, now - 60 * 86400 + made * 30, step * 30, sessions + 1000 + made)
            made += step
            p = time.perf_counter()
            with conn:
                injections.prune(conn, now - injections.RETENTION_S, max_rows=cap)
            prune_ms.append((time.perf_counter() - p) * 1000)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            sizes.append((n + made, file_bytes(db)))
        kept = int(conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0])
        conn.close()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    body = [f"## Injection ledger (`bench/ledger.py`)\n\n{run_header(command_line())}\n",
            f"A database of 10,000 observations (`populate`), then {rows:,} handings in {sessions:,} sessions "
            f"(~50 each: a session-start index of 40 rows and a recall or file history) with {used:,} uses, "
            f"recorded as the worker records them in {fill_s:.1f} s.\n",
            md_table(["measure", "value"], [
                ("handings", f"{rows:,}"), ("file growth", f"{(after - before) / 1e6:.1f} MB"),
                ("bytes per handing (indexes and uses included)", f"{per_row:.0f}"),
                (f"after {extra:,} more with the prune at most {cap:,} rows", f"{kept:,} rows"),
                ("whole file when the cap is first reached, and at the end",
                 f"{next(b for k, b in sizes if k >= cap) / 1e6:.1f} MB, {sizes[-1][1] / 1e6:.1f} MB "
                 f"(10,000 observations alone: {before / 1e6:.1f} MB)"),
                ("prune p50 / max", f"{fmt(percentile(prune_ms, 0.5))} ms / {fmt(max(prune_ms))} ms"),
            ]), "",
            md_table(["operation", "runs", "p50 ms", "p95 ms"],
                     [(name, len(v), fmt(percentile(v, 0.5)), fmt(percentile(v, 0.95))) for name, v in table]),
            "",
            f"The hooks never write the ledger (the worker records what it served, off the answer path); a "
            f"session start costs the worker one transaction of 40 rows. Wall time {time.time() - started:.0f} s."]
    text = "\n".join(body)
    print(text)
    if args.write:
        write_section("ledger", text)


if __name__ == "__main__":
    main()
