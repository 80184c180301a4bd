"""The context hooks through real hook processes and a real worker.

PreToolUse(Read) gives a file's history; UserPromptSubmit captures the prompt exactly as
before and then gives the relevant memories. Payloads are the shapes Claude Code sent
(tests/fixtures/claude-code/print-mode/events), pointed at the test's project directory.
Every hook must exit 0 and print one JSON object or nothing, whatever the worker does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kenning.context.fence import CLOSE, OPEN
from kenning.records import ObservationDraft
from kenning.store import repo
from kenning.store.db import open_db
from tests.conftest import Home, load_fixture

READ = "print-mode/events/PreToolUse.Read.json"
PROMPT = "print-mode/events/UserPromptSubmit.json"
PAST = "past-session-0001"
TOPIC = "Invoice totals round the VAT per line with Decimal"


def output(r: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    """The hook contract: exit 0, stdout empty or exactly one JSON object."""
    assert r.returncode == 0, r.stderr[-2000:]
    text = r.stdout.decode("utf-8").strip()
    if not text:
        return None
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def prompt_context_on(home: Home) -> None:
    """Memories next to a prompt, whatever the default, with a budget no loaded test machine runs out of: these
    tests check what a prompt is given (or not given, for a reason other than time), never how fast; the budget's
    cost is measured in bench/, and test_worker_that_never_answers_costs_at_most_the_timeout sets its own."""
    home.env["KENNING_PROMPT_CONTEXT"] = "1"
    home.env["KENNING_PROMPT_CONTEXT_TIMEOUT_MS"] = "5000"


def context_of(r: subprocess.CompletedProcess[bytes], event: str) -> str:
    out = output(r)
    assert out is not None, f"{event} printed nothing; stderr: {r.stderr[-500:]!r}"
    assert set(out) == {"hookSpecificOutput"}  # no decision, no permission, no continue:false
    hso = out["hookSpecificOutput"]
    assert set(hso) == {"hookEventName", "additionalContext"}
    assert hso["hookEventName"] == event
    text = hso["additionalContext"]
    assert text.startswith(OPEN) and text.endswith(CLOSE) and len(text) < 10_000
    return str(text)


def read_payload(home: Home, path: Path, session: str = "reader-session", **extra: Any) -> dict[str, Any]:
    p = load_fixture(READ, cwd=str(home.project))
    p["session_id"] = session
    p["tool_input"] = {"file_path": str(path)}
    p.update(extra)
    return p


def prompt_payload(home: Home, text: str, session: str = "asker-session") -> dict[str, Any]:
    p = load_fixture(PROMPT, cwd=str(home.project))
    p["session_id"] = session
    p["prompt"] = text
    return p


def remember(home: Home, title: str, *, files: list[str] | None = None, modified: list[str] | None = None,
             at: float | None = None, kind: str = "decision", session: str = PAST) -> int:
    """Store an observation as the worker would (the migrations run first)."""
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        with repo.transaction(conn):
            sid = repo.upsert_session(conn, platform="claude-code", agent_session_id=session, project=home.key,
                                      project_root=os.path.realpath(home.project),
                                      cwd=str(home.project), at=(at or time.time()) - 60)
            oid = repo.insert_observation(conn, sid, home.key, ObservationDraft(
                type=kind, title=title, narrative=title, created_at=at or time.time(),
                files_read=files or [], files_modified=modified or []), "rules")
        assert oid is not None
        return oid
    finally:
        conn.close()


def filler_session(conn: Any, home: Home) -> int:
    """The session the filler observations of a test belong to (inside the caller's transaction)."""
    return repo.upsert_session(conn, platform="claude-code", agent_session_id="filler", project=home.key,
                               project_root=os.path.realpath(home.project), cwd=str(home.project),
                               at=time.time() - 1900)


def fill(home: Home, n: int = 50) -> None:
    """Newer, unrelated observations: the session-start index (50 rows) lists these, not older ones."""
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        with repo.transaction(conn):
            sid = filler_session(conn, home)
            for i in range(n):
                repo.insert_observation(conn, sid, home.key, ObservationDraft(
                    type="change", title=f"Changed the build script step {i}", created_at=time.time() - 1800 + i),
                    "rules")
    finally:
        conn.close()


def big_file(home: Home, rel: str = "src/totals.py", size: int = 4000, age: float = 3600) -> Path:
    path = home.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# totals\n" + "x = 1\n" * (size // 6))
    t = time.time() - age
    os.utime(path, (t, t))
    return path


# ---------------------------------------------------------------------- file history

def test_read_of_a_remembered_file_gets_its_history_once(home: Home) -> None:
    path = big_file(home)
    oid = remember(home, "Totals now round VAT per line", files=["src/totals.py"], modified=["src/totals.py"],
                   at=time.time() - 60, kind="bugfix")
    other = remember(home, "Unrelated file", files=["src/other.py"], at=time.time() - 60, session="s2")
    text = context_of(home.hook("PreToolUse", read_payload(home, path)), "PreToolUse")
    assert f"#{oid} " in text and "Totals now round VAT per line ✎" in text and "🔴" in text
    assert f"#{other} " not in text
    assert "src/totals.py" in text
    # Same file, same session, nothing new: silent. Another session: told again.
    assert output(home.hook("PreToolUse", read_payload(home, path))) is None
    assert f"#{oid} " in context_of(home.hook("PreToolUse", read_payload(home, path, session="s3")), "PreToolUse")
    # Something newer about it: told again in the first session.
    newer = remember(home, "Totals handle negative amounts", files=["src/totals.py"], at=time.time() - 30,
                     session="s4")
    text = context_of(home.hook("PreToolUse", read_payload(home, path)), "PreToolUse")
    assert f"#{newer} " in text and f"#{oid} " in text
    assert home.spool_depth() == 0  # PreToolUse is never captured


def test_read_hook_says_nothing_for_small_missing_changed_or_unknown_files(home: Home) -> None:
    small = big_file(home, "src/small.py", size=600)
    changed = big_file(home, "src/changed.py", age=0)
    unknown = big_file(home, "src/unknown.py")
    for rel in ("src/small.py", "src/changed.py", "src/gone.py"):
        remember(home, f"note on {rel}", files=[rel], at=time.time() - 600)
    for path in (small, changed, unknown, home.project / "src" / "gone.py", home.project / "src"):
        assert output(home.hook("PreToolUse", read_payload(home, path))) is None


def test_read_hook_without_database_or_with_odd_input_is_silent(home: Home) -> None:
    path = big_file(home)
    assert output(home.hook("PreToolUse", read_payload(home, path))) is None  # no database at all
    remember(home, "note", files=["src/totals.py"], at=time.time() - 60)
    for tool_input in ({}, {"file_path": 42}, {"file_path": ""}, {"file_path": "a\x00b"}, "not a dict",
                       {"file_path": "x" * 5000}):
        p = read_payload(home, path)
        p["tool_input"] = tool_input
        assert output(home.hook("PreToolUse", p)) is None
    p = read_payload(home, path)
    p["tool_name"] = "Bash"  # the matcher says Read; the hook checks again
    assert output(home.hook("PreToolUse", p)) is None
    assert output(home.hook("PreToolUse", b'{"session_id": "x", "tool_name": "Read", "tool_input": {')) is None


def test_read_hook_honours_the_settings(home: Home) -> None:
    path = big_file(home, size=1000)
    remember(home, "note", files=["src/totals.py"], at=time.time() - 60)
    assert output(home.hook("PreToolUse", read_payload(home, path))) is None  # under 1,500 bytes
    env = {"KENNING_FILE_CONTEXT_MIN_BYTES": "100"}
    assert context_of(home.hook("PreToolUse", read_payload(home, path), env=env), "PreToolUse")
    env = {"KENNING_FILE_CONTEXT_MIN_BYTES": "100", "KENNING_FILE_CONTEXT": "false"}
    assert output(home.hook("PreToolUse", read_payload(home, path, session="n"), env=env)) is None
    env = {"KENNING_FILE_CONTEXT_MIN_BYTES": "100", "KENNING_EXCLUDED_PROJECTS": "project"}
    assert output(home.hook("PreToolUse", read_payload(home, path, session="m"), env=env)) is None


def test_file_history_from_a_real_session_through_the_worker(home: Home) -> None:
    """Session 1 writes a file (real hooks, real worker, rules observer); session 2 reads it."""
    home.start_worker()
    target = home.project / "src" / "export.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    content = "def export_csv(rows):\n" + "    pass  # one row per invoice\n" * 80
    target.write_text(content)
    t = time.time() - 5
    os.utime(target, (t, t))
    s1 = "writer-session"
    p = prompt_payload(home, "Add a CSV export for invoices in src/export.py", session=s1)
    output(home.hook("UserPromptSubmit", p))
    w = load_fixture("print-mode/events/PostToolUse.Write.json", cwd=str(home.project))
    w["session_id"] = s1
    w["tool_input"] = {"file_path": str(target), "content": content}
    w["tool_response"] = {**w["tool_response"], "filePath": str(target), "content": content}
    output(home.hook("PostToolUse", w))
    stop = load_fixture("print-mode/events/Stop.json", cwd=str(home.project))
    stop["session_id"] = s1
    output(home.hook("Stop", stop))
    home.flush()
    text = context_of(home.hook("PreToolUse", read_payload(home, target, session="reader")), "PreToolUse")
    assert "src/export.py" in text and "✎" in text


# -------------------------------------------------------------------- prompt context

def finish(home: Home, *sessions: str) -> None:
    """End each session's turn (Stop) and wait until the worker has stored everything."""
    for sid in sessions:
        stop = load_fixture("print-mode/events/Stop.json", cwd=str(home.project))
        stop["session_id"] = sid
        output(home.hook("Stop", stop))
    home.flush()


def stored_prompts(home: Home) -> list[tuple[str, str]]:
    conn = home.db()
    try:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT s.agent_session_id, u.prompt_text FROM user_prompts u JOIN sessions s ON s.id = u.session_id "
            "ORDER BY u.id")]
    finally:
        conn.close()


