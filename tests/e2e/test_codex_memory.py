"""End to end through the real Codex CLI (offline, fake Responses API) and then the real Claude Code CLI.

``kenning install --agent codex`` writes its hooks and their trust entries into a scratch
``~/.codex/config.toml``; Codex runs them as it would for a user (no
``--dangerously-bypass-hook-trust``). Session 1 in Codex creates a file with apply_patch, runs a
check that fails, fixes the file and runs the check again; session 2 in Codex gets that memory in
its first model request; session 3 in Claude Code on the same project gets it too, marked as
Codex's. Uninstall gives config.toml back byte for byte.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from kenning.hook import client
from kenning.paths import Paths
from tests.support import fake_responses
from tests.support.agent_clis import claude_code_is_told, ensure_codex, run_codex, stored_bugfix, write_codex_config
from tests.support.claude_cli import kenning_cli, scratch_env
from tests.support.fake_responses import FakeResponses, call, custom, script_by_prompt, text

pytestmark = pytest.mark.e2e

CHECK = "python3 -B -c \"import calc; assert calc.add(2, 2) == 4, 'add is broken'\""
CREATE = "*** Begin Patch\n*** Add File: calc.py\n+def add(a, b):\n+    return a - b\n*** End Patch\n"
FIX = ("*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
       "*** End Patch\n")


@pytest.fixture(scope="module")
def codex_bin() -> str:
    path = ensure_codex()
    if path is None:
        pytest.skip("Codex CLI unavailable (no CODEX_BIN, npm missing or install failed)")
    return path


def test_codex_sessions_remember_and_claude_code_is_told(codex_bin: str, tmp_path: Path) -> None:
    home, project, data, port, env = scratch_env(tmp_path, "calc-project", unset=("CODEX_HOME",))
    hook_env = {"KENNING_PORT": port, "KENNING_PROVIDER": "rules"}

    session1 = [[text("Creating the module."), custom("apply_patch", CREATE)],
                [call("exec_command", {"cmd": CHECK})],
                [custom("apply_patch", FIX)],
                [call("exec_command", {"cmd": CHECK})],
                [text("Fixed: add() now adds. Next step: add a test file for calc.")]]
    with FakeResponses(script=script_by_prompt({"calc.py": session1, "last time": [[text("Noted.")]]})) as fake:
        config = write_codex_config(home, fake.base_url)
        before = config.read_bytes()
        installed = kenning_cli(env, "install", "--no-start", "--agent", "codex", "--agent", "claude-code")
        assert installed.returncode == 0, installed.stderr
        assert "Codex CLI: hooks for" in installed.stdout
        assert b"trusted_hash" in config.read_bytes()
        try:
            first = run_codex("Create calc.py with an add function and make sure it works.", codex_bin=codex_bin,
                              cwd=project, home=home, extra_env=hook_env)
            assert first["rc"] == 0, first["stderr"][-3000:]
            assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
            outputs = fake_responses.tool_outputs(fake.model_requests()[-1]["body"])
            assert "exited with code 1" in outputs[1] and "exited with code 0" in outputs[3], outputs
            n_first = len(fake.model_requests())
            # A session start answers from what is stored, not waiting for the spool (kenning/worker/app.py):
            # a user's next session comes seconds later, `codex exec`'s next one in half a second. Let the
            # worker's cycle for session 1 finish first, as those seconds would.
            settle(data)
            second = run_codex("What did we do last time?", codex_bin=codex_bin, cwd=project, home=home,
                               extra_env=hook_env)
            assert second["rc"] == 0, second["stderr"][-3000:]
            first_of_session2 = fake.model_requests()[n_first]["body"]

            rows, bugfix = stored_bugfix(data, "codex")

            # Session 2: Codex's first request carries the context as a developer message.
            developer = [i for i in first_of_session2["input"] if i.get("role") == "developer"]
            context = next((json.dumps(i) for i in developer if "kenning-context" in json.dumps(i)), "")
            assert "Memory of calc-project" in context, fake_responses.all_text(first_of_session2)[:3000]
            assert rows and bugfix
            assert re.search(r"\bS1\b", context) and "Create calc.py with an add function" in context, context

            # Session 3: Claude Code on the same project is told what Codex did, attributed to Codex.
            claude_code_is_told(project, home, hook_env, "Codex CLI", "Create calc.py with an add function")
            assert "in Codex CLI" not in context  # Codex's own rows are not marked in Codex's context
        finally:
            kenning_cli(env, "worker", "stop")
            removed = kenning_cli(env, "uninstall", "--keep-worker")
        assert removed.returncode == 0, removed.stderr
        assert config.read_bytes() == before, "uninstall must give config.toml back byte for byte"


def settle(data: Path) -> None:
    paths = Paths(str(data))
    # The hook starts the worker detached and never waits for it: on a loaded machine its pid file comes later.
    deadline = time.monotonic() + 20.0
    info = client.read_pid_file(paths)
    while not info and time.monotonic() < deadline:
        time.sleep(0.2)
        info = client.read_pid_file(paths)
    assert info, "session 1 started no worker"
    assert client.authed(paths, info["port"], "POST", "/api/flush", timeout=12.0) is not None
