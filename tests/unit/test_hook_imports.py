"""A hook process for any agent imports the standard library's lightest modules only: the adapter of
its agent, never an installer's dependencies (json, re, typing, tomlkit, dataclasses)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kenning.integrations import AGENTS

HEAVY = ("re", "json", "typing", "dataclasses", "tomlkit", "tomllib", "importlib.resources", "shlex")


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_adapter_adds_no_heavy_import(agent: str) -> None:
    code = ("import sys; from kenning.hook.main import cli; from kenning.integrations import hook_adapter; "
            f"a = hook_adapter({agent!r}); a.translate(a.events[-1], {{'session_id': 's', 'sessionId': 's'}}); "
            f"found = sorted(m for m in {HEAVY!r} if m in sys.modules); print(__import__('json').dumps(found))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [], f"{agent}'s hook path imports {out.stdout}"
