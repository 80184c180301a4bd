"""MCP server start-up: spawn → initialize, spawn → first search result, and what it costs Claude Code.

    .venv/bin/python bench/mcp_startup.py [--quick] [--write] [--rounds N] [--cli-rounds N]
                                          [--before REF | --no-before] [--no-cli] [--keep]

1. The server as ``kenning install`` registers it (``python -I -m kenning mcp``), over a data dir
   of 10,000 observations with the worker up (search goes through it), next to the floor
   ``python -I -S -c pass`` in the same interleaved rounds: spawn → the ``initialize`` answer,
   and spawn → the first ``search_memory`` result (raw JSON-RPC on the pipes, as Claude Code
   speaks it); then spawn → ``initialize()`` through the official SDK's client (what
   claude-mem's figures were measured with).
2. The real Claude Code CLI (``claude -p``, offline against the fake Messages API): time from
   spawning it to its first model request, without an MCP server, with ours, and with the
   server of ``--before`` (default: the merge base with main), interleaved run by run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    PYTHON,
    Install,
    command_line,
    extract,
    fmt,
    load_avg,
    md_table,
    merge_base,
    populate,
    project_key,
    run_header,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)
from startup import FLOOR

from kenning.integrations.claude_code import mcp_entry

N_OBS = 10_000
INIT_TARGET_MS, SEARCH_TARGET_MS, CLI_TARGET_MS = 150.0, 250.0, 150.0
QUERIES = ["invoice rounding", "parser timeout", "cache invalidation", "retry backoff", "schema migration"]


def rpc(id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


INIT = rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}})
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def raw_session(argv: list[str], env: dict[str, str], cwd: str, query: str) -> tuple[float, float, str]:
    """(ms to the initialize answer, ms to the first search result, its first line) from spawning."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=cwd)
    assert proc.stdin and proc.stdout
    proc.stdin.write(INIT)
    proc.stdin.flush()
    proc.stdout.readline()
    t1 = time.perf_counter()
    proc.stdin.write(INITIALIZED + rpc(2, "tools/call", {"name": "search_memory", "arguments": {"query": query}}))
    proc.stdin.flush()
    line = b""
    while True:
        line = proc.stdout.readline()
        if not line or json.loads(line).get("id") == 2:
            break
    t2 = time.perf_counter()
    proc.stdin.close()
    proc.wait(timeout=30)
    text = json.loads(line)["result"]["content"][0]["text"] if line else ""
    return (t1 - t0) * 1e3, (t2 - t0) * 1e3, text.split("\n", 1)[0]


