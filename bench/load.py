"""Load: many agent sessions at once through real hook processes, with the worker up.

    .venv/bin/python bench/load.py [--quick] [--sessions N] [--events M] [--think-ms T] [--write] [--keep]

Each session is one thread running its session's hooks one after another, exactly like one
Claude Code window: a new ``python -I -c "from kenning.hook.main import cli; cli()" claude-code
<Event>`` process per event, the payload on stdin (realistic synthetic Claude Code payloads from
``tests/support/synthetic.py``: SessionStart, prompts, Read/Edit/Write/Bash/Grep/Glob/TodoWrite
calls, failures, Stop, SessionEnd). Phases, all in one throw-away installation and one worker:

1. **idle**: one session alone, so the latency of the same hooks without contention is measured
   in the same run;
2. **stress**: N sessions at once, no pause between events (every thread fires its next hook as
   soon as the last returned: far denser than people work);
3. **paced** (``--think-ms``, full run only): N sessions at once with a random pause of 0.5-1.5×
   T ms between events, closer to agents that spend seconds per tool call.

After each phase the worker is flushed and the ``events`` table is compared with what the hooks
were given, per session and event kind: every captured event is stored exactly once (the hook
drops the tools on its skip list, e.g. TodoWrite, by design). The worker's logs are searched for
``database is locked`` / ``SQLITE_BUSY`` / deferred cycles / tracebacks. ``--write`` replaces
(or appends) only the ``load`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    BENCHMARKS_MD,
    PYTHON,
    Install,
    command_line,
    cpu_model,
    fmt,
    load_avg,
    md_table,
    percentile,
    registered_hook,
    run_header,
    temp_root,
    verdict,
)

from kenning.hook.main import _skipped_tool
from kenning.settings import Settings
from tests.support.synthetic import synthetic_sessions

HOOK = registered_hook()[1:]  # exactly what `kenning install` writes
CAPTURE = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd")
TARGET_P50_MS = 30.0
TARGET_P99_MS = 60.0
CONTEXT_BUDGET_MS = 1500.0
LOCKED = re.compile(r"database is locked|database table is locked|SQLITE_BUSY|cycle deferred", re.IGNORECASE)
# Worker logs: error records and tracebacks. Hook log: its crash and lost-event lines (other hook
# lines may quote captured text, where "Traceback" or "error" is data, not trouble).
TROUBLE = re.compile(r"Traceback|\bERROR\b")
HOOK_TROUBLE = re.compile(r": crash|spool write failed|cannot start worker")
Payload = dict[str, Any]


@dataclass
class Call:
    session: str
    event: str
    ms: float
    problem: str = ""


def make_sessions(n: int, per: int, seed: int, cwd: str) -> list[list[Payload]]:
    """``n`` synthetic sessions of ``per`` hook payloads each, with ids unique to this seed."""
    sessions = list(synthetic_sessions(n, per, seed=seed, cwd=cwd))
    for i, events in enumerate(sessions):
        sid = f"load-{seed}-{i:03d}-{events[0]['session_id'][:8]}"
        for p in events:
            p["session_id"] = sid
    return sessions


def expected_counts(sessions: list[list[Payload]]) -> collections.Counter[tuple[str, str]]:
    """(session id, event kind) → how many events the hooks should capture."""
    skip = Settings().skip_tools
    out: collections.Counter[tuple[str, str]] = collections.Counter()
    for events in sessions:
        for p in events:
            kind = p["hook_event_name"]
            tool = p.get("tool_name")
            if kind in ("PostToolUse", "PostToolUseFailure") and isinstance(tool, str) and _skipped_tool(tool, skip):
                continue
            out[(p["session_id"], kind)] += 1
    return out


def run_hook(env: dict[str, str], cwd: str, payload: Payload, timeout: float = 60.0) -> Call:
    """One real hook process; checks the contract (exit 0, no stderr, stdout empty or one JSON object)."""
    event = payload["hook_event_name"]
    sid = payload["session_id"]
    data = json.dumps(payload).encode()
    t0 = time.perf_counter_ns()
    try:
        r = subprocess.run([PYTHON, *HOOK, event], input=data, env=env, cwd=cwd, capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return Call(sid, event, timeout * 1000, "timeout")
    ms = (time.perf_counter_ns() - t0) / 1e6
    if r.returncode != 0:
        return Call(sid, event, ms, f"exit {r.returncode}: {r.stderr[-300:]!r}")
    if r.stderr:
        return Call(sid, event, ms, f"stderr: {r.stderr[-300:]!r}")
    out = r.stdout.strip()
    if out:
        try:
            value = json.loads(out)
        except ValueError:
            return Call(sid, event, ms, f"stdout is not JSON: {out[:200]!r}")
        if not isinstance(value, dict) or "hookSpecificOutput" not in value:
            return Call(sid, event, ms, f"unexpected stdout: {out[:200]!r}")
    elif event == "SessionStart":
        return Call(sid, event, ms, "SessionStart printed no context")
    return Call(sid, event, ms)


BASELINE = [PYTHON, "-I", "-S", "-c", "pass"]


def baseline_ms() -> float:
    """Wall time of a bare interpreter start (the floor of any Python hook), in ms."""
    t0 = time.perf_counter_ns()
    subprocess.run(BASELINE, capture_output=True, timeout=60)
    return (time.perf_counter_ns() - t0) / 1e6


def drive(env: dict[str, str], cwd: str, sessions: list[list[Payload]], think_ms: float = 0.0,
          seed: int = 0, baseline: list[float] | None = None) -> tuple[list[Call], float]:
    """Every session in its own thread, its hooks one after another; returns the calls and the wall time.

    With ``baseline``, a bare ``python -I -S -c pass`` is timed in the same conditions: after each
    hook in the same thread when one session runs alone, else from one extra thread every ~100 ms.
    """
    calls: list[list[Call]] = [[] for _ in sessions]
    barrier = threading.Barrier(len(sessions) + 1)
    done = threading.Event()
    inline = baseline is not None and len(sessions) == 1

    def one(i: int, events: list[Payload]) -> None:
        rng = random.Random(seed * 1000 + i)
        barrier.wait()
        for p in events:
            calls[i].append(run_hook(env, cwd, p))
            if inline and baseline is not None:
                baseline.append(baseline_ms())
            if think_ms:
                time.sleep(think_ms * rng.uniform(0.5, 1.5) / 1000)

    def sampler() -> None:
        while not done.wait(0.1):
            if baseline is not None:
                baseline.append(baseline_ms())

    threads = [threading.Thread(target=one, args=(i, ev), daemon=True) for i, ev in enumerate(sessions)]
    for t in threads:
        t.start()
    extra = threading.Thread(target=sampler, daemon=True)
    barrier.wait()
    started = time.monotonic()
    if baseline is not None and not inline:
        extra.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    done.set()
    if extra.is_alive():
        extra.join()
    return [c for per in calls for c in per], wall


def stored_counts(db: str, session_ids: set[str]) -> collections.Counter[tuple[str, str]]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        rows = conn.execute("SELECT s.agent_session_id, e.kind, COUNT(*) FROM events e JOIN sessions s "
                            "ON s.id = e.session_id GROUP BY 1, 2").fetchall()
    finally:
        conn.close()
    return collections.Counter({(sid, kind): n for sid, kind, n in rows if sid in session_ids})


def pending(db: str) -> int:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])
    finally:
        conn.close()


def wait_processed(inst: Install, expected: collections.Counter[tuple[str, str]], timeout: float = 300.0) -> float:
    """Flush until every expected event is stored and nothing is pending; returns the seconds it took."""
    from kenning import spool

    ids = {sid for sid, _k in expected}
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        inst.api("POST", "/api/flush", timeout=30)
        if (spool.depth(inst.paths) == 0 and os.path.exists(inst.paths.db) and pending(inst.paths.db) == 0
                and sum(stored_counts(inst.paths.db, ids).values()) >= sum(expected.values())):
            return time.monotonic() - started
        time.sleep(0.2)
    return float("nan")


def log_findings(inst: Install) -> dict[str, list[str]]:
    """Lock errors and other trouble in every log of the installation."""
    found: dict[str, list[str]] = {"locked": [], "trouble": []}
    for name in sorted(os.listdir(inst.paths.logs)):
        try:
            text = Path(inst.paths.logs, name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        trouble = HOOK_TROUBLE if name.startswith("hook.log") else TROUBLE
        for line in text.splitlines():
            if LOCKED.search(line):
                found["locked"].append(f"{name}: {line[:300]}")
            elif trouble.search(line):
                found["trouble"].append(f"{name}: {line[:300]}")
    return found


def latency(calls: list[Call], events: tuple[str, ...]) -> dict[str, float]:
    ms = [c.ms for c in calls if c.event in events and not c.problem]
    return {"n": len(ms), "p50": percentile(ms, 50), "p95": percentile(ms, 95), "p99": percentile(ms, 99),
            "max": max(ms) if ms else float("nan")}


@dataclass
class Phase:
    name: str
    sessions: int
    events: int
    think_ms: float
    calls: list[Call]
    wall_s: float
    drain_s: float
    expected: collections.Counter[tuple[str, str]]
    stored: collections.Counter[tuple[str, str]]
    load_before: str
    load_after: str
    baseline: list[float]

    @property
    def exactly_once(self) -> bool:
        return self.stored == self.expected

    @property
    def failures(self) -> list[Call]:
        return [c for c in self.calls if c.problem]


def run_phase(inst: Install, name: str, n: int, per: int, seed: int, think_ms: float = 0.0) -> Phase:
    sessions = make_sessions(n, per, seed, str(inst.project))
    expected = expected_counts(sessions)
    before = load_avg()
    base: list[float] = []
    calls, wall = drive(inst.env, str(inst.project), sessions, think_ms=think_ms, seed=seed, baseline=base)
    after = load_avg()
    drain = wait_processed(inst, expected)
    stored = stored_counts(inst.paths.db, {sid for sid, _k in expected})
    phase = Phase(name, n, per, think_ms, calls, wall, drain, expected, stored, before, after, base)
    print(f"{name}: {n}×{per} hooks in {wall:.1f} s, drained {drain:.1f} s later, "
          f"{sum(stored.values())}/{sum(expected.values())} events stored, {len(phase.failures)} hook failures, "
          f"exactly once: {phase.exactly_once}", flush=True)
    return phase


def worker_memory_mib(inst: Install) -> dict[str, float]:
    """The worker's VmRSS, VmHWM (its peak) and RssFile (mapped files: libraries, the database's
    memory map: page cache, shared) from /proc, in MiB; NaN when unknown."""
    out = {"VmRSS": float("nan"), "VmHWM": float("nan"), "RssFile": float("nan")}
    health = inst.health()
    if not health:
        return out
    try:
        for line in Path(f"/proc/{health['pid']}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in out:
                out[key] = int(value.split()[0]) / 1024
    except (OSError, ValueError):
        pass
    return out


def run(n: int, per: int, think_ms: float, keep: bool) -> tuple[list[Phase], dict[str, Any]]:
    root = temp_root("kenning-load-")
    inst = Install(root)
    try:
        inst.start_worker()
        phases = [run_phase(inst, "idle", 1, per, seed=1)]
        phases.append(run_phase(inst, "stress", n, per, seed=2))
        if think_ms:
            phases.append(run_phase(inst, "paced", n, per, seed=3, think_ms=think_ms))
        extra: dict[str, Any] = {"memory": worker_memory_mib(inst),
                                 "status": inst.api("GET", "/api/status", timeout=30),
                                 "search": inst.api("GET", "/api/search/status", timeout=30)}
        inst.stop_worker()
        extra["logs"] = log_findings(inst)
        conn = sqlite3.connect(inst.paths.db)
        try:
            extra["observations"] = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
            extra["summaries"] = conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0]
            extra["events"] = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            extra["quarantined"] = len(os.listdir(inst.paths.spool_corrupt))
        finally:
            conn.close()
        return phases, extra
    finally:
        inst.stop_worker()
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def report(phases: list[Phase], extra: dict[str, Any], wall_total: float, header: str) -> str:
    lines = ["## Load: concurrent sessions through real hooks (`bench/load.py`)", "", header, ""]
    stress = next(p for p in phases if p.name == "stress")
    lines.append(
        f"{stress.sessions} sessions × {stress.events} events, one thread per session running its hooks one after "
        f"another as real processes (`python -I -S -c \"…cli()\" claude-code <Event>`, what `kenning install` "
        f"writes), worker up (offline rules observer). Payloads: synthetic Claude Code sessions "
        f"(`tests/support/synthetic.py`). Before the concurrent phases one session runs alone (idle) in the same "
        f"installation, so both latencies come from the same run. {cpu_model()}, {os.cpu_count()} cores.")
    lines.append("")
    rows = []
    for p in phases:
        hooks = len(p.calls)
        rows.append([p.name, f"{p.sessions} × {p.events}", f"{p.think_ms:.0f}" if p.think_ms else "0", hooks,
                     f"{p.wall_s:.1f}", fmt(hooks / p.wall_s if p.wall_s else float("nan")), f"{p.drain_s:.1f}",
                     f"{sum(p.stored.values()):,} / {sum(p.expected.values()):,}",
                     "yes" if p.exactly_once else "**NO**", len(p.failures), f"{p.load_before} → {p.load_after}"])
    lines.append(md_table(["phase", "sessions × events", "think ms", "hook runs", "wall s", "hooks/s",
                           "drained s after", "events stored / expected", "exactly once", "hook failures",
                           "load average before → after"], rows))
    lines.append("")
    lines.append("Hook wall time (ms), per phase. Capture = UserPromptSubmit, PostToolUse, PostToolUseFailure, "
                 "Stop, SessionEnd; context = SessionStart (asks the worker for the session-start index). "
                 "Baseline = `python -I -S -c pass` timed in the same phase (after each hook when one session runs "
                 "alone, from an extra thread every ~100 ms when many do): the floor of any Python hook under the "
                 "same CPU contention.")
    lines.append("")
    rows = []
    for p in phases:
        b = p.baseline
        rows.append(["baseline `python -I -S -c pass`", p.name, len(b), fmt(percentile(b, 50)),
                     fmt(percentile(b, 95)), fmt(percentile(b, 99)), fmt(max(b) if b else float("nan")), "", ""])
    for kind, events in (("capture", CAPTURE), ("context (SessionStart)", ("SessionStart",))):
        for p in phases:
            s = latency(p.calls, events)
            ratio = s["p50"] / percentile(p.baseline, 50) if p.baseline else float("nan")
            if kind == "capture":
                ok = f"p50 {verdict(s['p50'] <= TARGET_P50_MS)}, p99 {verdict(s['p99'] <= TARGET_P99_MS)}"
            else:
                ok = verdict(s["max"] <= CONTEXT_BUDGET_MS) + " (max ≤ 1.5 s)"
            rows.append([kind, p.name, s["n"], fmt(s["p50"]), fmt(s["p95"]), fmt(s["p99"]), fmt(s["max"]),
                         f"{fmt(ratio, 2)}×", ok])
    lines.append(md_table(["hooks", "phase", "n", "p50", "p95", "p99", "max", "p50 ÷ baseline p50", "vs target"],
                          rows))
    lines.append("")
    idle = latency(phases[0].calls, CAPTURE)
    st = latency(stress.calls, CAPTURE)
    locked = extra["logs"]["locked"]
    trouble = extra["logs"]["trouble"]
    lines.append(
        f"Capture p50 under stress is {st['p50'] / idle['p50']:.1f}× the idle p50 ({fmt(st['p50'])} vs "
        f"{fmt(idle['p50'])} ms): with {stress.sessions} hook processes wanting CPU at once on {os.cpu_count()} "
        f"cores, each waits for a core (~{stress.sessions / (os.cpu_count() or 1):.0f} runnable processes per "
        f"core); the hook itself does not wait on the worker or the database (it writes the spool and sends "
        f"one UDP datagram).")
    lines.append("")
    ss = latency(stress.calls, ("SessionStart",))
    mem = extra["memory"]
    answer = extra.get("search")
    emb: dict[str, Any] = (answer[1].get("embeddings") if answer and isinstance(answer[1], dict) else None) or {}
    embeddings = f"{emb.get('backend', '?')} ({emb.get('state', '?')}, {emb.get('vectors', 0):,} vectors)"
    lines.append(
        f"SessionStart under stress: max {fmt(ss['max'])} ms against the 1.5 s answer budget. The hook's own "
        f"deadline (`context_timeout_ms`, 1.2 s by default) starts when its Python code runs; a bare interpreter "
        f"start took {fmt(percentile(stress.baseline, 50))} ms (p50, max {fmt(max(stress.baseline or [0.0]))} ms) "
        f"in the same phase, time no deadline inside the hook can cover.")
    lines.append("")
    lines.append(
        f"Database: {extra['events']:,} events, {extra['observations']:,} observations, {extra['summaries']:,} "
        f"session summaries; spool files quarantined: {extra['quarantined']}. Worker RSS at the end "
        f"{fmt(mem['VmRSS'])} MiB (peak {fmt(mem['VmHWM'])} MiB; {fmt(mem['RssFile'])} MiB of it mapped files: "
        f"libraries and the database's memory map), embeddings {embeddings}. Log lines with `database is locked` "
        f"/ `SQLITE_BUSY` / a deferred cycle: "
        f"**{len(locked)}**; other errors or tracebacks: {len(trouble)}.")
    for line in (locked + trouble)[:10]:
        lines.append(f"    {line}")
    failures = [c for p in phases for c in p.failures]
    if failures:
        lines.append("")
        lines.append(f"Hook failures ({len(failures)}):")
        for c in failures[:10]:
            lines.append(f"    {c.event} {c.session}: {c.problem}")
    lines.append("")
    lines.append(f"Wall time of this benchmark {wall_total:.0f} s.")
    return "\n".join(lines)


def write_section(body: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace this benchmark's own section of BENCHMARKS.md (or append it); nothing else is touched."""
    start, end = "<!-- bench:load:start -->", "<!-- bench:load:end -->"
    text = path.read_text(encoding="utf-8")
    block = f"{start}\n{body.strip()}\n{end}"
    i, j = text.find(start), text.find(end)
    text = text[:i] + block + text[j + len(end):] if i >= 0 and j > i else text.rstrip("\n") + "\n\n" + block + "\n"
    tmp = str(path) + ".load.tmp"
    Path(tmp).write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 sessions × 40 events, no paced phase (development)")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--think-ms", type=float, default=1000.0, help="mean pause of the paced phase (0: none)")
    ap.add_argument("--write", action="store_true", help="write the numbers into BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary installation")
    args = ap.parse_args()
    if args.quick:
        args.sessions, args.events, args.think_ms = 5, 40, 0.0
    started = time.monotonic()
    header = run_header(command_line())  # the load average before the run
    phases, extra = run(args.sessions, args.events, args.think_ms, args.keep)
    body = report(phases, extra, time.monotonic() - started, header)
    print(body)
    if args.write:
        write_section(body)
        print(f"wrote the load section of {BENCHMARKS_MD}")
    ok = all(p.exactly_once and not p.failures for p in phases) and not extra["logs"]["locked"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
