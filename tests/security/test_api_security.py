"""The local API against a real worker over real HTTP: who gets in, and what hostile input can do.

The routes are enumerated from the app ``kenning.worker.app.create_app`` builds (core and
feature routes), so a route added later is covered by every check here without editing it.
Requests are written byte for byte on a raw socket: a missing, empty or foreign ``Host`` is
exactly what the test sent. The API token never travels in a URL: a fake worker records what
the real hook and CLI send.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from kenning.hook.client import health_proof
from kenning.paths import read_token
from kenning.worker.routes.viewer import PAGE_PATHS, STATIC_DIR
from kenning.worker.security import PUBLIC_PATHS
from tests.conftest import Home
from tests.security import (
    bash,
    build_app,
    context_of,
    hook_json,
    http,
    prompt,
    raw_http,
    routes_of,
    session_end,
    session_start,
    stop,
    tree_bytes,
    write,
)

# The viewer's page routes as routes_of() spells them (path parameters become 1).
PAGE_ROUTES = {p.replace("{name}", "1") for p in PAGE_PATHS}
STREAMING = {"/api/viewer/stream"}
CANARY = "zq-canary-memory-7d1f"  # in the seeded memory: must never come out without the token
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")


class Served:
    """One worker with memory, shared by the read-mostly tests of this module."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.port = home.port
        self.token = read_token(home.paths)
        self.outside = home.root / "outside"
        app, _state, conn = build_app(str(home.root / "route-listing"), home.port)
        conn.close()
        # The live stream never ends by design: the sweeps (which read every answer to its end)
        # leave it to test_the_stream_needs_the_token_and_streams below.
        self.stream_routes = [r for r in routes_of(app) if r[0] in STREAMING]
        self.routes = [r for r in routes_of(app) if r[0] not in STREAMING]


