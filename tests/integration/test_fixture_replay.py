"""Replay real Claude Code hook payloads through real hook processes and a real worker.

The payloads are the ones Claude Code 2.1.332 actually sent (tests/fixtures/claude-code),
with their project path rewritten into the test's own project directory. Every hook is a
separate ``python -m kenning hook claude-code <event>`` process, exactly as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, Home, load_fixture

PRINT_MODE = [
    "SessionStart.startup",
    "UserPromptSubmit",
    "PostToolUse.Bash",
    "PostToolUse.Write",
    "PostToolUse.Read",
    "PostToolUse.mcp__memtest__ping",
    "PostToolUseFailure.Bash",
    "Stop",
    "SessionEnd",
]
CAPTURE = PRINT_MODE[1:]
CONTEXT_LIMIT = 10_000  # Claude Code cuts hook text beyond this



def told(title: str, text: str) -> bool:
    """Whether the context says a memory: its title, or, for a change named only by its request ("Added
    hello.txt (asked: …)"), the request as what the session worked on and the file in its state line."""
    if norm(title)[:60] in norm(text):
        return True
    m = re.match(r"^(?:Changed|Added) (.+?) \(asked: (.+)\)$", title)
    return bool(m) and f"Worked on: {m.group(2)[:40]}" in text and all(
        f in text[text.index("State: "):] for f in re.split(r", | and ", m.group(1)))

def hook_output(r: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    """Check the hook contract (exit 0; stdout empty or exactly one JSON object) and parse it."""
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]!r}"
    text = r.stdout.decode("utf-8").strip()
    if not text:
        return None
    value = json.loads(text)  # raises on anything but exactly one JSON document
    assert isinstance(value, dict), text[:500]
    return value


def session_start_context(r: subprocess.CompletedProcess[bytes]) -> str:
    out = hook_output(r)
    assert out is not None, "SessionStart printed nothing"
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "SessionStart"
    text = hso["additionalContext"]
    assert isinstance(text, str)
    assert len(text) < CONTEXT_LIMIT
    return text


def fixture(home: Home, name: str, folder: str = "print-mode") -> dict[str, Any]:
    return load_fixture(f"{folder}/events/{name}.json", cwd=str(home.project))


def spool_files(home: Home) -> list[Path]:
    return sorted(Path(home.paths.spool).glob("*.json"))


def data_dir_bytes(home: Home) -> bytes:
    """Every byte Kenning keeps on disk (database, WAL, spool, logs, ...)."""
    out = bytearray()
    for dirpath, _dirs, files in os.walk(home.data):
        for f in files:
            try:
                if Path(dirpath, f).is_fifo():
                    continue  # the worker's poke pipe holds no data (and reading it would wait for a writer)
                out += Path(dirpath, f).read_bytes()
            except OSError:
                pass
    return bytes(out)


