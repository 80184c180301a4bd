"""Hook start-up against the bare interpreter in the same interleaved rounds (issue 14).

    .venv/bin/python bench/startup.py [--quick] [--write] [--rounds N] [--before REF | --no-before] [--keep]

Every hook runs exactly as ``kenning install`` registers it (exec form, no shell:
``python -I -S -c <entry> claude-code <Event>``) with Claude Code's real payloads
(tests/fixtures/claude-code, permission_mode ``bypassPermissions`` as a real session sends it):

* PostToolUse of a Bash call, worker up; the same payload with ``permission_mode: default``
  (what earlier benchmarks sent);
* PostToolUse of a Read of a ~20 KB real source file of this repository;
* SessionStart with 10,000 observations in the project (3,000 in another), worker up; and the
  same with 500 events pending in the database (an open turn: the offline observer waits for it).

The floor is ``python -I -S -c pass`` in the same rounds (the order rotates every round). With
``--before`` (default: the merge base of this branch with ``main``) the same payloads also go
through the code of that revision, as its installer registered it (``python -I -c …``, with
``site``), against workers of that revision on identical databases.
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
    load_avg,
    md_table,
    merge_base,
    populate,
    registered_hook,
    run_header,
    run_interleaved,
    summary_ms,
    temp_root,
    verdict,
    write_section,
)

from kenning.hook import client
from kenning.project import project_key
from kenning.store import repo
from kenning.store.db import open_db

FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
FLOOR = [os.path.realpath(PYTHON), "-I", "-S", "-c", "pass"]
READ_SOURCE = REPO / "kenning" / "context" / "prompt.py"  # ~20 KB of ordinary Python
N_OBS, N_OTHER, N_PENDING = 10_000, 3_000, 500
TURN_EVERY = 25
TARGETS = {"PostToolUse Bash": 1.6, "PostToolUse Read 20 KB": 2.0, "SessionStart": 2.5,
           "SessionStart, 500 pending": 2.5}
P99_TARGET = 3.0


def fixture(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text())["stdin"])




class Variant:
    """One code revision: its hook argv and two workers (with and without pending events)."""

    def __init__(self, label: str, root: Path, tree: Path | None) -> None:
        self.label = label
        self.tree = tree
        self.main = Install(root / "main")
        self.pending = Install(root / "pending")
        if tree is None:
            self.hook = registered_hook()
        else:  # as that revision's `kenning install` wrote it, its own code first on the path
            self.hook = [PYTHON, "-I", "-c", f"import sys;sys.path.insert(0,{str(tree)!r});"
                                             "from kenning.hook.main import cli;cli()", "claude-code"]
        self.procs: list[subprocess.Popen[bytes]] = []

    def setup(self) -> None:
        for inst in (self.main, self.pending):
            inst.paths.ensure()
            # No background embedding, and an open turn stays open for the whole run.
            Path(inst.paths.settings).write_text(json.dumps({"embedding_backend": "none",
                                                             "turn_idle_seconds": 86_400}))
            populate(inst.paths.db, {project_key(str(inst.project)): N_OBS, "other-project": N_OTHER}, seed=11)
        add_pending(self.pending, N_PENDING)
        for inst in (self.main, self.pending):
            self.start(inst)

    def start(self, inst: Install) -> None:
        if self.tree is None:
            inst.start_worker()
            return
        code = f"import sys;sys.path.insert(0,{str(self.tree)!r});from kenning.worker.server import run;sys.exit(run())"
        log = open(inst.root / "worker.out", "wb")  # noqa: SIM115 - the worker's lifetime
        self.procs.append(subprocess.Popen([PYTHON, "-I", "-c", code], env=inst.env, cwd=str(inst.root),
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            info = client.read_pid_file(inst.paths)
            if info and client.worker_health(inst.paths, info["port"], timeout=1.0):
                inst.worker_pid = int(info["pid"])
                return
            time.sleep(0.1)
        raise RuntimeError(f"the {self.label} worker did not start (see {inst.root / 'worker.out'})")

    def stop(self) -> None:
        for inst in (self.main, self.pending):
            if self.tree is None:
                inst.stop_worker()
        for p in self.procs:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


def add_pending(inst: Install, n: int) -> None:
    """An open turn of ``n`` tool calls: pending in the database, as the offline observer leaves them."""
    conn = open_db(inst.paths.db)
    root = str(inst.project)
    now = time.time()
    bash = fixture("interactive/events/PostToolUse.Bash.json")
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="open-turn",
                                  project=project_key(root), project_root=root, cwd=root, at=now - 120)
        repo.insert_event(conn, session_id=sid, event_key="prompt", kind="UserPromptSubmit", tool_name=None,
                          prompt_number=1, agent_id=None, agent_type=None, occurred_at=now - 120,
                          payload=json.dumps({"prompt": "refactor the parser and keep the tests green"}))
        for i in range(n):
            p = {**bash, "cwd": root, "tool_use_id": f"toolu_open_{i:05d}",
                 "tool_input": {"command": f"pytest -q tests/test_parser.py -k case_{i}"}}
            repo.insert_event(conn, session_id=sid, event_key=f"PostToolUse:toolu_open_{i:05d}", kind="PostToolUse",
                              tool_name="Bash", prompt_number=1, agent_id=None, agent_type=None,
                              occurred_at=now - 119 + i * 0.1, payload=json.dumps(p))
    conn.close()


def payloads(cwd: str) -> dict[str, dict[str, Any]]:
    bash = {**fixture("interactive/events/PostToolUse.Bash.json"), "cwd": cwd}
    read = {**fixture("interactive/events/PostToolUse.Read.json"), "cwd": cwd}
    source = READ_SOURCE.read_text(encoding="utf-8")
    path = os.path.join(cwd, "src", READ_SOURCE.name)
    read["tool_input"] = {"file_path": path}
    read["tool_response"] = {"type": "text", "file": {"filePath": path, "content": source,
                                                      "numLines": source.count("\n") + 1, "startLine": 1,
                                                      "totalLines": source.count("\n") + 1}}
    start = {**fixture("print-mode/events/SessionStart.json"), "cwd": cwd}
    return {"bash": bash, "bash_default": {**bash, "permission_mode": "default"}, "read": read, "start": start}


def commands(v: Variant) -> tuple[dict[str, Cmd], Any]:
    main, pend = v.main, v.pending
    p = payloads(str(main.project))
    pp = payloads(str(pend.project))
    tag = v.label.replace(" ", "-")

    def tool(payload: dict[str, Any], sid: str, kind: str) -> Any:
        return lambda r: json.dumps({**payload, "session_id": sid, "tool_use_id": f"toolu_{tag}_{kind}_{r:06d}"}
                                    ).encode()

    def start(payload: dict[str, Any], prefix: str) -> Any:
        return lambda r: json.dumps({**payload, "session_id": f"{tag}-{prefix}-{r:06d}"}).encode()

    def remembers(proc: subprocess.CompletedProcess[bytes]) -> bool:
        return b"# Memory of" in proc.stdout  # the project's memory, not "no memory yet"

    sid = f"{tag}-tools"
    cmds = {
        "PostToolUse Bash": Cmd(f"{v.label}: PostToolUse Bash (bypassPermissions)", [*v.hook, "PostToolUse"],
                                main.env, str(main.project), tool(p["bash"], sid, "bash")),
        "PostToolUse Bash, permission_mode default": Cmd(
            f"{v.label}: PostToolUse Bash (permission_mode default)", [*v.hook, "PostToolUse"], main.env,
            str(main.project), tool(p["bash_default"], sid, "bashd")),
        "PostToolUse Read 20 KB": Cmd(f"{v.label}: PostToolUse Read of a {READ_SOURCE.stat().st_size // 1000} KB "
                                      "source file", [*v.hook, "PostToolUse"], main.env, str(main.project),
                                      tool(p["read"], sid, "read")),
        "SessionStart": Cmd(f"{v.label}: SessionStart, {N_OBS:,} observations", [*v.hook, "SessionStart"],
                            main.env, str(main.project), start(p["start"], "start"), check=remembers),
        "SessionStart, 500 pending": Cmd(f"{v.label}: SessionStart, {N_OBS:,} observations, {N_PENDING} pending",
                                         [*v.hook, "SessionStart"], pend.env, str(pend.project),
                                         start(pp["start"], "start"), check=remembers),
    }

    def between(r: int) -> None:
        # Real sessions come in turns: the tool calls' session gets a Stop and a next prompt now and
        # then, so the observer closes turns as it would instead of reading one endless turn.
        if r % TURN_EVERY == TURN_EVERY - 1:
            for event, extra in (("Stop", {"stop_hook_active": False, "last_assistant_message": "Done."}),
                                 ("UserPromptSubmit", {"prompt": f"next step {r}"})):
                body = {"session_id": sid, "cwd": str(main.project), "hook_event_name": event,
                        "transcript_path": "/tmp/t.jsonl", "permission_mode": "bypassPermissions", **extra}
                subprocess.run([*v.hook, event], input=json.dumps(body).encode(), env=main.env,
                               cwd=str(main.project), capture_output=True, check=False)

    return cmds, between


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="40 rounds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--before", default=None, help="revision to compare with (default: merge base with main)")
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    rounds = args.rounds or (40 if args.quick else 200)
    started = time.time()
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    root = temp_root("kenning-bench-startup-")
    before_ref = None if args.no_before else (args.before or merge_base())
    variants = [Variant("now", root / "now", None)]
    if before_ref:
        variants.append(Variant(f"before ({before_ref[:7]})", root / "before", extract(before_ref, root / "tree")))
    try:
        p("## Start-up against the floor (`bench/startup.py`)\n")
        p(run_header(command_line()))
        redact = subprocess.run(["git", "log", "--oneline", "-1", "main", "--", "kenning/privacy/redact.py"],
                                cwd=REPO, capture_output=True, text=True).stdout.strip()
        p(f"Hooks as `kenning install` registers them (`{' '.join(['python', *registered_hook()[1:4]])} …`, "
          f"exec form); real Claude Code payloads; {rounds} interleaved rounds with `python -I -S -c pass` (the "
          f"floor); workers up on {N_OBS:,} + {N_OTHER:,} observations (rules observer, no embeddings). The "
          f"redactor is main's (last change on main: {redact or 'none'}).\n")
        for v in variants:
            v.setup()
        floor = Cmd("`python -I -S -c pass` (floor)", FLOOR, dict(os.environ), str(root), lambda r: b"")
        cmds: list[Cmd] = [floor]
        named: dict[str, dict[str, Cmd]] = {}
        hooks = []
        for v in variants:
            c, between = commands(v)
            named[v.label] = c
            cmds += list(c.values())
            hooks.append(between)
        run_interleaved(cmds, rounds, warmup=3, between=lambda r: [b(r) for b in hooks])
        f = summary_ms(floor.samples)
        rows = [[floor.name, f["n"], fmt(f["p50"]), fmt(f["p90"]), fmt(f["p99"]), "1.00×", "1.00×", "", "", ""]]
        for v in variants:
            for key, c in named[v.label].items():
                s = summary_ms(c.samples)
                r50, r99 = s["p50"] / f["p50"], s["p99"] / f["p99"]
                target = TARGETS.get(key)
                ok = target is not None and r50 <= target and r99 <= P99_TARGET
                rows.append([c.name, s["n"], fmt(s["p50"]), fmt(s["p90"]), fmt(s["p99"]), f"{r50:.2f}×",
                             f"{r99:.2f}×", f"p50 ≤ {target}×, p99 ≤ {P99_TARGET}×" if target and v.tree is None
                             else "", verdict(ok) if target and v.tree is None else "", c.failures or ""])
        p(md_table(["command", "n", "p50 ms", "p90 ms", "p99 ms", "p50 ÷ floor p50", "p99 ÷ floor p99", "target",
                    "verdict", "failed"], rows))
        if before_ref:
            p()
            now, before = named["now"], named[variants[1].label]
            p(md_table(["hook", "before p50 ms", "now p50 ms", "before ÷ floor", "now ÷ floor", "saved p50 ms"],
                       [[k, fmt(summary_ms(before[k].samples)["p50"]), fmt(summary_ms(now[k].samples)["p50"]),
                         f"{summary_ms(before[k].samples)['p50'] / f['p50']:.2f}×",
                         f"{summary_ms(now[k].samples)['p50'] / f['p50']:.2f}×",
                         fmt(summary_ms(before[k].samples)["p50"] - summary_ms(now[k].samples)["p50"])]
                        for k in now]))
        p(f"\nHow to read this: the ratio to the floor of the same rounds is the stable number (this 2-core "
          f"machine is shared). p99 is compared with the floor's p99. Every SessionStart run checks that the "
          f"printed context is the project's memory. Load average at the end {load_avg()}; wall time "
          f"{time.time() - started:.0f} s.")
    finally:
        for v in variants:
            v.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("startup", "\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
