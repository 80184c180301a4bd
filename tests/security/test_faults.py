"""Faults: a spool that cannot be written, a broken settings file, a clock that runs backwards,
hundreds of sessions, and concurrent sessions through real hook processes.

Already proven elsewhere and not repeated here: a database locked by another process
(tests/integration/test_crash_safety.py), corrupt spool files (same file), a worker killed
mid-write (same file), two workers started at once (tests/integration/test_worker.py).
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kenning import spool
from kenning.hook import main as hook
from tests.conftest import REPO, Home
from tests.security import (
    bash,
    context_of,
    hook_json,
    prompt,
    session_end,
    session_start,
    stop,
    wait_until,
    write,
)

EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"]
FAST_S = 5.0  # generous: this 2-core machine is shared; the latency targets are measured in bench/


def payload_for(home: Home, event: str, sid: str = "fault-1") -> dict[str, Any]:
    p = str(home.project)
    return {
        "SessionStart": session_start(p, sid),
        "UserPromptSubmit": prompt(p, sid, "Fix the flaky upload test " + "x" * 500),
        "PostToolUse": write(p, sid, f"toolu_{sid}_w", "upload.py", "def upload():\n    return True\n" * 20),
        "PostToolUseFailure": bash(p, sid, f"toolu_{sid}_f", "pytest -q", "E   assert False\n" * 20, failed=True),
        "Stop": stop(p, sid, "Fixed it. " * 50),
        "SessionEnd": session_end(p, sid),
    }[event]


def log_lines(home: Home) -> list[str]:
    try:
        return Path(home.paths.hook_log).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []


def timed_hook(home: Home, event: str, payload: Any, **kw: Any) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    r = home.hook(event, payload, **kw)
    return r, time.monotonic() - started


def check_unwritable_spool(home: Home, how: str, **hook_kw: Any) -> None:
    for event in EVENTS:
        before = len(log_lines(home))
        r, took = timed_hook(home, event, payload_for(home, event), **hook_kw)
        out = hook_json(r)
        assert took < FAST_S, f"{how} / {event}: took {took:.2f} s"
        assert r.stderr == b"", (how, event, r.stderr[-500:])
        new = log_lines(home)[before:]
        assert any("spool write failed" in line for line in new), (how, event, new)
        if event == "SessionStart":
            assert out is not None, f"{how}: SessionStart printed nothing"
            assert isinstance(out["hookSpecificOutput"]["additionalContext"], str)
        else:
            assert out is None, (how, event, out)
            assert len(new) == 1, f"{how} / {event}: expected one log line, got {new}"
        assert all("crash" not in line for line in new), new


def test_spool_is_a_file_instead_of_a_directory(home: Home) -> None:
    """The spool cannot be created or written (read-only, or something else in its place)."""
    home.paths.ensure()
    os.rmdir(home.paths.spool_corrupt)
    os.rmdir(home.paths.spool_tmp)
    os.rmdir(home.paths.spool)
    Path(home.paths.spool).write_text("not a directory")
    check_unwritable_spool(home, "spool is a file")
    assert Path(home.paths.spool).read_text() == "not a directory"


def test_spool_tmp_is_a_file(home: Home) -> None:
    home.paths.ensure()
    os.rmdir(home.paths.spool_tmp)
    Path(home.paths.spool_tmp).write_text("")
    check_unwritable_spool(home, "spool/tmp is a file")
    assert spool.depth(home.paths) == 0


def _fsize_limit(limit: int) -> Any:
    def apply() -> None:
        # The kernel's answer to a full disk for this process: writes past `limit` bytes fail (EFBIG).
        # SIGXFSZ would kill the process instead; a disk that is full sends no signal, so ignore it.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_disk_full_while_writing_the_spool(home: Home) -> None:
    """Writes fail part-way: the hook exits 0 fast, logs once, and leaves no partial file behind."""
    home.paths.ensure()
    Path(home.paths.settings).write_text("{}")  # created now: the hook must not need to write it
    for event in EVENTS:
        before = len(log_lines(home))
        started = time.monotonic()
        payload = {**payload_for(home, event, "full-1"), **{f"pad{i}": "x" * 30_000 for i in range(4)}}
        data = json.dumps(payload).encode()
        r = subprocess.run([sys.executable, "-I", "-m", "kenning", "hook", "claude-code", event], input=data,
                           env=home.env, capture_output=True, timeout=60, cwd=str(home.project),
                           preexec_fn=_fsize_limit(64 * 1024))  # a ~120 KB event; the log stays far below
        took = time.monotonic() - started
        out = hook_json(r)
        assert took < FAST_S, (event, took)
        assert r.stderr == b"", (event, r.stderr[-500:])
        new = log_lines(home)[before:]
        assert any("spool write failed" in line for line in new), (event, new)
        if event == "SessionStart":
            assert out is not None and "hookSpecificOutput" in out
        else:
            assert out is None and len(new) == 1, (event, out, new)
        assert os.listdir(home.paths.spool_tmp) == [], "a partial temp file was left behind"
        assert spool.depth(home.paths) == 0, "a partial event became visible"


# ------------------------------------------------------------------------- broken settings

BROKEN_SETTINGS: dict[str, bytes] = {
    "not json": b"{\"port\": 1234, oops",
    "a json array": b"[1, 2, 3]",
    "binary": bytes(range(256)) * 4,
    "wrong types and ranges": json.dumps({"max_field_chars": -5, "excluded_projects": 7, "redact_secrets": "maybe",
                                          "context_max_chars": "lots", "optout_marker": 3, "mode": ["x"],
                                          "log_level": "LOUD", "unknown_key": 1}).encode(),
    "deeply nested": b"{\"a\": " + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "empty": b"",
}


def test_corrupt_settings_fall_back_to_defaults_with_a_doctor_warning(home: Home) -> None:
    home.paths.ensure()
    secret = "DB_PASSWORD=" + "hunter2hunter2"
    for i, (what, content) in enumerate(BROKEN_SETTINGS.items()):
        Path(home.paths.settings).write_bytes(content)
        sid = f"badset-{i}"
        before = spool.depth(home.paths)
        r = home.hook("UserPromptSubmit", prompt(str(home.project), sid, f"connect with {secret}"))
        assert hook_json(r) is None and r.stderr == b"", (what, r.stderr[-500:])
        assert spool.depth(home.paths) == before + 1, f"{what}: the event was not captured"
        # Defaults hold: redaction stays on whatever the file says.
        newest = spool.pending(home.paths)[-1]
        assert "hunter2hunter2" not in Path(newest).read_text(), what
        doctor = home.kenning("doctor")
        assert "Traceback" not in doctor.stderr, (what, doctor.stderr[-1500:])
        warn = [ln for ln in doctor.stdout.splitlines() if ln.startswith("! settings")]
        assert warn, f"{what}: doctor gave no settings warning:\n{doctor.stdout}"
    # A worker starts on a broken file, serves, and reports the problem in its status.
    Path(home.paths.settings).write_bytes(BROKEN_SETTINGS["not json"])
    home.start_worker()
    wait_until(lambda: spool.depth(home.paths) == 0, 30, "the worker to drain the spool")
    status = json.loads(home.kenning("status", "--json").stdout)
    assert any("settings.json" in p for p in status.get("settings_problems", [])), status
    conn = home.db()
    try:
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == len(BROKEN_SETTINGS)
    finally:
        conn.close()


# ------------------------------------------------------------------------- clocks that go back

def spool_record(home: Home, payload: dict[str, Any], at: float) -> dict[str, Any]:
    return {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"], "at": at, "project": "project",
            "project_root": str(home.project), "truncated": False, "payload": payload}


def event_rows(home: Home) -> list[tuple[str, str, str]]:
    conn = home.db()
    try:
        return [(r[0], r[1], r[2]) for r in conn.execute(
            "SELECT s.agent_session_id, e.event_key, e.status FROM events e JOIN sessions s ON s.id = e.session_id")]
    finally:
        conn.close()


def test_event_times_going_backwards_mid_session_are_processed_exactly_once(home: Home) -> None:
    home.paths.ensure()
    home.start_worker()
    p = str(home.project)
    sid = "clock-1"
    t = time.time()
    turn1 = [(prompt(p, sid, "Add a health endpoint"), t), (write(p, sid, "toolu_c1", "health.py", "OK = 1\n"), t + 1),
             (stop(p, sid, "Added health.py."), t + 2)]
    # The clock is set back by an hour (NTP step, suspend, a VM restored from a snapshot) ...
    turn2 = [(prompt(p, sid, "Now add a readiness endpoint"), t - 3600),
             (write(p, sid, "toolu_c2", "ready.py", "READY = 1\n"), t - 3599),
             (bash(p, sid, "toolu_c3", "pytest -q", "2 passed"), t - 3598), (stop(p, sid, "Added ready.py."), t - 3597)]
    # ... and jumps forward a day, then back again, within one turn.
    turn3 = [(prompt(p, sid, "Document both endpoints"), t + 86400), (write(p, sid, "toolu_c4", "API.md", "# API\n"),
             t - 7200), (stop(p, sid, "Documented them."), t + 5), (session_end(p, sid), t - 1)]
    for pl, at in turn1:
        spool.write(home.paths, spool_record(home, pl, at))
    home.flush()
    for pl, at in turn2 + turn3:
        spool.write(home.paths, spool_record(home, pl, at))
    home.flush()
    rows = event_rows(home)
    keys = [k for _s, k, _st in rows]
    assert len(rows) == len(turn1) + len(turn2) + len(turn3), rows
    assert len(set(keys)) == len(keys)
    assert all(st != "pending" for _s, _k, st in rows), rows
    assert os.listdir(home.paths.spool_corrupt) == []
    conn = home.db()
    try:
        files = json.dumps([r[0] for r in conn.execute("SELECT files_modified FROM observations")])
        dups = conn.execute("SELECT content_hash, COUNT(*) FROM observations GROUP BY 1 HAVING COUNT(*) > 1").fetchall()
        summaries = conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0]
    finally:
        conn.close()
    assert not dups
    for f in ("health.py", "ready.py", "API.md"):
        assert f in files, files
    assert summaries == 1
    status = json.loads(home.kenning("status", "--json").stdout)
    assert status["worker"]["status"] == "ok", status["worker"]


class JumpingClock:
    """``time.time`` / ``time.time_ns`` that go back an hour after every ``every`` calls."""

    def __init__(self, every: int = 7, jump: float = -3600.0) -> None:
        self.real = time.time
        self.calls = 0
        self.every = every
        self.offset = 0.0
        self.jump = jump

    def time(self) -> float:
        self.calls += 1
        if self.calls % self.every == 0:
            self.offset += self.jump
        return self.real() + self.offset

    def time_ns(self) -> int:
        return int(self.time() * 1e9)


def run_hook_in_process(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    return hook.run(["claude-code", event], io.BytesIO(json.dumps(payload).encode()))


def test_a_wall_clock_that_jumps_back_loses_and_doubles_nothing(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hooks and the pipeline see ``time.time()`` jump back repeatedly: spool ids stop sorting in
    causal order, event times go backwards, idle timers see negative ages. Nothing is lost or doubled."""
    from kenning.observer.registry import choose
    from kenning.settings import load
    from kenning.store.db import open_db
    from kenning.worker.pipeline import Pipeline

    home.paths.ensure()
    clock = JumpingClock()
    monkeypatch.setattr(time, "time", clock.time)
    monkeypatch.setattr(time, "time_ns", clock.time_ns)
    p = str(home.project)
    expected = 0
    for s in range(4):
        sid = f"jump-{s}"
        events = [("UserPromptSubmit", prompt(p, sid, f"Task {s}: add the export")),
                  ("PostToolUse", write(p, sid, f"toolu_j{s}_1", f"export_{s}.py", "X = 1\n")),
                  ("PostToolUseFailure", bash(p, sid, f"toolu_j{s}_2", "pytest", "E fail", failed=True)),
                  ("PostToolUse", bash(p, sid, f"toolu_j{s}_3", "pytest", "1 passed")),
                  ("Stop", stop(p, sid, "Done.")),
                  ("UserPromptSubmit", prompt(p, sid, "And the import")),
                  ("PostToolUse", write(p, sid, f"toolu_j{s}_4", f"import_{s}.py", "Y = 2\n")),
                  ("Stop", stop(p, sid, "Done too.")),
                  ("SessionEnd", session_end(p, sid))]
        for event, payload in events:
            assert run_hook_in_process(event, payload) is None
            expected += 1
    assert spool.depth(home.paths) == expected
    names = [os.path.basename(f) for f in spool.pending(home.paths)]
    assert names != sorted(names, key=lambda n: os.stat(os.path.join(home.paths.spool, n)).st_mtime_ns), \
        "the clock did not reorder the spool: the test tests nothing"

    settings, _problems = load(home.paths)
    conn = open_db(home.paths.db)
    try:
        observer, _note = choose(settings)
        pipe = Pipeline(home.paths, conn, observer)
        for _ in range(6):
            pipe.cycle()
            assert not pipe.stats.last_error, pipe.stats.last_error
        assert spool.depth(home.paths) == 0
        # Scrambled by the clock, some prompts were ingested after their session's SessionEnd (which
        # reopens a session, as a resume does) and their turns have no Stop after them: such a turn
        # closes after `turn_idle_seconds` of silence. Let that time pass on the real clock.
        monkeypatch.setattr(time, "time", clock.real)
        pipe.observe(now=clock.real() + settings.turn_idle_seconds + 1)
        rows = conn.execute("SELECT session_id, event_key, status FROM events").fetchall()
        pending = conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0]
        obs_files = json.dumps([r[0] for r in conn.execute("SELECT files_modified FROM observations")])
        dups = conn.execute("SELECT session_id, content_hash FROM observations GROUP BY 1, 2 HAVING COUNT(*) > 1"
                            ).fetchall()
    finally:
        conn.close()
    assert len(rows) == expected and len({(r[0], r[1]) for r in rows}) == expected
    assert pending == 0 and not dups
    for s in range(4):
        assert f"export_{s}.py" in obs_files and f"import_{s}.py" in obs_files, obs_files


