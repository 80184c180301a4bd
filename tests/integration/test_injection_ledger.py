"""The injection ledger through real hook processes and a real worker (issue 29).

What a session was told (the session-start index, prompt recall, file history on Read) is in the
ledger with why; the signs that it helped (an MCP fetch, an edit of the file it names) are uses; a
memory superseded after it was given is contradicted. The hooks never write it: the worker records
what it served, and a context the hook built from the file itself (worker down) is not recorded.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import repo
from kenning.store.db import open_db
from tests.conftest import Home, load_fixture
from tests.integration.test_context_hooks import (
    TOPIC,
    big_file,
    context_of,
    filler_session,
    output,
    prompt_context_on,
    prompt_payload,
    read_payload,
    remember,
)

SESSION = "ledger-session"


def ledger(home: Home, session: str = SESSION) -> list[dict[str, Any]]:
    conn = home.db()
    try:
        return [dict(r) for r in conn.execute(
            "SELECT via, observation_id, reason, chars, agent, project FROM injections WHERE session = ? "
            "ORDER BY id", (session,))]
    finally:
        conn.close()


def uses(home: Home) -> list[tuple[int, str, str]]:
    conn = home.db()
    try:
        return [(int(r[0]), str(r[1]), str(r[2])) for r in conn.execute(
            "SELECT observation_id, kind, detail FROM injection_uses ORDER BY id")]
    finally:
        conn.close()


def until(home: Home, check: Callable[[], bool], timeout: float = 20) -> None:
    """Let the worker run cycles until ``check`` holds (the ledger is written by its pipeline thread)."""
    from kenning.hook.client import read_pid_file, request
    from kenning.paths import read_token

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = read_pid_file(home.paths)  # a cycle (an open turn's events stay pending: not waited for)
        if info:
            request(info["port"], "POST", "/api/flush", token=read_token(home.paths), timeout=15)
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("the worker did not record it in time")


WORDS = ("alpha", "bravo", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lumen", "maple", "nickel", "onyx", "prism", "quartz", "raven", "sable", "tundra")


def varied(home: Home, n: int = 60) -> None:
    """Newer routine notes that are not near-duplicates of each other (each its own row in the index)."""
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        with repo.transaction(conn):
            sid = filler_session(conn, home)
            for i in range(n):
                a, b, c = WORDS[i % 20], WORDS[(i * 7 + 3) % 20], WORDS[(i * 13 + 5) % 20]
                repo.insert_observation(conn, sid, home.key, ObservationDraft(
                    type="change", title=f"Moved the {a} {b} step into {c} stage {i}",
                    created_at=time.time() - 1800 + i), "rules")
    finally:
        conn.close()


def start_payload(home: Home, session: str = SESSION) -> dict[str, Any]:
    p = load_fixture("print-mode/events/SessionStart.json", cwd=str(home.project))
    p["session_id"] = session
    return p


def test_a_session_is_told_and_the_ledger_says_why_and_what_was_used(home: Home) -> None:
    prompt_context_on(home)
    home.env["KENNING_CONTEXT_OBSERVATIONS"] = "5"  # the index lists the 5 newest routine notes
    home.start_worker()
    recalled = remember(home, TOPIC, at=time.time() - 3600, kind="change")  # routine work: older than the index's
    path = big_file(home)
    about_file = remember(home, "Totals now round VAT per line in one place", files=["src/totals.py"],
                          modified=["src/totals.py"], at=time.time() - 3500, kind="bugfix", session="s-file")
    varied(home)  # 60 newer, distinct notes: the recent work the index lists, instead of the older one

    # 1. SessionStart: every #id row of the index is in the ledger, with the section that listed it.
    text = context_of(home.hook("SessionStart", start_payload(home)), "SessionStart")
    listed = [int(line[1:].split(" ", 1)[0]) for line in text.splitlines()
              if line.startswith("#") and line[1:].split(" ", 1)[0].isdigit()]
    assert listed
    until(home, lambda: any(r["via"] == "session_start" for r in ledger(home)))
    start_rows = [r for r in ledger(home) if r["via"] == "session_start"]
    assert [r["observation_id"] for r in start_rows] == listed
    assert all(r["chars"] > 10 and r["agent"] == "claude-code" and r["project"] == home.key for r in start_rows)
    # The bug fix is a key memory, ranked; the filler is the recent work.
    assert {(r["observation_id"], r["reason"]) for r in start_rows if r["reason"].startswith("key")} == {
        (about_file, "key rank 1")}
    assert {r["reason"] for r in start_rows} == {"key rank 1", "recent work"}
    assert recalled not in listed, text

    # 2. Prompt recall: the memory and the prompt's terms it shares.
    ask = "How do the invoice totals round the VAT per line?"
    text = context_of(home.hook("UserPromptSubmit", prompt_payload(home, ask, session=SESSION)), "UserPromptSubmit")
    assert f"#{recalled} " in text
    until(home, lambda: any(r["via"] == "prompt" for r in ledger(home)))
    prompt_rows = [r for r in ledger(home) if r["via"] == "prompt"]
    row = next(r for r in prompt_rows if r["observation_id"] == recalled)
    assert "prompt's rarer terms" in row["reason"] and "invoice" in row["reason"].lower()

    # 3. File history on Read (built by the hook itself): read back from what the hook told.
    text = context_of(home.hook("PreToolUse", read_payload(home, path, session=SESSION)), "PreToolUse")
    assert f"#{about_file} " in text
    until(home, lambda: any(r["via"] == "file" for r in ledger(home)))
    file_rows = [r for r in ledger(home) if r["via"] == "file"]
    assert [(r["observation_id"], r["reason"]) for r in file_rows] == [
        (about_file, "file read: src/totals.py (changed it)")]
    # Read again after a worker restart: the same lines are not recorded twice.
    home.kenning("worker", "stop")
    home.start_worker()
    until(home, lambda: True)  # a cycle of the new worker: it reads the "already told" files from the start
    assert len([r for r in ledger(home) if r["via"] == "file"]) == 1

    # 4. The agent edits the file the memory names: a use.
    edit = load_fixture("print-mode/events/PostToolUse.Write.json", cwd=str(home.project))
    edit["session_id"] = SESSION
    edit["tool_name"] = "Edit"
    edit["tool_input"] = {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 2"}
    output(home.hook("PostToolUse", edit))
    until(home, lambda: (about_file, "edited", "src/totals.py") in uses(home))
    assert (recalled, "edited", "src/totals.py") not in uses(home)  # names no such file

    # 5. An MCP get_observations of a memory handed over: a use ("fetched"), recorded by the worker.
    from kenning.mcp.tools import MemoryTools

    assert TOPIC in MemoryTools(home.paths).get([recalled], cwd=str(home.project))
    until(home, lambda: (recalled, "fetched", "get_observations") in uses(home))  # the worker records it

    # 6. Superseded after it was given: contradicted, and `kenning why` says so.
    conn = open_db(home.paths.db)
    try:
        newer = MemoryService(conn, "cli").save(ObservationDraft(
            type="decision", title="Invoice totals round VAT on the invoice total", narrative="changed",
            created_at=time.time()), project=home.key)
        MemoryService(conn, "cli").supersede([recalled], newer.id)
    finally:
        conn.close()
    r = home.kenning("why", SESSION, "--json")
    assert r.returncode == 0, r.stderr
    told = json.loads(r.stdout)
    by_id = {(t["via"], t["id"]): t for t in told["injections"]}
    assert by_id[("prompt", recalled)]["used"] and by_id[("prompt", recalled)]["contradicted"]
    assert by_id[("file", about_file)]["used"] and not by_id[("file", about_file)]["contradicted"]
    r = home.kenning("why", SESSION)
    assert r.returncode == 0 and "file read: src/totals.py" in r.stdout and "superseded" in r.stdout

    # 7. `kenning show ID` lists what the memory was given for and used in.
    r = home.kenning("show", str(about_file), "--json")
    shown = json.loads(r.stdout)
    assert shown["ledger"]["given"] == 2 and shown["ledger"]["used"] == 2  # session start and file history
    assert "Given 2 times to agents, used 2 times" in home.kenning("show", str(about_file)).stdout


def test_the_hooks_never_write_the_ledger(home: Home) -> None:
    """Worker down: the SessionStart hook builds the index from the file, and nothing is recorded."""
    varied(home, 5)
    before = _snapshot(home)
    text = context_of(home.hook("SessionStart", start_payload(home)),
                      "SessionStart")
    assert "#" in text
    assert _snapshot(home) == before
    until(home, lambda: True)  # the worker the hook started (in the background) did not serve it either
    assert _snapshot(home) == before == 0


def _snapshot(home: Home) -> int:
    conn = sqlite3.connect(home.paths.db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0])
    finally:
        conn.close()
