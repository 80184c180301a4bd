"""The OpenCode plugin (kenning/integrations/opencode_plugin.js), run by node with the call shapes OpenCode's
plugin API uses (``event``, ``chat.message``, ``tool.execute.after``, ``experimental.chat.system.transform``),
in front of the real ``kenning hook opencode`` processes and a real worker. The OpenCode CLI itself is not
run here (see docs/agents.md): this checks the plugin's own code, end to end into memory and back.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kenning.integrations import opencode
from tests.conftest import Home

NODE = shutil.which("node")
CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""

DRIVER = """
import { KenningMemory } from %(plugin)s;
const P = %(project)s, CHECK = %(check)s, S = process.argv[2];
const h = await KenningMemory({ directory: P, worktree: P });
await h.event({ event: { type: "session.created", properties: { info: { id: S } } } });
const sys = { system: [] };
await h["experimental.chat.system.transform"]({ sessionID: S }, sys);
const out = { message: { id: "msg_" + S }, parts: [{ type: "text", text: process.argv[3] }] };
await h["chat.message"]({ sessionID: S }, out);
if (process.argv[4] === "work") {
  const after = (tool, callID, args, output, exit) =>
    h["tool.execute.after"]({ tool, sessionID: S, callID, args }, { title: tool, output, metadata: { exit } });
  const file = P + "/calc.py";
  await after("write", "c1", { filePath: file, content: "def add(a, b):\\n    return a - b\\n" }, "", undefined);
  await after("bash", "c2", { command: CHECK }, "AssertionError: add is broken", 1);
  await after("edit", "c3", { filePath: file, oldString: "return a - b", newString: "return a + b" }, "", 0);
  await after("bash", "c4", { command: CHECK }, "", 0);
  await h.event({ event: { type: "message.updated", properties: { info: { id: "a1", role: "assistant" } } } });
  await h.event({ event: { type: "message.part.updated", properties: { part: {
    type: "text", messageID: "a1", sessionID: S, text: "Fixed: add() now adds." } } } });
  await h.event({ event: { type: "session.idle", properties: { sessionID: S } } });
}
console.log(JSON.stringify({ system: sys.system, parts: out.parts }));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_plugin_captures_a_session_and_gives_the_next_one_its_memory(home: Home, tmp_path: Path) -> None:
    home.env["KENNING_PROVIDER"] = "rules"
    plugin = tmp_path / "kenning.mjs"
    plugin.write_text(opencode.plugin_source(sys.executable))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER % {"plugin": json.dumps(str(plugin)), "project": json.dumps(str(home.project)),
                                "check": json.dumps(CHECK)})
    home.start_worker()
    try:
        first = subprocess.run([NODE, str(driver), "ses_1", "Create calc.py with an add function.", "work"],
                               env=home.env, capture_output=True, text=True, timeout=60, cwd=str(home.project))
        assert first.returncode == 0, first.stderr
        conn = sqlite3.connect(home.data / "kenning.db")
        deadline = time.monotonic() + 30
        rows: list[tuple] = []
        while time.monotonic() < deadline:  # the worker observes in the background
            rows = conn.execute("SELECT o.type, o.title, o.files_modified, s.platform FROM observations o "
                                "JOIN sessions s ON s.id = o.session_id").fetchall()
            if any(r[0] == "bugfix" for r in rows) and home.pending() == 0:
                break
            time.sleep(0.2)
        conn.close()
        bugfix = next((r for r in rows if r[0] == "bugfix"), None)
        assert bugfix is not None and "add is broken" in bugfix[1], rows
        assert json.loads(bugfix[2]) == ["calc.py"] and bugfix[3] == "opencode"

        second = subprocess.run([NODE, str(driver), "ses_2", "What did we do last time?", "ask"], env=home.env,
                                capture_output=True, text=True, timeout=60, cwd=str(home.project))
        assert second.returncode == 0, second.stderr
        answer = json.loads(second.stdout.strip().splitlines()[-1])
        assert len(answer["system"]) == 1 and "<kenning-context>" in answer["system"][0]
        assert "calc.py" in answer["system"][0]  # the session's line: what it did
    finally:
        home.stop_worker()
