"""The SessionStart context build at 10k and 100k observations.

    .venv/bin/python bench/context_build.py [--quick] [--write] [--runs N] [--profile] [--before REF]

For each size a database is created through the real migrations (``kenning.store.db.open_db``)
and filled with ``executemany`` in one transaction: the project with N observations, another
project with as many, one session summary per ~20 observations. Then:

* ``build(conn, settings, project)`` in-process: the first call on a new connection, then p50/p95
  of warm calls; the first call in a fresh process (cold SQLite cache; the OS page cache stays
  warm, this benchmark never drops the machine's caches);
* each SQL statement ``build`` runs (captured with a trace callback, so the list follows the
  code), timed alone, with its ``EXPLAIN QUERY PLAN``;
* the full ``kenning context --cwd`` CLI (worker down: it reads SQLite; worker up: it asks the
  worker), next to ``python -I -S -c pass``, and the worker's ``GET /api/context`` over HTTP;
* with ``--before REF`` (``merge-base`` for the merge base with main), the same ``build()`` of that
  revision's tree on a database its own migrations made from the same rows: fresh processes of
  the two trees alternated, each timing warm calls, medians and their ratio.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    PYTHON,
    REPO,
    Install,
    command_line,
    extract,
    fmt,
    load_avg,
    md_table,
    merge_base,
    populate,
    project_key,
    run_header,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)

from kenning.context.session_start import build
from kenning.settings import load
from kenning.store.db import connect

TARGET_P50_MS = 50.0
TARGET_AT = 100_000
PROJECT, OTHER = "proj-a", "proj-b"

COLD_SCRIPT = r"""
import json, sys, time
from kenning.context.session_start import build
from kenning.paths import Paths
from kenning.settings import load
from kenning.store.db import connect
paths = Paths()
settings, _ = load(paths)
t0 = time.perf_counter_ns()
conn = connect(paths.db, readonly=True)
text = build(conn, settings, sys.argv[1], modes_dir=paths.modes)
t1 = time.perf_counter_ns()
print(json.dumps({"ms": (t1 - t0) / 1e6, "chars": len(text)}))
"""


PAIRED_POPULATE = r"""
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]  # the tree's kenning, then bench/ (for populate)
from common import populate
populate(sys.argv[3], {"/src/proj-a": int(sys.argv[4]), "proj-b": int(sys.argv[4])}, seed=5, now=1.767e9)
"""

PAIRED_TIME = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from kenning.context.session_start import build
from kenning.settings import Settings
from kenning.store.db import connect
conn = connect(sys.argv[2], readonly=True)
settings = Settings()
build(conn, settings, "/src/proj-a", now=1.767e9)
out = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter_ns()
    text = build(conn, settings, "/src/proj-a", now=1.767e9)
    out.append(time.perf_counter_ns() - t0)
print(json.dumps({"p50": statistics.median(out) / 1e6, "chars": len(text)}))
"""


def paired(n: int, before: str, root: Path, runs: int, rounds: int) -> dict[str, Any]:
    """``build()`` of this tree and of ``before`` at ``n`` observations, in alternated fresh processes."""
    trees = {"before": str(extract(before, root / "before-tree")), "this tree": str(REPO)}
    dbs = {}
    for name, tree in trees.items():
        db = root / f"paired-{name.replace(' ', '-')}-{n}.db"
        subprocess.run([PYTHON, "-c", PAIRED_POPULATE, tree, str(REPO / "bench"), str(db), str(n)], check=True,
                       capture_output=True)
        dbs[name] = str(db)
    p50s: dict[str, list[float]] = {name: [] for name in trees}
    chars: dict[str, int] = {}
    order = list(trees)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            proc = subprocess.run([PYTHON, "-c", PAIRED_TIME, trees[name], dbs[name], str(runs)], check=True,
                                  capture_output=True, text=True)
            res = json.loads(proc.stdout)
            p50s[name].append(res["p50"])
            chars[name] = res["chars"]
    return {"n": n, "before": statistics.median(p50s["before"]), "this": statistics.median(p50s["this tree"]),
            "chars_before": chars["before"], "chars_this": chars["this tree"], "rounds": rounds, "runs": runs}


def timed(fn: Any, runs: int) -> list[int]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        out.append(time.perf_counter_ns() - t0)
    return out