def seed_session(home: Home, sid: str = "seed-1") -> None:
    """A real session through real hook processes (worker up): prompt, tools, Stop, SessionEnd."""
    proj = str(home.project)
    events = [
        ("UserPromptSubmit", prompt(proj, sid, f"Fix the {CANARY} parser; we use uv, never pip.")),
        ("PostToolUse", write(proj, sid, f"toolu_{sid}_1", "src/parser.py", f"# {CANARY}\ndef parse():\n    pass\n")),
        ("PostToolUseFailure", bash(proj, sid, f"toolu_{sid}_2", "pytest -q", "E   AssertionError", failed=True)),
        ("PostToolUse", bash(proj, sid, f"toolu_{sid}_3", "pytest -q", "3 passed in 0.1s")),
        ("Stop", stop(proj, sid, f"Fixed the {CANARY} parser. Next: add a regression test.")),
        ("SessionEnd", session_end(proj, sid)),
    ]
    for event, payload in events:
        hook_json(home.hook(event, payload))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = Home(tmp_path_factory.mktemp("api"))
    (home.root / "outside").mkdir()
    (home.root / "outside" / "victim.json").write_text(json.dumps({"secret": "outside-canary-93c1"}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_DATA_DIR", str(home.data))
        mp.setenv("KENNING_PORT", str(home.port))
        home.start_worker()
        seed_session(home)
        home.flush()
        try:
            yield Served(home)
        finally:
            home.stop_worker()


def memory_fingerprint(home: Home) -> tuple[dict[str, int], str]:
    """Row counts of every table and the integrity check: equal before and after = nothing changed."""
    conn = home.db()
    try:
        # Virtual tables are left out: a contentless FTS5 (the term statistics' scratch) cannot be scanned.
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
        counts = {t: int(conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]) for t in tables}
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.execute("INSERT INTO observations_fts (observations_fts) VALUES ('integrity-check')")
        return counts, check
    finally:
        conn.close()


def alive_and_well(s: Served) -> None:
    r = http(s.port, "GET", "/api/health")
    assert r.status == 200 and r.json()["status"] == "ok", r


# ------------------------------------------------------------------------ authentication

def test_routes_are_enumerated_from_the_real_app(served: Served) -> None:
    paths = {p for p, _m in served.routes}
    assert {"/api/health", "/api/readiness", "/api/context", "/api/status", "/api/observations/1",
            "/api/spool/poke", "/api/flush"} <= paths, paths


def test_every_endpoint_but_health_and_readiness_needs_the_token(served: Served) -> None:
    s = served
    wrong = {"missing": None, "wrong": "0" * len(s.token), "truncated": s.token[:-1],
             "longer": s.token + "0", "empty": "", "upper-case": s.token.upper()}
    checked = 0
    for path, methods in s.routes:
        if path in PUBLIC_PATHS or path in PAGE_ROUTES:
            continue
        for method in (*methods, "DELETE", "PUT"):
            for what, tok in wrong.items():
                r = http(s.port, method, path, token=tok)
                assert r.status == 401, f"{method} {path} with {what} token: {r}"
                assert CANARY.encode() not in r.body
                checked += 1
            # The token is accepted only in a header: never from a URL, a cookie or Basic auth.
            for q in ("token", "access_token", "api_key", "key", "auth", "authorization"):
                sep = "&" if "?" in path else "?"
                r = http(s.port, method, f"{path}{sep}{q}={s.token}")
                assert r.status == 401, f"{method} {path} with ?{q}=<token>: {r}"
            import base64

            basic = base64.b64encode(f"kenning:{s.token}".encode()).decode()
            for headers in ({"Cookie": f"token={s.token}"}, {"Authorization": f"Basic {basic}"},
                            {"Authorization": s.token}, {"X-Api-Key": s.token}):
                r = http(s.port, method, path, headers=headers)
                assert r.status == 401, f"{method} {path} with {headers}: {r}"
    assert checked >= 6 * 2 * len(s.routes)
    # An unknown path under /api/ says nothing either (no 404 oracle for route discovery).
    assert http(s.port, "GET", "/api/does-not-exist").status == 401
    # With the token the same endpoints answer.
    assert http(s.port, "GET", "/api/status", token=s.token).status == 200


def test_public_endpoints_reveal_no_memory(served: Served) -> None:
    s = served
    home = s.home
    secrets = [CANARY, "parser", str(home.data), str(home.project), "project", "observations", s.token]
    for path in PUBLIC_PATHS:
        for method in ("GET", "HEAD", "OPTIONS"):
            r = http(s.port, method, path)
            assert r.status in (200, 405, 503), (method, path, r)
            low = r.body.decode("utf-8", "replace").lower()
            for secret in secrets:
                assert secret.lower() not in low, f"{method} {path} reveals {secret!r}: {r.body[:400]!r}"


def test_the_viewer_page_is_public_and_holds_no_memory(served: Served) -> None:
    """The page and its files need no token (the browser loads them before it has one): they
    must be static, never a byte of memory, the token, or where anything lives."""
    s = served
    home = s.home
    assert {p for p, _m in s.routes} >= PAGE_ROUTES
    secrets = [CANARY, "parser", str(home.data), str(home.project), s.token]
    names = sorted(os.listdir(STATIC_DIR))
    assert "index.html" in names and any(n.endswith(".js") for n in names)
    for path in ["/", *(f"/static/{n}" for n in names)]:
        r = http(s.port, "GET", path)
        assert r.status == 200, (path, r)
        with open(os.path.join(STATIC_DIR, "index.html" if path == "/" else path[len("/static/"):]), "rb") as fh:
            assert r.body == fh.read(), f"{path} is not the file as shipped"
        low = r.body.decode("utf-8", "replace").lower()
        for secret in secrets:
            assert secret.lower() not in low, f"GET {path} reveals {secret!r}"
    for path in ("/static/../token", "/static/%2e%2e%2ftoken", "/static/..%2fsettings.json", "/static/token",
                 "/static/.env", "/token", "/settings.json", "/kenning.db"):
        r = http(s.port, "GET", path)
        assert r.status in (401, 404), (path, r)
        assert s.token.encode() not in r.body and CANARY.encode() not in r.body


def test_the_stream_needs_the_token_and_streams(served: Served) -> None:
    import socket

    s = served
    assert [p for p, _m in s.stream_routes] == ["/api/viewer/stream"]
    for tok in (None, "0" * len(s.token), s.token[:-1]):
        r = http(s.port, "GET", "/api/viewer/stream", token=tok)
        assert r.status == 401 and CANARY.encode() not in r.body
    assert http(s.port, "GET", "/api/viewer/stream", token=s.token, host_header="evil.example").status == 403
    with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sock:
        sock.sendall(f"GET /api/viewer/stream HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n"
                     f"Authorization: Bearer {s.token}\r\n\r\n".encode())
        head = b""
        while b"event: status" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    assert b"unsafe-inline" not in head and b"content-security-policy" in head.lower()


# --------------------------------------------------------------------- DNS rebinding, CSRF

FOREIGN_HOSTS = [
    "evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "127.0.0.1.evil.example:{port}",
    "localhost.evil.example:{port}", "localhost.", "127.0.0.1:1", "127.0.0.1:{port}0", "127.0.0.1@evil.example",
    "[::1].evil.example", "0.0.0.0:{port}", "192.0.2.2:{port}", "127.1:{port}", "2130706433:{port}",
    "127.0.0.1:{port} evil.example", "evil.example#127.0.0.1:{port}",
]


def test_a_foreign_host_is_refused_on_every_route_even_with_the_token(served: Served) -> None:
    s = served
    for path, methods in [*s.routes, ("/api/does-not-exist", ("GET",))]:
        for method in methods:
            for host in FOREIGN_HOSTS:
                h = host.format(port=s.port)
                r = http(s.port, method, path, token=s.token, host_header=h)
                assert r.status == 403, f"{method} {path} Host {h!r}: {r}"
                assert CANARY.encode() not in r.body
            # Empty and missing Host: refused by the guard (403) or by the HTTP parser (400).
            for r in (http(s.port, method, path, token=s.token, host_header=""),
                      http(s.port, method, path, token=s.token, omit_host=True)):
                assert r.status in (400, 403), f"{method} {path} empty/missing Host: {r}"
    # HTTP/1.0 allows no Host at all: still refused.
    r = raw_http(s.port, f"GET /api/status HTTP/1.0\r\nAuthorization: Bearer {s.token}\r\n\r\n".encode())
    assert r.status == 403, r
    # What the hooks, the CLI and a browser on the machine send is accepted.
    for host in ("127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}", "127.0.0.1"):
        r = http(s.port, "GET", "/api/status", token=s.token, host_header=host.format(port=s.port))
        assert r.status == 200, (host, r)


FOREIGN_ORIGINS = [
    "http://evil.example", "https://evil.example", "null", "http://127.0.0.1:{port}.evil.example",
    "http://localhost:{port}.evil.example", "http://localhost:1", "https://127.0.0.1:{port}",
    "http://127.0.0.1", "file://", "chrome-extension://abcdefghijklmnop", "http://evil.example/http://127.0.0.1:{port}",
    "",
]


def test_a_foreign_origin_cannot_change_anything(served: Served) -> None:
    s = served
    changing = [(p, m) for p, methods in s.routes for m in methods if m in STATE_CHANGING]
    assert changing, "no state-changing route found"
    for path, method in changing:
        for origin in FOREIGN_ORIGINS:
            o = origin.format(port=s.port)
            r = http(s.port, method, path, token=s.token, headers={"Origin": o})
            assert r.status == 403, f"{method} {path} Origin {o!r}: {r}"
        # A same-origin page (the viewer) may.
        r = http(s.port, method, path, token=s.token, headers={"Origin": f"http://127.0.0.1:{s.port}"})
        assert r.status != 403, (method, path, r)


def test_no_response_allows_a_cross_origin_read(served: Served) -> None:
    """No CORS header ever: a page on another origin can never read an answer."""
    s = served
    for path, methods in s.routes:
        for method in (*methods, "OPTIONS"):
            for tok in (None, s.token):
                r = http(s.port, method, path, token=tok, headers={
                    "Origin": "http://evil.example", "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization"})
                leaked = {k: v for k, v in r.headers.items() if k.startswith("access-control-")}
                assert not leaked, (method, path, leaked)


# -------------------------------------------------------------------------- hostile input

PATH_LIKE_PARAMS = ("cwd", "project", "path", "file", "file_path", "dir", "mode", "out", "output", "dest", "to",
                    "from", "input", "name", "root", "db", "template")
TRAVERSALS = [
    "../../etc", "../../../../../../etc/passwd", "/etc/passwd", "/etc/shadow", "..", ".", "~", "~root",
    "../outside/victim.json", "../../outside/victim", "%2e%2e/%2e%2e/etc/passwd", "....//....//etc/passwd",
    "/proc/self/environ", "/dev/zero", "C:\\Windows\\win.ini", "a\x00b", "/etc/passwd\x00.json",
    "\x00", "x" * 100_000, "é" * 20_000, "\udcff",
]


def _qs(value: str, names: tuple[str, ...]) -> str:
    enc = quote(value.encode("utf-8", "surrogateescape"), safe="")
    return "&".join(f"{n}={enc}" for n in names)


def _outside_snapshot(home: Home) -> dict[str, str]:
    """Hashes of every file in the test's root outside the data dir (the project, 'outside', ...)."""
    snap = tree_bytes(home.root, skip=("kenning-data", "route-listing"))
    return {k: hashlib.sha256(v).hexdigest() for k, v in snap.items()}


def _check_harmless(r: Any, what: str, problems: list[str]) -> None:
    """Collects every problem (one failure report lists them all)."""
    if r.status is not None and r.status >= 500:
        problems.append(f"{what}: {r}")
    for leak in (b"root:x:0:0", b"outside-canary-93c1", b"[boot loader]", b"KENNING_DATA_DIR="):
        if leak in r.body:
            problems.append(f"{what}: leaked {leak!r}")


def test_path_traversal_in_every_parameter_is_rejected_or_harmless(served: Served) -> None:
    s = served
    home = s.home
    before_outside = _outside_snapshot(home)
    before_memory = memory_fingerprint(home)
    passwd = hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest()
    problems: list[str] = []
    for path, methods in s.routes:
        for method in methods:
            for value in TRAVERSALS:
                names = PATH_LIKE_PARAMS if len(value) < 1000 else PATH_LIKE_PARAMS[:2]  # huge ones: two at once
                if method in STATE_CHANGING:
                    # Writes get the traversal in the body and the query, pointed at the 'outside' dir.
                    if value.startswith("/etc") or value.startswith("/proc") or value.startswith("/dev"):
                        value = str(home.root / "outside" / "victim.json")
                    body = json.dumps({n: value for n in names}).encode()
                    r = http(s.port, method, f"{path}?{_qs(value, names)}", token=s.token, body=body,
                             headers={"Origin": f"http://127.0.0.1:{s.port}"})
                else:
                    r = http(s.port, method, f"{path}?{_qs(value, names)}", token=s.token)
                _check_harmless(r, f"{method} {path} = {value[:40]!r}", problems)
    # The known file-path parameter of the context endpoint, one at a time.
    for name in ("cwd", "project"):
        for value in TRAVERSALS:
            r = http(s.port, "GET", f"/api/context?{_qs(value, (name,))}", token=s.token)
            _check_harmless(r, f"context {name}={value[:40]!r}", problems)
            if "\x00" in value or len(value) > 4096:
                assert r.status == 400, (name, value[:40], r)
    # Traversal in the path itself never escapes the routes.
    for p in ("/api/../../etc/passwd", "/api/%2e%2e/%2e%2e/etc/passwd", "/api/observations/..%2f..%2fetc%2fpasswd",
              "/api/observations/1%00", "/../../../etc/passwd", "//etc/passwd"):
        r = http(s.port, "GET", p, token=s.token)
        _check_harmless(r, p, problems)
    assert not problems, "\n".join(problems)
    assert _outside_snapshot(home) == before_outside, "a file outside the data dir was written"
    assert hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest() == passwd
    after = memory_fingerprint(home)
    assert after[1] == "ok"
    # Reads changed nothing; writes (poke, flush …) only ever touch the data dir.
    assert after[0]["observations"] >= before_memory[0]["observations"]
    alive_and_well(s)


INJECTIONS = [
    "' OR 1=1 --", "\" OR \"\"=\"", "1; DROP TABLE observations; --", "'); DELETE FROM events; --",
    "x' UNION SELECT token FROM sqlite_master --", "parser*", "*", "title:parser", "NEAR(parser fix, 2)",
    "parser AND OR NOT", "\"unbalanced", "(", ")", "^parser", "{title narrative}: parser", "- parser", "+",
    "parser OR", "AND", "\x00", "%", "_", "\\", "'" * 500, "parser " * 2000, "🧪 ✓ 中文 parser",
    "observations_fts MATCH 'x'", "1e999", "-1", "NULL", "true", "[]", "{}",
]
TEXT_PARAMS = ("q", "query", "search", "text", "project", "cwd", "type", "types", "concepts", "files", "since",
               "until", "from", "to", "limit", "offset", "order", "ids", "id", "session", "before", "after",
               "anchor", "depth", "mode")


def test_fts_and_sql_injection_strings_are_harmless(served: Served) -> None:
    s = served
    home = s.home
    before = memory_fingerprint(home)
    problems: list[str] = []
    for path, methods in s.routes:
        for method in methods:
            for value in INJECTIONS:
                if method in STATE_CHANGING:
                    continue  # a state-changing route may legitimately change memory: see below
                r = http(s.port, method, f"{path}?{_qs(value, TEXT_PARAMS)}", token=s.token)
                if r.status is None or r.status >= 500:
                    problems.append(f"{method} {path} {value[:40]!r}: {r}")
    assert not problems, "\n".join(problems)
    assert memory_fingerprint(home) == before, "a read request changed memory"
    tables_before = set(before[0])
    for path, methods in s.routes:
        for method in methods:
            if method not in STATE_CHANGING:
                continue
            for value in INJECTIONS:
                body = json.dumps({n: value for n in TEXT_PARAMS} | {"dry_run": True}).encode()
                r = http(s.port, method, f"{path}?{_qs(value, TEXT_PARAMS)}&dry_run=1", token=s.token, body=body,
                         headers={"Origin": f"http://127.0.0.1:{s.port}"})
                if r.status is None or r.status >= 500:
                    problems.append(f"{method} {path} {value[:40]!r}: {r}")
    assert not problems, "\n".join(problems)
    after = memory_fingerprint(home)
    assert after[1] == "ok" and set(after[0]) == tables_before
    # Ids that are not integers are refused before any SQL runs.
    for bad in ("1%20OR%201=1", "1;DROP%20TABLE%20observations", "1'", "0x10", "%2D1", "1e3"):
        r = http(s.port, "GET", f"/api/observations/{bad}", token=s.token)
        assert r.status in (400, 404), (bad, r)
    alive_and_well(s)


def test_malformed_http_never_crashes_the_worker(served: Served) -> None:
    s = served
    garbage = [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),  # a TLS ClientHello
        b"GET / HTTP/1.1\r\n\r\n", b"\r\n\r\n", b"GARBAGE\r\n\r\n", os.urandom(2048),
        f"POST /api/flush HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\nContent-Length: 99999999\r\n\r\nabc".encode(),
        f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\nX: {'a' * 70000}\r\n\r\n".encode(),
        f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\nHost: evil.example\r\n\r\n".encode(),
        f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".encode(),
    ]
    for data in garbage:
        try:
            r = raw_http(s.port, data, timeout=1.5)  # some make the server wait for bytes that never come
        except (TimeoutError, OSError):
            continue
        assert r.status is None or r.status != 500, (data[:60], r)
        assert CANARY.encode() not in r.body
    alive_and_well(s)


