"""Consolidation (near-duplicate groups) and the memory index at 100k observations.

    .venv/bin/python bench/consolidation.py [--sizes 100000] [--incremental 2000] [--write]

A database is filled through the real migrations (``common.populate``: ~10% of titles repeat an
earlier one exactly, the rest carry an identifier of their own; ~5% superseded or retracted).
Then, on that database:

* ``memory_index.rebuild_groups``: every group recomputed from the canonical rows (what
  ``kenning reindex`` and migration 0012 run), three times, wall and CPU time, rows per second;
  the three results must be identical (idempotent);
* ``memory_index.rebuild``: layers and subjects of every row too, once;
* incremental: N new observations stored one transaction each through ``repo.store_outcome``
  (classified, checked for what they supersede, put in their group), per-row p50 / p95; then
  the groups must equal a full rebuild's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    REPO,
    command_line,
    fmt,
    load_avg,
    md_table,
    populate,
    run_header,
    summary_ms,
    temp_root,
    write_section,
)

from kenning.records import ObservationDraft, Outcome
from kenning.store import memory_index, repo
from kenning.store.db import open_db

KEY = "/src/bench-project"
TITLES = ("Fixed `pytest -q tests/test_{m}.py` failure: AssertionError in test_{m}_totals",
          "Explored src/{m}.py: how the {m} cache key is built",
          "Changed src/{m}.py: retry the {m} webhook with backoff",
          "Always validate the {m} payload before saving it")


def groups(conn: object) -> list[tuple[int, int | None, int]]:
    return [tuple(r) for r in conn.execute(  # type: ignore[attr-defined]
        "SELECT id, duplicate_of, occurrences FROM observations ORDER BY id")]


def bench_size(n: int, args: argparse.Namespace, root: Path, p: object) -> dict[str, float]:
    say = p  # type: ignore[assignment]
    db = str(root / f"n{n}.db")
    t0 = time.perf_counter()
    counts = populate(db, {KEY: n}, seed=11)
    say(f"\n### {n:,} observations\n")
    say(f"Filled in {time.perf_counter() - t0:.0f} s (memory index built by populate in "
        f"{counts['index_seconds']} s).\n")
    conn = open_db(db)
    rows = []
    results: list[list[tuple[int, int | None, int]]] = []
    walls, cpus = [], []
    for _ in range(3):
        w0, c0 = time.perf_counter(), time.process_time()
        with repo.transaction(conn):
            dup = memory_index.rebuild_groups(conn)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
        results.append(groups(conn))
    same = all(r == results[0] for r in results)
    active = conn.execute("SELECT COUNT(*) FROM observations WHERE status = 'active'").fetchone()[0]
    best = min(walls)
    rows.append(["`rebuild_groups` (consolidation from the rows), best of 3", f"{best:.2f}", f"{min(cpus):.2f}",
                 f"{active / best:,.0f}", f"{dup:,} duplicates in {active:,} active rows",
                 "identical all 3 times" if same else "DIFFERENT"])
    w0, c0 = time.perf_counter(), time.process_time()
    with repo.transaction(conn):
        out = memory_index.rebuild(conn)
    full_wall, full_cpu = time.perf_counter() - w0, time.process_time() - c0
    rows.append(["`rebuild` (layers, subjects and groups of every row), once", f"{full_wall:.2f}", f"{full_cpu:.2f}",
                 f"{out['observations'] / full_wall:,.0f}", "", "same groups" if groups(conn) == results[0]
                 else "DIFFERENT groups"])
    say(md_table(["from the canonical rows", "wall s", "CPU s", "rows / s", "", "check"], rows))

    # Incremental: one stored outcome per transaction, as the pipeline stores them.
    sid = conn.execute("SELECT MAX(id) FROM sessions").fetchone()[0]
    now = time.time()
    samples = []
    for i in range(args.incremental):
        title = TITLES[i % len(TITLES)].format(m=f"mod{i % 97}")
        kind = ("bugfix", "discovery", "change", "decision")[i % len(TITLES)]
        d = ObservationDraft(type=kind, title=title, created_at=now + i, facts=[f"note {i}"],
                             concepts=["pattern"] if kind == "decision" else [])
        t0 = time.perf_counter_ns()
        with repo.transaction(conn):
            repo.store_outcome(conn, sid, KEY, Outcome(observations=[d]), "rules")
        samples.append(time.perf_counter_ns() - t0)
    inc = summary_ms(samples)
    before = groups(conn)
    with repo.transaction(conn):
        memory_index.rebuild_groups(conn)
    equal = groups(conn) == before
    say("")
    say(md_table(["incremental, one observation per transaction (classify, supersede, group)", "n", "p50 ms",
                  "p95 ms", "p99 ms", "groups equal a rebuild afterwards"],
                 [["`repo.store_outcome` of one new observation", inc["n"], fmt(inc["p50"], 2), fmt(inc["p95"], 2),
                   fmt(inc["p99"], 2), "yes" if equal else "NO"]]))
    conn.close()
    return {"n": n, "groups_rows_s": active / best, "full_rows_s": out["observations"] / full_wall,
            "inc_p50": inc["p50"], "inc_p95": inc["p95"], "ok": float(same and equal)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000", help="observations (default 100000)")
    ap.add_argument("--incremental", type=int, default=2000, help="observations stored one by one (default 2000)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    args = ap.parse_args()
    out: list[str] = []
    started = time.monotonic()

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-consolidation-")
    try:
        p("## Consolidation and the memory index (`bench/consolidation.py`)\n")
        p(run_header(command_line()))
        results = [bench_size(int(s), args, root, p) for s in args.sizes.split(",") if s.strip()]
        p("\n### Summary\n")
        p(md_table(["observations", "consolidation rows / s", "full memory index rows / s",
                    "incremental p50 ms", "incremental p95 ms", "idempotent, incremental = rebuilt"],
                   [[f"{r['n']:,}", f"{r['groups_rows_s']:,.0f}", f"{r['full_rows_s']:,.0f}", fmt(r["inc_p50"], 2),
                     fmt(r["inc_p95"], 2), "yes" if r["ok"] else "NO"] for r in results]))
        p(f"\nLoad average at the end {load_avg()}; wall time of this benchmark {time.monotonic() - started:.0f} s.")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("consolidation", "\n".join(out))
        print(f"\n(section consolidation written to {os.path.relpath(REPO / 'BENCHMARKS.md')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
