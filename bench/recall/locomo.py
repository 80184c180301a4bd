"""LoCoMo (development half) through the real MCP server, keywords only and with embeddings, next to
a plain FTS5 BM25 measured in the same run; then the fusion sweep over the same memories.

    .venv/bin/python bench/recall/locomo.py [--write] [--harness PATH] [--quick]

The data set and the harness live outside the repository (../shared/data/locomo-dev and
../shared/tools/locomo_retrieval.py from the project root; LoCoMo is CC BY-NC 4.0: it is read
from there and nothing of it is copied here: the JSON the harness writes and this report hold ids
and numbers only). Every dialogue turn is saved with the MCP ``save_memory`` tool, every question
asked with ``search_memory`` scoped to its conversation (the harness's README).

* keywords: ``kenning mcp`` with no worker and ``embedding_backend none`` (the MCP server's own
  keyword search);
* hybrid: a real worker with the numpy MiniLM back-end answers the MCP server's searches. A first
  pass saves everything, the worker embeds it (its backlog), and the scored pass runs once every
  vector is present (its saves find each memory stored already: nothing is added).

The sweep then runs the search service in-process on the hybrid pass's database (the same rows,
the same vectors; query vectors computed once) over the fusion knobs of kenning/search/config.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
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

from common import command_line, free_port, md_table, run_header, write_section  # noqa: E402

VECTOR_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.3, 4.0)  # a = w / (1 + w): 0, 0.2, 0.33, 0.5, 0.7, 0.8
VECTOR_DEPTHS = (20, 50, 200)
KEYWORD_DEPTHS = (30, 100, 1000)


def find_harness(given: str | None) -> Path:
    for c in ([Path(given)] if given else []) + [REPO.parent / "shared" / "tools" / "locomo_retrieval.py",
                                                 REPO.parents[1] / "shared" / "tools" / "locomo_retrieval.py"]:
        if c.is_file():
            return c.resolve()
    raise SystemExit("locomo_retrieval.py not found: pass --harness (it lives in ../shared/tools)")


def harness(h: Path, out: Path, system: str, env: dict[str, str], extra: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, str(h), "--system", system, "--out", str(out), *extra]
    if system == "mcp":
        cmd += ["--mcp-cmd", f"{sys.executable} -m kenning mcp", "--save-tool", "save_memory",
                "--search-tool", "search_memory", "--project-arg", "project"]
        cmd += [a for k, v in env.items() if k.startswith("KENNING_") for a in ("--mcp-env", f"{k}={v}")]
    r = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=3600, cwd=str(REPO))
    if r.returncode != 0:
        raise SystemExit(f"harness failed ({' '.join(cmd)}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    data = json.loads(out.read_text())
    return next(iter(data["results"].values()))


def kenning(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kenning", *args], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=120)


def wait_embedded(env: dict[str, str], timeout: float) -> float:
    import httpx

    from kenning.paths import Paths, read_token

    paths = Paths(env["KENNING_DATA_DIR"])
    t0 = time.monotonic()
    with httpx.Client(base_url=f"http://127.0.0.1:{env['KENNING_PORT']}", timeout=30,
                      headers={"Authorization": f"Bearer {read_token(paths)}"}) as c:
        while time.monotonic() - t0 < timeout:
            st = c.get("/api/search/status?fresh=1").json()["embeddings"]
            if st["state"] == "failed":
                raise SystemExit(f"embeddings failed: {st}")
            if st["state"] == "ready" and st["missing"] == 0:
                return time.monotonic() - t0
            time.sleep(1.0)
    raise SystemExit("the worker did not embed every memory in time")


def sweep(h: Path, db: str) -> list[tuple[Any, dict[str, float]]]:
    """service.search over the hybrid database for each setting of the grid."""
    import re

    sys.path.insert(0, str(h.parent))
    import locomo_retrieval as lr  # the harness: its loader and its metrics

    from kenning.search.config import SearchConfig
    from kenning.search.embedders import NumpyMiniLM
    from kenning.search.service import search
    from kenning.search.vectors import VectorIndex
    from kenning.store.db import connect

    tag = re.compile(r"\[(D\d+:\d+)\]")
    qs = [(c.conv_id, q) for c in lr.load_locomo(lr.DEFAULT_DATA) for q in c.questions
          if q.category in (1, 2, 3, 4) and q.evidence]
    emb = NumpyMiniLM()
    emb.load()
    vectors = {q.text.strip()[:2000]: v for (_c, q), v in zip(qs, emb.embed([q.text for _c, q in qs]), strict=True)}
    vi = VectorIndex(db, emb.model, lambda text: vectors.get(text))
    vi.refresh()
    conn = connect(db, readonly=True)
    out = []
    grid = [replace(SearchConfig(), vector_weight=w, vector_depth=vd, keyword_depth=kd)
            for w in VECTOR_WEIGHTS for vd in VECTOR_DEPTHS for kd in KEYWORD_DEPTHS]
    for cfg in grid:
        rows = []
        for conv, q in qs:
            hits = search(conn, q.text, project=conv, limit=10, vectors=vi if cfg.vector_weight > 0 else None,
                          config=cfg)
            keys = [m.group(1) for h_ in hits for m in [tag.search(h_.title)] if m]
            rows.append(lr.score_question(keys, q.evidence, [10]))
        n = len(rows)
        out.append((cfg, {"r10": sum(r["recall@10"] for r in rows) / n, "mrr": sum(r["mrr"] for r in rows) / n,
                          "hit10": sum(r["hit@10"] for r in rows) / n}))
    conn.close()
    vi.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace the LoCoMo section of BENCHMARKS.md")
    ap.add_argument("--harness", help="path of locomo_retrieval.py")
    ap.add_argument("--no-sweep", action="store_true")
    args = ap.parse_args()
    h = find_harness(args.harness)
    t_start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="kenning-locomo-"))
    worker_env: dict[str, str] = {}
    try:
        bm25 = harness(h, tmp / "bm25.json", "bm25", {}, [])
        # Each conversation is a project of its own, saved into from one MCP server: a cross-project write,
        # which the user has to allow (mcp_cross_project_writes).
        kw_env = {"KENNING_DATA_DIR": str(tmp / "kw"), "KENNING_EMBEDDING_BACKEND": "none",
                  "KENNING_PORT": str(free_port()), "KENNING_MCP_CROSS_PROJECT_WRITES": "true"}
        kw = harness(h, tmp / "kw.json", "mcp", kw_env, [])
        worker_env = {"KENNING_DATA_DIR": str(tmp / "hy"), "KENNING_EMBEDDING_BACKEND": "minilm",
                      "KENNING_PORT": str(free_port()), "HF_HUB_OFFLINE": "1",
                      "KENNING_MCP_CROSS_PROJECT_WRITES": "true"}
        (tmp / "hy").mkdir()
        r = kenning(worker_env, "worker", "start", "--wait", "30")
        if r.returncode != 0:
            raise SystemExit(f"worker did not start: {r.stdout}{r.stderr}")
        harness(h, tmp / "hy-fill.json", "mcp", worker_env, ["--limit-questions", "1"])
        embed_s = wait_embedded(worker_env, 1800)
        hy = harness(h, tmp / "hy.json", "mcp", worker_env, [])
        kenning(worker_env, "worker", "stop")
        worker_env = {}
        grid = [] if args.no_sweep else sweep(h, str(tmp / "hy" / "kenning.db"))

        def row(name: str, res: dict[str, Any]) -> list[str]:
            o, lat = res["overall"], res["latency_ms"]
            return [name, f"{o['recall@10']:.3f}", f"{o['mrr']:.3f}", f"{o['hit@10']:.3f}",
                    f"{lat['p50']:.1f}", f"{lat['p95']:.1f}"]

        b = bm25["overall"]
        checks = [
            ("keywords only R@10 ≥ BM25's", kw["overall"]["recall@10"] >= b["recall@10"]),
            ("hybrid R@10 ≥ BM25's + 0.05", hy["overall"]["recall@10"] >= b["recall@10"] + 0.05),
            ("hybrid MRR ≥ BM25's", hy["overall"]["mrr"] >= b["mrr"]),
        ]
        parts = [
            "## LoCoMo, development half, through the MCP server (bench/recall/locomo.py)",
            run_header(command_line()),
            "Data: LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753; CC BY-NC 4.0), the development half "
            f"(5 conversations, {hy['n_questions']} scored questions of categories 1-4), read from ../shared; "
            "harness ../shared/tools/locomo_retrieval.py. Each turn saved with `save_memory`, each question "
            "asked with `search_memory` scoped to its conversation; latency is the client's (JSON-RPC over "
            f"stdio included). Hybrid: a worker with the numpy MiniLM back-end; every vector present "
            f"({embed_s:.0f} s of background embedding after the saves).",
            md_table(["system", "recall@10", "MRR", "hit@10", "p50 ms", "p95 ms"],
                     [row("plain FTS5 BM25 (harness, same run)", bm25), row("Kenning, keywords only", kw),
                      row("Kenning, keywords + meaning (MiniLM)", hy)]),
            md_table(["target", "result"], [[name, "PASS" if ok else "FAIL"] for name, ok in checks]),
        ]
        if grid:
            grid.sort(key=lambda g: (-g[1]["r10"], -g[1]["mrr"]))
            parts.append("Fusion sweep on the same memories (in-process `search()`; score = (1 - a) · BM25 / best "
                         "BM25 · coverage² + a · cosine, a = w_vec / (w_fts + w_vec) with w_fts 1.0, coverage = the "
                         "share of the query's IDF a row holds; vector depth = nearest rows added; keyword depth = "
                         "best keyword rows fused), best first, then every vector weight at the default depths:")
            parts.append(md_table(["w_vec", "vector depth", "keyword depth", "recall@10", "MRR", "hit@10"],
                                  [[f"{c.vector_weight}", str(c.vector_depth), str(c.keyword_depth),
                                    f"{r['r10']:.3f}", f"{r['mrr']:.3f}", f"{r['hit10']:.3f}"]
                                   for c, r in grid[:8]]))
            from kenning.search.config import DEFAULT as d

            parts.append(md_table(["w_vec (depths 50 / 100)", "recall@10", "MRR"],
                                  [[f"{c.vector_weight}", f"{r['r10']:.3f}", f"{r['mrr']:.3f}"]
                                   for c, r in sorted(grid, key=lambda g: g[0].vector_weight)
                                   if c.vector_depth == d.vector_depth and c.keyword_depth == d.keyword_depth]))
        parts.append(f"Wall time {time.monotonic() - t_start:.0f} s.")
        body = "\n\n".join(parts)
        print(body)
        if args.write:
            write_section("locomo", body)
        return 0 if all(ok for _n, ok in checks) else 1
    finally:
        if worker_env:
            kenning(worker_env, "worker", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
