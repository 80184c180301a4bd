"""Kept term statistics (migration 0022): the same rankings as counted statistics, id by id.

    .venv/bin/python bench/search_terms.py [--write] [--sizes 10000,100000] [--before REF]

On bench/search.py's databases (same builder, same 300 queries, each scoped to the big project,
to the small one and unscoped: the top 20 of ``search()`` at a fixed ``now``, every statistics
cache cleared before each query), three rankings are compared id by id, score by score:

* this tree (one-token terms' frequencies looked up in ``search_terms``);
* the reference: the ``--before`` tree (default: the merge base with main) with every statistic
  of a one-token term *counted* exactly (its rows in the index and in the scope by ``COUNT(*)``
  over FTS5, its plan frequency too), prefixes and phrases estimated as before: the ranking the
  bm25 docstring describes, with exact statistics;
* the ``--before`` tree as it is (estimates past 20,000 rows: the newest 5,000 rows, a sample
  of 100 postings for the share in the scope).

This tree must equal the reference on every query; how many differ from the before tree is
reported. Also: the size of ``search_terms`` and the time to fill it (the migration's refill).
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCOPES = ("proj-a", "proj-c", None)


def child(tree: str, mode: str, db: str, out: str) -> None:
    """Rankings of every query with the ``kenning`` package under ``tree`` (run in its own process)."""
    sys.path.insert(0, tree)
    import kenning

    assert kenning.__file__ and kenning.__file__.startswith(tree), kenning.__file__
    from kenning.search import bm25, plan
    from kenning.search.service import search
    from kenning.store.db import connect

    conn = connect(db, readonly=True)
    if mode == "reference":
        _count_exactly(conn, bm25, plan)
    now = float(conn.execute("SELECT MAX(created_at) FROM observations").fetchone()[0]) + 3600
    qs = pickle.loads(Path(db + ".queries").read_bytes())
    res = []
    for _shape, q in qs:
        for project in SCOPES:
            plan.clear_cache()
            bm25.clear_cache()
            hits = search(conn, q, project=project, limit=20, now=now)
            res.append([[h.kind, h.id, h.score, h.match] for h in hits])
    Path(out).write_text(json.dumps(res))


def _count_exactly(conn: Any, bm25: Any, plan: Any) -> None:
    """Patch the before tree: a one-token term's statistics counted, not estimated."""
    conn.execute("CREATE VIRTUAL TABLE temp.tok USING fts5 (t, content = '', tokenize = 'porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE temp.tok_v USING fts5vocab (temp, tok, 'instance')")
    memo: dict[str, bool] = {}

    def one_token(_conn: Any, t: Any) -> bool:
        if t.prefix:
            return False
        if t.text not in memo:
            conn.execute("INSERT INTO temp.tok (tok) VALUES ('delete-all')")
            conn.execute("INSERT INTO temp.tok (rowid, t) VALUES (1, ?)", (t.text,))
            memo[t.text] = conn.execute("SELECT COUNT(*) FROM temp.tok_v").fetchone()[0] == 1
        return memo[t.text]

    def rows(c: Any, fts: str, t: Any) -> int:
        return int(c.execute(f"SELECT COUNT(*) FROM {fts} WHERE {fts} MATCH ?", (t.phrase(),)).fetchone()[0])

    def in_project(c: Any, kind: str, t: Any, project: str) -> int:
        s = bm25.SOURCES[kind]
        return int(c.execute(f"SELECT COUNT(*) FROM {s.fts} CROSS JOIN {s.table} {s.alias} ON {s.alias}.id = "
                             f"{s.fts}.rowid {s.joins} WHERE {s.fts} MATCH ? AND {s.project} = ?",
                             (t.phrase(), project)).fetchone()[0])

    frequency, share, measure = bm25._frequency, bm25._in_scope, plan._measure

    def freq(c: Any, kind: str, t: Any, *a: Any, **k: Any) -> int:
        return rows(c, bm25.SOURCES[kind].fts, t) if one_token(c, t) else int(frequency(c, kind, t, *a, **k))

    def scope(c: Any, kind: str, t: Any, project: str | None, n_all: int, *a: Any, **k: Any) -> int:
        if not project:
            return n_all
        return in_project(c, kind, t, project) if one_token(c, t) else int(share(c, kind, t, project, n_all, *a, **k))

    def planned(c: Any, fts: str, t: Any, n_rows: int) -> Any:
        if not one_token(c, t):
            return measure(c, fts, t, n_rows)
        df = rows(c, fts, t)
        return plan.Estimate(df, n_rows >= plan.MIN_ROWS and df >= plan.UNIVERSAL_SHARE * n_rows)

    bm25._frequency, bm25._in_scope, plan._measure = freq, scope, planned
    # The before tree spreads a common term beyond the MAX_COMMON rarest evenly over the projects
    # (it only widens a bound there); counted exactly, every one gets its share in the scope.
    src = Path(bm25.__file__).read_text()
    marker = "if i < max_common\n"
    assert src.count(marker) == 1, "the before tree's bm25.rank changed: update the reference"
    mod = types.ModuleType("bm25_reference")
    mod.__file__ = bm25.__file__
    sys.modules[mod.__name__] = mod  # its dataclasses look themselves up there
    ns = mod.__dict__
    exec(compile(src.replace(marker, "if i < max_common or _one_token(conn, t)\n"), bm25.__file__, "exec"), ns)
    ns.update(_one_token=one_token, _frequency=freq, _in_scope=scope, _cache=bm25._cache)  # one cache: cleared
    bm25.rank = ns["rank"]


