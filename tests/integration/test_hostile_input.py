"""Hostile stdin through real hook processes: the agent is never broken, nothing bad is stored.

Contract checked for every input and every event: exit 0, stdout empty or exactly one JSON
object, a quick return (a generous 5 s here; latency is measured in bench/), no spool file
for input that cannot be an event, and exactly one line in logs/hook.log explaining why.
Odd but usable input (broken UTF-8, mistyped fields, a 20 MB field) is stored safely and the
worker digests it without wedging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home

EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"]
BUDGET_S = 5.0
BIG = 20 * 1024 * 1024


def run_hook(home: Home, event: str, data: bytes, agent: str = "claude-code",
             env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "kenning", "hook", agent, event], input=data,
                       env={**home.env, **(env or {})}, capture_output=True, timeout=60, cwd=str(home.project))
    return r, time.monotonic() - started


def check_contract(r: subprocess.CompletedProcess[bytes], took: float, what: str) -> dict[str, Any] | None:
    assert r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr[-2000:]!r}"
    assert took < BUDGET_S, f"{what}: took {took:.2f} s"
    text = r.stdout.decode("utf-8").strip()
    if not text:
        return None
    value = json.loads(text)
    assert isinstance(value, dict), f"{what}: stdout {text[:300]!r}"
    return value


def log_lines(home: Home) -> list[str]:
    try:
        return Path(home.paths.hook_log).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []


def spool_files(home: Home) -> list[Path]:
    return sorted(Path(home.paths.spool).glob("*.json")) if os.path.isdir(home.paths.spool) else []


def valid(home: Home, event: str, sid: str = "sess-hostile", **fields: Any) -> dict[str, Any]:
    p: dict[str, Any] = {"session_id": sid, "transcript_path": f"/tmp/t/{sid}.jsonl", "cwd": str(home.project),
                         "hook_event_name": event}
    extra: dict[str, Any] = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "Fix the parser", "prompt_id": "p-1"},
        "PostToolUse": {"tool_name": "Bash", "tool_use_id": f"toolu_{event}_{sid}",
                        "tool_input": {"command": "echo hi"}, "tool_response": {"stdout": "hi", "stderr": ""}},
        "PostToolUseFailure": {"tool_name": "Bash", "tool_use_id": f"toolu_{event}_{sid}",
                               "tool_input": {"command": "false"}, "error": "Exit code 1"},
        "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
        "SessionEnd": {"reason": "other"},
    }[event]
    return {**p, **extra, **fields}


def deep(levels: int) -> bytes:
    return ('{"session_id":"s","hook_event_name":"PostToolUse","tool_input":' + "[" * levels + "]" * levels
            + "}").encode()


# Inputs that cannot be an event: nothing is stored and one log line says why.
INVALID: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b" \n\t\r\n  ",
    "invalid json": b'{"session_id": "s1", "cwd": ',
    "json array": b'[{"session_id": "s1"}]',
    "json string": b'"session_id"',
    "json number": b"42",
    "json null": b"null",
    "binary": os.urandom(4096),
    "nul bytes": b"\x00" * 64,
    "missing session_id": b'{"cwd": "/tmp", "hook_event_name": "Stop", "prompt": "hi"}',
    "empty session_id": b'{"session_id": "", "hook_event_name": "Stop"}',
    "session_id not a string": b'{"session_id": 12345, "hook_event_name": "Stop"}',
    "deeply nested (10,000 levels)": deep(10_000),
    "deeply nested object": ('{"session_id":"s","x":' + '{"a":' * 10_000 + "1" + "}" * 10_000 + "}").encode(),
}


@pytest.mark.parametrize("event", EVENTS)
def test_invalid_input_is_ignored_and_logged(home: Home, event: str) -> None:
    for what, data in INVALID.items():
        before = len(log_lines(home))
        r, took = run_hook(home, event, data)
        out = check_contract(r, took, f"{event} / {what}")
        assert out is None, f"{event} / {what}: printed {out}"
        assert r.stderr == b"", f"{event} / {what}: stderr {r.stderr[-500:]!r}"
        assert spool_files(home) == [], f"{event} / {what}: something was spooled"
        lines = log_lines(home)
        assert len(lines) == before + 1, f"{event} / {what}: log lines {lines[before:]}"
        assert event in lines[-1] and "crash" not in lines[-1], lines[-1]
    # Invalid input never starts a worker (SessionStart only does for a real session).
    assert not os.path.exists(home.paths.pid_file)


def test_unknown_event_and_agent_are_ignored_and_logged(home: Home) -> None:
    cases = [
        ("claude-code", "TotallyNewEvent", valid(home, "Stop")),
        ("claude-code", "PreCompact", valid(home, "PostToolUse")),  # PreToolUse is a context event now
        ("claude-code", "", valid(home, "Stop")),
        ("claude-code", "x" * 5000, valid(home, "Stop")),
        ("cursor", "Stop", valid(home, "Stop")),
        ("cursor", "y" * 5000, valid(home, "Stop")),
        ("some-agent\n\x1b[31m", "SessionStart", valid(home, "SessionStart")),
    ]
    for agent, event, payload in cases:
        before = len(log_lines(home))
        r, took = run_hook(home, event, json.dumps(payload).encode(), agent=agent)
        assert check_contract(r, took, f"{agent!r} {event[:40]!r}") is None
        assert spool_files(home) == []
        lines = log_lines(home)
        assert len(lines) == before + 1, lines[before:]
        assert len(lines[-1]) <= 4000  # a hostile name is cut, not copied whole into the log
    assert not os.path.exists(home.paths.pid_file)


def test_odd_but_usable_input_is_stored_and_digested(home: Home) -> None:
    """Broken UTF-8, lone surrogates and mistyped fields: kept (cleaned), and the worker copes."""
    home.start_worker()
    stored: list[tuple[str, str]] = []
    for event in EVENTS:
        sid = f"odd-{event}"
        # 1. invalid UTF-8 bytes inside JSON strings
        body = json.dumps(valid(home, event, sid, note="BAD")).encode().replace(b'"BAD"', b'"a\xff\xfe\xc3(b"')
        # 2. an escaped lone surrogate (valid JSON, not encodable as UTF-8)
        lone = json.dumps(valid(home, event, sid, note="x\udcffy", prompt_text="\ud800"))
        # 3. wrong types for the fields a hook does not need
        typed = valid(home, event, sid, cwd=12345, tool_input="rm -rf /tmp/x", tool_response=["not", {"a": 1}],
                      prompt=["a", "list"], tool_name=7, reason={"x": 1}, last_assistant_message=None,
                      transcript_path=False, permission_mode=3.5)
        if event in ("PostToolUse", "PostToolUseFailure"):
            typed["tool_use_id"] = 99
        for what, data in (("invalid utf-8", body), ("lone surrogate", lone.encode()),
                           ("wrong types", json.dumps(typed).encode())):
            r, took = run_hook(home, event, data)
            out = check_contract(r, took, f"{event} / {what}")
            if event == "SessionStart":
                assert out is not None
                text = out["hookSpecificOutput"]["additionalContext"]
                # A mistyped cwd falls back to the hook's own directory, never to a project named "12345".
                assert "12345" not in text and "project" in text, text
            else:
                assert out is None
            stored.append((sid, event))
    # Close every session so the observer finishes them all.
    for event in EVENTS:
        r, took = run_hook(home, "SessionEnd", json.dumps(valid(home, "SessionEnd", f"odd-{event}")).encode())
        check_contract(r, took, "closing SessionEnd")
    home.flush()
    assert home.spool_depth() == 0
    assert os.listdir(home.paths.spool_corrupt) == [], "a usable event was quarantined"
    conn = home.db()
    try:
        n = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        # PostToolUse* events keyed by tool_use_id: the invalid-utf-8 and lone-surrogate copies share one
        # key, so they are one event; the mistyped id (a number) falls back to the spool id.
        dupes = 2
        assert n == len(stored) + len(EVENTS) - dupes
        cwds = {r[0] for r in conn.execute("SELECT cwd FROM sessions")}
        assert cwds == {str(home.project)}
        blob = "".join(r[0] or "" for r in conn.execute("SELECT payload FROM events"))
        assert "\ufffd" in blob  # broken bytes became replacement characters
    finally:
        conn.close()
    health = json.loads(home.kenning("worker", "status").stdout)
    assert health["observer"]["last_error"] == ""
    assert health["status"] == "ok"


def test_20mb_field_is_stored_truncated(home: Home) -> None:
    payload = valid(home, "PostToolUse", "sess-big")
    head, tail = "HEAD-MARK " + "a" * 1000, "b" * 1000 + " TAIL-MARK"
    payload["tool_response"]["stdout"] = head + "x" * (BIG - len(head) - len(tail)) + tail
    data = json.dumps(payload).encode()
    assert len(data) > BIG
    r, took = run_hook(home, "PostToolUse", data)
    assert check_contract(r, took, "20 MB PostToolUse") is None
    files = spool_files(home)
    assert len(files) == 1
    size = files[0].stat().st_size
    assert size < 200_000, f"spool file is {size} bytes"
    rec = json.loads(files[0].read_bytes())
    assert rec["truncated"] is True
    stdout = rec["payload"]["tool_response"]["stdout"]
    assert "characters elided by kenning" in stdout
    assert stdout.startswith("HEAD-MARK") and stdout.endswith("TAIL-MARK")
    assert rec["payload"]["tool_use_id"] == payload["tool_use_id"]

    # The worker ingests it like any other event, and the observer gets through it.
    r, took = run_hook(home, "SessionEnd", json.dumps(valid(home, "SessionEnd", "sess-big")).encode())
    check_contract(r, took, "SessionEnd")
    home.start_worker()
    home.flush()
    conn = home.db()
    try:
        row = conn.execute("SELECT * FROM events WHERE kind = 'PostToolUse'").fetchone()
        assert row["event_key"] == f"PostToolUse:{payload['tool_use_id']}"
        assert row["status"] == "done"
        assert len(row["payload"]) < 200_000
    finally:
        conn.close()


def test_payload_over_the_stdin_limit_keeps_its_header(home: Home) -> None:
    payload = valid(home, "PostToolUse", "sess-huge")
    payload["tool_response"]["stdout"] = "y" * (3 * 1024 * 1024)
    data = json.dumps(payload).encode()
    r, took = run_hook(home, "PostToolUse", data, env={"KENNING_HOOK_MAX_STDIN_BYTES": str(1024 * 1024)})
    assert check_contract(r, took, "over-limit payload") is None
    files = spool_files(home)
    assert len(files) == 1 and files[0].stat().st_size < 10_000
    rec = json.loads(files[0].read_bytes())
    assert rec["truncated"] is True
    p = rec["payload"]
    assert p["session_id"] == "sess-huge" and p["tool_name"] == "Bash" and p["tool_use_id"] == payload["tool_use_id"]
    assert "too large" in p["kenning_note"]