def count(home: Home, sql: str, *args: Any) -> int:
    conn = home.db()
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def norm(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------ worker running

def test_print_mode_session_is_captured_and_given_back(home: Home) -> None:
    home.start_worker()
    first_sid = fixture(home, "SessionStart.startup")["session_id"]
    for name in PRINT_MODE:
        payload = fixture(home, name)
        r = home.hook(payload["hook_event_name"], payload)
        if name.startswith("SessionStart"):
            text = session_start_context(r)
            assert "no memory of project project" in text  # a first session: nothing known yet
        else:
            assert hook_output(r) is None, f"{name} printed something"

    home.flush()
    assert home.spool_depth() == 0
    conn = home.db()
    try:
        sessions = conn.execute("SELECT * FROM sessions").fetchall()
        assert [s["agent_session_id"] for s in sessions] == [first_sid]
        s = sessions[0]
        assert s["project"] == home.key
        assert s["project_root"] == str(home.project)
        assert s["status"] == "completed" and s["end_reason"] == "other"
        kinds = [r["kind"] for r in conn.execute("SELECT kind FROM events ORDER BY id")]
        assert kinds == [fixture(home, n)["hook_event_name"] for n in PRINT_MODE]
        tools = {r["event_key"]: r["tool_name"]
                 for r in conn.execute("SELECT * FROM events WHERE tool_name IS NOT NULL")}
        for name in PRINT_MODE:
            p = fixture(home, name)
            if "tool_use_id" in p:
                assert tools[f"{p['hook_event_name']}:{p['tool_use_id']}"] == p["tool_name"]
        assert count(home, "SELECT COUNT(*) FROM events WHERE status = 'pending'") == 0
        prompts = [r["prompt_text"] for r in conn.execute("SELECT prompt_text FROM user_prompts")]
        assert prompts == [fixture(home, "UserPromptSubmit")["prompt"]]
        titles = [r["title"] for r in conn.execute("SELECT title FROM observations ORDER BY id")]
        assert titles, "the observer stored no observation"
        summary = conn.execute("SELECT * FROM session_summaries").fetchone()
        assert summary is not None and summary["request"]
        assert "hello.txt" in json.loads(summary["files_modified"])
    finally:
        conn.close()

    # A new session in the same project is told what the first one did.
    start = fixture(home, "SessionStart.startup")
    start["session_id"] = "2b1d0c9e-0000-4000-8000-000000000002"
    start["transcript_path"] = start["transcript_path"].replace(first_sid, start["session_id"])
    text = session_start_context(home.hook("SessionStart", start))
    flat = norm(text)
    # Its session's line tells what it was about and what came of it (its routine rows are not listed
    # besides); where it left off follows.
    assert norm(summary["request"])[:60] in flat, text
    assert titles and any(told(t, text) for t in titles), text
    assert "Done: " in text or "Still open: " in text
    assert "no memory of project" not in text


def test_interactive_fixtures_replay_cleanly(home: Home) -> None:
    home.start_worker()
    folder = FIXTURES / "interactive" / "events"
    names = sorted(p.stem for p in folder.glob("*.json"))
    assert len(names) >= 10
    # Claude Code's own order: sessions start, prompts come, tools run, turns stop, sessions end.
    order = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
             "PostToolBatch", "MessageDisplay", "Stop", "Notification", "SessionEnd"]
    names.sort(key=lambda n: (order.index(n.split(".")[0]) if n.split(".")[0] in order else 99, n))
    captured: dict[str, set[str]] = {}
    for name in names:
        payload = fixture(home, name, "interactive")
        event = payload["hook_event_name"]
        r = home.hook(event, payload)
        out = hook_output(r)
        if event == "SessionStart":
            session_start_context(r)
        else:
            assert out is None, f"{name} printed {out}"
        if event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
                     "SessionEnd"):
            captured.setdefault(payload["session_id"], set()).add(event)
    home.flush()
    assert home.spool_depth() == 0
    conn = home.db()
    try:
        rows = conn.execute("SELECT s.agent_session_id AS sid, e.kind FROM events e "
                            "JOIN sessions s ON s.id = e.session_id").fetchall()
        stored: dict[str, set[str]] = {}
        for row in rows:
            stored.setdefault(row["sid"], set()).add(row["kind"])
        assert stored == captured  # known events kept, PreToolUse/Notification/... ignored
        assert count(home, "SELECT COUNT(*) FROM events WHERE status = 'pending'") == 0
        assert count(home, "SELECT COUNT(*) FROM user_prompts") == 1
    finally:
        conn.close()
    assert not os.listdir(home.paths.spool_corrupt)


# ------------------------------------------------------------------------ worker down

