"""Is that our worker? Proven by a challenge, never by a secret the public health route hands out.

A squatter that recorded every answer the real worker ever gave (``/api/health`` is public) and
then takes its port after a crash must not pass for it: not with the hooks, not with the CLI,
and `worker start`, `doctor` and `status` name it (pid and program) with the fix, at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from kenning.hook import client
from tests.conftest import Home
from tests.security import context_of, http, session_start, wait_until
from tests.security.test_api_security import seed_session

REPLAYER = r"""
import socket, sys
body = sys.argv[2].encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                  b"Connection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()
"""


def start_token(home: Home) -> str:
    info = client.read_pid_file(home.paths)
    assert info, "no pid file"
    return str(info["start_token"])


def test_health_reveals_nothing_that_proves_identity(home: Home) -> None:
    home.start_worker()
    secret = start_token(home)
    plain = http(home.port, "GET", "/api/health")
    assert plain.status == 200 and secret not in plain.body.decode(), plain.body
    a = http(home.port, "GET", "/api/health?challenge=" + "a" * 32).json()
    b = http(home.port, "GET", "/api/health?challenge=" + "b" * 32).json()
    assert a["proof"] == client.health_proof(secret, "a" * 32) and a["proof"] != b["proof"]
    assert secret not in json.dumps(a) + json.dumps(b)
    assert http(home.port, "GET", "/api/health?challenge=zz").status == 400
    assert client.worker_health(home.paths, home.port, timeout=5) is not None


def test_a_squatter_replaying_recorded_answers_is_named_and_never_trusted(home: Home) -> None:
    health = home.start_worker()
    seed_session(home, "ident-1")
    home.flush()
    # Everything a stranger could have collected while the worker ran, merged into one answer.
    recorded = http(home.port, "GET", "/api/health").json()
    recorded.update(http(home.port, "GET", "/api/health?challenge=" + "c" * 32).json())
    recorded["start_token"] = start_token(home)  # even the pid file's secret, were it ever leaked
    os.kill(int(health["pid"]), signal.SIGKILL)  # a crash: the pid file stays behind
    wait_until(lambda: not client.pid_alive(int(health["pid"])) or _zombie(int(health["pid"])), 10, "worker gone")
    kw: dict[str, object] = {"user": 65534, "group": 65534} if os.geteuid() == 0 else {}
    squatter = subprocess.Popen(["/usr/bin/python3" if kw else "python3", "-I", "-c", REPLAYER, str(home.port),
                                 json.dumps(recorded)], stdout=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]
    try:
        assert squatter.stdout is not None and squatter.stdout.readline().strip() == "listening"
        assert client.worker_health(home.paths, home.port, timeout=5) is None
        # `worker start` names the squatter at once instead of waiting out its timeout.
        started = time.monotonic()
        r = home.kenning("worker", "start", "--wait", "20")
        took = time.monotonic() - started
        assert r.returncode == 1 and took < 5, (took, r.stdout, r.stderr)
        expected = f"port {home.port} is in use by pid {squatter.pid} (python3)" if os.geteuid() == 0 \
            else f"port {home.port} is in use by"
        assert expected in r.stderr and "KENNING_PORT" in r.stderr, r.stderr
        for args in (("doctor",), ("status",), ("worker", "status")):
            out = home.kenning(*args)
            assert "Traceback" not in out.stderr, (args, out.stderr)
            if args != ("worker", "status"):
                assert expected in out.stdout, (args, out.stdout)
        # The hooks: SessionStart exits 0 in budget and gives the memory from the file itself.
        started = time.monotonic()
        ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "ident-2")))
        assert time.monotonic() - started < 5
        assert "zq-canary-memory-7d1f" in ctx or "parser" in ctx, ctx
    finally:
        squatter.kill()
        squatter.communicate(timeout=10)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("body", [b'{"service": "kenning"}', b"[]", b"not json", b'{"service": "kenning", "pid": "x"}'])
def test_doctor_and_status_never_crash_on_a_stranger(home: Home, body: bytes) -> None:
    """Whatever answers on the port (here with no pid file at all), the commands explain, not crash."""
    home.paths.ensure()
    squatter = subprocess.Popen(["python3", "-I", "-c", REPLAYER, str(home.port), body.decode()],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout is not None and squatter.stdout.readline().strip() == "listening"
        for args in (("doctor",), ("status",), ("status", "--json")):
            out = home.kenning(*args)
            assert "Traceback" not in out.stderr, (args, out.stderr)
        assert f"port {home.port} is in use by pid {squatter.pid}" in home.kenning("doctor").stdout
    finally:
        squatter.kill()
        squatter.communicate(timeout=10)


def _context_path(home: Home) -> str:
    return "/api/context?cwd=" + client.quote(str(home.project))


def test_one_round_trip_proves_the_worker_in_the_answer_itself(home: Home) -> None:
    """SessionStart's single request: the context answer carries the proof for a nonce of this request."""
    home.start_worker()
    seed_session(home, "ident-3")
    home.flush()
    info = client.read_pid_file(home.paths)
    assert info
    answer = client.proven_get(home.paths, info, _context_path(home), timeout=5)
    assert answer is not None and "parser" in answer["context"] and answer["port"] == home.port
    assert start_token(home) not in json.dumps(answer)
    bad = http(home.port, "GET", _context_path(home) + "&challenge=zz", token=client.token(home.paths))
    assert bad.status == 400
    # A pid file whose start token is not the worker's: the same answer does not count.
    assert client.proven_get(home.paths, {**info, "start_token": "f" * 32}, _context_path(home), timeout=5) is None


