"""HTTP search at 10k observations: Kenning's worker next to the reference claude-mem's, same data, same run.

    .venv/bin/python bench/search_vs_peer.py [--quick] [--write] [--runs N] [--n N]
                                             [--peer DIR] [--peer-root DIR] [--before REF | --no-before] [--keep]

The reference runs in its sandbox (``--peer``: the peer-claude-mem tools, default
``/work/shared/tools/peer-claude-mem``; everything under ``--peer-root``, never ``~``): its
``seed.py`` generates N observations (with sessions, summaries and prompts) and imports them
through claude-mem's own ``/api/import``; the very same generated rows (``--dump``) go into a
Kenning database through our schema (FTS kept by its triggers), filed under project checkouts of
the same names. Both workers are then asked the reference benchmark's 20 queries over one
kept-alive HTTP connection each, alternating query by query, all projects, 20 results. With
``--before`` (default: the merge base with main) a worker of that revision answers over a copy
of the same database too.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    Install,
    command_line,
    extract,
    fmt,
    load_avg,
    md_table,
    merge_base,
    run_header,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)
from startup import Variant

from kenning.paths import read_token
from kenning.project import project_key
from kenning.store.db import open_db

DEFAULT_PEER = Path("/work/shared/tools/peer-claude-mem")


class Peer:
    """claude-mem in its sandbox, driven by the peer tools' own scripts."""

    def __init__(self, tools: Path, root: Path, port: int) -> None:
        self.tools, self.root, self.port = tools, root, port
        self.env = {**os.environ, "PEER_ROOT": str(root), "CLAUDE_MEM_WORKER_PORT": str(port)}

    def sh(self, *argv: str, timeout: float = 1800) -> str:
        r = subprocess.run(list(argv), cwd=self.tools, env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {r.stdout[-1500:]}{r.stderr[-1500:]}")
        return r.stdout

    def seed(self, n: int, dump: Path) -> dict[str, Any]:
        self.sh("bash", "setup.sh")
        self.sh("bash", "worker.sh", "reset")
        self.sh("bash", "worker.sh", "start", timeout=180)
        out = self.sh("bash", "-c", f". ./env.sh && python3 seed.py --n {n} --dump {dump} --url http://127.0.0.1:{self.port}")
        return dict(json.loads(out.strip().splitlines()[-1]))

    def stop(self) -> None:
        try:
            self.sh("bash", "worker.sh", "stop", timeout=120)
        except (RuntimeError, subprocess.SubprocessError):
            pass

    def queries(self) -> list[str]:
        """The reference benchmark's queries (``QUERIES`` in its bench.py, read without running it)."""
        import ast

        tree = ast.parse((self.tools / "bench.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "QUERIES" for t in node.targets):
                return [str(q) for q in ast.literal_eval(node.value)]
        raise RuntimeError("no QUERIES in the peer's bench.py")


def epoch(ms: Any) -> float:
    return float(ms) / 1000.0


def load_dump(inst: Install, dump: dict[str, Any]) -> dict[str, str]:
    """The generated rows into a Kenning database; returns project name → checkout directory."""
    roots: dict[str, str] = {}
    for s in dump["sessions"]:
        d = inst.root / "work" / s["project"]
        (d / ".git").mkdir(parents=True, exist_ok=True)
        roots[s["project"]] = str(d)
    keys = {name: project_key(root) for name, root in roots.items()}
    conn = open_db(inst.paths.db)
    now = time.time()
    sid_of: dict[str, int] = {}
    by_csid: dict[str, int] = {}
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("INSERT INTO projects (key, name, root, remote, first_seen, last_seen) "
                         "VALUES (?, ?, ?, '', ?, ?)",
                         [(keys[n], n, r, now - 86400 * 120, now) for n, r in roots.items()])
        for s in dump["sessions"]:
            cur = conn.execute(
                "INSERT INTO sessions (platform, agent_session_id, project, project_root, cwd, started_at, ended_at, "
                "end_reason, status, prompt_count) VALUES ('claude-code', ?, ?, ?, ?, ?, ?, 'other', 'completed', 1)",
                (s["content_session_id"], keys[s["project"]], roots[s["project"]], roots[s["project"]],
                 epoch(s["started_at_epoch"]), epoch(s["completed_at_epoch"])))
            sid_of[s["memory_session_id"]] = by_csid[s["content_session_id"]] = int(cur.lastrowid or 0)
        for i, o in enumerate(dump["observations"]):
            t = epoch(o["created_at_epoch"])
            conn.execute(
                "INSERT INTO observations (session_id, project, type, title, subtitle, facts, narrative, concepts, "
                "files_read, files_modified, prompt_number, tokens_spent, source_tokens, created_at, recorded_at, "
                "content_hash, observer, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 'import', "
                "'active')",
                (sid_of[o["memory_session_id"]], keys[o["project"]], o["type"], o["title"], o["subtitle"], o["facts"],
                 o["narrative"], o["concepts"], o["files_read"], o["files_modified"], o["prompt_number"],
                 o["discovery_tokens"], t, t, f"{i:016x}"))
        for m in dump["summaries"]:
            t = epoch(m["created_at_epoch"])
            conn.execute(
                "INSERT INTO session_summaries (session_id, project, prompt_number, request, investigated, learned, "
                "completed, next_steps, notes, files_read, files_modified, tokens_spent, source_tokens, created_at, "
                "recorded_at, observer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, 0, ?, ?, ?, 'import')",
                (sid_of[m["memory_session_id"]], keys[m["project"]], m["prompt_number"], m["request"],
                 m["investigated"], m["learned"], m["completed"], m["next_steps"], m["files_read"],
                 m["files_edited"], m["discovery_tokens"], t, t))
        for u in dump["prompts"]:
            conn.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                         "VALUES (?, ?, ?, ?)", (by_csid[u["content_session_id"]], u["prompt_number"],
                                                 u["prompt_text"], epoch(u["created_at_epoch"])))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return roots


class Client:
    """One kept-alive HTTP/1.1 connection, as the MCP server or a browser would hold it."""

    def __init__(self, port: int, token: str = "") -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, path: str) -> tuple[int, bytes]:
        self.conn.request("GET", path, headers=self.headers)
        r = self.conn.getresponse()
        return r.status, r.read()


def count_of(system: str, body: bytes) -> int:
    data = json.loads(body)
    if system == "claude-mem":
        text = data["content"][0]["text"] if data.get("content") else ""
        return sum(1 for line in text.splitlines() if line.startswith("| #") or line.startswith("#"))
    return int(data.get("count", 0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None, help="rounds over the 20 queries")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--peer", type=Path, default=DEFAULT_PEER)
    ap.add_argument("--peer-root", type=Path, default=Path("/tmp/peer-kenning-bench"))
    ap.add_argument("--peer-port", type=int, default=37893)
    ap.add_argument("--before", default=None)
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    runs = args.runs or (5 if args.quick else 30)
    if not (args.peer / "seed.py").is_file():
        print(f"no peer tools at {args.peer}", file=sys.stderr)
        return 2
    started = time.time()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-peer-search-")
    peer = Peer(args.peer, args.peer_root, args.peer_port)
    inst = Install(root / "kenning")
    ref = None if args.no_before else (args.before or merge_base())
    before = Variant(f"Kenning before ({ref[:7]})", root / "before", extract(ref, root / "tree")) if ref else None
    try:
        dump_path = root / "generated.json"
        seeded = peer.seed(args.n, dump_path)
        dump = json.loads(dump_path.read_text())
        inst.paths.ensure()
        Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "none"}))
        load_dump(inst, dump)
        if before is not None:  # copied before either worker runs: a worker writes to its file (index merges)
            b = before.main
            b.paths.ensure()
            Path(b.paths.settings).write_text(json.dumps({"embedding_backend": "none"}))
            shutil.copy(inst.paths.db, b.paths.db)
        inst.start_worker()
        systems: dict[str, Client] = {"claude-mem 13.25.3": Client(args.peer_port),
                                      "Kenning": Client(inst.port, read_token(inst.paths))}
        if before is not None:
            before.start(before.main)
            systems[before.label] = Client(b.port, read_token(b.paths))
        queries = peer.queries()

        def path_of(system: str, q: str) -> str:
            if system.startswith("claude-mem"):
                return "/api/search?query=" + quote(q)
            return f"/api/search?query={quote(q)}&limit=20"

        counts: dict[str, dict[str, int]] = {s: {} for s in systems}
        for q in queries:  # warm-up, and what each finds
            for s, c in systems.items():
                status, body = c.get(path_of(s, q))
                if status != 200:
                    raise RuntimeError(f"{s} {q!r}: HTTP {status} {body[:200]!r}")
                counts[s][q] = count_of("claude-mem" if s.startswith("claude-mem") else "kenning", body)
        samples: dict[str, list[int]] = {s: [] for s in systems}
        rng = random.Random(11)
        for r in range(runs):
            qs = queries[:]
            rng.shuffle(qs)
            for i, q in enumerate(qs):
                order = list(systems)
                k = (r + i) % len(order)
                for s in order[k:] + order[:k]:
                    t0 = time.perf_counter_ns()
                    systems[s].get(path_of(s, q))
                    samples[s].append(time.perf_counter_ns() - t0)
        p("## HTTP search next to claude-mem (`bench/search_vs_peer.py`)\n")
        p(run_header(command_line()))
        gen = seeded["generated"]
        p(f"Data: claude-mem's own generator (peer-claude-mem `seed.py`, seed 42): {gen['observations']:,} "
          f"observations, {gen['sessions']:,} sessions with summaries, "
          f"{gen['prompts']:,} prompts in 4 projects, imported into claude-mem through its "
          "`/api/import` and the same rows into Kenning's schema. The reference benchmark's "
          f"{len(queries)} queries × {runs} rounds, all projects, over one kept-alive connection per system, "
          "alternating query by query. Kenning: keyword search (FTS5, no embeddings), 20 results.\n")
        ref_s = summary_ms(samples["claude-mem 13.25.3"])
        rows = []
        for s, xs in samples.items():
            m = summary_ms(xs)
            found = counts[s]
            rows.append([s, m["n"], fmt(m["p50"], 2), fmt(m["p95"], 2), fmt(m["p99"], 2),
                         f"{m['p50'] / ref_s['p50']:.2f}×", f"{sum(1 for v in found.values() if v)}/{len(found)}",
                         verdict(m["p50"] <= ref_s["p50"]) if s == "Kenning" else ""])
        p(md_table(["system", "requests", "p50 ms", "p95 ms", "p99 ms", "p50 ÷ claude-mem", "queries with results",
                    "no slower than claude-mem (p50)"], rows))
        p(f"\nLoad average at the end {load_avg()}; wall time {time.time() - started:.0f} s.")
    finally:
        peer.stop()
        inst.stop_worker()
        if before is not None:
            before.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("search_vs_peer", "\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