# ---------------------------------------------------------------------- network exposure

def _listening(proto: str, port: int) -> list[str]:
    """Local addresses (hex, as in /proc/net/<proto>) bound to ``port``."""
    found: list[str] = []
    try:
        lines = Path(f"/proc/net/{proto}").read_text().splitlines()[1:]
    except OSError:
        return found
    for line in lines:
        local = line.split()[1]
        addr, _, hex_port = local.partition(":")
        if int(hex_port, 16) == port:
            found.append(addr)
    return found


def _local_ipv4_addresses() -> list[str]:
    """IPv4 addresses of this machine's interfaces (SIOCGIFADDR), loopback excluded."""
    out = []
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _idx, name in socket.if_nameindex():
            try:
                res = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))  # SIOCGIFADDR
            except OSError:
                continue
            addr = socket.inet_ntoa(res[20:24])
            if not addr.startswith("127."):
                out.append(addr)
    finally:
        s.close()
    return out


def test_the_worker_listens_on_loopback_only(served: Served) -> None:
    s = served
    loopback = "0100007F"  # 127.0.0.1 in /proc/net's little-endian hex
    tcp = _listening("tcp", s.port)
    assert tcp and set(tcp) == {loopback}, tcp
    assert _listening("tcp6", s.port) == []
    assert set(_listening("udp", s.port)) <= {loopback}
    assert _listening("udp6", s.port) == []
    addresses = _local_ipv4_addresses()
    for addr in addresses:
        with pytest.raises(OSError):
            socket.create_connection((addr, s.port), timeout=2).close()
    print(f"\nnon-loopback addresses tried: {addresses or 'none on this machine'}")