def test_capture_with_worker_down_is_spooled_then_drained(home: Home) -> None:
    assert not os.path.exists(home.paths.pid_file)
    for name in CAPTURE:
        payload = fixture(home, name)
        r = home.hook(payload["hook_event_name"], payload)
        assert hook_output(r) is None
    # Capture never starts a worker: the events wait on disk.
    assert not os.path.exists(home.paths.pid_file)
    files = spool_files(home)
    assert len(files) == len(CAPTURE)
    for f in files:
        assert (f.stat().st_mode & 0o777) == 0o600
        rec = json.loads(f.read_bytes())
        assert rec["v"] == 1 and rec["agent"] == "claude-code" and rec["project"] == "project"
        assert rec["payload"]["session_id"]

    r = home.kenning("worker", "start")
    assert r.returncode == 0, r.stderr
    home.flush()
    assert home.spool_depth() == 0
    assert count(home, "SELECT COUNT(*) FROM events") == len(CAPTURE)
    assert count(home, "SELECT COUNT(*) FROM user_prompts") == 1
    assert count(home, "SELECT COUNT(*) FROM observations") >= 1
    assert count(home, "SELECT COUNT(*) FROM session_summaries") == 1

    # Cold start: with the worker down again, a new session still gets its memory (built from
    # SQLite by the hook itself when the worker cannot answer in time) and the worker is started.
    assert home.kenning("worker", "stop").returncode == 0
    assert not os.path.exists(home.paths.pid_file)
    conn = home.db()
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM observations")]
    finally:
        conn.close()
    start = fixture(home, "SessionStart.startup")
    start["session_id"] = "3c2e1d0f-0000-4000-8000-000000000003"
    text = session_start_context(home.hook("SessionStart", start))
    for title in titles:
        assert told(title, text), text
    from kenning.daemon import ensure

    assert ensure(home.paths, wait=20), "SessionStart did not start the worker"
    home.flush()
    assert count(home, "SELECT COUNT(*) FROM sessions") == 2


def test_session_start_context_stays_under_the_limit_with_a_large_memory(home: Home) -> None:
    from kenning import spool
    from tests.support.synthetic import synthetic_sessions

    home.paths.ensure()
    at = 1_700_000_000.0
    for events in synthetic_sessions(40, 30, seed=3, cwd=str(home.project)):
        for p in events:
            at += 30
            spool.write(home.paths, {"v": 1, "agent": "claude-code", "event": p["hook_event_name"], "at": at,
                                     "project": "project", "project_root": str(home.project), "truncated": False,
                                     "payload": p}, sync_dir=False)
    # The most generous settings allowed: the character cap is what must hold the line.
    home.env.update(KENNING_CONTEXT_OBSERVATIONS="500", KENNING_CONTEXT_SESSIONS="100",
                    KENNING_CONTEXT_MAX_CHARS="9800")
    home.start_worker()
    home.flush(timeout=60)
    assert count(home, "SELECT COUNT(*) FROM observations") > 100
    start = fixture(home, "SessionStart.startup")
    start["session_id"] = "4d3f2e1a-0000-4000-8000-000000000004"
    text = session_start_context(home.hook("SessionStart", start))
    assert len(text) > 9800 // 2, len(text)  # a full index, cut to fit (not the empty note)
    conn = home.db()
    try:
        latest = conn.execute("SELECT title FROM observations ORDER BY created_at DESC, id DESC LIMIT 1").fetchone()[0]
    finally:
        conn.close()
    assert norm(latest)[:60] in norm(text)


# ------------------------------------------------------------------------ gates

def _no_capture(home: Home, payloads: list[dict[str, Any]], env: dict[str, str] | None = None) -> None:
    for p in payloads:
        r = home.hook(p["hook_event_name"], p, env=env)
        assert hook_output(r) is None, f"{p['hook_event_name']} printed {r.stdout[:300]!r}"
    assert spool_files(home) == []
    assert not os.path.exists(home.paths.pid_file), "a gated hook started the worker"
    if os.path.exists(home.paths.db):
        assert count(home, "SELECT COUNT(*) FROM events") == 0


def test_cwd_inside_the_data_dir_is_not_captured(home: Home) -> None:
    home.paths.ensure()
    inside = home.data / "spool"
    payloads = []
    for name in PRINT_MODE:
        p = fixture(home, name)
        p["cwd"] = str(inside)
        payloads.append(p)
    _no_capture(home, payloads)


