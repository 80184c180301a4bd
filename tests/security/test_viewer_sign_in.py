"""`kenning open` signs the browser in without the token on any command line or in any URL.

The browser is a recording program named by ``BROWSER`` (how ``webbrowser`` is told which one
to start): its argument vector is exactly what another local user would read from
``/proc/<pid>/cmdline``. What it was given is then tried against the real worker: it works once,
within a minute, and never from another user's connection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kenning.paths import read_token
from kenning.worker.security import OneTimeCodes, new_session, session_valid
from tests.conftest import Home
from tests.security import http

RECORDER = """import json, sys
with open(sys.argv[1], "a") as fh:
    fh.write(json.dumps(sys.argv[2:]) + "\\n")
"""


def opened_with(home: Home, tmp_path: Path) -> list[str]:
    """Run the real `kenning open` with a browser that records its argv; return that argv."""
    script = tmp_path / "browser.py"
    script.write_text(RECORDER)
    record = tmp_path / "argv.jsonl"
    env = {**home.env, "BROWSER": f"{sys.executable} {script} {record} %s"}
    r = subprocess.run([sys.executable, "-m", "kenning", "open"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = record.read_text().splitlines()
    assert len(lines) == 1, lines
    return list(json.loads(lines[0]))


def sign_in(home: Home, body: dict[str, str], **kw: object) -> tuple[int | None, dict[str, object]]:
    res = http(home.port, "POST", "/api/viewer/session", body=json.dumps(body).encode(),
               headers={"Origin": f"http://127.0.0.1:{home.port}"}, **kw)  # type: ignore[arg-type]
    return res.status, res.json() if res.body else {}


def code_of(argv: list[str], home: Home) -> str:
    (url,) = [a for a in argv if a.startswith("http")]
    assert url.startswith(f"http://127.0.0.1:{home.port}/#code="), url
    return url.split("#code=", 1)[1]


def test_the_browser_gets_a_one_time_code_not_the_token(home: Home, tmp_path: Path) -> None:
    home.start_worker()
    token = read_token(home.paths)
    argv = opened_with(home, tmp_path)
    assert token and not any(token in a for a in argv), argv
    code = code_of(argv, home)
    # The page trades it for a session, which opens memory; the session is not the token.
    status, body = sign_in(home, {"code": code})
    assert status == 200, body
    session = str(body["session"])
    assert session.startswith("s1.") and token not in session
    assert http(home.port, "GET", "/api/viewer/meta", token=session).status == 200
    assert http(home.port, "GET", "/api/status", token=session).status == 200
    # Once only: whoever replays the address (history, another user's `ps`) is refused.
    status, body = sign_in(home, {"code": code})
    assert status == 401 and "already used" in str(body["error"]), body
    # A session cannot mint codes; only the token can.
    assert http(home.port, "POST", "/api/viewer/code", token=session).status == 403
    assert http(home.port, "POST", "/api/viewer/code").status == 401
    # A forged or tampered session is refused.
    forged = session[:-4] + ("0000" if not session.endswith("0000") else "1111")
    assert http(home.port, "GET", "/api/viewer/meta", token=forged).status == 401
    # The pasted token is traded the same way, and a wrong one is refused.
    assert sign_in(home, {"token": token})[0] == 200
    assert sign_in(home, {"token": token + "x"})[0] == 401
    assert sign_in(home, {"code": "0" * 32})[0] == 401
    # Nothing the browser was given is in a log.
    for log in Path(home.paths.logs).iterdir():
        data = log.read_bytes()
        assert token.encode() not in data and code.encode() not in data, log


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root to connect as another user (nobody)")
def test_a_code_from_another_users_connection_is_refused(home: Home, tmp_path: Path) -> None:
    """Another user who reads the code off the browser's command line cannot use it, even first."""
    home.start_worker()
    code = code_of(opened_with(home, tmp_path), home)
    thief = (
        "import json, socket, sys\n"
        "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10)\n"
        "body = json.dumps({'code': sys.argv[2]}).encode()\n"
        "s.sendall(b'POST /api/viewer/session HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\nConnection: close\\r\\n'\n"
        "          b'Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n' % (sys.argv[1].encode(),"
        " len(body)) + body)\n"
        "out = b''\n"
        "while True:\n"
        "    d = s.recv(65536)\n"
        "    if not d: break\n"
        "    out += d\n"
        "print(out.split(b' ')[1].decode())\n"
    )
    r = subprocess.run(["/usr/bin/python3", "-I", "-c", thief, str(home.port), code], capture_output=True,
                       text=True, timeout=30, user=65534, group=65534)
    assert r.stdout.strip() == "403", r.stdout + r.stderr
    # The theft did not burn the code for its owner.
    assert sign_in(home, {"code": code})[0] == 200


def test_codes_expire_and_sessions_are_bound_to_the_token() -> None:
    codes = OneTimeCodes(ttl=0.2)
    live, stale = codes.issue(), codes.issue()
    assert codes.redeem(live) and not codes.redeem(live)
    time.sleep(0.3)
    assert not codes.redeem(stale)
    now = time.time()
    session = new_session("token-a", now=now)
    assert session_valid("token-a", session, now=now)
    assert not session_valid("token-b", session, now=now)  # a new token ends every session
    assert not session_valid("token-a", session, now=now + 31 * 24 * 3600)  # sessions expire
