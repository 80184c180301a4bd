"""The injection ledger through ``kenning mcp`` driven by the MCP SDK's stdio client, over the demo
story's memory and a real worker: a get_observations of a memory given to a session is a use
("fetched"), search results are handings of their own (the server, which only reads the database, has
the worker record them), and memory_ledger answers as ``kenning show`` / ``why`` / ``stats`` do."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from typing import Any

from mcp_helpers import Story, db_rows, run_client, text_of

from kenning.store import injections
from kenning.store.db import open_db


def test_a_fetch_is_a_use_and_memory_ledger_answers(story: Story) -> None:
    oid = int(db_rows(story, "SELECT id FROM observations WHERE status = 'active' AND layer = 'key' "
                             "ORDER BY id LIMIT 1")[0][0])
    conn = open_db(f"{story.data}/kenning.db")
    try:  # what the worker records when it serves a session start
        with conn:
            injections.record(conn, via="session_start", session="sess-mcp", agent="claude-code",
                              items=[injections.Given(oid, "key rank 1", 70)], at=time.time() - 60)
    finally:
        conn.close()

    async def handing(c: Any) -> dict[str, str]:
        return {"get": text_of(await c.call_tool("get_observations", {"ids": [oid]})),
                "search": text_of(await c.call_tool("search_memory", {"query": "invoice"}))}

    async def go(c: Any) -> dict[str, str]:
        out = {}
        for key, args in (("memory", {"id": f"#{oid}"}), ("session", {"session": "sess-mcp"}), ("health", {}),
                          ("nobody", {"session": "nobody"})):
            out[key] = text_of(await c.call_tool("memory_ledger", args))
        bad = await c.call_tool("memory_ledger", {"id": 987654})
        out["bad"] = text_of(bad) if bad.is_error else "not an error"
        return out

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    env = {**os.environ, **story.env(KENNING_PORT=port, KENNING_EMBEDDING_BACKEND="none")}
    env.pop("KENNING_INTERNAL", None)
    worker = [sys.executable, "-m", "kenning", "worker"]
    started = subprocess.run([*worker, "start", "--wait", "30"], env=env, capture_output=True, text=True, timeout=90)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        run_client(handing, env=story.env(KENNING_PORT=port), cwd=story.project)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (len(db_rows(story, "SELECT DISTINCT reason FROM injections")) < 3
                                               or not db_rows(story, "SELECT 1 FROM injection_uses")):
            time.sleep(0.2)  # the worker's next cycles record what the server handed it, and the fetch's use
        got = run_client(go, env=story.env(KENNING_PORT=port), cwd=story.project)
    finally:
        subprocess.run([*worker, "stop"], env=env, capture_output=True, timeout=60)
    uses = db_rows(story, "SELECT observation_id, kind, session FROM injection_uses")
    assert [(r[0], r[1], r[2]) for r in uses] == [(oid, "fetched", "")]
    vias = {(r[0], r[1]) for r in db_rows(story, "SELECT via, reason FROM injections WHERE observation_id = ?", oid)}
    assert ("mcp", "fetched in full (get_observations)") in vias and ("session_start", "key rank 1") in vias
    assert db_rows(story, "SELECT COUNT(*) FROM injections WHERE reason = 'search result (search_memory)'")[0][0] > 0
    # Every handing a use followed counts (the story's own session start too): at least the one above.
    assert f"#{oid}" in got["memory"] and "fetched get_observations" in got["memory"]
    assert re.search(r"used [1-9]\d* times?;", got["memory"]), got["memory"]
    assert "Session sess-mcp" in got["session"] and "why: key rank 1" in got["session"]
    assert "used: fetched get_observations" in got["session"]
    assert "Memory health" in got["health"] and "hit rate" in got["health"]
    assert "Nothing is recorded as given to session nobody" in got["nobody"]
    assert "no memory #987654" in got["bad"]