def compare(a: list[Any], b: list[Any]) -> tuple[int, int]:
    """(queries with the same ids in the same order, of which also the same scores and tiers)."""
    same = exact = 0
    for x, y in zip(a, b, strict=True):
        if [h[:2] for h in x] == [h[:2] for h in y]:
            same += 1
            exact += all(abs(p[2] - q[2]) <= 1e-9 * max(1.0, abs(p[2])) and p[3] == q[3]
                         for p, q in zip(x, y, strict=True))
    return same, exact


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=4, metavar=("TREE", "MODE", "DB", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--before", default="", help="the tree to compare with (default: the merge base with main)")
    ap.add_argument("--write", action="store_true", help="replace this section of BENCHMARKS.md")
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    sys.path.insert(0, str(HERE))
    import search as bench_search
    from common import REPO, command_line, extract, md_table, merge_base, run_header, temp_root, write_section

    from kenning.store.db import connect

    t_start = time.monotonic()
    root = temp_root("kenning-bench-terms-")
    before = args.before or merge_base()
    old = str(extract(before, root / "before"))
    rows = []
    notes = []
    ok = True
    for n in [int(s) for s in args.sizes.split(",") if s]:
        db = str(root / f"terms-{n}.db")
        info = bench_search.build(db, n)
        qs = bench_search.queries(info.pop("vocab"), 300)
        Path(db + ".queries").write_bytes(pickle.dumps(qs))
        conn = connect(db)
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        from kenning.search import terms

        kept = terms.refill(conn)
        conn.execute("COMMIT")
        refill_s = time.perf_counter() - t0
        size = int(conn.execute("SELECT SUM(pgsize) FROM dbstat WHERE name = 'search_terms'").fetchone()[0] or 0)
        total = int(conn.execute("PRAGMA page_count").fetchone()[0]) * int(conn.execute("PRAGMA page_size")
                                                                            .fetchone()[0])
        conn.close()
        out = {}
        for name, tree, mode in (("this tree", str(REPO), "plain"), ("reference", old, "reference"),
                                 ("before", old, "plain")):
            path = str(root / f"{n}-{mode}-{name[:4]}.json")
            subprocess.run([sys.executable, __file__, "--child", tree, mode, db, path], check=True)
            out[name] = json.loads(Path(path).read_text())
        ref_same, ref_exact = compare(out["this tree"], out["reference"])
        old_same, old_exact = compare(out["this tree"], out["before"])
        total_q = len(out["this tree"])
        ok = ok and ref_exact == total_q
        rows.append([f"{n:,}", str(total_q), f"{ref_same} / {ref_exact}", f"{old_same} / {old_exact}",
                     f"{kept:,}", f"{size / 1e6:.1f} ({100 * size / total:.1f}% of {total / 1e6:.0f} MB)",
                     f"{refill_s:.1f}"])
    notes.append(f"Before tree: {before[:10]}. Wall time {time.monotonic() - t_start:.0f} s. "
                 + ("This tree equals the reference on every query." if ok else
                    "**This tree differs from the reference on some queries.**"))
    body = "\n\n".join([
        "## Kept term statistics: rankings (bench/search_terms.py)", run_header(command_line()),
        __doc__.split("\n\n", 2)[2].strip(),
        md_table(["observations", "queries", "same ids as the reference / also same scores",
                  "same ids as the before tree / also same scores", "search_terms rows",
                  "search_terms MB", "refill s"], rows),
        *notes])
    print(body)
    if args.write:
        write_section("search_terms", body)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
