"""Another program's SQLite file at the data path: every surface refuses it with one clear message
naming it (no traceback), nothing migrates or starts on it, and its bytes stay as they were.

The CLI, the worker, the hooks (SessionStart's fallback, PreToolUse's file history) and the MCP
server are each run as the real processes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Home, load_fixture

pytestmark = pytest.mark.slow
NAMED = "is not a Kenning database"


@pytest.fixture
def foreign(home: Home) -> Path:
    """A to-do app's database, with tables named like ours, where Kenning's should be."""
    home.paths.ensure()
    db = Path(home.paths.db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA application_id = 0x54444F31")  # "TDO1"
    conn.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, title TEXT)")
    conn.execute("CREATE TABLE observations (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO sessions (title) VALUES ('buy milk')")
    conn.commit()
    conn.close()
    return db


def digest(d: Path) -> dict[str, str]:
    """The database file and any sibling SQLite would make (-wal, -shm, -journal)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("kenning.db*"))}


def clear(r: Any, db: Path) -> None:
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode()
    assert str(db) in err and NAMED in err, err
    assert "Traceback" not in err, err
    assert err.count(NAMED) == 1, err  # one message, not the same one from every layer


def test_cli_commands_refuse_it_at_once(home: Home, foreign: Path) -> None:
    before = digest(foreign.parent)
    for args in (["status"], ["context", "--cwd", str(home.project)], ["show", "1"], ["search", "milk"],
                 ["stats"], ["export"], ["demo"], ["install", "--no-start"]):
        started = time.monotonic()
        r = home.kenning(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        clear(r, foreign)
        assert time.monotonic() - started < 10, args
    started = time.monotonic()
    r = home.kenning("worker", "start", "--wait", "15")
    assert r.returncode == 2 and time.monotonic() - started < 5  # says why at once: no 15 s wait
    clear(r, foreign)
    doctor = home.kenning("doctor")
    assert doctor.returncode == 1
    line = next(x for x in doctor.stdout.splitlines() if x.startswith("✗ database:"))
    assert str(foreign) in line and NAMED in line
    assert digest(foreign.parent) == before


def test_the_worker_refuses_to_run_on_it(home: Home, foreign: Path) -> None:
    """The worker's own check, behind the CLI's (a worker started some other way still refuses)."""
    import subprocess

    before = digest(foreign.parent)
    r = subprocess.run([sys.executable, "-c", "from kenning.worker.server import run; raise SystemExit(run())"],
                       env=home.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    clear(r, foreign)
    assert NAMED in Path(home.paths.worker_log).read_text()
    assert digest(foreign.parent) == before


def test_hooks_tell_the_user_and_keep_the_event(home: Home, foreign: Path) -> None:
    before = digest(foreign.parent)
    r = home.hook("SessionStart", load_fixture("print-mode/events/SessionStart.startup.json", cwd=str(home.project)))
    assert r.returncode == 0 and r.stderr == b""
    out = json.loads(r.stdout)
    assert NAMED in out["systemMessage"] and str(foreign) in out["systemMessage"]  # shown to the user
    assert out["hookSpecificOutput"]["additionalContext"] == ""  # nothing untrue told to the model
    assert home.spool_depth() == 1  # the event waits in the spool until the file is moved away
    assert not Path(home.paths.pid_file).exists()  # no worker was started

    big = home.project / "big.py"
    big.write_text("x = 1\n" * 1000)
    read = load_fixture("print-mode/events/PreToolUse.Read.json", cwd=str(home.project))
    read["tool_input"]["file_path"] = str(big)
    r = home.hook("PreToolUse", read)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""  # the Read goes on, untouched
    assert NAMED in Path(home.paths.hook_log).read_text()
    assert digest(foreign.parent) == before


def test_the_mcp_server_answers_with_a_tool_error(home: Home, foreign: Path) -> None:
    from mcp import Client, StdioServerParameters

    before = digest(foreign.parent)
    params = StdioServerParameters(command=sys.executable, args=["-I", "-m", "kenning", "mcp"],
                                   env=home.env, cwd=str(home.project))
    results: dict[str, Any] = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            for tool, args in (("search_memory", {"query": "milk"}), ("save_memory", {"text": "Use uv for builds"})):
                results[tool] = await client.call_tool(tool, args)

    anyio.run(main)
    for tool, res in results.items():
        text = "\n".join(getattr(c, "text", "") for c in res.content)
        assert res.is_error and NAMED in text and str(foreign) in text, (tool, text)
        assert "internal error" not in text
    assert digest(foreign.parent) == before
