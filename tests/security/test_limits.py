"""Bounds on what another local user, a slow client or a careless argument can cost.

A flood of wake-up datagrams (anyone on the machine may send them) costs a few pipeline cycles
a second; a connection that never completes its request is closed; every CLI argument that
is out of range or not UTF-8 gets one line of error, never a traceback; `import` of an endless
stream stops at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kenning.hook.client import POKE_DATAGRAM
from kenning.worker.protocol import HEADER_TIMEOUT_S
from tests.conftest import Home
from tests.security import http

FLOODER = r"""
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
sent, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    try:
        s.sendto(b"kenning-poke", ("127.0.0.1", port))
        sent += 1
    except BlockingIOError:
        time.sleep(0.0005)
print(sent)
"""


def cycles(home: Home) -> int:
    from kenning.paths import read_token

    body = http(home.port, "GET", "/api/status", token=read_token(home.paths)).json()
    return int(body["worker"]["cycles"])


def test_a_poke_flood_costs_a_few_cycles_a_second(home: Home) -> None:
    assert POKE_DATAGRAM == b"kenning-poke"
    home.start_worker()
    time.sleep(0.5)
    before = cycles(home)
    kw: dict[str, int] = {"user": 65534, "group": 65534} if os.geteuid() == 0 else {}
    started = time.monotonic()
    python = "/usr/bin/python3" if kw else sys.executable  # the venv is not readable by nobody
    r = subprocess.run([python, "-I", "-c", FLOODER, str(home.port), "3"], capture_output=True, text=True,
                       timeout=30, **kw)  # type: ignore[call-overload]
    elapsed = time.monotonic() - started
    time.sleep(0.5)
    spent = cycles(home) - before
    sent = int(r.stdout.strip())
    assert sent > 1000, f"the flood sent only {sent} datagrams: the test proves nothing"
    assert spent <= 5 * (elapsed + 1), f"{sent} pokes in {elapsed:.1f} s cost {spent} cycles"


def test_connections_that_never_complete_a_request_are_closed(home: Home) -> None:
    home.start_worker()
    silent = socket.create_connection(("127.0.0.1", home.port))
    trickle = socket.create_connection(("127.0.0.1", home.port))
    kept = socket.create_connection(("127.0.0.1", home.port))  # completes one request, then idles
    kept.sendall(f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{home.port}\r\n\r\n".encode())
    for s in (silent, trickle, kept):
        s.settimeout(0.2)
    header = f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{home.port}\r\nX-Slow: ".encode() + b"a" * 1000
    closed: dict[str, float] = {}
    started = time.monotonic()
    i = 0
    while len(closed) < 3 and time.monotonic() - started < HEADER_TIMEOUT_S + 10:
        for name, s in (("silent", silent), ("trickle", trickle), ("kept", kept)):
            if name in closed:
                continue
            try:
                if name == "trickle" and i < len(header):
                    s.sendall(header[i:i + 1])
                data = s.recv(65536)
                if data == b"":
                    closed[name] = time.monotonic() - started
            except TimeoutError:
                pass
            except OSError:
                closed[name] = time.monotonic() - started
        i += 1
    for s in (silent, trickle, kept):
        s.close()
    assert set(closed) == {"silent", "trickle", "kept"}, f"still open after {HEADER_TIMEOUT_S + 10} s: {closed}"
    assert all(t <= HEADER_TIMEOUT_S + 3 for t in closed.values()), closed
    assert http(home.port, "GET", "/api/health").status == 200  # the worker itself is fine


BAD_ARGS: list[list[bytes]] = [
    [b"show", b"99999999999999999999999"],
    [b"show", b"-1"],
    [b"show", b"0x10"],
    [b"timeline", b"99999999999999999999999"],
    [b"forget", b"--id", b"99999999999999999999999", b"--dry-run"],
    [b"search", b"--session", b"99999999999999999999999", b"x"],
    [b"search", b"--limit", b"1000000000000000000000", b"x"],
    [b"search", b"--offset", b"-5", b"x"],
    [b"search", b"caf\xe9"],
    [b"search", b"--project", b"\xff\xfe", b"x"],
    [b"search", b"--type", b"\xc3", b"x"],
    [b"forget", b"--query", b"\xff", b"--dry-run"],
    [b"timeline", b"--query", b"\xff"],
    [b"stats", b"--days", b"99999999999999999999"],
    [b"stats", b"--project", b"\xff"],
    [b"worker", b"start", b"--wait", b"nan"],
    [b"worker", b"logs", b"-n", b"1e9"],
    [b"open", b"--print", b"--wait", b"-1"],
    [b"export", b"--project", b"\xff"],
    [b"export", b"--since", b"\xff"],
]


def test_every_cli_argument_gets_a_clean_error(home: Home) -> None:
    home.paths.ensure()
    for args in BAD_ARGS:
        r = subprocess.run([sys.executable, "-m", "kenning", *args], env=home.env, capture_output=True, timeout=60)
        err = r.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, (args, err[-2000:])
        assert r.returncode in (1, 2), (args, r.returncode, err[-500:])
        assert err.strip(), (args, "no message")
        assert err.strip().splitlines()[-1].startswith("kenning"), (args, err)  # argparse's usage, then one line
    # A path argument may hold any bytes the file system allows.
    odd = home.root / os.fsdecode(b"caf\xe9")
    odd.mkdir()
    r = subprocess.run([sys.executable, "-m", "kenning", "context", "--cwd", os.fsencode(odd)], env=home.env,
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("source", ["/dev/zero", "long-line", "endless-pipe"])
def test_import_of_an_endless_or_absurd_input_stops_at_once(home: Home, tmp_path: Path, source: str) -> None:
    home.paths.ensure()
    started = time.monotonic()
    if source == "/dev/zero":
        r = home.kenning("import", "/dev/zero", timeout=60)
    elif source == "long-line":
        big = tmp_path / "big.jsonl"
        with open(big, "wb") as fh:
            fh.write(b'{"kind": "observation", "title": "' + b"x" * (17 * 1024 * 1024))
        r = home.kenning("import", str(big), timeout=60)
    else:
        zero = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
        try:
            r = home.kenning("import", "-", stdin=zero.stdout, timeout=60)
        finally:
            zero.kill()
            zero.wait()
    took = time.monotonic() - started
    assert r.returncode == 1 and "nothing imported" in r.stderr, (r.returncode, r.stderr[-1000:])
    assert "Traceback" not in r.stderr
    assert took < 20, took