def sdk_initialize(argv: list[str], env: dict[str, str], cwd: str) -> float:
    """ms from spawning to ``ClientSession.initialize()`` returning, with the official SDK's stdio client."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)

    async def go() -> float:
        t0 = time.perf_counter()
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return (time.perf_counter() - t0) * 1e3

    return float(anyio.run(go))


def floor_ms() -> float:
    t0 = time.perf_counter()
    subprocess.run(FLOOR, check=True)
    return (time.perf_counter() - t0) * 1e3


def cli_first_request(claude: str, home: Path, project: Path, base_url: str, fake: Any) -> float:
    """ms from spawning ``claude -p`` to the fake API receiving its first main-loop request."""
    from tests.support.claude_cli import run_claude

    before = len(fake.requests_of("main"))
    t0 = time.time()
    res = run_claude("Say ok.", cwd=project, home=home, base_url=base_url, claude_bin=claude, timeout=120)
    if res["rc"] != 0:
        raise RuntimeError(f"claude failed: {res['stderr'][-500:]}")
    first = fake.requests_of("main")[before]
    return (first["time"] - t0) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--cli-rounds", type=int, default=None)
    ap.add_argument("--before", default=None)
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    rounds = args.rounds or (8 if args.quick else 30)
    cli_rounds = args.cli_rounds or (3 if args.quick else 12)
    started = time.time()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-mcp-")
    inst = Install(root / "install")
    ref = None if args.no_before else (args.before or merge_base())
    tree = extract(ref, root / "tree") if ref else None
    servers = {"now": [PYTHON, *mcp_entry(PYTHON)["args"]]}
    if tree is not None:
        servers[f"before ({ref[:7]})"] = [PYTHON, "-I", "-c", f"import sys;sys.path.insert(0,{str(tree)!r});"
                                                             "from kenning.mcp.server import run;run()"]
    try:
        inst.paths.ensure()
        Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "none"}))
        populate(inst.paths.db, {project_key(inst): N_OBS, "other-project": 3000}, seed=11)
        inst.start_worker()
        env = {**inst.env}
        env.pop("CLAUDE_PROJECT_DIR", None)
        cwd = str(inst.project)
        p("## MCP server start-up (`bench/mcp_startup.py`)\n")
        p(run_header(command_line()))
        p(f"Server as `kenning install` registers it (`python {' '.join(servers['now'][1:])}`); {N_OBS:,} observations "
          f"in the project, worker up (search goes through it). {rounds} interleaved rounds with the floor "
          "`python -I -S -c pass`.\n")
        samples: dict[str, dict[str, list[float]]] = {k: {"init": [], "search": [], "sdk": []} for k in servers}
        floor: list[float] = []
        first_lines: dict[str, str] = {}
        for r in range(rounds + 2):
            order = list(servers.items())
            if r % 2:
                order.reverse()
            fl = floor_ms()
            for name, argv in order:
                a, b, line = raw_session(argv, env, cwd, QUERIES[r % len(QUERIES)])
                c = sdk_initialize(argv, env, cwd)
                if r >= 2:
                    samples[name]["init"].append(a)
                    samples[name]["search"].append(b)
                    samples[name]["sdk"].append(c)
                first_lines[name] = line
            if r >= 2:
                floor.append(fl)
        f50 = summary_ms([int(x * 1e6) for x in floor])["p50"]
        rows = [["`python -I -S -c pass` (floor)", "", fmt(f50), "", "", ""]]
        for name in servers:
            for key, label, target in (("init", "spawn → initialize answer", INIT_TARGET_MS),
                                       ("search", "spawn → first search_memory result", SEARCH_TARGET_MS),
                                       ("sdk", "spawn → SDK client `initialize()` returned", INIT_TARGET_MS)):
                s = summary_ms([int(x * 1e6) for x in samples[name][key]])
                rows.append([f"{name}: {label}", s["n"], fmt(s["p50"]), fmt(s["p95"]), f"{s['p50'] / f50:.1f}×",
                             f"≤ {target:.0f} ms: {verdict(s['p50'] <= target)}" if name == "now" else ""])
        p(md_table(["measure", "n", "p50 ms", "p95 ms", "p50 ÷ floor", "target (p50)"], rows))
        p("\nFirst lines of the search results: " + "; ".join(f"{k}: “{v[:90]}”" for k, v in first_lines.items()))

        if not args.no_cli:
            from tests.support.claude_cli import ensure_claude_cli
            from tests.support.fake_anthropic import FakeAnthropic, text

            claude = ensure_claude_cli()
            if claude is None:
                p("\nClaude Code CLI unavailable: its part is skipped.")
            else:
                homes: dict[str, Path] = {}
                configs: dict[str, Any] = {"no MCP server": None}
                for name, argv in servers.items():
                    configs[f"{name} server"] = {"type": "stdio", "command": argv[0], "args": argv[1:],
                                                 "env": {"KENNING_DATA_DIR": str(inst.data)}}
                for name, entry in configs.items():
                    home = root / "homes" / name.replace(" ", "_").replace("(", "").replace(")", "")
                    home.mkdir(parents=True)
                    if entry is not None:
                        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"kenning": entry}}))
                    homes[name] = home
                cli: dict[str, list[float]] = {k: [] for k in configs}
                with FakeAnthropic(script=[[text("ok")]]) as fake:
                    for r in range(cli_rounds + 1):
                        order = list(configs)
                        k = r % len(order)
                        for name in order[k:] + order[:k]:
                            ms = cli_first_request(claude, homes[name], inst.project, fake.base_url, fake)
                            if r >= 1:
                                cli[name].append(ms)
                base = summary_ms([int(x * 1e6) for x in cli["no MCP server"]])["p50"]
                rows = []
                for name, xs in cli.items():
                    s = summary_ms([int(x * 1e6) for x in xs])
                    extra = s["p50"] - base
                    rows.append([name, s["n"], fmt(s["p50"]), fmt(s["p95"]), "" if name == "no MCP server" else
                                 f"{extra:+.0f}", f"≤ +{CLI_TARGET_MS:.0f} ms: {verdict(extra <= CLI_TARGET_MS)}"
                                 if name == "now server" else ""])
                p(f"\n### Claude Code {claude_version(claude)}: spawn → first model request ({cli_rounds} rounds, "
                  "interleaved)\n")
                p(md_table(["`claude -p` with", "n", "p50 ms", "p95 ms", "p50 more than without", "target"], rows))
        p(f"\nLoad average at the end {load_avg()}; wall time {time.time() - started:.0f} s.")
    finally:
        inst.stop_worker()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("mcp_startup", "\n".join(out))
    return 0


def claude_version(claude: str) -> str:
    try:
        return subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "DISABLE_AUTOUPDATER": "1"}).stdout.split()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
