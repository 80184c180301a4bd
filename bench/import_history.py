"""``kenning import-history`` over a generated history: events per second, idempotence, peak memory.

    .venv/bin/python bench/import_history.py [--sessions N] [--quick] [--write]

N sessions (default 2,000; --quick 300) are written as Claude Code transcripts (one in ten as a
Codex rollout, one in twenty as a Copilot CLI log) in a scratch HOME, spread over 60 days and 8
projects, shaped like the real ones in tests/fixtures (prompts, tool_use / tool_result lines with
toolUseResult, streamed assistant text, and the bookkeeping lines real transcripts carry: attachments
and ~20 KB request copies; Copilot's tool.execution_* pairs and shell exit lines). Then the
real CLI runs ``kenning import-history`` with the offline observer (the worker it starts observes
what was imported), timed from start to "observed"; a second run must store 0 rows. Peak memory:
the importing process's max RSS over the whole history, and over one 60 MB transcript vs one of
0.5 MB (streaming: the big file must not cost more than a few MB more).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import PYTHON, Install, command_line, md_table, run_header, temp_root, verdict, write_section

DAY = 86400.0
PROJECTS = ("billing", "auth-service", "search", "ingest", "reports", "notify", "scheduler", "storage")
BLOB = "x" * 20_000


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _cc_session(rng: random.Random, sid: str, cwd: str, start: float, turns: int, pad_to: int = 0) -> list[str]:
    lines: list[str] = []
    t = start
    n = 0

    def line(obj: dict) -> None:
        nonlocal t, n
        t += rng.uniform(0.2, 3.0)
        n += 1
        uid = f"{sid}-{n:05d}-{rng.getrandbits(40):010x}"
        lines.append(json.dumps({**obj, "uuid": uid, "sessionId": sid, "cwd": cwd, "timestamp": _iso(t),
                                 "isSidechain": False}, separators=(",", ":")))

    for turn in range(turns):
        mod = f"{rng.choice(('models', 'service', 'client', 'tasks'))}{rng.randint(1, 40)}.py"
        path = f"{cwd}/src/{mod}"
        what = rng.choice(("parser", "cache", "retry", "export"))
        line({"type": "user", "message": {"role": "user",
                                          "content": f"Fix {mod}: the {what} fails on empty input (turn {turn})"}})
        line({"type": "attachment", "attachment": {"type": "hook_success", "content": ""}})
        line({"type": "api-request-blob", "message": {"role": "user", "content": BLOB}})
        test = f"pytest tests/test_{mod}"
        calls = [("Read", {"file_path": path},
                  {"type": "text", "file": {"filePath": path, "content": "def f():\n    pass\n" * 20}}, False),
                 ("Bash", {"command": test, "description": "Run tests"}, "Exit code 1\nE   AssertionError: empty input",
                  True),
                 ("Edit", {"file_path": path, "old_string": "pass", "new_string": "return []"}, {"filePath": path},
                  False),
                 ("Bash", {"command": test, "description": "Run tests again"},
                  {"stdout": "1 passed", "stderr": "", "interrupted": False}, False)]
        for i, (name, inp, result, error) in enumerate(calls):
            tid = f"toolu_{sid[:8]}{turn:02d}{i}{rng.getrandbits(40):010x}"
            line({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": tid, "name": name, "input": inp}]}})
            block = {"type": "tool_result", "tool_use_id": tid, "content": result if isinstance(result, str) else "ok",
                     "is_error": error}
            line({"type": "user", "message": {"role": "user", "content": [block]},
                  "toolUseResult": None if error else result})
        line({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"Fixed {mod}: empty input returns []."}]}})
    while pad_to and sum(len(x) + 1 for x in lines) < pad_to:  # a long session: more turns of tool calls
        lines.extend(_cc_session(rng, sid, cwd, t, 1)[1:])
        t += 10
    return lines


def _codex_session(template: list[dict], sid: str, cwd: str, start: float) -> list[str]:
    first = min(json.loads(json.dumps(r["timestamp"])) for r in template)
    t0 = time.mktime(time.strptime(first[:19], "%Y-%m-%dT%H:%M:%S"))
    out = []
    for r in template:
        rec = json.loads(json.dumps(r))
        t = time.mktime(time.strptime(rec["timestamp"][:19], "%Y-%m-%dT%H:%M:%S")) - t0 + start
        rec["timestamp"] = _iso(t)
        text = json.dumps(rec, separators=(",", ":")).replace("/tmp/codex-run-XXXX/calc-project", cwd)
        out.append(text.replace("01a233b8-f3e6-79b2-a8eb-ea4a2a86d1cd", sid))
    return out


def _copilot_session(rng: random.Random, sid: str, cwd: str, start: float, turns: int) -> list[str]:
    """A Copilot CLI events.jsonl: per turn a prompt, a failing test run, an edit, a passing run, the answer."""
    lines: list[str] = []
    t = start

    def line(kind: str, data: dict) -> None:
        nonlocal t
        t += rng.uniform(0.2, 3.0)
        lines.append(json.dumps({"type": kind, "data": data, "id": f"{sid}-{len(lines):05d}", "timestamp": _iso(t),
                                 "parentId": None}, separators=(",", ":")))

    line("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.72",
                           "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}})
    for turn in range(turns):
        mod = f"{rng.choice(('models', 'service', 'client', 'tasks'))}{rng.randint(1, 40)}.py"
        path = f"{cwd}/src/{mod}"
        line("user.message", {"content": f"Fix {mod}: the cache fails on empty input (turn {turn})",
                              "transformedContent": BLOB[:2000], "delivery": "idle"})
        calls = [("view", {"path": path}, "1. def f():\n2.     pass\n" * 20),
                 ("bash", {"command": f"pytest tests/test_{mod}", "description": "Run tests"},
                  "E   AssertionError: empty input\n<shellId: 1 completed with exit code 1>"),
                 ("edit", {"path": path, "old_str": "pass", "new_str": "return []"}, "File edited."),
                 ("bash", {"command": f"pytest tests/test_{mod}", "description": "Run tests again"},
                  "1 passed\n<shellId: 2 completed with exit code 0>")]
        for i, (name, args, result) in enumerate(calls):
            call = f"call_{sid[:8]}{turn:02d}{i}"
            line("assistant.message", {"content": "", "toolRequests": [{"toolCallId": call, "name": name,
                                                                        "arguments": args}]})
            line("tool.execution_start", {"toolCallId": call, "toolName": name, "arguments": args})
            line("tool.execution_complete", {"toolCallId": call, "success": True,
                                             "result": {"content": result, "detailedContent": result}})
        line("assistant.message", {"content": f"Fixed {mod}: empty input returns [].", "toolRequests": []})
    return lines


def generate(home: Path, projects_root: Path, sessions: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    now = time.time()
    template = [json.loads(x) for x in (Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "codex"
                                        / "rollout-calc-session.jsonl").read_text().splitlines()]
    counts = {"claude-code": 0, "codex": 0, "copilot": 0, "bytes": 0}
    for i in range(sessions):
        project = projects_root / PROJECTS[i % len(PROJECTS)]
        (project / ".git").mkdir(parents=True, exist_ok=True)
        start = now - 60 * DAY + i * (58 * DAY / sessions)
        sid = f"{rng.getrandbits(32):08x}-0000-4000-8000-{i:012d}"
        if i % 10 == 9:
            day = time.strftime("%Y/%m/%d", time.gmtime(start))
            path = home / ".codex" / "sessions" / day / f"rollout-{i:05d}-{sid}.jsonl"
            lines = _codex_session(template, sid, str(project), start)
            counts["codex"] += 1
        elif i % 20 == 14:
            path = home / ".copilot" / "session-state" / sid / "events.jsonl"
            lines = _copilot_session(rng, sid, str(project), start, rng.randint(1, 3))
            counts["copilot"] += 1
        else:
            slug = "-" + str(project).strip("/").replace("/", "-")
            path = home / ".claude" / "projects" / slug / f"{sid}.jsonl"
            lines = _cc_session(rng, sid, str(project), start, rng.randint(1, 3))
            counts["claude-code"] += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (start + 3600, start + 3600))
        counts["bytes"] += path.stat().st_size
    return counts


# The CLI in a child that reports its own peak RSS: VmHWM of its memory map (ru_maxrss would carry the
# parent's high-water mark across fork and exec).
_RUN = ("import sys; from kenning.__main__ import main; rc = main(sys.argv[1:]); "
        "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')); "
        "print('VMHWM', hwm.split()[1]); sys.exit(rc)")


def _import(inst: Install, env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """Run ``kenning import-history`` as a child; (result, seconds, its peak RSS in KiB)."""
    t0 = time.monotonic()
    r = subprocess.run([PYTHON, "-c", _RUN, "import-history", *args], env=env, capture_output=True, text=True,
                       timeout=3600, cwd=str(inst.project))
    seconds = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    peak = next(int(x.split()[1]) for x in r.stdout.splitlines() if x.startswith("VMHWM"))
    r.stdout = "\n".join(x for x in r.stdout.splitlines() if not x.startswith("VMHWM"))
    return r, seconds, peak


def _count(db: Path, sql: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def _peak_for_one(size: int) -> int:
    """Max RSS (KiB) of `import-history --no-observe` over one transcript of about ``size`` bytes."""
    root = temp_root("kenning-bench-import1-")
    try:
        inst = Install(root)
        home = root / "home"
        project = root / "one"
        (project / ".git").mkdir(parents=True)
        lines = _cc_session(random.Random(3), "big-0000", str(project), time.time() - 5 * DAY, 1, pad_to=size)
        path = home / ".claude" / "projects" / "-one" / "big-0000.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(lines) + "\n")
        env = {**inst.env, "HOME": str(home), "KENNING_PROVIDER": "rules"}
        env.pop("CLAUDE_CONFIG_DIR", None)
        _r, _s, peak = _import(inst, env, "--no-observe")
        return peak
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    n = args.sessions or (300 if args.quick else 2000)
    root = temp_root("kenning-bench-import-")
    try:
        inst = Install(root)
        home = root / "home"
        t0 = time.monotonic()
        counts = generate(home, root / "projects", n)
        gen_s = time.monotonic() - t0
        env = {**inst.env, "HOME": str(home), "KENNING_PROVIDER": "rules"}
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):
            env.pop(var, None)
        first, first_s, peak_all = _import(inst, env)
        db = inst.data / "kenning.db"
        events = _count(db, "SELECT COUNT(*) FROM events")
        observations = _count(db, "SELECT COUNT(*) FROM observations")
        pending = _count(db, "SELECT COUNT(*) FROM events WHERE status = 'pending'")
        days = _count(db, "SELECT COUNT(DISTINCT date(created_at, 'unixepoch')) FROM observations")
        second, second_s, _ = _import(inst, env)
        events2 = _count(db, "SELECT COUNT(*) FROM events")
        inst.stop_worker()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    small_kib = _peak_for_one(512 * 1024)
    big_kib = _peak_for_one(60 * 1024 * 1024)
    rate = events / first_s
    out = [run_header(command_line()),
           f"Generated {n:,} sessions ({counts['claude-code']:,} Claude Code transcripts, {counts['codex']:,} Codex "
           f"rollouts, {counts['copilot']:,} Copilot CLI logs, {counts['bytes'] / 1e6:.0f} MB) in {gen_s:.1f} s. "
           "Import with the offline observer, the "
           "worker it starts observing what was stored; timed from the command's start to its exit.",
           md_table(["measure", "value", "target"], [
               ["first run: events stored", f"{events:,}", ""],
               ["first run: wall time (read, store, observe)", f"{first_s:.1f} s", ""],
               ["throughput, end to end", f"{rate:,.0f} events/s", f"≥ 200 {verdict(rate >= 200)}"],
               ["observations made / events still pending", f"{observations:,} / {pending}", "pending 0"],
               ["distinct days in the observations", f"{days}", "the history's (~58)"],
               ["second run: new rows / wall time", f"{events2 - events} / {second_s:.1f} s",
                f"0 {verdict(events2 == events)}"],
               ["peak RSS of the importing process, whole history", f"{peak_all / 1024:.0f} MiB", ""],
               ["peak RSS, one 0.5 MB transcript vs one 60 MB transcript",
                f"{small_kib / 1024:.0f} MiB vs {big_kib / 1024:.0f} MiB",
                f"bounded {verdict(big_kib - small_kib < 20 * 1024)}"],
           ]),
           "First run's last lines:\n\n```\n" + "\n".join(first.stdout.strip().splitlines()[-3:]) + "\n```\n\n"
           "Second run:\n\n```\n" + "\n".join(second.stdout.strip().splitlines()[-2:]) + "\n```"]
    text = "## History import (`kenning import-history`)\n\n" + "\n\n".join(out)
    print(text)
    if args.write:
        write_section("import_history", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