# ------------------------------------------------------------------------- files on disk

def _modes(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            p = Path(dirpath, name)
            out[str(p.relative_to(root))] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


def test_data_dir_is_private_and_a_world_readable_one_is_tightened(home: Home) -> None:
    home.data.mkdir(parents=True)
    os.chmod(home.data, 0o755)
    (home.data / "settings.json").write_text(json.dumps({"log_level": "DEBUG", "log_max_bytes": 10_000}))
    os.chmod(home.data / "settings.json", 0o600)
    # A worker.log at its size limit: the worker's first line rotates it (the new file must be private too).
    (home.data / "logs").mkdir(mode=0o700)
    (home.data / "logs" / "worker.log").write_bytes(b"x" * 10_000)
    os.chmod(home.data / "logs" / "worker.log", 0o600)
    home.start_worker()
    assert stat.S_IMODE(os.stat(home.data).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home.paths.token).st_mode) == 0o600
    # A session's worth of files (spool, database, WAL, logs rotated by size) are all private.
    for i in range(6):
        seed_session(home, f"perm-{i}")
    home.hook("Stop", b"{not json")  # one line in logs/hook.log
    home.hook("UserPromptSubmit", prompt(str(home.project), "perm-0", "#nomem from here on"))  # optout/
    home.flush()
    modes = _modes(home.data)
    for made in ("kenning.db-wal", "kenning.db-shm", "logs/hook.log", "logs/worker.log.1", "optout", "token"):
        assert made in modes, (made, sorted(modes))
    loose = {p: oct(m) for p, m in modes.items() if m & 0o077}
    assert not loose, f"readable by others: {loose}"
    assert stat.S_IMODE(os.stat(home.paths.root).st_mode) == 0o700
    doctor = home.kenning("doctor")
    assert "! data dir" not in doctor.stdout and "! API token" not in doctor.stdout, doctor.stdout


