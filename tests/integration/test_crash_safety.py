"""Nothing captured is lost or doubled: SIGKILL the worker mid-work, corrupt spool files, a locked DB.

Events are spooled with ``kenning.spool.write`` in exactly the record shape the hook writes,
from realistic synthetic Claude Code payloads, then a real worker process is started,
killed at random instants and restarted until everything is processed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from kenning import spool
from tests.conftest import Home
from tests.support.synthetic import synthetic_sessions

N_SESSIONS = 20
PER_SESSION = 50  # 20 x 50 = 1,000 events


def record(home: Home, payload: dict[str, Any], at: float) -> dict[str, Any]:
    """The spool record the hook writes for one captured payload."""
    return {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"], "at": at, "project": "project",
            "project_root": str(home.project), "truncated": False, "payload": payload}


def expected_key(rec: dict[str, Any]) -> str:
    """The ledger key the worker gives an event (tool_use_id, else the spool id)."""
    tid = rec["payload"].get("tool_use_id")
    return f"{rec['event']}:{tid}" if isinstance(tid, str) and tid else rec["id"]


def spool_sessions(home: Home, n_sessions: int, per_session: int, seed: int) -> set[tuple[str, str]]:
    """Spool the events of synthetic sessions; returns their (agent session id, event key)."""
    home.paths.ensure()
    keys: set[tuple[str, str]] = set()
    at = time.time() - 3 * 3600
    for events in synthetic_sessions(n_sessions, per_session, seed=seed, cwd=str(home.project)):
        for payload in events:
            at += 0.5
            rec = record(home, payload, at)
            spool.write(home.paths, rec, sync_dir=False)
            keys.add((payload["session_id"], expected_key(rec)))
    return keys


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def worker_pid(home: Home) -> int:
    """Start the worker; its pid as ``worker start`` saw it answer, checked against the pid file."""
    pid = home.start_worker()["pid"]
    info = json.loads(Path(home.paths.pid_file).read_text())
    assert info["pid"] == pid
    return int(pid)


def kill_hard(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(pid):
        assert time.monotonic() < deadline, f"worker {pid} survived SIGKILL"
        time.sleep(0.01)


def stored_keys(home: Home) -> list[tuple[str, str]]:
    conn = home.db()
    try:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT s.agent_session_id, e.event_key FROM events e JOIN sessions s ON s.id = e.session_id")]
    finally:
        conn.close()


def progress(home: Home) -> tuple[int, int, int]:
    """(spool depth, events stored, events pending)."""
    if not os.path.exists(home.paths.db):
        return home.spool_depth(), 0, 0
    conn = home.db()
    try:
        n, pending = conn.execute("SELECT COUNT(*), COALESCE(SUM(status = 'pending'), 0) FROM events").fetchone()
        return home.spool_depth(), int(n), int(pending)
    except sqlite3.OperationalError:  # schema not created yet
        return home.spool_depth(), 0, 0
    finally:
        conn.close()


def assert_no_duplicate_observations(home: Home) -> None:
    conn = home.db()
    try:
        dup_hash = conn.execute("SELECT session_id, content_hash, COUNT(*) FROM observations "
                                "GROUP BY 1, 2 HAVING COUNT(*) > 1").fetchall()
        assert not dup_hash, [tuple(r) for r in dup_hash]
        dup_title = conn.execute("SELECT session_id, type, title, COUNT(*) FROM observations "
                                 "GROUP BY 1, 2, 3 HAVING COUNT(*) > 1").fetchall()
        assert not dup_title, [tuple(r) for r in dup_title]
        dup_summary = conn.execute("SELECT session_id, COUNT(*) FROM session_summaries "
                                   "GROUP BY 1 HAVING COUNT(*) > 1").fetchall()
        assert not dup_summary
    finally:
        conn.close()


def kill_when(home: Home, pid: int, ready: Any, rng: random.Random, timeout: float = 30) -> None:
    """SIGKILL ``pid`` a few random milliseconds after ``ready(progress)`` holds (or it exits)."""
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline and not ready(progress(home)):
        time.sleep(0.004)
    time.sleep(rng.uniform(0.0, 0.03))
    if alive(pid):
        kill_hard(pid)


def test_sigkill_at_random_instants_loses_and_doubles_nothing(home: Home) -> None:
    rng = random.Random(int(os.environ.get("KENNING_TEST_SEED", "20261130")))
    expected = spool_sessions(home, N_SESSIONS, PER_SESSION, seed=11)
    total = len(expected)
    assert total == N_SESSIONS * PER_SESSION == home.spool_depth()

    # Kill instants picked at random inside each phase of the work, whatever this machine's speed:
    # while the spool drains (rows committed, files not yet unlinked), while the observer stores
    # its rows, and at a plain random time.
    spool_left = rng.randint(100, 900)
    pending_left = rng.randint(100, 900)
    moments = [
        lambda p: p[0] <= spool_left,
        lambda p: p[0] == 0 and p[2] <= pending_left,
        None,
    ]
    seen: list[tuple[int, int, int]] = []
    pids: list[int] = []
    for ready in moments:
        pid = worker_pid(home)
        assert pid not in pids, "start reused a dead worker"
        pids.append(pid)
        if ready is None:
            time.sleep(rng.uniform(0.0, 0.3))
            kill_hard(pid)
        else:
            kill_when(home, pid, ready, rng)
        seen.append(progress(home))
        # The dead worker left its pid file behind: it must not pass for a live worker.
        assert home.kenning("worker", "status").returncode == 3
    # At least one kill landed while work was left (else the test proved nothing).
    assert any(depth > 0 or pending > 0 for depth, _n, pending in seen), seen
    print("progress after each kill (spool, events, pending):", seen)

    home.start_worker()
    home.flush(timeout=60)
    keys = stored_keys(home)
    assert len(keys) == len(set(keys)) == len(expected)
    assert set(keys) == expected
    depth, n, pending = progress(home)
    assert (depth, n, pending) == (0, len(expected), 0)
    assert os.listdir(home.paths.spool_corrupt) == []
    assert_no_duplicate_observations(home)
    conn = home.db()
    try:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == N_SESSIONS
        assert conn.execute("SELECT COUNT(*) FROM session_summaries").fetchone()[0] == N_SESSIONS
        assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # Prompt numbers are not doubled by replays either: one row per prompt, numbered 1..n.
        for sid, count, top in conn.execute("SELECT session_id, COUNT(*), MAX(prompt_number) FROM user_prompts "
                                            "GROUP BY session_id"):
            assert count == top, (sid, count, top)
    finally:
        conn.close()


def test_corrupt_spool_files_are_quarantined_and_the_rest_flows(home: Home) -> None:
    expected = spool_sessions(home, 2, 12, seed=5)
    bad = {
        "garbage": os.urandom(2048),
        "no-payload": json.dumps({"v": 1, "agent": "claude-code", "event": "Stop", "at": time.time(),
                                  "project": "project", "id": "x"}).encode(),
        "payload-not-object": json.dumps({"v": 1, "event": "Stop", "id": "y", "payload": "text"}).encode(),
        "no-session": json.dumps(record(home, {"hook_event_name": "Stop", "cwd": str(home.project)}, 1.0)
                                 | {"id": "z"}).encode(),
        "empty": b"",
        "truncated-json": b'{"v": 1, "event": "Stop", "payload": {"session_id": "s',
        # Valid JSON whose text SQLite refuses (a lone surrogate, as an older hook could write it).
        "unencodable": json.dumps(record(home, {"session_id": "s-bad", "hook_event_name": "Stop",
                                                "last_assistant_message": "SURR"}, 2.0) | {"id": "w"},
                                  ensure_ascii=False).encode().replace(b"SURR", b"\xed\xb3\xbf"),
    }
    # Name them so they sort between the good files: one bad file must not hold up later ones.
    names = sorted(p.name for p in Path(home.paths.spool).glob("*.json"))
    mid = names[len(names) // 2][:-5]
    for i, (label, data) in enumerate(bad.items()):
        Path(home.paths.spool, f"{mid}-{i}{label}.json").write_bytes(data)

    home.start_worker()
    home.flush()
    assert home.spool_depth() == 0
    quarantined = sorted(os.listdir(home.paths.spool_corrupt))
    assert len(quarantined) == len(bad), quarantined
    for i, label in enumerate(bad):
        assert (Path(home.paths.spool_corrupt) / f"{mid}-{i}{label}.json").exists()
    assert set(stored_keys(home)) == expected
    assert ("s-bad", "w") not in set(stored_keys(home))
    health = json.loads(home.kenning("worker", "status").stdout)
    assert health["status"] == "ok", health  # the pipeline kept going
    status = json.loads(home.kenning("status", "--json").stdout)
    assert status["spool_corrupt"] == len(bad)

    # The pipeline is still alive: a new event goes through.
    more = spool_sessions(home, 1, 6, seed=99)
    home.flush()
    assert set(stored_keys(home)) == expected | more


def test_database_locked_by_another_process_loses_nothing(home: Home) -> None:
    home.start_worker()
    first = spool_sessions(home, 2, 10, seed=1)
    home.flush()

    # Another process takes the write lock and holds it for 3 s while new events arrive.
    locked = threading.Event()
    release = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(home.paths.db, timeout=10, isolation_level=None)
        try:
            conn.execute("BEGIN EXCLUSIVE")
            locked.set()
            release.wait(3.0)
            conn.execute("COMMIT")
        finally:
            conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        second = spool_sessions(home, 3, 10, seed=2)
        from kenning.hook.client import read_pid_file, request
        from kenning.paths import read_token

        info = read_pid_file(home.paths)
        assert info
        request(info["port"], "POST", "/api/spool/poke", token=read_token(home.paths), timeout=2)
        time.sleep(1.0)
        # Nothing can be committed while the lock is held, so nothing may leave the spool.
        assert home.spool_depth() == len(second)
    finally:
        holder.join(timeout=15)
    home.flush(timeout=60)
    keys = stored_keys(home)
    assert len(keys) == len(set(keys))
    assert set(keys) == first | second
    assert os.listdir(home.paths.spool_corrupt) == []
    assert_no_duplicate_observations(home)


def test_database_locked_longer_than_the_busy_timeout_is_retried(home: Home) -> None:
    """Past SQLite's busy timeout the cycle fails; the worker must retry it, not drop the batch."""
    home.start_worker()
    from kenning.store.db import BUSY_TIMEOUT_MS

    conn = sqlite3.connect(home.paths.db, timeout=10, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        keys = spool_sessions(home, 1, 8, seed=3)
        from kenning.hook.client import read_pid_file, request
        from kenning.paths import read_token

        info = read_pid_file(home.paths)
        assert info
        request(info["port"], "POST", "/api/spool/poke", token=read_token(home.paths), timeout=2)
        time.sleep(BUSY_TIMEOUT_MS / 1000 + 1.5)
        assert home.spool_depth() == len(keys)
        conn.execute("COMMIT")
    finally:
        conn.close()
    home.flush(timeout=60)
    assert set(stored_keys(home)) == keys
    assert json.loads(home.kenning("worker", "status").stdout)["status"] == "ok"