def test_internal_env_is_not_captured(home: Home) -> None:
    _no_capture(home, [fixture(home, n) for n in PRINT_MODE], env={"KENNING_INTERNAL": "1"})


@pytest.mark.parametrize("pattern", ["project", "proj*", "{root}", "{parent}/*"])
def test_excluded_project_is_neither_captured_nor_injected(home: Home, pattern: str) -> None:
    glob = pattern.format(root=home.project, parent=home.project.parent)
    _no_capture(home, [fixture(home, n) for n in PRINT_MODE],
                env={"KENNING_EXCLUDED_PROJECTS": f"other-thing, {glob}"})


def test_skipped_tool_is_not_captured(home: Home) -> None:
    p = fixture(home, "PostToolUse.Bash")
    todo = {**p, "tool_name": "TodoWrite", "tool_use_id": "toolu_todo0001",
            "tool_input": {"todos": [{"content": "x", "status": "pending", "activeForm": "X"}]},
            "tool_response": {"oldTodos": [], "newTodos": []}}
    assert hook_output(home.hook("PostToolUse", todo)) is None
    assert hook_output(home.hook("PostToolUseFailure", {**todo, "hook_event_name": "PostToolUseFailure"})) is None
    assert spool_files(home) == []
    # The same event for a tool that is not skipped is captured.
    assert hook_output(home.hook("PostToolUse", p)) is None
    assert len(spool_files(home)) == 1


# ------------------------------------------------------------------------ privacy

PROMPT_SECRET = "PRIVPROMPT-7d41c0"
OUTPUT_SECRET = "PRIVOUTPUT-93be55"
AWS_KEY = "AKIAZ7Q3M5KXW2P4R8TN"


def test_private_blocks_and_secrets_never_reach_disk(home: Home) -> None:
    prompt = fixture(home, "UserPromptSubmit")
    prompt["prompt"] = f"Fix the login flow. <private>the admin password is {PROMPT_SECRET}</private> Thanks."
    bash = fixture(home, "PostToolUse.Bash")
    bash["tool_input"]["command"] = "cat .env && echo done"
    bash["tool_response"]["stdout"] = (f"APP=demo\n<private>DB_PASS={OUTPUT_SECRET}</private>\n"
                                       f"AWS_ACCESS_KEY_ID={AWS_KEY}\ndone")
    read = fixture(home, "PostToolUse.Read")
    read["tool_response"]["file"]["content"] = f"line 1\n<PRIVATE note='x'>{OUTPUT_SECRET}</PRIVATE>\nline 3\n"
    stop = fixture(home, "Stop")
    end = fixture(home, "SessionEnd")
    for p in (prompt, bash, read, stop, end):
        assert hook_output(home.hook(p["hook_event_name"], p)) is None

    raw = b"".join(f.read_bytes() for f in spool_files(home))
    assert len(spool_files(home)) == 5
    for secret in (PROMPT_SECRET, OUTPUT_SECRET, AWS_KEY):
        assert secret.encode() not in raw, f"{secret} reached the spool"
    assert b"<private" not in raw.lower()
    assert b"[REDACTED:aws_access_key]" in raw
    assert b"Fix the login flow." in raw and b"Thanks." in raw  # only the private part went

    home.start_worker()
    home.flush()
    assert count(home, "SELECT COUNT(*) FROM events") == 5
    conn = home.db()
    try:
        stored = conn.execute("SELECT prompt_text FROM user_prompts").fetchone()["prompt_text"]
    finally:
        conn.close()
    assert "Fix the login flow." in stored and PROMPT_SECRET not in stored
    everything = data_dir_bytes(home)  # database, WAL, logs, spool leftovers
    for secret in (PROMPT_SECRET, OUTPUT_SECRET, AWS_KEY):
        assert secret.encode() not in everything, f"{secret} reached the data dir"
