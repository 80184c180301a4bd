"""Spool → committed rows with the offline rules observer: events per second.

    .venv/bin/python bench/ingest_throughput.py [--quick] [--write] [--events N]

N events (default 5,000, --quick 2,000) from ``synthetic_sessions`` (50 events a session) go
through the hook's own gates and cleaning and into the spool with ``kenning.spool.write``,
exactly as the hook writes them. The same spool is then processed twice:

(a) in-process: ``Pipeline.cycle()`` until the spool is empty and no event is pending, with
    ``ingest`` and ``observe`` timed separately;
(b) end to end: a real worker (``python -m kenning worker start``) started after spooling, timed
    from the start command until ``/api/status`` (polled with the data dir's token) reports an
    empty spool and 0 pending events.

The cost of deleting a spool file only once its rows are durable in the database file (a WAL
checkpoint per batch, issue 11) is measured against the previous rule (unlink right after
COMMIT) in the same run: (a) again with that rule, and a trickle (one event per cycle, as
live hooks arrive) alternating between the two rules event by event.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    REPO,
    Install,
    command_line,
    fmt,
    load_avg,
    md_table,
    run_header,
    temp_root,
    verdict,
    write_section,
)

from kenning import spool
from kenning.hook import main as hook
from kenning.observer.registry import choose
from kenning.project import find_root
from kenning.settings import load
from kenning.store import repo
from kenning.store.db import open_db
from kenning.worker.pipeline import Pipeline
from tests.support.synthetic import synthetic_sessions

TARGET_EVENTS_PER_S = 500.0
EVENTS_PER_SESSION = 50
POLL_S = 0.1


def spool_sessions(inst: Install, n_events: int, seed: int = 11) -> dict[str, Any]:
    """Spool whole synthetic sessions until at least ``n_events`` records are written, as the hook would."""
    settings, _ = load(inst.paths)
    name, root = find_root(str(inst.project))
    n_sessions = 0
    written = skipped = 0
    t_sess = time.time() - 86400 * 7  # last week: turns left open are idle, as in real history
    t0 = time.perf_counter()
    for events in synthetic_sessions(10**6, EVENTS_PER_SESSION, seed=seed, cwd=str(inst.project)):
        n_sessions += 1
        for k, payload in enumerate(events):
            event = payload["hook_event_name"]
            tool = payload.get("tool_name")
            if event in ("PostToolUse", "PostToolUseFailure") and isinstance(tool, str) \
                    and hook._skipped_tool(tool, settings.skip_tools):
                skipped += 1
                continue
            clean, cut = hook._clean(settings, payload)
            spool.write(inst.paths, {"v": 1, "agent": "claude-code", "event": event, "at": t_sess + 15 * k,
                                     "project": name, "project_root": root, "truncated": cut, "payload": clean})
            written += 1
        t_sess += 3600
        if written >= n_events:
            break
    elapsed = time.perf_counter() - t0
    size = sum(os.path.getsize(p) for p in spool.pending(inst.paths))
    return {"sessions": n_sessions, "written": written, "skipped": skipped, "seconds": elapsed, "bytes": size}


def db_counts(db: str) -> dict[str, int]:
    from kenning.store.db import connect

    conn = connect(db, readonly=True)
    try:
        return repo.counts(conn)
    finally:
        conn.close()


def in_process(inst: Install, durable: bool = True) -> dict[str, Any]:
    """(a) Pipeline.cycle() in this process until everything is stored."""
    settings, _ = load(inst.paths)
    conn = open_db(inst.paths.db)  # migrations are not part of the measurement
    observer, _note = choose(settings)
    pipe = Pipeline(inst.paths, conn, observer)
    if not durable:
        commit_only(pipe)
    spent = {"ingest": 0, "observe": 0}
    ingest, observe = pipe.ingest, pipe.observe

    def timed_ingest(*a: Any, **kw: Any) -> int:
        t = time.perf_counter_ns()
        try:
            return ingest(*a, **kw)
        finally:
            spent["ingest"] += time.perf_counter_ns() - t

    def timed_observe(*a: Any, **kw: Any) -> int:
        t = time.perf_counter_ns()
        try:
            return observe(*a, **kw)
        finally:
            spent["observe"] += time.perf_counter_ns() - t

    confirm = spool.confirm
    spent["unlink"] = 0

    def timed_confirm(path: str) -> None:
        t = time.perf_counter_ns()
        try:
            confirm(path)
        finally:
            spent["unlink"] += time.perf_counter_ns() - t

    pipe.ingest = timed_ingest  # type: ignore[method-assign]
    pipe.observe = timed_observe  # type: ignore[method-assign]
    spool.confirm = timed_confirm  # type: ignore[assignment]
    cycles = 0
    t0 = time.perf_counter_ns()
    while cycles < 100:
        pipe.cycle()
        cycles += 1
        if spool.depth(inst.paths) == 0 and repo.pending_count(conn) == 0:
            break
    wall = (time.perf_counter_ns() - t0) / 1e9
    spool.confirm = confirm  # type: ignore[assignment]
    conn.close()
    return {"wall": wall, "ingest": spent["ingest"] / 1e9, "observe": spent["observe"] / 1e9, "cycles": cycles,
            "unlink": spent["unlink"] / 1e9,
            "stats": pipe.stats, "counts": db_counts(inst.paths.db), "error": pipe.stats.last_error}


def commit_only(pipe: Pipeline) -> None:
    """The deletion rule before issue 11, for the same-run baseline: unlink right after COMMIT."""
    def settle(force: bool = False) -> bool:
        for path in pipe._unsettled:
            spool.confirm(path)
        pipe._unsettled.clear()
        return True

    pipe.settle = settle  # type: ignore[method-assign]


def trickle(durable: Install, baseline: Install, n: int, seed: int = 12) -> dict[str, list[float]]:
    """One event spooled then ingested per cycle, alternating the two rules event by event (ms each)."""
    settings, _ = load(durable.paths)
    pipes = {}
    for label, inst in (("durable", durable), ("baseline", baseline)):
        observer, _note = choose(settings)
        pipes[label] = Pipeline(inst.paths, open_db(inst.paths.db), observer)
    commit_only(pipes["baseline"])
    name, root = find_root(str(durable.project))
    times: dict[str, list[float]] = {"durable": [], "baseline": []}
    k = 0
    for events in synthetic_sessions(10**6, EVENTS_PER_SESSION, seed=seed, cwd=str(durable.project)):
        for payload in events:
            clean, cut = hook._clean(settings, payload)
            order = ("durable", "baseline") if k % 2 == 0 else ("baseline", "durable")
            for label in order:
                inst = durable if label == "durable" else baseline
                spool.write(inst.paths, {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"],
                                         "at": time.time(), "project": name, "project_root": root,
                                         "truncated": cut, "payload": dict(clean)})
                t = time.perf_counter()
                pipes[label].ingest()
                times[label].append((time.perf_counter() - t) * 1000)
            k += 1
            if k >= n:
                break
        if k >= n:
            break
    for pipe in pipes.values():
        assert spool.depth(pipe.paths) == 0, "spool not drained"
        pipe.conn.close()
    return times


def end_to_end(inst: Install, expected: int) -> dict[str, Any]:
    """(b) A real worker started after spooling; poll /api/status until drained."""
    import subprocess

    from kenning.hook.client import request
    from kenning.paths import read_token

    t0 = time.perf_counter()
    starter = subprocess.Popen([sys.executable, "-m", "kenning", "worker", "start", "--wait", "60"], env=inst.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(inst.project))
    ready = spool_empty = done = None
    last: dict[str, Any] = {}
    polls = 0
    poll_ms: list[float] = []
    deadline = t0 + 600
    try:
        while time.perf_counter() < deadline:
            token = read_token(inst.paths)
            if token:
                tq = time.perf_counter()
                res = request(inst.port, "GET", "/api/status", token=token, timeout=10)
                polls += 1
                now = time.perf_counter()
                if res and res[0] == 200:
                    import json

                    poll_ms.append((now - tq) * 1000)
                    last = json.loads(res[1])
                    ready = ready or now - t0
                    pending = (last.get("counts") or {}).get("pending_events", -1)
                    if last.get("spool_depth") == 0 and spool_empty is None and (last.get("counts") or {}):
                        spool_empty = now - t0
                    if last.get("spool_depth") == 0 and pending == 0 and \
                            (last.get("counts") or {}).get("events", 0) >= expected:
                        done = now - t0
                        break
            time.sleep(POLL_S)
        starter.wait(timeout=60)
        inst.worker_pid = (inst.health() or {}).get("pid")
    finally:
        inst.stop_worker()
    return {"ready": ready, "spool_empty": spool_empty, "done": done, "status": last, "polls": polls,
            "poll_ms": sorted(poll_ms)[len(poll_ms) // 2] if poll_ms else None,
            "counts": db_counts(inst.paths.db) if os.path.exists(inst.paths.db) else {}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run: 2,000 events (< 60 s)")
    ap.add_argument("--events", type=int, help="events to spool (default 5,000, --quick 2,000)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    args = ap.parse_args()
    n = args.events or (2000 if args.quick else 5000)
    started = time.monotonic()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-ingest-")
    a, b = Install(root / "inproc"), Install(root / "worker")
    a0, t1, t0 = Install(root / "inproc-baseline"), Install(root / "trickle"), Install(root / "trickle-baseline")
    try:
        p("## Ingest throughput (`bench/ingest_throughput.py`)\n")
        p(run_header(command_line()))
        # Both spools are written the hook's way (fsync per file): copies that never saw fsync
        # are several times cheaper to unlink on ext4 and would flatter the ingest.
        sp = spool_sessions(a, n)
        sp_b = spool_sessions(b, n)
        p(f"\nSpooled {sp['written']:,} events ({sp['sessions']} synthetic sessions of {EVENTS_PER_SESSION} hook "
          f"payloads; {sp['skipped']} TodoWrite calls dropped by the hook's skip list), "
          f"{sp['bytes'] / 1e6:.1f} MB, through the hook's own cleaning and `kenning.spool.write` (fsync per event): "
          f"{sp['written'] / sp['seconds']:,.0f} events/s written. The same sessions are spooled the same way into "
          f"a second data dir ({sp_b['written']:,} events) for the end-to-end run.\n")

        r = in_process(a)
        e = end_to_end(b, sp["written"])
        ev = sp["written"]
        rows = []
        ca = r["counts"]
        rate_a = ev / r["wall"]
        rows.append(["(a) in-process `Pipeline.cycle()`", fmt(r["wall"], 2), f"{rate_a:,.0f}",
                     f"{fmt(r['ingest'], 2)} s ({ev / r['ingest']:,.0f}/s)",
                     f"{fmt(r['observe'], 2)} s ({ev / r['observe']:,.0f}/s)", ca.get("observations", 0),
                     ca.get("session_summaries", 0), ca.get("pending_events", "?"),
                     verdict(rate_a >= TARGET_EVENTS_PER_S)])
        cb = e["counts"]
        if e["done"] is not None:
            drain = e["done"] - (e["ready"] or 0)
            rate_b = ev / e["done"]
            ingest_b = f"spool empty at {fmt(e['spool_empty'], 2)} s" if e["spool_empty"] else "–"
            rows.append(["(b) real worker, from `kenning worker start`", fmt(e["done"], 2), f"{rate_b:,.0f}",
                         ingest_b, f"all observed at {fmt(e['done'], 2)} s", cb.get("observations", 0),
                         cb.get("session_summaries", 0), cb.get("pending_events", "?"),
                         verdict(rate_b >= TARGET_EVENTS_PER_S)])
        else:
            drain = None
            rows.append(["(b) real worker", "did not drain", "", "", "", cb.get("observations", 0),
                         cb.get("session_summaries", 0), cb.get("pending_events", "?"), "FAIL"])
        p(md_table(["run", "wall s", "events/s", "ingest", "observe", "observations", "summaries",
                    "pending after", f"≥ {TARGET_EVENTS_PER_S:.0f} events/s"], rows))
        st = r["stats"]
        p(f"\n(a): {r['cycles']} cycle(s); ingested {st.ingested:,}, duplicates {st.duplicates}, quarantined "
          f"{st.quarantined}; deleting the spool files after COMMIT (`spool.confirm`, part of ingest) took "
          f"{fmt(r['unlink'], 2)} s; `cycle()` time outside ingest and observe (prune) "
          f"{fmt(r['wall'] - r['ingest'] - r['observe'], 2)} s"
          + (f"; last error: {r['error']}" if r["error"] else "") + ".")
        if e["done"] is not None:
            w = (e["status"].get("worker") or {})
            p(f"\n(b): the worker answered /api/status {fmt(e['ready'], 2)} s after the start command (interpreter, "
              f"Starlette/uvicorn imports, migrations; it starts draining before it answers); drained "
              f"{fmt(drain, 2)} s later ({ev / drain:,.0f} events/s after the first answer). The worker reports "
              f"ingested {w.get('ingested', '?'):,}, observations stored {w.get('observations_stored', '?'):,}. "
              f"Polled every {POLL_S * 1000:.0f} ms ({e['polls']} polls, median /api/status answer "
              f"{fmt(e['poll_ms'])} ms, it runs `PRAGMA quick_check`), so times are ±{POLL_S * 1000:.0f} ms.")
        same = ca.get("observations") == cb.get("observations") and ca.get("events") == cb.get("events")
        p(f"\nBoth runs stored {ca.get('events', 0):,} / {cb.get('events', 0):,} events and "
          f"{ca.get('observations', 0):,} / {cb.get('observations', 0):,} observations"
          + (" (identical)." if same else " (they differ: see above)."))

        p("\n### Durable before deleted: the cost of a checkpoint before the spool files go\n")
        spool_sessions(a0, n)
        r0 = in_process(a0, durable=False)
        tr = trickle(t1, t0, 300 if args.quick else 1000)
        med = {k: sorted(v)[len(v) // 2] for k, v in tr.items()}
        p95 = {k: sorted(v)[int(len(v) * 0.95)] for k, v in tr.items()}
        p(md_table(["run", "previous rule: unlink after COMMIT", "now: unlink once checkpointed", "ratio"], [
            ["(a) bulk, in-process, wall s", fmt(r0["wall"], 2), fmt(r["wall"], 2), f"{r['wall'] / r0['wall']:.2f}"],
            ["(a) bulk, ingest s", fmt(r0["ingest"], 2), fmt(r["ingest"], 2), f"{r['ingest'] / r0['ingest']:.2f}"],
            [f"trickle: one event per cycle, ms p50 (n={len(tr['durable'])} each, alternating)",
             fmt(med["baseline"]), fmt(med["durable"]), f"{med['durable'] / med['baseline']:.2f}"],
            ["trickle, ms p95", fmt(p95["baseline"]), fmt(p95["durable"]), f"{p95['durable'] / p95['baseline']:.2f}"],
        ]))
        p(f"\n(a) with the checkpoint ran {r['stats'].checkpoints} checkpoint(s). A spool file is now deleted only "
          "after `PRAGMA wal_checkpoint` has copied its rows into the database file (SQLite fsyncs the WAL before and "
          "the database after it), so a `-wal` cut short by a crash loses nothing the spool still holds.")
        p(f"\nLoad average at the end {load_avg()}; wall time of this benchmark {time.monotonic() - started:.0f} s.")
    finally:
        a.stop_worker()
        b.stop_worker()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("ingest_throughput", "\n".join(out))
        print(f"\n(section ingest_throughput written to {os.path.relpath(REPO / 'BENCHMARKS.md')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
