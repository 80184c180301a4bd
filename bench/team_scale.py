"""Team memory at scale: N simulated developers, 2,000 memories each, on one real PostgreSQL server.

    .venv/bin/python bench/team_scale.py [--full 3,6,10] [--hub 50,200] [--memories 2000] [--procs 2] [--write]

**Full path** (``--full``): each developer is a data dir of its own (its SQLite store, ``team.json``, credential
and a member role on the hub), its memories saved through the memory service; the sync is the worker's own
code (``kenning.team.sync``: push batch after batch, then pull by cursor, storing each pulled memory through
the memory service). Developers are spread over ``--procs`` processes that run sync rounds back to back
(the worker waits ``team_sync_seconds`` between rounds; here none) until every machine holds every other
developer's memories. The team approves automatically (a reviewer approving 100,000 memories is not what is
measured). Push p95: one batch (≤ 200 memories) from reading the store to the hub's acknowledgement. Pull
p95: one batch (≤ 200) from the hub's answer to the memories stored. Then a fresh machine joins with a real
worker process (``kenning worker start``, sync every second): its catch-up time and RSS.

**Hub side** (``--hub``): the same operations (as ``sync.push`` builds them, one member role per developer)
sent through ``kenning.team.hub.push`` without local stores, then pulled whole through ``hub.pull``: the
hub's size and its batch times at 50 and 200 developers. Every machine storing every memory costs what the
full path measured per row; that part is extrapolated, and said so.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import (
    PYTHON,
    command_line,
    fmt,
    free_port,
    load_avg,
    md_table,
    percentile,
    run_header,
    temp_root,
    write_section,
)

from tests.support import postgres
from tests.support.team_rules import rules

REMOTE = "git@example.com:acme/shop.git"
TEAM = "scale"


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def hub_sizes(srv: postgres.Server) -> dict[str, int]:
    with srv.connect() as conn:
        out = {"database": int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])}
        for t in ("ops", "memories", "audit"):
            out[t] = int(conn.execute("SELECT pg_total_relation_size(%s)", (f"kenning.{t}",)).fetchone()[0])
    return out


def make_team(srv: postgres.Server, n: int) -> dict[str, str]:
    from kenning.team import hub

    with srv.connect() as conn:
        return hub.init(conn, TEAM, auto_approve=True, members=[f"dev{i:03d}" for i in range(n)])


# ------------------------------------------------------------------------------------------- the full path

def make_dev(root: Path, i: int, srv: postgres.Server, password: str, memories: int) -> str:
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.paths import Paths
    from kenning.project import find_root, git_remote, project_key
    from kenning.store.db import open_db
    from kenning.team import config

    home = root / f"dev{i:03d}"
    project = home / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE}\n')
    paths = Paths(str(home / "data"))
    paths.ensure()
    name, proot = find_root(str(project))
    remote = git_remote(proot)
    conn = open_db(paths.db)
    try:
        door = MemoryService(conn, "team")
        key = door.team_joined(TEAM, project_key(proot, name), name=name, root=proot, remote=remote)
        saver = MemoryService(conn, "cli")
        todo = rules(memories, seed=i, who=f"d{i}-")
        for k in range(0, len(todo), 200):
            with saver.batch():
                for title, text in todo[k:k + 200]:
                    saver.save(ObservationDraft(type="decision", title=title, narrative=text, created_at=time.time(),
                                                kind="rule"), project=key)
    finally:
        conn.close()
    config.save(paths, config.TeamConfig(dsn=srv.dsn(f"dev{i:03d}"), team=TEAM, user=f"dev{i:03d}",
                                         device=config.new_device(), projects={remote: key}), password)
    return paths.root


def _pulled(db: str) -> int:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM team_links WHERE origin = 'hub'").fetchone()[0])
    finally:
        conn.close()


def sync_worker(roots: list[str], want: int, memories: int, out: Any) -> None:
    """One process of the simulation: rounds over its developers until each holds ``want`` pulled memories."""
    from kenning.paths import Paths
    from kenning.store.db import open_db
    from kenning.team import config, hub, sync

    pushes: list[float] = []
    pulls: list[float] = []
    real_pull = hub.pull
    marks: list[tuple[float, int]] = []  # (when a batch was asked for, how many memories it brought)
    stored = 0

    def timed_pull(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        rows = real_pull(*a, **kw)
        marks.append((t, len(rows)))
        return rows

    hub.pull = timed_pull  # type: ignore[assignment]
    done: dict[str, float] = {}
    rounds = 0
    start = time.perf_counter()
    while len(done) < len(roots) and time.perf_counter() - start < 3600:
        rounds += 1
        moved = 0
        for root in roots:
            if root in done:
                continue
            paths = Paths(root)
            cfg = config.load(paths)
            assert cfg is not None
            conn = open_db(paths.db)
            hubconn = hub.connect(cfg.dsn, config.password(paths, cfg.team))
            try:
                report = sync.Report()
                while True:
                    t0 = time.perf_counter()
                    sent = sync.push(conn, hubconn, cfg, report)
                    if sent:
                        pushes.append(time.perf_counter() - t0)
                    if sent < sync.PUSH_BATCH:
                        break
                marks.clear()
                sync.pull(conn, hubconn, cfg, paths.db, report)
                moved += report.pushed + report.pulled
                end = time.perf_counter()  # a batch: from asking the hub to the next ask (its rows stored)
                pulls += [b - a for (a, k), (b, _) in zip(marks, [*marks[1:], (end, 0)], strict=True) if k]
                stored += sum(k for _, k in marks)
            finally:
                hubconn.close()
                conn.close()
            if _pulled(paths.db) >= want:
                done[root] = time.perf_counter() - start
        if not moved:  # the others have not pushed yet: wait as a worker would (a shorter while)
            time.sleep(0.5)
    out.put(("result", {"push": pushes, "pull": pulls, "done": done, "rounds": rounds, "stored": stored}))


def full(srv: postgres.Server, root: Path, n: int, memories: int, procs: int) -> dict[str, Any]:
    made = make_team(srv, n)
    t0 = time.perf_counter()
    roots = [make_dev(root, i, srv, made[f"dev{i:03d}"], memories) for i in range(n)]
    setup = time.perf_counter() - t0
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    parts = [roots[k::procs] for k in range(procs) if roots[k::procs]]
    start = time.perf_counter()
    ps = [ctx.Process(target=sync_worker, args=(part, (n - 1) * memories, memories, q)) for part in parts]
    for p in ps:
        p.start()
    results = []
    while len(results) < len(ps):
        kind, val = q.get(timeout=3600)
        if kind == "result":
            results.append(val)
    for p in ps:
        p.join()
    converged = time.perf_counter() - start
    push = [x for r in results for x in r["push"]]
    pull = [x for r in results for x in r["pull"]]
    return {"n": n, "setup_s": setup, "converged_s": converged, "rounds": max(r["rounds"] for r in results),
            "all_done": sum(len(r["done"]) for r in results) == n,
            "push_p50": percentile(push, 50) * 1e3, "push_p95": percentile(push, 95) * 1e3, "push_batches": len(push),
            "pull_p50": percentile(pull, 50) * 1e3, "pull_p95": percentile(pull, 95) * 1e3, "pull_batches": len(pull),
            "ms_per_pulled": sum(pull) * 1e3 / max(sum(r["stored"] for r in results), 1), "hub": hub_sizes(srv),
            "roots": roots}


def fresh_worker(srv: postgres.Server, root: Path, n: int, memories: int) -> dict[str, Any]:
    """A new machine of developer 0 joins: a real worker process catches up with the whole team."""
    home = root / "fresh"
    project = home / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE}\n')
    with srv.connect() as conn:
        from psycopg import sql

        pw = "fresh-" + os.urandom(8).hex()
        conn.execute(sql.SQL("ALTER ROLE dev000 PASSWORD {}").format(sql.Literal(pw)))
    env = {**os.environ, "KENNING_DATA_DIR": str(home / "data"), "KENNING_PORT": str(free_port()),
           "KENNING_TEAM_SYNC_SECONDS": "1", "KENNING_HUB_PASSWORD": pw, "HOME": str(home)}
    env.pop("KENNING_INTERNAL", None)

    def kenning(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "kenning", *args], env=env, cwd=str(project), capture_output=True,
                              text=True, timeout=600)

    r = kenning("team", "join", "--dsn", srv.dsn("dev000"), "--team", TEAM)
    assert r.returncode == 0, r.stdout + r.stderr
    r = kenning("worker", "start", "--wait", "30")
    assert r.returncode == 0, r.stdout + r.stderr
    from kenning.daemon import running
    from kenning.paths import Paths

    health = running(Paths(str(home / "data")), timeout=2) or {}
    pid = int(health.get("pid") or 0)
    started = time.perf_counter()
    db = str(home / "data" / "kenning.db")
    want = n * memories  # developer 0's own too: they were made on another device
    rss0 = _rss(pid)
    while time.perf_counter() - started < 1800:
        if os.path.exists(db) and _pulled(db) >= want:
            break
        time.sleep(0.5)
    took = time.perf_counter() - started
    rss1 = _rss(pid)
    kenning("worker", "stop")
    return {"catch_up_s": took, "rows": _pulled(db), "want": want, "rss_start": rss0, "rss_end": rss1}


def _rss(pid: int) -> dict[str, int]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile")):
                    out[line.split(":")[0]] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


# ------------------------------------------------------------------------------------------- the hub side

def hub_side(srv: postgres.Server, n: int, memories: int) -> dict[str, Any]:
    """N developers' operations through ``hub.push`` (batches of 200, as the worker sends them), then one
    client pulling everything through ``hub.pull``."""
    from kenning.team import clock, hub
    from kenning.team.config import new_device

    made = make_team(srv, n)
    pushes: list[float] = []
    start = time.perf_counter()
    for i in range(n):
        user = f"dev{i:03d}"
        device, last = new_device(), ""
        conn = hub.connect(srv.dsn(user), made[user])
        try:
            todo = rules(memories, seed=i, who=f"d{i}-")
            for k in range(0, memories, 200):
                ops = []
                for j, (title, text) in enumerate(todo[k:k + 200], start=k + 1):
                    last = clock.tick(last, device, time.time())
                    ops.append(hub.Op(f"{device}:{j}", "created", "example.com/acme/shop", device, last,
                                      f"{j:064x}"[-64:], {"title": title, "text": text, "type": "decision",
                                                          "layer": "rule"}))
                t0 = time.perf_counter()
                hub.push(conn, TEAM, ops)
                pushes.append(time.perf_counter() - t0)
        finally:
            conn.close()
    push_total = time.perf_counter() - start
    pulls: list[float] = []
    conn = hub.connect(srv.dsn("dev000"), made["dev000"])
    rev, rows_seen = 0, 0
    start = time.perf_counter()
    try:
        while True:
            t0 = time.perf_counter()
            rows = hub.pull(conn, TEAM, rev)
            pulls.append(time.perf_counter() - t0)
            if not rows:
                break
            rows_seen += len(rows)
            rev = int(rows[-1]["rev"])
    finally:
        conn.close()
    return {"n": n, "push_total_s": push_total, "push_p50": percentile(pushes, 50) * 1e3,
            "push_p95": percentile(pushes, 95) * 1e3, "pull_total_s": time.perf_counter() - start,
            "pull_p50": percentile(pulls, 50) * 1e3, "pull_p95": percentile(pulls, 95) * 1e3, "rows": rows_seen,
            "hub": hub_sizes(srv)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", default="3,6,10", help="developer counts for the full path (default 3,6,10)")
    ap.add_argument("--hub", default="50,200", help="developer counts for the hub side (default 50,200)")
    ap.add_argument("--memories", type=int, default=2000, help="memories per developer (default 2000)")
    ap.add_argument("--procs", type=int, default=2, help="processes the simulated machines run in (default 2)")
    ap.add_argument("--no-fresh", action="store_true", help="skip the fresh machine with a real worker")
    ap.add_argument("--fresh-hub", type=int, default=0,
                    help="also let a fresh machine's real worker catch up with the hub side of this many developers")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    args = ap.parse_args()
    fulls = [int(x) for x in args.full.split(",") if x]
    hubs = [int(x) for x in args.hub.split(",") if x]
    m = args.memories
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    started = time.monotonic()
    p("## Team memory at scale (`bench/team_scale.py`)\n")
    p(run_header(command_line()))
    p(f"\n{__doc__.split(chr(10) + chr(10), 2)[2].strip()}\n")
    full_rows: list[dict[str, Any]] = []
    fresh: dict[str, Any] = {}
    for n in fulls:
        root = temp_root("kenning-bench-team-scale-")
        try:
            with postgres.server() as srv:
                r = full(srv, root, n, m, args.procs)
                full_rows.append(r)
                print(f"  full n={n}: {r['converged_s']:.1f} s", flush=True)
                if n == fulls[-1] and not args.no_fresh:
                    fresh = fresh_worker(srv, root, n, m)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    p(f"### Full path: every machine stores every other developer's memories ({m:,} each)\n")
    p(md_table(["developers", "memories on the hub", "stored on machines", "set-up s (saves)",
                "converged s", "rounds", "push p50 / p95 ms", "pull p50 / p95 ms", "pull ms per memory",
                "hub database MB", "ops / memories / audit MB"],
               [[r["n"], f"{r['n'] * m:,}", f"{r['n'] * (r['n'] - 1) * m:,}", fmt(r["setup_s"]),
                 fmt(r["converged_s"]) + ("" if r["all_done"] else " (not all)"), r["rounds"],
                 f"{fmt(r['push_p50'])} / {fmt(r['push_p95'])}", f"{fmt(r['pull_p50'])} / {fmt(r['pull_p95'])}",
                 fmt(r["ms_per_pulled"], 2), mb(r["hub"]["database"]),
                 " / ".join(mb(r["hub"][t]) for t in ("ops", "memories", "audit"))] for r in full_rows]))
    if fresh:
        p(f"\nA fresh machine joining the {fulls[-1]}-developer team (a real worker, sync every second): "
          f"{fresh['rows']:,} of {fresh['want']:,} memories stored in {fresh['catch_up_s']:.0f} s; worker RSS "
          f"{mb(fresh['rss_start'].get('VmRSS', 0))} MB at start, {mb(fresh['rss_end'].get('VmRSS', 0))} MB after, "
          f"peak {mb(fresh['rss_end'].get('VmHWM', 0))} MB.")
    hub_rows = []
    for n in hubs:
        with postgres.server() as srv:
            hub_rows.append(hub_side(srv, n, m))
            print(f"  hub n={n}: push {hub_rows[-1]['push_total_s']:.1f} s", flush=True)
            if n == args.fresh_hub:
                root = temp_root("kenning-bench-team-scale-")
                try:
                    f = fresh_worker(srv, root, n, m)
                finally:
                    shutil.rmtree(root, ignore_errors=True)
                p(f"\nA fresh machine joining the hub side's {n}-developer team (a real worker, sync every second): "
                  f"{f['rows']:,} of {f['want']:,} memories stored in {f['catch_up_s']:.0f} s; worker RSS "
                  f"{mb(f['rss_start'].get('VmRSS', 0))} MB at start, {mb(f['rss_end'].get('VmRSS', 0))} MB after, "
                  f"peak {mb(f['rss_end'].get('VmHWM', 0))} MB (at the end {mb(f['rss_end'].get('RssAnon', 0))} MB "
                  f"its own, {mb(f['rss_end'].get('RssFile', 0))} MB pages of files it maps: the store's first 64 MiB "
                  "read through a memory map, the interpreter's libraries).")
    if hub_rows:
        p(f"\n### Hub side: {m:,} memories per developer through `hub.push`, all pulled through `hub.pull`\n")
        p(md_table(["developers", "memories", "push all s", "push batch p50 / p95 ms", "pull all s",
                    "pull batch p50 / p95 ms", "hub database MB", "ops / memories / audit MB", "bytes per memory"],
                   [[r["n"], f"{r['rows']:,}", fmt(r["push_total_s"]), f"{fmt(r['push_p50'])} / {fmt(r['push_p95'])}",
                     fmt(r["pull_total_s"]), f"{fmt(r['pull_p50'])} / {fmt(r['pull_p95'])}", mb(r["hub"]["database"]),
                     " / ".join(mb(r["hub"][t]) for t in ("ops", "memories", "audit")),
                     f"{r['hub']['database'] / max(r['rows'], 1):,.0f}"] for r in hub_rows]))
    if full_rows and hub_rows:
        # One machine alone (the fresh real worker) is what each developer's machine does on its own CPU; the
        # simulation's per-memory cost is inflated by every simulated machine sharing this one's cores.
        alone = fresh["catch_up_s"] / fresh["rows"] if fresh and fresh.get("rows") else None
        shared = full_rows[-1]["ms_per_pulled"] / 1e3
        p("\n### Extrapolated: every machine storing every memory\n")
        p("A machine stores each other developer's memories once. Machines do this in parallel, each on its own "
          "CPU, so the team converges in about one machine's catch-up (the hub answers each batch in the time "
          "measured above). Per memory: "
          + (f"{alone * 1e3:.2f} ms for the fresh machine's real worker alone (used below), " if alone else "")
          + f"{shared * 1e3:.2f} ms in the simulation, where {fulls[-1]} machines and the hub share "
          f"{os.cpu_count()} cores (the upper bound).")
        p("")
        rate = alone or shared
        p(md_table(["developers", "memories each machine stores", "one machine's catch-up (estimate)",
                    "upper bound (simulation's rate)", "the hub's share (pull all, measured)"],
                   [[r["n"], f"{(r['n'] - 1) * m:,}", f"{(r['n'] - 1) * m * rate / 60:.1f} min",
                     f"{(r['n'] - 1) * m * shared / 60:.1f} min", f"{r['pull_total_s']:.0f} s"] for r in hub_rows]))
    p(f"\nLoad average at the end {load_avg()}; wall time {time.monotonic() - started:.0f} s.")
    if args.write:
        write_section("team_scale", "\n".join(out))
        print("\n(section team_scale written to BENCHMARKS.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