# -------------------------------------------------------------------- the token travels safely

class FakeWorker:
    """A TCP server on the worker's port recording every request; answers like the worker."""

    def __init__(self, home: Home, start_token: str) -> None:
        self.requests: list[bytes] = []
        self.start_token = start_token
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", home.port))
        self.sock.listen(16)
        self.port = home.port
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    continue
                self.requests.append(data)
                line = data.split(b"\r\n", 1)[0].decode("latin-1")
                if " /api/health" in line:
                    # It knows the start token (it wrote the pid file), so it can answer the challenge.
                    nonce = line.split("challenge=", 1)[1].split()[0] if "challenge=" in line else ""
                    body = {"service": "kenning", "status": "ok", "pid": os.getpid(), "port": self.port,
                            "proof": health_proof(self.start_token, nonce), "uptime_s": 1, "ready": True,
                            "observer": {}}
                elif " /api/context" in line:
                    body = {"project": "project", "context": "fake context", "chars": 12, "tokens": 3}
                elif " /api/status" in line:
                    body = {"counts": {}, "worker": {"pid": os.getpid()}, "spool_depth": 0}
                else:
                    body = {}
                raw = json.dumps(body).encode()
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(raw)).encode() + b"\r\nConnection: close\r\n\r\n" + raw)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


