"""Hooks while the team hub is down: the same hook runs, no team against a team whose hub is up or unreachable.

    .venv/bin/python bench/team_hooks.py [--quick] [--rounds N] [--write] [--keep]

Three installs, each with its worker up, its own data dir and 1,000 observations in the project:

* **no team**: the machine joined none;
* **team, hub up**: joined a team on a real PostgreSQL server (tests/support/postgres.py starts one; skipped
  when the server binaries are missing), the worker syncing with it every second;
* **team, hub down**: joined the same way, but the DSN names a closed port on 127.0.0.1 (a stopped server):
  the worker's sync thread fails every second and says so in ``team.status.json``.

Both team installs hold the same 15 approved team memories, so their SessionStart carries the team
section. Every round runs PostToolUse (a Bash payload), UserPromptSubmit and SessionStart on each install,
exactly as ``kenning install`` registers the hook, with ``python -I -S -c pass`` as the floor; the order rotates
every round. Ratios are same-run: a team install's p50 over the no-team p50 of the same hook.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    PYTHON,
    Cmd,
    Install,
    command_line,
    fmt,
    free_port,
    load_avg,
    md_table,
    populate,
    project_key,
    registered_hook,
    run_header,
    run_interleaved,
    summary_ms,
    temp_root,
    write_section,
)

HOOK = registered_hook()
REMOTE = "git@example.com:acme/shop.git"
TEAM_MEMORIES = 15


def seed_team(inst: Install) -> None:
    """The team's approved memories, as a pull stores them (through the memory service)."""
    from kenning.memory_service import MemoryService
    from kenning.store import team as tm
    from kenning.store.db import open_db

    conn = open_db(inst.paths.db)
    try:
        door = MemoryService(conn, "team")
        for i in range(TEAM_MEMORIES):
            door.from_hub(tm.Pulled(
                gid=f"0123456789abcdef:{i + 1}", team="alpha", remote="example.com/acme/shop",
                layer="rule" if i % 3 else "key", type="decision",
                title=f"Team rule {i}: module {i} keeps its migrations in db/migrations/{i:03d}",
                text=f"Module {i} writes a CREATE TABLE migration for each new entity.", author="ana",
                reviewer="li", reviewed_at=time.time(), created_at=time.time() - i * 3600))
    finally:
        conn.close()


def join_offline(inst: Install, dsn: str) -> None:
    """Join without reaching the hub (it is down): what ``kenning team join`` writes, written directly."""
    from kenning.memory_service import MemoryService
    from kenning.project import find_root, git_remote, project_key
    from kenning.store.db import open_db
    from kenning.team import config

    name, root = find_root(str(inst.project))
    remote = git_remote(root)
    conn = open_db(inst.paths.db)
    try:
        key = MemoryService(conn, "team").team_joined("alpha", project_key(root, name), name=name, root=root,
                                                      remote=remote)
    finally:
        conn.close()
    config.save(inst.paths, config.TeamConfig(dsn=dsn, team="alpha", user="ana", device=config.new_device(),
                                              projects={remote: key}), "unused-password")


