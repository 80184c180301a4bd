"""Words inside CJK text (kenning/search/cjk.py, migration 0026): what it costs English search,
writes and an upgrade, measured against the revision before it in the same run; and how fast a
CJK word is found.

    .venv/bin/python bench/search_cjk.py [--before REF] [--sizes 10000,100000] [--queries N] [--write]

1. **English keyword search, paired.** Each revision (this checkout and ``--before``, default the
   merge base with main) builds bench/search.py's corpus (same seed, its own migrations) in its
   own process; the same queries (bench/search.py's five shapes, scoped and unscoped) go to both,
   alternating which goes first, warm (caches kept) then cold (term-statistics caches emptied
   before each query). Also counted: queries whose result lists (kind, id, in order) differ.
2. **Writes.** Inserting observations (20 per transaction, every trigger included) into a fresh
   database, both revisions, rounds interleaved: English ASCII text, English with non-ASCII
   punctuation (— →), Chinese (~600 characters a row).
3. **Upgrade.** Migration 0026 on the largest database built by the revision before (English), and
   with 50 Chinese rows added to it (then the term statistics are recounted).
4. **Prompt context, paired.** ``prompt.build`` in each revision's process as the worker's route runs
   it (pooled connections, the search runtime, default settings, a new agent session each time)
   over bench/context_hooks.py's corpus (the project and another as large, notes about specific
   functions) and its prompts, keywords only, each prompt three times on each side, alternating;
   whether the memories given differ.
5. **CJK words.** A corpus of Chinese rows (the same shape as bench/search.py's, words drawn from a
   Zipf list of 2-4 character words, loaded in bulk): search for a word of 1-4 characters, and a
   word plus an English one.
6. **Opening the database.** A fresh read-only connection and one query on each revision's
   database, alternately (SQLite parses the whole schema then: what the Read hook pays first).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for p in (str(REPO), str(REPO / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from common import command_line, extract, fmt, md_table, merge_base, percentile, run_header, write_section  # noqa: E402

PY = sys.executable
PROMPT_ROUNDS = 3  # each prompt this many times on each side, alternating
SHAPES = ("rare word", "common words", "mixed words", "identifier/path", "prompt (12-20 words)")
ZH_CHARS = ("数据库迁移服务器上线回归测试缓存失效接口超时重启配置环境依赖部署发布日志错误权限用户订单支付"
            "索引查询性能优化版本分支合并提交代码审查文档脚本任务队列消息通知认证令牌会话密钥证书网络")


# ---------------------------------------------------------------------------- side processes

WORKER = r'''
import json, sys, time
tree, n, db, nq = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sys.path.insert(0, tree)
import kenning.search.service, kenning.store.db  # this revision's package, before bench/search.py's path
from kenning.search import bm25, plan
from kenning.search.service import search
from kenning.store.db import connect
sys.path.insert(0, sys.argv[5])
import search as corpus
info = corpus.build(db, n)
qs = corpus.queries(info.pop("vocab"), nq)
conn = connect(db, readonly=True)
for _s, q in qs[:10]:
    search(conn, q)
print(json.dumps({"qs": qs, "build_s": info["build_s"]}), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    if r.get("quit"):
        break
    if r["cold"]:
        plan.clear_cache(); bm25.clear_cache()
    t0 = time.perf_counter_ns()
    hits = search(conn, qs[r["i"]][1], project=r["project"], limit=20)
    print(json.dumps({"ns": time.perf_counter_ns() - t0, "ids": [[h.kind, h.id] for h in hits]}), flush=True)
'''

PROMPT_WORKER = r'''
import json, os, sys, time
tree, n, data = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, tree)
import kenning.context.prompt, kenning.search.runtime, kenning.store.db  # this revision's package first
from kenning.context import prompt
from kenning.paths import Paths
from kenning.search.runtime import SearchRuntime
from kenning.settings import Settings
from kenning.store.db import ReadPool
sys.path.insert(0, sys.argv[4])
from common import populate
import context_hooks as ch
os.makedirs(data, mode=0o700, exist_ok=True)
paths = Paths(data)
populate(paths.db, {"bench-project": n, "other-project": n}, seed=5)
names = ch.add_specific(paths.db, "bench-project", max(20, int(n * ch.SPECIFIC_SHARE)))
texts = ch.prompts(int(sys.argv[5]), names)
settings = Settings()
pool = ReadPool(paths.db)  # as the worker's route: pooled connections, the search runtime, the settings
runtime = SearchRuntime(paths, settings, background=False, pool=pool)
given = prompt.Given()
def keywords(query, **kw):
    return list(runtime.search(query, vectors=None, **kw))
def build(i, r):
    with pool.connection() as conn:
        return prompt.build(conn, texts[i], "bench-project", keyword_search=keywords, limit=5, min_relevance=0.6,
                            min_similarity=0.5, agent_session_id=f"s{i}-{r}", start_count=settings.context_observations,
                            given=given, icons={}, weights=(1.0, 0.5, 60), meaning=prompt.Meaning(None, 0.08),
                            settings=settings)[1]
for i in range(10):
    build(i, -1)
print(json.dumps({"n": len(texts)}), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    if r.get("quit"):
        break
    t0 = time.perf_counter_ns()
    picks = build(r["i"], r["r"])
    print(json.dumps({"ns": time.perf_counter_ns() - t0, "ids": [p.hit.id for p in picks]}), flush=True)
'''

INSERT = r'''
import json, os, random, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from kenning.store.db import open_db
kind, n = sys.argv[2], int(sys.argv[3])
words = "worker spool commit retries migration index search token project session observer cache timezone".split()
zh = sys.argv[4]
def text(rng, size):
    if kind == "chinese":
        return "".join(rng.choice(zh) for _ in range(size // 2))
    s = " ".join(rng.choice(words) for _ in range(size // 7))
    return s.replace(" spool ", " spool — ").replace(" cache ", " cache → ") if kind == "punctuation" else s
c = open_db(os.path.join(tempfile.mkdtemp(), "k.db"))
c.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (1, 's1', 'p', 1.0)")
rng = random.Random(1)
rows = [(text(rng, 60), text(rng, 100), text(rng, 900), json.dumps([text(rng, 120)]), f"h{i}") for i in range(n)]
t = time.perf_counter()
for b in range(0, n, 20):
    c.execute("BEGIN IMMEDIATE")
    c.executemany("INSERT INTO observations (session_id, project, type, title, subtitle, narrative, facts, created_at, "
                  "recorded_at, content_hash) VALUES (1, 'p', 'change', ?, ?, ?, ?, 1.0, 1.0, ?)", rows[b:b + 20])
    c.execute("COMMIT")
print((time.perf_counter() - t) / n * 1e6)
'''

MIGRATE = r'''
import sqlite3, sys, time
sys.path.insert(0, sys.argv[1])
from kenning.store.db import connect, migrate
db, zh = sys.argv[2], int(sys.argv[3])
if zh:
    c = sqlite3.connect(db)
    sid = c.execute("SELECT MAX(id) FROM sessions").fetchone()[0]
    for i in range(zh):
        c.execute("INSERT INTO observations (session_id, project, type, title, narrative, facts, created_at, "
                  "recorded_at, content_hash) VALUES (?, 'proj-a', 'change', ?, ?, '[]', 1.0, 1.0, ?)",
                  (sid, f"第{i}次把数据库迁移到了新的服务器", "周五上线之前要跑完整的回归测试", f"zh{i}"))
    c.commit()
    c.close()
c = connect(db)
t = time.monotonic()
applied = migrate(c)
print(time.monotonic() - t, applied)
'''


def paired(trees: dict[str, str], n: int, nq: int, root: Path) -> dict[str, Any]:
    procs = {name: subprocess.Popen([PY, "-c", WORKER, tree, str(n), str(root / f"{name}-{n}.db"), str(nq),
                                     str(REPO / "bench")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    text=True)
             for name, tree in trees.items()}
    ready = {k: json.loads(p.stdout.readline()) for k, p in procs.items()}  # type: ignore[union-attr]
    qs = ready["after"]["qs"]
    assert qs == ready["before"]["qs"]
    times: dict[tuple[str, bool], list[float]] = {}
    shape_times: dict[tuple[str, bool, str], list[float]] = {}
    differ = 0
    for cold in (False, True):
        for i, (shape, _q) in enumerate(qs):
            for project in ("proj-a", None):
                order = ("before", "after") if (i + (project is None)) % 2 == 0 else ("after", "before")
                got = {}
                for k in order:
                    p = procs[k]
                    p.stdin.write(json.dumps({"i": i, "project": project, "cold": cold}) + "\n")  # type: ignore[union-attr]
                    p.stdin.flush()  # type: ignore[union-attr]
                    got[k] = json.loads(p.stdout.readline())  # type: ignore[union-attr]
                    times.setdefault((k, cold), []).append(got[k]["ns"] / 1e6)
                    shape_times.setdefault((k, cold, shape), []).append(got[k]["ns"] / 1e6)
                differ += not cold and got["before"]["ids"] != got["after"]["ids"]
    for p in procs.values():
        p.stdin.write('{"quit": true}\n')  # type: ignore[union-attr]
        p.stdin.flush()  # type: ignore[union-attr]
        p.wait()
    return {"n": n, "queries": 2 * len(qs), "differ": differ, "times": times, "shapes": shape_times,
            "build": {k: v["build_s"] for k, v in ready.items()}}


def opening(dbs: dict[str, Path], rounds: int = 2000) -> dict[str, list[float]]:
    """A fresh read-only connection and one query, on each revision's database, alternately: what a
    hook reading SQLite itself pays first (SQLite parses the whole schema on a new connection)."""
    import sqlite3

    out: dict[str, list[float]] = {k: [] for k in dbs}
    for i in range(rounds):
        for k in (list(dbs) if i % 2 == 0 else list(reversed(list(dbs)))):
            t = time.perf_counter_ns()
            conn = sqlite3.connect(f"file:{dbs[k]}?mode=ro", uri=True)
            conn.execute("SELECT id FROM observations WHERE id = 1").fetchone()
            conn.close()
            out[k].append((time.perf_counter_ns() - t) / 1e6)
    return out


def schema_bytes(db: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT SUM(length(sql)) FROM sqlite_master").fetchone()[0])
    finally:
        conn.close()


def paired_prompts(trees: dict[str, str], n: int, nq: int, root: Path) -> dict[str, Any]:
    """prompt.build (keywords only) of bench/context_hooks.py's prompts over its corpus, alternately."""
    procs = {name: subprocess.Popen([PY, "-c", PROMPT_WORKER, tree, str(n), str(root / f"p-{name}-{n}"),
                                     str(REPO / "bench"), str(nq)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    text=True)
             for name, tree in trees.items()}
    counts = {k: json.loads(p.stdout.readline())["n"] for k, p in procs.items()}  # type: ignore[union-attr]
    times: dict[str, list[float]] = {"before": [], "after": []}
    best: dict[str, list[float]] = {"before": [], "after": []}  # per prompt, the fastest of ROUNDS
    differ = given = 0
    for i in range(min(counts.values())):
        got: dict[str, Any] = {}
        runs: dict[str, list[float]] = {"before": [], "after": []}
        for r in range(PROMPT_ROUNDS):
            for k in (("before", "after") if (i + r) % 2 == 0 else ("after", "before")):
                p = procs[k]
                p.stdin.write(json.dumps({"i": i, "r": r}) + "\n")  # type: ignore[union-attr]
                p.stdin.flush()  # type: ignore[union-attr]
                got[k] = json.loads(p.stdout.readline())  # type: ignore[union-attr]
                runs[k].append(got[k]["ns"] / 1e6)
        for k in runs:
            times[k] += runs[k]
            best[k].append(min(runs[k]))
        differ += got["before"]["ids"] != got["after"]["ids"]
        given += bool(got["after"]["ids"])
    for p in procs.values():
        p.stdin.write('{"quit": true}\n')  # type: ignore[union-attr]
        p.stdin.flush()  # type: ignore[union-attr]
        p.wait()
    return {"times": times, "best": best, "differ": differ, "given": given, "n": min(counts.values())}


def inserts(trees: dict[str, str], rounds: int, rows: int) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = {}
    for r in range(rounds):
        for kind in ("english", "punctuation", "chinese"):
            order = list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                res = subprocess.run([PY, "-c", INSERT, tree, kind, str(rows), ZH_CHARS], capture_output=True,
                                     text=True, check=True)
                out.setdefault((name, kind), []).append(float(res.stdout))
    return out


def upgrade(trees: dict[str, str], n: int, root: Path) -> list[tuple[str, float]]:
    build = (f"import sys; sys.path.insert(0, {trees['before']!r}); import kenning.store.db; "
             f"sys.path.insert(0, {str(REPO / 'bench')!r}); import search; search.build({str(root / 'old.db')!r}, {n})")
    subprocess.run([PY, "-c", build], check=True, capture_output=True)
    out = []
    for label, zh in (("English only", 0), ("with 50 Chinese rows", 50)):
        db = root / f"old-{zh}.db"
        shutil.copy(root / "old.db", db)
        res = subprocess.run([PY, "-c", MIGRATE, trees["after"], str(db), str(zh)], capture_output=True, text=True,
                             check=True)
        out.append((label, float(res.stdout.split()[0])))
    return out


def cjk_queries(n: int, nq: int, root: Path) -> dict[str, Any]:
    from kenning.search import cjk, terms
    from kenning.search.service import search
    from kenning.store.db import connect, open_db

    rng = random.Random(3)
    vocab: list[str] = []
    while len(vocab) < 3000:
        w = "".join(rng.choice(ZH_CHARS) for _ in range(rng.choice((2, 2, 2, 3, 4))))
        if w not in vocab:
            vocab.append(w)
    weights = [1.0 / (i + 1) ** 1.05 for i in range(len(vocab))]

    def sentence(k: int) -> str:
        return "".join(rng.choices(vocab, weights, k=k))

    db = str(root / f"zh-{n}.db")
    conn = open_db(db)
    conn.execute("BEGIN IMMEDIATE")
    sql = [conn.execute("SELECT sql FROM sqlite_master WHERE name = 'observations_ai'").fetchone()[0]]
    conn.execute("DROP TRIGGER observations_ai")  # bulk load: the CJK rows, the index and statistics once
    conn.executemany("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (?, ?, 'zh', 1.0)",
                     [(s, f"s{s}") for s in range(1, n // 20 + 2)])
    conn.executemany("INSERT INTO observations (session_id, project, type, title, narrative, facts, created_at, "
                     "recorded_at, content_hash) VALUES (?, 'zh', 'change', ?, ?, '[]', ?, ?, ?)",
                     [(1 + i // 20, sentence(4) + "，" + sentence(2), "，".join(sentence(5) for _ in range(8)) + "。",
                       float(i), float(i), f"z{i}") for i in range(n)])
    t0 = time.monotonic()
    cjk.refill(conn)
    conn.execute("INSERT INTO observations_fts (observations_fts) VALUES ('rebuild')")
    terms.refill(conn)
    index_s = time.monotonic() - t0
    for s in sql:
        conn.execute(s)
    conn.execute("COMMIT")
    conn.close()
    conn = connect(db, readonly=True)
    qrng = random.Random(5)
    kinds = {"1 character": lambda: qrng.choice(ZH_CHARS),
             "a 2-4 character word": lambda: vocab[qrng.randint(50, 2999)],
             "a common word": lambda: vocab[qrng.randint(0, 20)],
             "a word + an English word": lambda: vocab[qrng.randint(50, 2999)] + " timeout"}
    out: dict[str, Any] = {"index_s": index_s}
    for label, make in kinds.items():
        qs = [make() for _ in range(nq)]
        for q in qs[:5]:
            search(conn, q)
        samples, found = [], 0
        for q in qs:
            t = time.perf_counter_ns()
            hits = search(conn, q, project="zh", limit=20)
            samples.append((time.perf_counter_ns() - t) / 1e6)
            found += bool(hits)
        out[label] = {"p50": percentile(samples, 50), "p95": percentile(samples, 95), "found": found, "n": len(qs)}
    conn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="the revision to compare with (default: the merge base with main)")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=300, help="queries per size and side (x2 scopes)")
    ap.add_argument("--prompts", type=int, default=300, help="prompts per size for the prompt context")
    ap.add_argument("--insert-rounds", type=int, default=4)
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    root = Path(tempfile.mkdtemp(prefix="kenning-bench-cjk-"))
    before = args.before or merge_base()
    trees = {"before": str(extract(before, root / "tree")), "after": str(REPO)}
    parts = ["## Words inside CJK text: cost and speed (bench/search_cjk.py)", run_header(command_line()),
             __doc__.split("\n\n", 1)[1].strip(), f"Before: `{before[:10]}`; after: this checkout."]
    try:
        rows = []
        for n in sizes:
            r = paired(trees, n, args.queries, root)
            for cold in (False, True):
                b, a = r["times"][("before", cold)], r["times"][("after", cold)]
                rows.append([f"{n:,}", "cold" if cold else "warm", r["queries"],
                             f"{fmt(percentile(b, 50), 2)} / {fmt(percentile(b, 95), 2)}",
                             f"{fmt(percentile(a, 50), 2)} / {fmt(percentile(a, 95), 2)}",
                             f"{statistics.mean(a) / statistics.mean(b):.3f}", r["differ"] if not cold else "–"])
            shape_rows = [[s] + [f"{fmt(percentile(r['shapes'][(k, False, s)], 50), 2)} / "
                                 f"{fmt(percentile(r['shapes'][(k, False, s)], 95), 2)}" for k in ("before", "after")]
                          for s in SHAPES]
            parts.append(f"### English keyword search at {n:,} observations, per query shape (warm, p50 / p95 ms)\n\n"
                         + md_table(["shape", "before", "after"], shape_rows))
        dbs = {k: root / f"{k}-{sizes[0]}.db" for k in trees}
        op = opening(dbs)
        parts.append("### Opening the database: a fresh read-only connection and one query, alternately\n\n"
                     + md_table(["", "schema (bytes of SQL)", "p50 ms", "p90 ms"],
                                [[k, f"{schema_bytes(dbs[k]):,}", fmt(percentile(op[k], 50), 3),
                                  fmt(percentile(op[k], 90), 3)] for k in ("before", "after")]))
        parts.insert(4, "### English keyword search, paired\n\n" + md_table(
            ["observations", "caches", "queries", "before p50 / p95 ms", "after p50 / p95 ms", "mean after / before",
             "result lists that differ"], rows))
        prow = []
        for n in sizes:
            pr = paired_prompts(trees, n, args.prompts, root)
            b, a = pr["times"]["before"], pr["times"]["after"]
            prow.append([f"{n:,}", pr["n"], f"{fmt(percentile(b, 50), 2)} / {fmt(percentile(b, 95), 2)}",
                         f"{fmt(percentile(a, 50), 2)} / {fmt(percentile(a, 95), 2)}",
                         f"{statistics.mean(a) / statistics.mean(b):.3f}",
                         f"{sum(pr['best']['after']) / sum(pr['best']['before']):.3f}", pr["given"], pr["differ"]])
        parts.append("### Prompt context, paired: `prompt.build` in the worker (keywords only), "
                     "bench/context_hooks.py's corpus and prompts\n\n" + md_table(
                         ["observations in the project", "prompts", "before p50 / p95 ms", "after p50 / p95 ms",
                          "mean after / before", f"fastest of {PROMPT_ROUNDS}, summed: after / before",
                          "prompts given memories (after)", "prompts whose picks differ"],
                         prow))
        ins = inserts(trees, args.insert_rounds, 400)
        parts.append("### Writes: µs per observation inserted (median of rounds)\n\n" + md_table(
            ["text", "before", "after", "after / before"],
            [[k, fmt(statistics.median(ins[("before", k)]), 0), fmt(statistics.median(ins[("after", k)]), 0),
              f"{statistics.median(ins[('after', k)]) / statistics.median(ins[('before', k)]):.2f}"]
             for k in ("english", "punctuation", "chinese")]))
        up = upgrade(trees, sizes[-1], root)
        parts.append(f"### Upgrade: migration 0026 on a {sizes[-1]:,}-observation database of the revision before\n\n"
                     + md_table(["database", "seconds"], [[label, fmt(s, 1)] for label, s in up]))
        zh = cjk_queries(sizes[0], 100, root)
        took = zh.pop("index_s")
        parts.append(f"### CJK words at {sizes[0]:,} Chinese observations (indexed in bulk in {took:.1f} s)\n\n"
                     + md_table(["query", "p50 ms", "p95 ms", "found"],
                                [[k, fmt(v["p50"], 2), fmt(v["p95"], 2), f"{v['found']} of {v['n']}"]
                                 for k, v in zh.items()]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    body = "\n\n".join(parts)
    print(body)
    if args.write:
        write_section("search-cjk", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