def test_the_token_never_travels_in_a_url(home: Home) -> None:
    from kenning.paths import ensure_token, write_private

    home.paths.ensure()
    token = ensure_token(home.paths)
    start_token = "fake-start-token"
    write_private(home.paths.pid_file, json.dumps({"pid": os.getpid(), "port": home.port,
                                                   "start_token": start_token}).encode())
    fake = FakeWorker(home, start_token)
    try:
        r = home.hook("SessionStart", session_start(str(home.project), "url-1"))
        assert context_of(r) == "fake context"
        home.hook("UserPromptSubmit", prompt(str(home.project), "url-1", "hello there, fix it"))
        home.kenning("status")
        home.kenning("context", "--cwd", str(home.project))
    finally:
        fake.close()
        os.unlink(home.paths.pid_file)
    assert fake.requests, "nothing reached the fake worker"
    authorised = 0
    for req in fake.requests:
        request_line = req.split(b"\r\n", 1)[0]
        assert token.encode() not in request_line, request_line
        if f"Authorization: Bearer {token}".encode() in req:
            authorised += 1
    assert authorised >= 1, [r.split(b"\r\n", 1)[0] for r in fake.requests]


def test_no_token_in_any_log_after_a_session(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps({"log_level": "DEBUG"}))
    home.start_worker()
    token = read_token(home.paths)
    r = home.hook("SessionStart", session_start(str(home.project), "log-1"))
    assert "project" in context_of(r)
    seed_session(home, "log-1")
    home.flush()
    assert home.kenning("status").returncode == 0
    assert home.kenning("worker", "logs").returncode == 0
    home.hook("Stop", b"{not json")  # the hook log gets a line too
    home.stop_worker()
    logs = tree_bytes(home.paths.logs)
    assert {"worker.log", "hook.log", "worker.stdout.log"} <= set(logs), sorted(logs)
    for name, data in logs.items():
        assert token.encode() not in data, f"the API token is in {name}"
    # Nor anywhere else a user might paste from: the pid file, settings, the spool, the database.
    everything = tree_bytes(home.data, skip=("token",))
    leaks = [name for name, data in everything.items() if token.encode() in data]
    assert leaks == [], leaks