@contextlib.contextmanager
def hub_server() -> Iterator[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.support import postgres

    if postgres.binaries() is None:
        yield None
        return
    with postgres.server() as srv:
        yield srv


def payload(inst: Install, event: str, sid: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": sid, "transcript_path": f"/home/dev/.claude/projects/x/{sid}.jsonl",
            "cwd": str(inst.project), "hook_event_name": event, **fields}


def commands(insts: dict[str, Install]) -> list[Cmd]:
    base = next(iter(insts.values()))
    out = [Cmd("`python -I -S -c pass` (floor)", [PYTHON, "-I", "-S", "-c", "pass"], base.env, str(base.project),
               lambda r: b"")]
    for label, inst in insts.items():
        sid = f"bench-team-{label.replace(' ', '-').replace(',', '')}"
        bash = payload(inst, "PostToolUse", sid, permission_mode="default", tool_name="Bash",
                       tool_input={"command": "pytest -q tests/unit", "description": "Run the unit tests"},
                       tool_response={"stdout": "....... 7 passed in 0.41s", "stderr": "", "interrupted": False})
        prompt = payload(inst, "UserPromptSubmit", sid, permission_mode="default",
                         prompt="Add a table for invoices and its migration")
        start = payload(inst, "SessionStart", sid, source="startup")

        def told(want_team: bool, inst: Install = inst) -> Callable[[Any], bool]:
            def check(proc: Any) -> bool:
                try:
                    text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
                except (ValueError, KeyError, TypeError):
                    return False
                return f"# Memory of {inst.project.name}" in text and (("Team memory" in text) == want_team)
            return check

        def stdin_of(p: dict[str, Any], per_run: bool = False) -> Callable[[int], bytes]:
            return lambda r: json.dumps({**p, "tool_use_id": f"toolu_{r:06d}"} if per_run else p).encode()

        out += [
            Cmd(f"PostToolUse Bash, {label}", [*HOOK, "PostToolUse"], inst.env, str(inst.project),
                stdin_of(bash, True)),
            Cmd(f"UserPromptSubmit, {label}", [*HOOK, "UserPromptSubmit"], inst.env, str(inst.project),
                stdin_of(prompt)),
            Cmd(f"SessionStart, {label}", [*HOOK, "SessionStart"], inst.env, str(inst.project), stdin_of(start),
                check=told(label != "no team")),
        ]
    return out


def table(cmds: list[Cmd]) -> str:
    floor = summary_ms(cmds[0].samples)["p50"]
    ref = {c.name.split(", ", 1)[0]: summary_ms(c.samples)["p50"] for c in cmds if c.name.endswith("no team")}
    rows = []
    for c in cmds:
        s = summary_ms(c.samples)
        hook = c.name.split(", ", 1)[0]
        vs = f"{s['p50'] / ref[hook]:.2f}×" if hook in ref else ""
        rows.append([c.name, s["n"], fmt(s["p50"]), fmt(s["p90"]), fmt(s["p99"]), f"{s['p50'] / floor:.2f}×", vs,
                     c.failures or ""])
    return md_table(["command", "n", "p50 ms", "p90 ms", "p99 ms", "p50 ÷ floor", "p50 ÷ same hook, no team",
                     "failed"], rows)


def sync_state(inst: Install) -> str:
    from kenning.team.worker import read_all

    st = next(iter(read_all(inst.paths).values()), {})
    if not st:
        return "no round yet"
    return "ok" if st.get("ok") else f"failing: {str(st.get('error'))[:90]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (30 rounds)")
    ap.add_argument("--rounds", type=int, help="measured rounds (default 100, --quick 30)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    args = ap.parse_args()
    rounds = args.rounds or (30 if args.quick else 100)
    root = temp_root("kenning-bench-team-hooks-")
    out: list[str] = []

    def p(text: str = "") -> None:
        print(text, flush=True)
        out.append(text)

    started = time.monotonic()
    insts: dict[str, Install] = {}
    try:
        with hub_server() as srv:
            labels = ["no team", *(["team, hub up"] if srv else []), "team, hub down"]
            for label in labels:
                inst = Install(root / label.replace(" ", "_").replace(",", ""), project="shop")
                (inst.project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE}\n')
                inst.env["KENNING_TEAM_SYNC_SECONDS"] = "1"
                populate(inst.paths.db, {project_key(inst): 1000}, seed=3)
                insts[label] = inst
            if srv:
                up = insts["team, hub up"]
                up.env["KENNING_HUB_PASSWORD"] = srv.admin_password
                r = up.kenning("team", "init", "--dsn", srv.dsn(), "--team", "alpha", "--member", "ana")
                made = json.loads((up.data / "team-alpha-members.json").read_text())
                up.env["KENNING_HUB_PASSWORD"] = made["ana"]
                r = up.kenning("team", "join", "--dsn", srv.dsn("ana"), "--team", "alpha")
                up.env.pop("KENNING_HUB_PASSWORD")
                if r.returncode != 0:
                    raise RuntimeError(f"join failed: {r.stdout}{r.stderr}")
            join_offline(insts["team, hub down"], f"host=127.0.0.1 port={free_port()} dbname=kenning user=ana")
            for label in labels[1:]:
                seed_team(insts[label])
            for inst in insts.values():
                inst.start_worker()
            time.sleep(3)  # a few sync rounds: the down one has failed by now
            p("## Hooks while the team hub is down (`bench/team_hooks.py`)\n")
            p(run_header(command_line()))
            p(f"\n{__doc__.split(chr(10) + chr(10), 2)[2].strip()}\n")
            p("Sync state before: " + "; ".join(f"{lb}: {sync_state(insts[lb])}" for lb in labels[1:]) + ".\n")
            cmds = commands(insts)
            run_interleaved(cmds, rounds, warmup=5)
            p(f"### {rounds} rounds\n")
            p(table(cmds))
            p("\nSync state after: " + "; ".join(f"{lb}: {sync_state(insts[lb])}" for lb in labels[1:]) + ".")
            if srv is None:
                p("\n(no PostgreSQL server binaries here: the hub-up install was left out)")
            p(f"\nLoad average at the end {load_avg()}; wall time {time.monotonic() - started:.0f} s.")
            for inst in insts.values():
                inst.stop_worker()
    finally:
        for inst in insts.values():
            inst.stop_worker()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.write:
        write_section("team_hooks", "\n".join(out))
        print("\n(section team_hooks written to BENCHMARKS.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
