"""Storing memories pulled from a team hub, as a machine's local file grows: ms per memory.

    .venv/bin/python bench/team_pull.py [--memories 50000] [--window 2000] [--write]

Each pulled memory goes through the worker's own path (``MemoryService.from_hub`` in ``door.batch()``
batches of 200, as ``kenning.team.sync.pull`` stores them) into a real SQLite file. Per-memory cost is
measured in windows at growing sizes. The baseline is the same file without migration 0037's indexes on
``team_links`` (what every earlier version ran), in the same run: there each stored memory read every link
to find the memories an edge said it replaces, so the cost grew with the file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import command_line, fmt, load_avg, md_table, run_header, write_section

from kenning.memory_service import MemoryService
from kenning.store import team as tm
from kenning.store.db import open_db

BATCH = 200  # kenning.team.hub.PULL_BATCH
INDEXES = ("team_links_edge", "team_links_unpushed", "team_links_changed")


def run(path: str, n: int, window: int, *, indexed: bool) -> dict[int, float]:
    """ms per memory over the window that ends at each multiple of ``window``."""
    conn = open_db(path)
    if not indexed:
        for name in INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    door = MemoryService(conn, "team")
    out: dict[int, float] = {}
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        with door.batch():
            for i in range(start, min(n, start + BATCH)):
                door.from_hub(tm.Pulled(
                    gid=f"dev{i % 50}:{i}", team="scale", remote="example.com/acme/shop", layer="key",
                    type="decision", title=f"Decision {i}: keep the {i % 97} cache keys per tenant",
                    text=f"Memory {i} of the bench: the cache key holds tenant {i % 13} and the path {i % 101}.",
                    author=f"dev{i % 50}", reviewer="lead", reviewed_at=1.0, created_at=1.7e9 + i, scope="project"))
        done = min(n, start + BATCH)
        if done % window == 0:
            out[done] = (time.perf_counter() - t0) * 1e3 / window
            t0 = time.perf_counter()
    conn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=50_000)
    ap.add_argument("--window", type=int, default=2_000)
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kenning-bench-team-pull-") as d:
        # Interleaved would mean two files open at once; one after the other, the baseline first.
        base = run(f"{d}/base.db", a.memories, a.window, indexed=False)
        now = run(f"{d}/now.db", a.memories, a.window, indexed=True)
    marks = sorted(base)
    shown = [m for m in marks if m in (marks[0], marks[len(marks) // 4], marks[len(marks) // 2], marks[-1])]
    lines = ["## Storing pulled team memories as the file grows (`bench/team_pull.py`)\n",
             run_header(command_line()), "", __doc__.split("\n\n", 2)[2].strip(), "",
             md_table(["memories stored", "ms per memory, without the indexes (baseline)", "ms per memory, now",
                       "ratio now / baseline"],
                      [[f"{m:,}", fmt(base[m], 2), fmt(now[m], 2), fmt(now[m] / base[m], 2)] for m in shown]),
             "", f"Load average at the end {load_avg()}."]
    text = "\n".join(lines)
    print(text)
    if a.write:
        write_section("team_pull", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