def captured_statements(conn: sqlite3.Connection, settings: Any, modes_dir: str, key: str) -> list[str]:
    """The SQL statements one ``build()`` call runs, with their parameters inlined."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        build(conn, settings, key, modes_dir=modes_dir)
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith("SELECT")]


def query_table(conn: sqlite3.Connection, statements: list[str], runs: int,
                build_once: Any) -> tuple[str, float, float]:
    """Each statement timed alone, interleaved with whole ``build()`` calls so both see the same noise.

    Returns the table, the sum of the statements' p50 and the p50 of the interleaved builds.
    """
    samples: dict[str, list[int]] = {sql: [] for sql in statements}
    builds: list[int] = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        build_once()
        builds.append(time.perf_counter_ns() - t0)
        for sql in statements:
            t0 = time.perf_counter_ns()
            conn.execute(sql).fetchall()
            samples[sql].append(time.perf_counter_ns() - t0)
    rows = []
    total = 0.0
    for sql in statements:
        p50 = summary_ms(samples[sql])["p50"]
        total += p50
        plan = " → ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall())
        short = " ".join(sql.split())
        short = short if len(short) <= 150 else short[:147] + "…"
        rows.append([f"`{short}`", fmt(p50, 2), plan])
    table = md_table([f"statement run by build() (median of {runs}, interleaved with build())", "ms",
                      "EXPLAIN QUERY PLAN"], rows)
    return table, total, summary_ms(builds)["p50"]


def profile_build(conn: sqlite3.Connection, settings: Any, modes_dir: str, key: str, runs: int = 30) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(runs):
        build(conn, settings, key, modes_dir=modes_dir)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(14)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls")), 0)
    return "```\n" + "\n".join(lines[start:start + 16]) + "\n```"


def interleaved(cmds: list[tuple[str, list[str], dict[str, str], str]], rounds: int,
                check: dict[str, str]) -> dict[str, tuple[list[int], int]]:
    """Subprocess wall times, commands alternated run by run; ``check`` maps name → expected stdout text."""
    res: dict[str, tuple[list[int], int]] = {c[0]: ([], 0) for c in cmds}
    for r in range(rounds + 2):
        k = r % len(cmds)
        for name, argv, env, cwd in cmds[k:] + cmds[:k]:
            t0 = time.perf_counter_ns()
            proc = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, check=False)
            dt = time.perf_counter_ns() - t0
            if r < 2:
                continue  # warm-up
            bad = proc.returncode != 0 or (name in check and check[name] not in proc.stdout.decode(errors="replace"))
            samples, fails = res[name]
            samples.append(dt)
            res[name] = (samples, fails + (1 if bad else 0))
    return res


def bench_size(n: int, args: argparse.Namespace, root: Path, p: Any) -> dict[str, Any]:
    inst = Install(root / f"n{n}", project=PROJECT)
    key = project_key(inst)
    t0 = time.perf_counter()
    counts = populate(inst.paths.db, {key: n, OTHER: n}, seed=5)
    created = time.perf_counter() - t0
    db_mb = os.path.getsize(inst.paths.db) / 1e6
    p(f"\n### {n:,} observations in the project\n")
    p(f"Database: {counts['observations']:,} observations ({n:,} in `{PROJECT}`, {n:,} in `{OTHER}`, ~5% "
      f"superseded or retracted), {counts['summaries']:,} session summaries, {counts['sessions']:,} sessions, "
      f"{db_mb:.0f} MB with the FTS indexes; created in {created:.1f} s (of which the memory index: "
      f"{counts['index_seconds']} s).\n")
    settings, _ = load(inst.paths)
    modes = inst.paths.modes

    conn = connect(inst.paths.db, readonly=True)
    t = time.perf_counter_ns()
    text = build(conn, settings, key, modes_dir=modes)
    first_conn = (time.perf_counter_ns() - t) / 1e6
    warm = summary_ms(timed(lambda: build(conn, settings, key, modes_dir=modes), args.runs))

    cold = []
    for _ in range(args.cold_runs):
        proc = subprocess.run([PYTHON, "-c", COLD_SCRIPT, key], capture_output=True, env=inst.env,
                              cwd=str(inst.project), check=True)
        cold.append(json.loads(proc.stdout)["ms"])

    rows = [
        [f"`build()` warm, same connection (n={warm['n']})", fmt(warm["p50"], 2), fmt(warm["p95"], 2),
         fmt(warm["p99"], 2), fmt(warm["mean"], 2)],
        ["`build()` first call on a new connection, in-process", fmt(first_conn, 2), "", "", ""],
        [f"`connect()` + `build()` first call in a fresh process (n={len(cold)})", fmt(statistics.median(cold), 2),
         "", fmt(max(cold), 2) + " (max)", ""],
    ]
    p(md_table(["context build", "p50 ms", "p95 ms", "p99 ms", "mean ms"], rows))
    p(f"\nThe context is {len(text):,} characters (cap {settings.context_max_chars:,}): "
      f"{settings.context_observations} observations and {settings.context_sessions} summaries at most.\n")

    statements = captured_statements(conn, settings, modes, key)
    qtable, sql_ms, build_ms = query_table(conn, statements, max(20, args.runs // 2),
                                           lambda: build(conn, settings, key, modes_dir=modes))
    p(qtable)
    p(f"\nIn the same loop `build()` took {fmt(build_ms, 2)} ms (p50): its SQL {fmt(sql_ms, 2)} ms "
      f"({sql_ms / build_ms:.0%}), the rest ({fmt(build_ms - sql_ms, 2)} ms) Python: reading the mode JSON for "
      "the type icons, rendering the index.")
    prof = None
    if args.profile or (n >= TARGET_AT and warm["p50"] > TARGET_P50_MS):
        prof = profile_build(conn, settings, modes, key)
        p("\ncProfile of `build()` (30 calls, by cumulative time):\n")
        p(prof)
    conn.close()

    # The CLI and the worker.
    cli = [PYTHON, "-m", "kenning", "context", "--cwd", str(inst.project)]
    base = [PYTHON, "-I", "-S", "-c", "pass"]
    expect = f"# Memory of {PROJECT}"
    down = interleaved([("baseline", base, inst.env, str(inst.project)),
                        ("cli", cli, inst.env, str(inst.project))], args.cli_runs, {"cli": expect})
    inst.start_worker()
    try:
        up = interleaved([("baseline", base, inst.env, str(inst.project)),
                          ("cli", cli, inst.env, str(inst.project))], args.cli_runs, {"cli": expect})
        path = f"/api/context?cwd={quote(str(inst.project))}"
        http_fail = 0

        def get() -> None:
            nonlocal http_fail
            res = inst.api("GET", path, timeout=10)
            if not res or res[0] != 200 or expect not in (res[1] or {}).get("context", ""):
                http_fail += 1

        for _ in range(3):
            get()
        http = summary_ms(timed(get, args.http_runs))
    finally:
        inst.stop_worker()
    rows = []
    for label, res in (("worker down (reads SQLite)", down), ("worker up (asks the worker)", up)):
        b = summary_ms(res["baseline"][0])
        c = summary_ms(res["cli"][0])
        rows.append([f"`kenning context --cwd`, {label}", c["n"], fmt(c["p50"]), fmt(c["p95"]), fmt(b["p50"]),
                     f"{c['p50'] / b['p50']:.1f}×", res["cli"][1] or ""])
    rows.append(["`GET /api/context` (HTTP with token, from a warm client), worker up; nothing written between "
                 "requests: the kept selection answers (kenning/context/cache.py)", http["n"],
                 fmt(http["p50"]), fmt(http["p95"]), "", "", http_fail or ""])
    p("")
    p(md_table(["end to end", "n", "p50 ms", "p95 ms", "baseline p50 ms", "p50 ÷ baseline", "failed"], rows))
    return {"n": n, "warm": warm, "first_conn": first_conn, "cold": statistics.median(cold),
            "cli_down": summary_ms(down["cli"][0]), "cli_up": summary_ms(up["cli"][0]), "http": http,
            "profile": prof}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (< 60 s): fewer repetitions, same sizes")
    ap.add_argument("--sizes", default="10000,100000", help="observations per project (default 10000,100000)")
    ap.add_argument("--runs", type=int, help="warm build() calls per size (default 200, --quick 50)")
    ap.add_argument("--profile", action="store_true", help="always print a cProfile of build()")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    ap.add_argument("--before", default="", help="also time build() of this revision ('merge-base': with main)")
    args = ap.parse_args()
    args.runs = args.runs or (50 if args.quick else 200)
    args.cold_runs = 3 if args.quick else 10
    args.cli_runs = 8 if args.quick else 40
    args.http_runs = 30 if args.quick else 200
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    started = time.monotonic()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-context-")
    results = []
    try:
        p("## Session-start context build (`bench/context_build.py`)\n")
        p(run_header(command_line()))
        for n in sizes:
            results.append(bench_size(n, args, root, p))
        p("\n### Summary and target\n")
        rows = []
        for r in results:
            ok = r["warm"]["p50"] <= TARGET_P50_MS
            rows.append([f"{r['n']:,}", fmt(r["warm"]["p50"], 2), fmt(r["warm"]["p95"], 2), fmt(r["cold"], 2),
                         fmt(r["cli_down"]["p50"]), fmt(r["cli_up"]["p50"]), fmt(r["http"]["p50"]),
                         verdict(ok) if r["n"] >= TARGET_AT else f"({verdict(ok)})"])
        p(md_table(["observations in the project", "build() p50 ms", "build() p95 ms", "fresh process ms",
                    "CLI worker down p50 ms", "CLI worker up p50 ms", "HTTP p50 ms",
                    f"build() p50 ≤ {TARGET_P50_MS:.0f} ms at {TARGET_AT // 1000}k"], rows))
        if args.before:
            before = merge_base() if args.before == "merge-base" else args.before
            rounds = 4 if args.quick else 10
            p(f"\n### Paired with {before[:10]}: `build()` of both trees, same rows\n")
            rows = []
            for n in sizes:
                r = paired(n, before, root, max(10, args.runs // 4), rounds)
                rows.append([f"{n:,}", fmt(r["before"], 2), fmt(r["this"], 2), f"{r['this'] / r['before']:.2f}×",
                             f"{r['chars_before']:,} / {r['chars_this']:,}"])
            p(md_table(["observations in the project", f"{before[:10]} p50 ms", "this tree p50 ms",
                        "this ÷ before", "index chars (before / this)"], rows))
            p(f"\nEach tree's rows made by its own migrations from the same generator (seed 5); {rounds} fresh "
              f"processes per tree, alternated, each the median of {max(10, args.runs // 4)} warm `build()` "
              "calls after one unmeasured; the table gives the median of those medians.")
        p(f"\nLoad average at the end {load_avg()}; wall time of this benchmark {time.monotonic() - started:.0f} s.")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("context_build", "\n".join(out))
        print(f"\n(section context_build written to {os.path.relpath(REPO / 'BENCHMARKS.md')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
