"""The context hooks with and without the injection ledger, paired in the same interleaved rounds (issue 29).

    .venv/bin/python bench/ledger_hooks.py [--quick] [--write] [--rounds N] [--before REF] [--keep]

The ledger is written by the worker, never by a hook; what a hook does more is one query parameter
(SessionStart sends its session id) and, when the Read hook tells a file's history, a few more bytes
in the "already told" line it appends anyway. This measures both hooks end to end for this checkout
and for ``--before`` (default: the merge base with ``main``), in the same invocation form
(``python -I -S -c <entry> claude-code <Event>``, ``kenning.integrations.launch.hook_code``), each
against its own worker on an identical database of 10,000 observations, next to the floor
``python -I -S -c pass``; the order rotates every round.

* SessionStart, a new session each run: this checkout's worker records 40-odd handings per run;
* PreToolUse(Read) of a file that earlier sessions touched, a new session each run: the history is
  told every time (and this checkout writes what it told in the line).
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
    REPO,
    Cmd,
    Install,
    command_line,
    extract,
    fmt,
    md_table,
    merge_base,
    populate,
    run_header,
    run_interleaved,
    summary_ms,
    temp_root,
    write_section,
)

from kenning.hook import client
from kenning.integrations.launch import hook_code
from kenning.project import canonical
from kenning.store.db import open_db

FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
FLOOR = [os.path.realpath(PYTHON), "-I", "-S", "-c", "pass"]
N_OBS = 10_000


def fixture(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text())["stdin"])


class Variant:
    def __init__(self, label: str, root: Path, tree: Path) -> None:
        self.label = label
        self.tree = tree
        self.inst = Install(root)
        self.hook = [os.path.realpath(PYTHON), "-I", "-S", "-c", hook_code(str(tree)), "claude-code"]
        self.proc: subprocess.Popen[bytes] | None = None
        self.file = ""

    def setup(self) -> None:
        inst = self.inst
        Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "none"}))
        key = canonical(str(inst.project))
        populate(inst.paths.db, {key: N_OBS}, seed=29)
        conn = open_db(inst.paths.db)
        try:  # the file most observations touched, made on disk (older than its notes: not stale)
            rel = str(conn.execute("SELECT path FROM observation_files WHERE project = ? AND path NOT LIKE '/%' "
                                   "GROUP BY path ORDER BY COUNT(*) DESC LIMIT 1", (key,)).fetchone()[0])
        finally:
            conn.close()
        path = inst.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# bench\n" + "x = 1\n" * 600)
        old = time.time() - 3 * 365 * 86400
        os.utime(path, (old, old))
        self.file = str(path)
        code = (f"import sys;sys.path.insert(0,{str(self.tree)!r});from kenning.worker.server import run;"
                "sys.exit(run())")
        log = open(inst.root / "worker.out", "wb")  # noqa: SIM115 - the worker's lifetime
        self.proc = subprocess.Popen([PYTHON, "-I", "-c", code], env=inst.env, cwd=str(inst.root), stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            info = client.read_pid_file(inst.paths)
            if info and client.worker_health(inst.paths, info["port"], timeout=1.0):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the {self.label} worker did not start (see {inst.root / 'worker.out'})")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def commands(self) -> list[Cmd]:
        cwd = str(self.inst.project)
        tag = self.label.split()[0]
        start = {**fixture("print-mode/events/SessionStart.json"), "cwd": cwd}
        read = {**fixture("print-mode/events/PreToolUse.Read.json"), "cwd": cwd,
                "tool_input": {"file_path": self.file}}
        return [
            Cmd(f"{self.label}: SessionStart, {N_OBS:,} observations", [*self.hook, "SessionStart"], self.inst.env,
                cwd, lambda r: json.dumps({**start, "session_id": f"{tag}-start-{r:06d}"}).encode(),
                check=lambda p: b"# Memory of" in p.stdout),
            Cmd(f"{self.label}: PreToolUse Read, history told", [*self.hook, "PreToolUse"], self.inst.env, cwd,
                lambda r: json.dumps({**read, "session_id": f"{tag}-read-{r:06d}"}).encode(),
                check=lambda p: b"earlier sessions' notes" in p.stdout),
        ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="40 rounds")
    ap.add_argument("--rounds", type=int, help="rounds (default 150, --quick 40)")
    ap.add_argument("--before", default=None, help="revision to compare with (default: merge base with main)")
    ap.add_argument("--write", action="store_true", help="replace this section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    args = ap.parse_args()
    rounds = args.rounds or (40 if args.quick else 150)
    ref = args.before or merge_base()
    root = temp_root("kenning-bench-ledger-hooks-")
    started = time.time()
    variants = [Variant("now", root / "now", REPO), Variant(f"before ({ref[:7]})", root / "before",
                                                          extract(ref, root / "tree"))]
    try:
        for v in variants:
            v.setup()
        floor = Cmd("`python -I -S -c pass` (floor)", FLOOR, dict(os.environ), str(root), lambda r: b"")
        cmds = [floor, *[c for v in variants for c in v.commands()]]
        run_interleaved(cmds, rounds, warmup=3)
        time.sleep(3)  # the worker's next cycle records the last handings
        conn = open_db(variants[0].inst.paths.db)
        try:
            recorded = {str(r[0]): int(r[1]) for r in conn.execute("SELECT via, COUNT(*) FROM injections GROUP BY via")}
        finally:
            conn.close()
    finally:
        for v in variants:
            v.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    f = summary_ms(floor.samples)
    rows = []
    for c in cmds:
        s = summary_ms(c.samples)
        rows.append([c.name, len(c.samples), fmt(s["p50"]), fmt(s["p90"]), fmt(s["p99"]), f"{s['p50'] / f['p50']:.2f}×",
                     f"{s['p99'] / f['p99']:.2f}×", c.failures])
    pairs = []
    for i in range(2):
        now, before = summary_ms(cmds[1 + i].samples), summary_ms(cmds[3 + i].samples)
        pairs.append([cmds[1 + i].name.split(": ", 1)[1], fmt(before["p50"]), fmt(now["p50"]),
                      f"{now['p50'] / before['p50']:.2f}×", fmt(before["p99"]), fmt(now["p99"])])
    text = "\n".join([
        f"## Context hooks with the injection ledger (`bench/ledger_hooks.py`)\n\n{run_header(command_line())}\n",
        f"Both revisions in the same invocation form (`python -I -S -c <entry>`), each with its own worker on "
        f"{N_OBS:,} identical observations; {rounds} interleaved rounds with the floor.\n",
        md_table(["command", "n", "p50 ms", "p90 ms", "p99 ms", "p50 ÷ floor p50", "p99 ÷ floor p99", "failed"], rows),
        "",
        md_table(["hook", "before p50 ms", "now p50 ms", "now ÷ before (p50)", "before p99 ms", "now p99 ms"], pairs),
        "",
        f"What this checkout's worker recorded meanwhile: {', '.join(f'{k} {v:,}' for k, v in recorded.items())} "
        f"handings (none written by a hook). Wall time {time.time() - started:.0f} s.",
    ])
    print(text)
    if args.write:
        write_section("ledger_hooks", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