# -------------------------------------------------------------------- mode names in settings

def test_a_mode_name_cannot_read_a_file_outside_the_modes(home: Home) -> None:
    """``mode`` comes from settings.json or KENNING_MODE: it names a mode, never a path."""
    from importlib import resources

    evil_dir = home.root / "outside"
    evil_dir.mkdir()
    evil = {"id": "evil", "observation_types": [{"id": "bugfix", "emoji": "☠EVIL☠"}]}
    (evil_dir / "evil.json").write_text(json.dumps(evil))
    bundled = str(resources.files("kenning.observer.modes"))
    user_modes = home.data / "modes"
    user_modes.mkdir(parents=True)
    names = [str(evil_dir / "evil"), os.path.relpath(evil_dir / "evil", bundled),
             os.path.relpath(evil_dir / "evil", user_modes), "../../outside/evil", "..", ".", "",
             "code/../../../../" + str(evil_dir / "evil").lstrip("/"), "code\x00", "evil\x00.json"]
    home.paths.ensure()
    seed_session(home, "mode-1")  # no worker: the hook spools, the CLI builds from SQLite below
    home.start_worker()
    home.flush()
    home.stop_worker()
    for name in names:
        (home.data / "settings.json").write_text(json.dumps({"mode": name}))
        r = home.kenning("context", "--cwd", str(home.project))
        assert r.returncode == 0, (name, r.stderr[-1500:])
        assert "☠EVIL☠" not in r.stdout, f"mode {name!r} read {evil_dir / 'evil.json'}"
        assert "Traceback" not in r.stderr, (name, r.stderr[-1500:])
        if "\x00" not in name and name:
            env = {"KENNING_MODE": name}
            out = home.hook("SessionStart", session_start(str(home.project), f"mode-{abs(hash(name))}"), env=env)
            assert "☠EVIL☠" not in context_of(out), name


