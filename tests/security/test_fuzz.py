"""Bounded-time fuzzing (hypothesis) of the two surfaces that take hostile input.

(a) The hook's ``run()`` in-process, for every event it knows, with arbitrary bytes, arbitrary
    JSON documents and payload-shaped objects whose fields are arbitrary JSON: it never raises,
    returns None or a dict with ``hookSpecificOutput``, and the spool only ever receives records
    the worker accepts.
(b) The worker's HTTP app, built exactly as ``kenning/worker/server.py`` builds it (security guard,
    core and feature routes, a live pipeline thread over a real database with memory in it),
    driven through Starlette's TestClient with arbitrary methods, paths, query strings, headers
    and bodies: never a 500, never an unhandled exception.

Examples are derandomized so CI is reproducible; ``KENNING_FUZZ_EXAMPLES=N`` (per test) and
``KENNING_FUZZ_RANDOM=1`` run a longer, random campaign locally.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning import spool
from kenning.hook import main as hook
from kenning.paths import Paths, read_token
from kenning.worker.pipeline import _validate
from tests.security import build_app, routes_of
from tests.support.synthetic import synthetic_sessions

EXAMPLES = int(os.environ.get("KENNING_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=5000, derandomize=os.environ.get("KENNING_FUZZ_RANDOM") != "1",
                database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                      HealthCheck.data_too_large, HealthCheck.filter_too_much])
EVENTS = sorted(hook.KNOWN_EVENTS)

# Text as hostile as JSON can carry: control characters, lone surrogates, tags, secrets' prefixes.
ANY_CHAR = st.characters(blacklist_categories=())
TRICKY = st.sampled_from(["<private>", "</private>", "<system-reminder>", "#nomem", "AKIA", "sk-ant-", "-----BEGIN ",
                          "\x00", "\udcff", "../", "/etc/passwd", "%s", "{}", "\\", "\u202e", "💥", "a" * 300])
TEXT = st.one_of(st.text(ANY_CHAR, max_size=40), TRICKY,
                 st.lists(TRICKY | st.text(max_size=8), max_size=6).map("".join))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=12)
FIELDS = ["prompt", "tool_name", "tool_input", "tool_response", "tool_use_id", "error", "last_assistant_message",
          "source", "reason", "agent_id", "agent_type", "prompt_id", "transcript_path", "hook_event_name",
          "stop_hook_active", "permission_mode", "model", "is_interrupt"]


@pytest.fixture
def hook_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Paths]:
    data = tmp_path / "data"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("KENNING_DATA_DIR", str(data))
    monkeypatch.setenv("KENNING_PORT", "1")  # nothing listens there: pokes go nowhere
    monkeypatch.setenv("KENNING_CONTEXT_TIMEOUT_MS", "50")
    monkeypatch.delenv("KENNING_INTERNAL", raising=False)
    monkeypatch.chdir(project)
    paths = Paths(str(data))
    paths.ensure()
    # Hold worker.lock as a starting worker would: SessionStart must never spawn a real worker here.
    fd = os.open(paths.worker_lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield paths
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def run_and_check(paths: Paths, event: str, raw: bytes) -> None:
    for path in spool.pending(paths):  # left by an earlier example that failed
        os.unlink(path)
    out = hook.run(["claude-code", event], io.BytesIO(raw))
    if out is not None:
        assert isinstance(out, dict) and set(out) == {"hookSpecificOutput"}, out
        hso = out["hookSpecificOutput"]
        assert hso["hookEventName"] == event and isinstance(hso.get("additionalContext", ""), str), hso
        json.loads(hook.fastjson.dumps(out))  # what main() prints is one valid JSON document
    for path in spool.pending(paths):
        rec = spool.read(path)  # raises on anything the worker could not parse
        _validate(rec)
        assert rec["event"] == event and isinstance(rec["payload"]["session_id"], str)
        os.unlink(path)
    assert os.listdir(paths.spool_tmp) == []


@pytest.mark.parametrize("event", EVENTS)
@FUZZ
@given(raw=st.binary(max_size=3000))
def test_hook_survives_arbitrary_bytes(hook_home: Paths, event: str, raw: bytes) -> None:
    run_and_check(hook_home, event, raw)


@pytest.mark.parametrize("event", EVENTS)
@FUZZ
@given(doc=JSON)
def test_hook_survives_arbitrary_json(hook_home: Paths, event: str, doc: Any) -> None:
    run_and_check(hook_home, event, json.dumps(doc).encode("utf-8", "surrogatepass"))


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    p: dict[str, Any] = {"session_id": draw(st.text(ANY_CHAR, min_size=1, max_size=60) | TRICKY)}
    cwd = draw(st.sampled_from(["project", "none", "text", "data"]))
    if cwd == "project":
        p["cwd"] = os.getcwd()
    elif cwd == "text":
        p["cwd"] = draw(TEXT)
    elif cwd == "data":
        p["cwd"] = os.environ["KENNING_DATA_DIR"]  # work inside the data dir is Kenning's own: never captured
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=8, unique=True)):
        p[name] = draw(JSON)
    if draw(st.booleans()):
        p.update(draw(st.dictionaries(TEXT, JSON, max_size=3)))
    return p


@pytest.mark.parametrize("event", EVENTS)
@FUZZ
@given(payload=payloads(), mangle=st.sampled_from(["none", "cut", "insert", "utf8"]), data=st.data())
def test_hook_survives_payload_shaped_input(hook_home: Paths, event: str, payload: dict[str, Any], mangle: str,
                                            data: st.DataObject) -> None:
    raw = json.dumps(payload).encode("utf-8", "surrogatepass")
    if mangle == "cut":
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    elif mangle == "insert":
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + data.draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif mangle == "utf8":
        raw = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")  # invalid UTF-8 too
    run_and_check(hook_home, event, raw)


# ------------------------------------------------------------------------------- the HTTP API

class Api:
    def __init__(self, client: Any, token: str, port: int, routes: list[tuple[str, tuple[str, ...]]],
                 paths: Paths) -> None:
        self.client = client
        self.token = token
        self.port = port
        self.routes = routes
        self.paths = paths


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    from starlette.testclient import TestClient

    root = tmp_path_factory.mktemp("fuzz-api")
    data = root / "data"
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    port = 38999
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KENNING_DATA_DIR", str(data))
        app, state, conn = build_app(str(data), port)
        at = time.time() - 3600
        for events in synthetic_sessions(3, 30, seed=11, cwd=str(project)):
            for payload in events:
                at += 1
                spool.write(state.paths, {"v": 1, "agent": "claude-code", "event": payload["hook_event_name"],
                                          "at": at, "project": "project", "project_root": str(project),
                                          "truncated": False, "payload": payload}, sync_dir=False)
        state.thread.start()
        assert state.thread.flush(30)
        state.ready = True
        client = TestClient(app, base_url=f"http://127.0.0.1:{port}", raise_server_exceptions=True)
        try:
            # The live stream never ends by design (test_api_security checks it on its own).
            # The viewer's page is public by design (test_api_security checks it holds no memory).
            routes = [r for r in routes_of(app) if r[0] != "/api/viewer/stream" and r[0] != "/"
                      and not r[0].startswith("/static/")]
            yield Api(client, read_token(state.paths), port, routes, state.paths)
        finally:
            client.close()
            state.thread.stop()
            state.thread.join(timeout=10)
            conn.close()


METHODS = st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
HEADER_NAMES = st.sampled_from(["Origin", "Content-Type", "Accept", "Cookie", "X-Kenning-Token", "Referer",
                                "Accept-Encoding", "X-Forwarded-For", "X-Forwarded-Host", "Range", "If-None-Match",
                                "Content-Encoding", "Last-Event-ID", "X-Fuzz"])
PARAM_NAMES = st.sampled_from(["cwd", "project", "q", "query", "limit", "offset", "id", "ids", "type", "since",
                               "until", "mode", "path", "file", "dry_run", "order", "anchor", "before", "after"])


@st.composite
def requests_(draw: st.DrawFn, routes: list[tuple[str, tuple[str, ...]]]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["route", "route-param", "random"]))
    path, methods = draw(st.sampled_from(routes))
    if kind == "route-param" and path.endswith("/1"):
        path = path[:-1] + quote(draw(TEXT).encode("utf-8", "surrogatepass"), safe="")
    elif kind == "random":
        segs = draw(st.lists(TEXT, min_size=0, max_size=4))
        path = draw(st.sampled_from(["/api/", "/", "/api/observations/"])) + "/".join(
            quote(s.encode("utf-8", "surrogatepass"), safe="") for s in segs)
    method = draw(st.sampled_from(methods) | METHODS)
    params = draw(st.lists(st.tuples(PARAM_NAMES | st.text(max_size=6), TEXT), max_size=5))
    query = "&".join(f"{quote(k.encode('utf-8', 'surrogatepass'), safe='')}="
                     f"{quote(v.encode('utf-8', 'surrogatepass'), safe='')}" for k, v in params)
    headers = draw(st.dictionaries(HEADER_NAMES, HEADER_TEXT, max_size=4))
    if draw(st.booleans()):
        headers["Origin"] = "http://127.0.0.1"  # same host: let state-changing requests reach the routes
    body_kind = draw(st.sampled_from(["none", "json", "bytes"]))
    body = b""
    if body_kind == "json":
        body = json.dumps(draw(JSON)).encode("utf-8", "surrogatepass")
        headers.setdefault("Content-Type", "application/json")
    elif body_kind == "bytes":
        body = draw(st.binary(max_size=500))
    auth = draw(st.sampled_from(["token", "token", "token", "none", "garbage"]))
    return {"method": method, "url": path + (f"?{query}" if query else ""), "headers": headers, "body": body,
            "auth": auth}


@settings(FUZZ, max_examples=EXAMPLES * 3)
@given(data=st.data())
def test_http_api_never_answers_500(api: Api, data: st.DataObject) -> None:
    req = data.draw(requests_(api.routes))
    headers = dict(req["headers"])
    if req["auth"] == "token":
        headers["Authorization"] = f"Bearer {api.token}"
    elif req["auth"] == "garbage":
        headers["Authorization"] = data.draw(HEADER_TEXT)
    if headers.get("Origin") == "http://127.0.0.1":
        headers["Origin"] = f"http://127.0.0.1:{api.port}"
    r = api.client.request(req["method"], req["url"], headers=headers, content=req["body"])
    assert r.status_code < 500 or (r.status_code == 503 and req["url"].startswith("/api/readiness")), \
        (req, r.status_code, r.text[:500])
    page = req["url"].split("?", 1)[0] == "/"  # the viewer's page: public and static by design
    if req["auth"] != "token" and not page and not any(
            req["url"].startswith(p) for p in ("/api/health", "/api/readiness")):
        assert r.status_code in (401, 403, 404, 405), (req, r.status_code, r.text[:300])


def test_the_api_fuzz_reaches_the_routes(api: Api) -> None:
    """The fuzzer's harness really serves requests (not only guard refusals)."""
    r = api.client.get("/api/status", headers={"Authorization": f"Bearer {api.token}"})
    assert r.status_code == 200 and r.json()["counts"]["sessions"] == 3