def test_prompt_gets_relevant_memories_and_is_captured_as_before(home: Home) -> None:
    prompt_context_on(home)
    home.start_worker()
    oid = remember(home, TOPIC, at=time.time() - 3600)
    other = remember(home, "The CI cache key includes the lock file", at=time.time() - 3600, session="s2")
    fill(home)  # the session-start index lists 50 newer notes: the old one is news to the session
    ask = "How do the invoice totals round the VAT per line?"
    text = context_of(home.hook("UserPromptSubmit", prompt_payload(home, ask)), "UserPromptSubmit")
    assert f"#{oid} " in text and TOPIC in text and f"#{other} " not in text
    # The same memory is not given again next to the next prompt of that session.
    assert output(home.hook("UserPromptSubmit", prompt_payload(home, ask + " Again?"))) is None
    # Off: the same prompt is captured identically and nothing is printed.
    r = home.hook("UserPromptSubmit", prompt_payload(home, ask, session="off-session"),
                  env={"KENNING_PROMPT_CONTEXT": "0"})
    assert output(r) is None
    finish(home, "asker-session", "off-session")
    assert stored_prompts(home) == [("asker-session", ask), ("asker-session", ask + " Again?"),
                                    ("off-session", ask)]


def test_capture_record_is_the_same_with_and_without_prompt_context(home: Home) -> None:
    """Worker down: nothing printed, fast, and the spooled record equals the context-off one."""
    remember(home, TOPIC, at=time.time() - 3600)
    ask = "How do the invoice totals round the VAT per line? <private>my secret plan</private>"
    records = []
    for setting in ("1", "0"):
        t0 = time.monotonic()
        r = home.hook("UserPromptSubmit", prompt_payload(home, ask), env={"KENNING_PROMPT_CONTEXT": setting})
        took = time.monotonic() - t0
        assert output(r) is None
        assert took < 1.5
        files = sorted(Path(home.paths.spool).glob("*.json"))
        assert len(files) == 1
        rec = json.loads(files[0].read_text())
        files[0].unlink()
        rec.pop("at"), rec.pop("id", None)  # when and which file: differ by nature
        records.append(rec)
    assert records[0] == records[1]
    assert "my secret plan" not in json.dumps(records[0])


