"""The worker daemon: singleton start, stop, stale pid files, the guarded HTTP API, doctor, install.

Everything runs as real processes: the ``kenning`` CLI, the detached worker it spawns, and
HTTP over a real loopback socket (stdlib ``http.client``).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kenning import spool
from kenning.paths import read_token
from tests.conftest import Home, load_fixture
from tests.support.synthetic import synthetic_sessions


def worker_processes(home: Home) -> list[int]:
    """Live ``kenning worker run`` processes serving this data dir."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if b"worker" not in cmd or b"run" not in cmd or b"kenning" not in cmd:
                continue
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"KENNING_DATA_DIR={home.data}".encode() in env and state != "Z":
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_for(cond: Any, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def reported_pid(stdout: str) -> int:
    m = re.search(r"pid (\d+)", stdout)
    assert m, stdout
    return int(m.group(1))


def call(home: Home, method: str, path: str, *, token: str | None = None,
         headers: dict[str, str] | None = None, body: bytes | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", home.port, timeout=15)
    try:
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=body, headers=h)
        res = conn.getresponse()
        raw = res.read()
    finally:
        conn.close()
    try:
        return res.status, json.loads(raw) if raw else None
    except ValueError:
        return res.status, raw


# ------------------------------------------------------------------------ lifecycle

def test_ten_concurrent_starts_make_exactly_one_worker(home: Home) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "kenning", "worker", "start", "--wait", "30"], env=home.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(10)]
    results = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, out + err
    pids = {reported_pid(out) for out, _err in results}
    assert len(pids) == 1, pids
    pid = pids.pop()
    info = json.loads(Path(home.paths.pid_file).read_text())
    assert info["pid"] == pid and info["port"] == home.port
    assert [p.name for p in Path(home.data).glob("*.pid")] == ["worker.pid"]
    time.sleep(0.5)  # a spare worker that lost the race would still be starting or exiting now
    wait_for(lambda: worker_processes(home) == [pid], what=f"a single worker process, got {worker_processes(home)}")
    log = Path(home.paths.worker_log).read_text()
    assert log.count(" listening on ") == 1, log
    status, health = call(home, "GET", "/api/health")
    assert status == 200 and health["pid"] == pid