# ------------------------------------------------------------------------- XML in observer output

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
 <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<observation><type>bugfix</type><title>&lol9;</title><narrative>&xxe;</narrative></observation>"""


def test_xml_entity_bomb_in_observer_output_is_not_expanded() -> None:
    parse = pytest.importorskip(
        "kenning.observer.parse",
        reason="no XML parser of observer output exists yet (kenning/observer has no parse module: the offline "
               "rules observer emits no XML); this test guards the parser the LLM observer will add")
    valid = ["bugfix", "feature", "refactor", "change", "discovery", "decision"]
    started = time.monotonic()
    if hasattr(parse, "parse_reply"):
        result = parse.parse_reply(BILLION_LAUGHS, valid)
    else:
        fn = next((getattr(parse, n) for n in ("parse_observations", "parse_output", "parse") if hasattr(parse, n)),
                  None)
        assert fn is not None, f"kenning.observer.parse exposes no parse function: {dir(parse)}"
        result = fn(BILLION_LAUGHS)
    assert time.monotonic() - started < 2.0
    text = repr(result)
    assert "lollollol" not in text and len(text) < 100_000, text[:500]
    assert "root:x:0:0" not in text


def test_the_worker_command_line_holds_no_token(served: Served) -> None:
    """Process arguments are world-readable (/proc/<pid>/cmdline): the token is never one, nor in an environment."""
    cmdlines = ""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdlines += Path(f"/proc/{entry}/cmdline").read_bytes().decode("latin-1") + "\n"
                cmdlines += Path(f"/proc/{entry}/environ").read_bytes().decode("latin-1") + "\n"
            except OSError:
                pass
    assert "worker\x00run" in cmdlines  # the worker is among them
    assert served.token not in cmdlines


# ------------------------------------------------------------------ another user on our port

SQUATTER = r"""
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        data = c.recv(65536)
        sys.stdout.write(repr(data) + "\n")
        sys.stdout.flush()
        body = b'{"service": "kenning", "status": "ok", "start_token": "a-guess", "pid": 1, "port": 1}'
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()
"""


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root to run a listener as another user (nobody)")
def test_a_port_squatted_by_another_user_never_receives_the_token(home: Home) -> None:
    """After a crash or a reboot the pid file names a port another local user may now hold: the token
    must not be sent there (by the hooks, the CLI, or any client of ``kenning.hook.client.request``)."""
    from kenning.hook import client
    from kenning.paths import ensure_token, write_private

    home.paths.ensure()
    token = ensure_token(home.paths)
    seed_session(home, "squat-0")  # no worker: spooled only
    write_private(home.paths.pid_file, json.dumps({"pid": 2 ** 22 + 7, "port": home.port,
                                                   "start_token": "the-real-one"}).encode())
    squatter = subprocess.Popen(["/usr/bin/python3", "-I", "-c", SQUATTER, str(home.port)], stdout=subprocess.PIPE,
                                text=True, user=65534, group=65534)
    try:
        assert squatter.stdout is not None and squatter.stdout.readline().strip() == "listening"
        assert client.listener_is_ours(home.port) is False
        assert client.request(home.port, "GET", "/api/status", token=token, timeout=2) is None
        assert client.request(home.port, "POST", "/api/flush", token=token, timeout=2) is None
        # The real programs, in every way they talk to the worker.
        ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "squat-1")))
        assert isinstance(ctx, str)
        home.hook("UserPromptSubmit", prompt(str(home.project), "squat-1", "how does the parser handle tabs?"))
        for args in (("status",), ("context", "--cwd", str(home.project)), ("doctor",), ("show", "1")):
            home.kenning(*args, timeout=60)
    finally:
        squatter.kill()
        out, _err = squatter.communicate(timeout=10)
    assert token not in out, "the API token was sent to another user's listener"
    assert out.strip(), "nothing reached the squatter: the test proves nothing"


def test_the_listener_check_accepts_our_own_worker(served: Served) -> None:
    from kenning.hook import client

    assert client.listener_is_ours(served.port) is True
    res = client.request(served.port, "GET", "/api/status", token=served.token, timeout=10)
    assert res is not None and res[0] == 200