def test_prompts_that_get_nothing(home: Home) -> None:
    prompt_context_on(home)
    home.start_worker()
    remember(home, TOPIC, at=time.time() - 3600)
    nothing = [
        "Write a haiku about the ocean and the moon",                              # no memory of it
        "VAT per line?",                                                           # shorter than 20 characters
        "<task-notification><task-id>b1</task-id>Invoice totals round the VAT per line with Decimal: done"
        "</task-notification>",                                                    # not typed by the user
        "<private>How do the invoice totals round the VAT per line?</private>",    # entirely private
    ]
    for i, text in enumerate(nothing):
        assert output(home.hook("UserPromptSubmit", prompt_payload(home, text, session=f"n{i}"))) is None, text
    # The opt-out marker: this prompt and every later one of the session get nothing (and are not kept).
    ask = "How do the invoice totals round the VAT per line?"
    assert output(home.hook("UserPromptSubmit", prompt_payload(home, ask + " #nomem", session="opt"))) is None
    assert output(home.hook("UserPromptSubmit", prompt_payload(home, ask, session="opt"))) is None
    # Excluded project: nothing either.
    r = home.hook("UserPromptSubmit", prompt_payload(home, ask, session="ex"),
                  env={"KENNING_EXCLUDED_PROJECTS": "project"})
    assert output(r) is None
    finish(home, "n0", "n1", "n2", "n3", "opt", "ex")
    kept = [s for s, _t in stored_prompts(home)]
    assert "opt" not in kept and "ex" not in kept
    assert {"n0", "n1", "n2"} <= set(kept)  # captured as before, just nothing given back