def test_ten_concurrent_cold_session_starts_spawn_one_worker_and_lose_nothing(home: Home) -> None:
    """Ten sessions opening at once on a fresh data dir: each gets context, one worker, ten events."""
    procs = []
    for i in range(10):
        payload = load_fixture("print-mode/events/SessionStart.startup.json", cwd=str(home.project))
        payload["session_id"] = f"cold-{i}"
        p = subprocess.Popen([sys.executable, "-m", "kenning", "hook", "claude-code", "SessionStart"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=home.env,
                             cwd=str(home.project))
        procs.append((p, json.dumps(payload).encode()))
    started = time.monotonic()
    results = [p.communicate(data, timeout=60) for p, data in procs]
    assert time.monotonic() - started < 10
    for p, (out, err) in zip((p for p, _d in procs), results, strict=True):
        assert p.returncode == 0, err
        hso = json.loads(out)["hookSpecificOutput"]
        assert hso["hookEventName"] == "SessionStart" and "project" in hso["additionalContext"]
    wait_for(lambda: len(worker_processes(home)) == 1, what="the worker SessionStart started")
    home.flush()
    time.sleep(0.5)
    assert len(worker_processes(home)) == 1
    log = Path(home.paths.worker_log).read_text()
    # At most one spawn: no spare worker that found the lock taken and exited.
    assert log.count(" listening on ") == 1 and "another worker holds" not in log, log
    conn = home.db()
    try:
        sids = sorted(r[0] for r in conn.execute(
            "SELECT s.agent_session_id FROM events e JOIN sessions s ON s.id = e.session_id"))
    finally:
        conn.close()
    assert sids == sorted(f"cold-{i}" for i in range(10))
    assert not Path(home.paths.hook_log).exists() or "failed" not in Path(home.paths.hook_log).read_text()


def test_start_is_idempotent_and_stop_cleans_up(home: Home) -> None:
    first = home.kenning("worker", "start")
    assert first.returncode == 0, first.stderr
    pid = reported_pid(first.stdout)
    again = home.kenning("worker", "start")
    assert again.returncode == 0 and reported_pid(again.stdout) == pid
    st = home.kenning("worker", "status")
    assert st.returncode == 0 and json.loads(st.stdout)["pid"] == pid

    stop = home.kenning("worker", "stop")
    assert stop.returncode == 0, stop.stderr
    wait_for(lambda: not alive(pid), what="the worker to exit")
    assert not os.path.exists(home.paths.pid_file)
    st = home.kenning("worker", "status")
    assert st.returncode == 3 and "not running" in st.stdout
    assert home.kenning("worker", "stop").returncode == 0  # stopping nothing is fine

    restarted = home.kenning("worker", "start")
    assert restarted.returncode == 0
    assert reported_pid(restarted.stdout) != pid


def _write_stale_pid_file(home: Home, pid: int) -> None:
    home.paths.ensure()
    Path(home.paths.pid_file).write_text(json.dumps({
        "pid": pid, "port": home.port, "start_token": "0" * 32, "started_at": time.time() - 60,
        "version": "0.1.0"}))


def test_stale_pid_file_of_a_dead_process_is_not_the_worker(home: Home) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    _write_stale_pid_file(home, dead.pid)
    st = home.kenning("worker", "status")
    assert st.returncode == 3 and "not running" in st.stdout
    assert home.kenning("worker", "stop").returncode == 0
    started = home.kenning("worker", "start")
    assert started.returncode == 0, started.stderr
    pid = reported_pid(started.stdout)
    assert pid != dead.pid and alive(pid)
    info = json.loads(Path(home.paths.pid_file).read_text())
    assert info["pid"] == pid and info["start_token"] != "0" * 32


def test_stale_pid_file_of_an_unrelated_live_process_is_never_touched(home: Home) -> None:
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        for pid in (os.getpid(), bystander.pid):  # the test runner itself, and a plain process
            _write_stale_pid_file(home, pid)
            st = home.kenning("worker", "status")
            assert st.returncode == 3 and "not running" in st.stdout, st.stdout
        # `stop` must not signal a process just because a pid file names it.
        assert home.kenning("worker", "stop").returncode == 0
        time.sleep(0.2)
        assert bystander.poll() is None, "worker stop killed an unrelated process"
        _write_stale_pid_file(home, os.getpid())
        started = home.kenning("worker", "start")
        assert started.returncode == 0, started.stderr
        pid = reported_pid(started.stdout)
        assert pid not in (os.getpid(), bystander.pid)
        assert worker_processes(home) == [pid]
        assert home.kenning("worker", "stop").returncode == 0
        wait_for(lambda: not alive(pid), what="the worker to exit")
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


# ------------------------------------------------------------------------ HTTP API

def _some_memory(home: Home) -> None:
    home.paths.ensure()
    at = time.time() - 7200
    for events in synthetic_sessions(3, 16, seed=4, cwd=str(home.project)):
        for payload in events:
            at += 1
            spool.write(home.paths, {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"], "at": at,
                                     "project": "project", "project_root": str(home.project), "truncated": False,
                                     "payload": payload}, sync_dir=False)


def test_http_api_guards_and_answers(home: Home) -> None:
    _some_memory(home)
    home.start_worker()
    home.flush()
    token = read_token(home.paths)
    assert re.fullmatch(r"[0-9a-f]{32,}", token)
    assert (os.stat(home.paths.token).st_mode & 0o777) == 0o600

    assert call(home, "GET", "/api/health")[0] == 200
    assert call(home, "GET", "/api/status")[0] == 401
    assert call(home, "GET", "/api/status", token="wrong-" + token)[0] == 401
    assert call(home, "GET", "/api/status", token=token[:-1])[0] == 401
    assert call(home, "GET", "/api/status", headers={"X-Kenning-Token": "nope"})[0] == 401
    status, body = call(home, "GET", "/api/status", token=token)
    assert status == 200 and body["counts"]["sessions"] == 3
    assert call(home, "GET", "/api/status", headers={"X-Kenning-Token": token})[0] == 200

    # DNS rebinding: a foreign Host is refused even with the token, even for health.
    assert call(home, "GET", "/api/health", headers={"Host": "evil.example"})[0] == 403
    assert call(home, "GET", "/api/status", token=token, headers={"Host": f"evil.example:{home.port}"})[0] == 403
    assert call(home, "GET", "/api/health", headers={"Host": f"localhost:{home.port}"})[0] == 200
    # CSRF: a state-changing request from a foreign page is refused, even with the token.
    poke = "/api/spool/poke"
    assert call(home, "POST", poke, token=token, headers={"Origin": "http://evil.example"})[0] == 403
    assert call(home, "POST", poke, headers={"Origin": "http://evil.example"})[0] == 403
    assert call(home, "POST", poke, token=token, headers={"Origin": "null"})[0] == 403
    assert call(home, "POST", poke, token=token, headers={"Origin": f"http://127.0.0.1:{home.port}"})[0] == 202
    assert call(home, "POST", poke, token=token)[0] == 202
    assert call(home, "POST", poke)[0] == 401

    # Context: the API and the CLI give the same text.
    cwd = os.path.realpath(home.project)
    for attempt in range(2):  # the header shows the minute: retry once across a minute boundary
        status, body = call(home, "GET", f"/api/context?cwd={cwd}", token=token)
        assert status == 200
        cli = home.kenning("context", "--cwd", cwd)
        assert cli.returncode == 0, cli.stderr
        if cli.stdout == body["context"] + "\n" or attempt:
            break
    assert cli.stdout == body["context"] + "\n"
    assert body["project"] == "project" and "#" in body["context"] and len(body["context"]) < 10_000
    assert call(home, "GET", "/api/context", token=token)[0] == 400
    assert call(home, "GET", "/api/context?cwd=" + "a" * 5000, token=token)[0] == 400
    assert call(home, "GET", "/api/context?cwd=%00", token=token)[0] == 400

    # Observations by id: bad ids are 4xx with a message, never a crash.
    conn = home.db()
    try:
        oid, title = conn.execute("SELECT id, title FROM observations ORDER BY id LIMIT 1").fetchone()
    finally:
        conn.close()
    status, obs = call(home, "GET", f"/api/observations/{oid}", token=token)
    assert status == 200 and obs["title"] == title
    for bad in ("abc", "-1", "1.5", "99999999999999999999999", "%20"):
        status, err = call(home, "GET", f"/api/observations/{bad}", token=token)
        assert status == 400 and "error" in err, (bad, status, err)
    status, err = call(home, "GET", "/api/observations/999999", token=token)
    assert status == 404 and "error" in err
    assert call(home, "GET", f"/api/observations/{oid}")[0] == 401

    # Still the same healthy worker after all that.
    assert call(home, "GET", "/api/health")[1]["status"] == "ok"


# ------------------------------------------------------------------------ install / doctor

def test_install_doctor_uninstall(home: Home, tmp_path: Path, monkeypatch: Any) -> None:
    claude = tmp_path / "claude-config"
    claude.mkdir()
    home.env["CLAUDE_CONFIG_DIR"] = str(claude)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    settings = claude / "settings.json"
    settings.write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "echo user-hook"}]}]}}, indent=2))

    r = home.kenning("install")
    assert r.returncode == 0, r.stdout + r.stderr
    installed = json.loads(settings.read_text())
    assert installed["model"] == "opus"
    assert set(installed["hooks"]) >= {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
                                       "Stop", "SessionEnd"}
    assert "echo user-hook" in settings.read_text()

    doc = home.kenning("doctor")
    assert doc.returncode == 0, doc.stdout + doc.stderr
    for check in ("data dir", "API token", "settings", "worker", "Claude Code hooks", "hook interpreter",
                  "database", "spool", "observer"):
        assert re.search(rf"^✓ {check}:", doc.stdout, re.M), f"{check} not ok:\n{doc.stdout}"
    assert "✗" not in doc.stdout

    assert home.kenning("worker", "stop").returncode == 0
    doc = home.kenning("doctor")
    assert doc.returncode != 0
    assert re.search(r"^✗ worker: not running", doc.stdout, re.M), doc.stdout

    r = home.kenning("uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    after = json.loads(settings.read_text())
    assert after == {"model": "opus", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "echo user-hook"}]}]}}
    doc = home.kenning("doctor")
    assert doc.returncode != 0 and re.search(r"^✗ Claude Code hooks", doc.stdout, re.M), doc.stdout