# ------------------------------------------------------------------------- many sessions

def test_five_hundred_sessions_are_all_processed(home: Home) -> None:
    """500 sessions × 2 events, spooled by the hook's own code, drained by a real worker."""
    home.paths.ensure()
    p = str(home.project)
    started = time.monotonic()
    for s in range(500):
        sid = f"many-{s:03d}"
        assert run_hook_in_process("UserPromptSubmit", prompt(p, sid, f"Rename helper {s} to something clearer")) \
            is None
        assert run_hook_in_process("Stop", stop(p, sid, f"Renamed helper {s}.")) is None
    spooled = time.monotonic() - started
    assert spool.depth(home.paths) == 1000
    home.start_worker()
    t0 = time.monotonic()
    home.flush(timeout=120)
    drained = time.monotonic() - t0
    conn = home.db()
    try:
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        per = Counter(r[0] for r in conn.execute("SELECT session_id FROM events"))
        pending = conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0]
        summaries = conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0]
    finally:
        conn.close()
    print(f"\n1,000 events spooled in {spooled:.1f} s, drained in {drained:.1f} s")
    assert sessions == 500 and set(per.values()) == {2} and pending == 0
    assert summaries == 500
    ctx = context_of(home.hook("SessionStart", session_start(p, "many-next")))
    assert "Rename helper" in ctx or "Renamed helper" in ctx, ctx[:500]


