"""The evidence check's cost at session start: 10k observations citing 200 files.

    .venv/bin/python bench/evidence_check.py [--rounds N] [--write]

A database made through the real migrations (``common.populate``) holds 10k observations of the
bench project (and 10k of another); each then cites one of 200 files, a function in it and a make
target (``src/mod_17.py``, ```fn_17()```, ```make t_7```), as a memory about code does. The working
tree has 180 of the files (the other 20 are "gone"), a Makefile without some targets, and one
cited file of 3 MB (the check reads at most its cap of it). Measured, each pair alternated in one
run (same-run ratios, the check switched off by ``evidence_check: false``):

* ``build()`` of the session-start index in-process, check off / on with a warm cache (answers
  kept per file: a stat each) / on with a cold cache (the kept answers dropped before each call;
  the OS page cache stays warm);
* ``kenning context --cwd`` with the worker down (a fresh process: the SessionStart hook's own
  fallback path, always a cold check cache), off / on;
* the real SessionStart hook answered by a running worker (warm cache): two workers side by side
  on copies of the database, the check off in one, the hooks alternated between them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    PYTHON,
    Cmd,
    Install,
    command_line,
    fmt,
    md_table,
    populate,
    project_key,
    run_header,
    run_interleaved,
    temp_root,
    write_section,
)

from kenning.context import evidence_check as ec
from kenning.context.evidence_marks import forget_caches
from kenning.context.session_start import build
from kenning.memory.citations import cite
from kenning.settings import Settings
from kenning.store.db import connect, open_db

FILES, PRESENT, TARGETS = 200, 180, 20
SIZE = 10_000
BUDGET_MS = 1500  # a context hook answers within 1.5 s or prints nothing (DESIGN.md invariant 1)


def cite_files(db: str) -> None:
    """Each observation cites one of FILES files, a function in it and a make target."""
    conn = open_db(db)
    rows = [(json.dumps([f"src/mod_{i % FILES}.py"]),
             f"`fn_{i % FILES}()` in src/mod_{i % FILES}.py handles case {i}; run `make t_{i % TARGETS}` after.", i)
            for (i,) in conn.execute("SELECT id FROM observations").fetchall()]
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("UPDATE observations SET files_modified = ?, narrative = ? WHERE id = ?", rows)
    conn.execute("COMMIT")
    conn.close()


def working_tree(root: Path) -> None:
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    for i in range(PRESENT):
        body = "".join(f"def helper_{i}_{k}(x):\n    return x + {k}\n\n" for k in range(200))  # ~6 kB
        fn = f"def fn_{i}(x):\n    return x\n" if i % 10 else ""  # every 10th: its function deleted
        (src / f"mod_{i}.py").write_text(body + fn)
    # One cited file far past the cap, its function at the end (beyond what is read).
    (src / "mod_1.py").write_text("x = 1\n" * 500_000 + "def fn_1(x):\n    return x\n")
    (root / "Makefile").write_text(".PHONY: all\n" + "".join(f"t_{k}:\n\ttrue\n" for k in range(TARGETS - 5)))


def ms(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return statistics.median(s), s[min(len(s) - 1, int(0.95 * len(s)))]


def in_process(db: str, key: str, tree: str, rounds: int) -> dict[str, list[float]]:
    on, off = Settings(), Settings(evidence_check=False)
    conn = connect(db, readonly=True)
    out: dict[str, list[float]] = {"off": [], "warm": [], "cold": []}
    for r in range(rounds + 3):
        for name in ("off", "warm", "cold")[r % 3:] + ("off", "warm", "cold")[:r % 3]:
            if name == "cold":
                forget_caches()
            t0 = time.perf_counter_ns()
            build(conn, off if name == "off" else on, key, root=tree)
            if r >= 3:
                out[name].append((time.perf_counter_ns() - t0) / 1e6)
    conn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = ap.parse_args()
    root = temp_root("kenning-evidence-bench")
    try:
        return run(root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, args: argparse.Namespace) -> int:
    inst = Install(root)
    key = project_key(inst)
    populate(inst.paths.db, {key: SIZE, "other": SIZE})
    cite_files(inst.paths.db)
    working_tree(inst.project)
    tree = str(inst.project)

    # What one cold check reads: every cited file once, none past the cap.
    forget_caches()
    conn = connect(inst.paths.db, readonly=True)
    text = build(conn, Settings(), key, root=tree)
    conn.close()
    reads, read_bytes, largest = ec.reads, ec.bytes_read, ec.largest_read
    marked = text.count("possibly stale")
    # The 3 MB file, cited directly: read up to the cap, and its late function not judged gone.
    big = ec.gone(ec.Checker(tree), cite("`fn_1()` in src/mod_1.py"))
    largest = max(largest, ec.largest_read)
    assert largest <= ec.READ_CAP and not big, (largest, big)

    inner = in_process(inst.paths.db, key, tree, args.rounds)

    env_off = {**inst.env, "KENNING_EVIDENCE_CHECK": "false"}
    ctx = [PYTHON, "-m", "kenning", "context", "--cwd", tree]
    cli = [Cmd("off", ctx, env_off, tree, lambda r: b""), Cmd("on", ctx, inst.env, tree, lambda r: b"")]
    run_interleaved(cli, max(5, args.rounds // 3), 1)

    payload = json.dumps({"session_id": "bench", "hook_event_name": "SessionStart", "source": "startup",
                          "cwd": tree, "transcript_path": str(root / "t.jsonl")}).encode()
    hook = [PYTHON, "-I", "-m", "kenning", "hook", "claude-code", "SessionStart"]
    # Two workers side by side, each with its own data dir (a copy of the same database) and port, the
    # check off in one: the hooks alternate between them in the same rounds.
    other = Install(root / "off")
    shutil.copyfile(inst.paths.db, other.paths.db)
    other.env["KENNING_EVIDENCE_CHECK"] = "false"
    inst.start_worker()
    other.start_worker()
    try:
        hooks = [Cmd("off", hook, other.env, tree, lambda r: payload),
                 Cmd("on", hook, inst.env, tree, lambda r: payload, check=lambda p: b"possibly stale" in p.stdout)]
        run_interleaved(hooks, max(10, args.rounds), 3)
        api: dict[str, list[float]] = {"off": [], "on": []}
        path = "/api/context?cwd=" + quote(tree)
        for r in range(3 * max(10, args.rounds) + 5):
            for name, i in ((("off", other), ("on", inst)) if r % 2 else (("on", inst), ("off", other))):
                t0 = time.perf_counter_ns()
                i.api("GET", path)
                if r >= 5:
                    api[name].append((time.perf_counter_ns() - t0) / 1e6)
    finally:
        inst.stop_worker()
        other.stop_worker()
    worker = {c.name: [x / 1e6 for x in c.samples] for c in hooks}
    for c in hooks:
        if c.failures:
            print(f"{c.name}: {c.failures} hook runs without the expected context", file=sys.stderr)

    rows: list[list[Any]] = []
    base = ms(inner["off"])[0]
    for name, label in (("off", "check off"), ("warm", "check on, warm cache"), ("cold", "check on, cold cache")):
        p50, p95 = ms(inner[name])
        rows.append([f"`build()` in-process, {label}", fmt(p50, 2), fmt(p95, 2), fmt(p50 / base, 2)])
    cli_ms = {c.name: [x / 1e6 for x in c.samples] for c in cli}
    for name in ("off", "on"):
        p50, p95 = ms(cli_ms[name])
        rows.append([f"`kenning context` worker down, check {name} (cold)", fmt(p50, 1), fmt(p95, 1),
                     fmt(p50 / ms(cli_ms["off"])[0], 2)])
    for name in ("off", "on"):
        p50, p95 = ms(worker[name])
        rows.append([f"SessionStart hook via the worker, check {name} (warm)", fmt(p50, 1), fmt(p95, 1),
                     fmt(p50 / ms(worker["off"])[0], 2)])
    for name in ("off", "on"):
        p50, p95 = ms(api[name])
        rows.append([f"`GET /api/context` alone, check {name} (warm)", fmt(p50, 2), fmt(p95, 2),
                     fmt(p50 / ms(api["off"])[0], 2)])
    worst = max(ms(v)[1] for v in (*cli_ms.values(), *worker.values()))
    body = "\n\n".join([
        "## Evidence check at session start (10k observations, 200 cited files)",
        run_header(command_line()),
        f"{SIZE:,} observations of the project (and {SIZE:,} of another), each citing one of {FILES} files, a "
        f"function in it and a make target; {FILES - PRESENT} cited files missing, every 10th function deleted, "
        f"5 targets gone, one cited file of 3 MB. One cold check of the index read {reads} files, "
        f"{read_bytes / 1e6:.2f} MB in all; the 3 MB file, cited alone, was read to {largest:,} bytes (the cap: "
        f"{ec.READ_CAP:,}) and its function past the cap not judged gone. The index marked {marked} rows.",
        md_table(["what (same run, alternated)", "p50 ms", "p95 ms", "p50 / check off"], rows),
        f"Slowest p95 through a process: {fmt(worst, 1)} ms, against the context hooks' budget of {BUDGET_MS} ms.",
        "Warm: the rows' citations are kept per row, and the last answer is reused while a stat of every cited "
        "file (and Makefile/package.json) is unchanged. Cold: each cited file is opened once and at most the cap "
        "read. The hook's own fallback (worker down) is a fresh process, so its check is always cold; the "
        "worker keeps its answers. The worker records what session starts found gone (for `kenning stale`) on "
        "its own thread once they pause for a second: one write for a burst, none while a hook waits. Each "
        "hook's own SessionStart event, stored by the worker after it answers, makes the next answer read "
        "the selection again, and with it the rows' stamps (one query) and their marks: the hook's end-to-end "
        "difference is larger than the kept answer's (`GET /api/context` alone, asked again and again).",
    ])
    print(body)
    if args.write:
        write_section("evidence_check", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