def test_worker_that_never_answers_costs_at_most_the_timeout(home: Home) -> None:
    """A process on the worker's port that accepts and never answers: nothing printed, in time."""
    home.env["KENNING_PROMPT_CONTEXT"] = "1"  # whatever the default
    remember(home, TOPIC, at=time.time() - 3600)
    srv = socket.socket()
    srv.bind(("127.0.0.1", home.port))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    home.paths.ensure()
    Path(home.paths.pid_file).write_text(json.dumps({"pid": os.getpid(), "port": home.port,
                                                     "start_token": "not-the-worker"}))
    try:
        for timeout_ms in ("150", "500"):
            t0 = time.monotonic()
            r = home.hook("UserPromptSubmit", prompt_payload(home, "How do the invoice totals round the VAT?"),
                          env={"KENNING_PROMPT_CONTEXT_TIMEOUT_MS": timeout_ms})
            took = time.monotonic() - t0
            assert output(r) is None
            assert took < 1.5, took
    finally:
        stop.set()
        srv.close()
        for s in held:
            s.close()
        os.unlink(home.paths.pid_file)
    assert len(list(Path(home.paths.spool).glob("*.json"))) == 2  # both prompts captured


def test_worker_http_routes(home: Home) -> None:
    home.start_worker()
    path = big_file(home)
    oid = remember(home, TOPIC, files=["src/totals.py"], modified=["src/totals.py"], at=time.time() - 60)
    from kenning.hook.client import request
    from kenning.paths import read_token

    tok = read_token(home.paths)

    def post(body: Any) -> tuple[int, Any]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        res = request(home.port, "POST", "/api/context/prompt", body=raw, token=tok, timeout=10)
        assert res is not None
        return res[0], json.loads(res[1])

    status, body = post({"prompt": "How do the invoice totals round the VAT?", "cwd": str(home.project)})
    assert status == 200 and [r["id"] for r in body["results"]] == [oid] and body["context"].startswith(OPEN)
    assert body["semantic"] == "off"  # no embedding model in this test environment: keywords alone
    status, body = post({"prompt": "How do the invoice totals round the VAT of refunds?", "project": "project",
                         "min_relevance": 100})  # "refunds" is in no memory: never 100%
    assert status == 200 and body["results"] == []
    for bad in (b"not json", b"[1, 2]", {"prompt": 3, "cwd": "/"}, {"prompt": "x"},
                {"prompt": "x", "cwd": "/", "limit": "many"}, {"prompt": "x", "cwd": "/", "min_relevance": 500}):
        status, body = post(bad)
        assert status == 400 and "error" in body
    res = request(home.port, "POST", "/api/context/prompt", body=b"{}", timeout=10)  # no token
    assert res is not None and res[0] == 401

    from urllib.parse import quote

    res = request(home.port, "GET", f"/api/context/file?path={quote(str(path))}&cwd={quote(str(home.project))}",
                  token=tok, timeout=10)
    assert res is not None and res[0] == 200
    body = json.loads(res[1])
    assert [r["id"] for r in body["results"]] == [oid] and body["stale"] is False and body["context"]
    res = request(home.port, "GET", "/api/context/file", token=tok, timeout=10)
    assert res is not None and res[0] == 400


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_hostile_input_to_the_context_hooks(home: Home, event: str) -> None:
    for data in (b"", b"\x00\xff garbage", b"[]", b'{"session_id": 5}', json.dumps({"session_id": "s"}).encode(),
                 json.dumps({"session_id": "s", "tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"},
                             "prompt": ["not", "a", "string"], "cwd": 12}).encode()):
        t0 = time.monotonic()
        r = home.hook(event, data)
        assert r.returncode == 0 and time.monotonic() - t0 < 5
        output(r)