# ------------------------------------------------------------------ concurrent real hooks

def _load_module() -> Any:
    spec = importlib.util.spec_from_file_location("kenning_bench_load", REPO / "bench" / "load.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_concurrent_sessions_through_real_hook_processes_are_stored_exactly_once(home: Home) -> None:
    """4 sessions × 25 events at once, each a thread running real hook processes (bench/load.py, small)."""
    load = _load_module()
    home.start_worker()
    sessions = load.make_sessions(4, 25, seed=7, cwd=str(home.project))
    expected = load.expected_counts(sessions)
    calls, wall = load.drive(home.env, str(home.project), sessions)
    failures = [c for c in calls if c.problem]
    assert not failures, failures[:5]
    assert len(calls) == 100
    home.flush(timeout=60)
    stored = load.stored_counts(str(home.paths.db), {sid for sid, _k in expected})
    assert stored == expected, (stored - expected, expected - stored)
    conn = sqlite3.connect(home.paths.db)
    try:
        assert conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0] == 0
    finally:
        conn.close()
    log = Path(home.paths.worker_log).read_text()
    assert not load.LOCKED.search(log), [ln for ln in log.splitlines() if load.LOCKED.search(ln)]
    assert "Traceback" not in log
    print(f"\n100 real hook processes in 4 threads: {wall:.1f} s")