def test_one_round_trip_never_sends_the_token_where_the_kernel_cannot_vouch(
        home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """No listener, a listener of another user, or a kernel that cannot say: no connection at all
    (the hook then proves the worker with a health check before any token leaves it)."""
    import socket
    import threading

    home.paths.ensure()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    accepted: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.settimeout(2)
            try:
                accepted.append(c.recv(65536))
            except OSError:
                pass
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    info = {"pid": os.getpid(), "port": port, "start_token": "a" * 32}
    try:
        for answer in (None, [], [(os.getuid() + 1, 1)], [(os.getuid(), 1), (os.getuid() + 1, 2)]):
            monkeypatch.setattr(client, "listeners", lambda _port, a=answer: a)
            assert client.proven_get(home.paths, info, "/api/context?cwd=%2F", timeout=1) is None
        assert accepted == []
        monkeypatch.setattr(client, "listeners", lambda _port: [(os.getuid(), 1)])
        assert client.proven_get(home.paths, info, "/api/context?cwd=%2F", timeout=1) is None  # no proof
        assert len(accepted) == 1 and b"challenge=" in accepted[0]
    finally:
        srv.close()


def test_a_worker_that_accepts_and_never_answers_costs_the_budget_once_and_starts_nothing(home: Home) -> None:
    """Ours by the kernel's word, but hung: SessionStart builds from the file itself once its budget is
    spent, and does not try to start a second worker beside the first (it would wait again)."""
    import socket
    import threading

    home.start_worker()
    seed_session(home, "hung-1")
    home.flush()
    home.kenning("worker", "stop")
    home.paths.ensure()
    with open(home.paths.settings, "w") as fh:
        json.dump({"context_timeout_ms": 600}, fh)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", home.port))
    srv.listen(16)
    held: list[socket.socket] = []

    def hold() -> None:
        while True:
            try:
                held.append(srv.accept()[0])  # and never answer
            except OSError:
                return

    threading.Thread(target=hold, daemon=True).start()
    pid_file = {"pid": os.getpid(), "port": home.port, "start_token": "d" * 32, "version": "0.1.0"}
    with open(home.paths.pid_file, "w") as fh:
        json.dump(pid_file, fh)
    try:
        started = time.monotonic()
        ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "hung-2")))
        took = time.monotonic() - started
        assert "zq-canary-memory-7d1f" in ctx or "parser" in ctx, ctx  # from the file itself
        assert took < 0.6 + 1.5, took
        assert len(held) == 1  # one request, no health check after it, no second worker's
        with open(home.paths.pid_file) as fh:
            assert json.load(fh) == pid_file  # nothing was started
    finally:
        srv.close()
        for c in held:
            c.close()
