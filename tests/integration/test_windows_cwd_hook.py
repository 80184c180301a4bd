"""A live hook payload whose ``cwd`` is a Windows path (an agent on Windows whose hooks reach this
machine) is filed under that checkout, through the real hook process: never under the folder the
hook process runs in, and with the key the import gives the same folder."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kenning import winpath
from tests.conftest import Home


def spooled(h: Home) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((h.data / "spool").glob("*.json"))]


@pytest.mark.parametrize("cwd", ["C:\\Users\\someone\\source\\repos\\NumWordify",
                                 "C:/Users/someone/source/repos/NumWordify",
                                 "\\\\fileserver\\dev\\NumWordify"])
def test_a_windows_cwd_is_its_own_checkout(home: Home, cwd: str) -> None:
    home.env["KENNING_PORT"] = "1"  # never reach a worker: only what the hook spools is looked at
    payload = {"session_id": "w-1", "hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Bash",
               "tool_input": {"command": "dotnet test"}, "tool_response": {"stdout": "Passed!", "stderr": ""},
               "tool_use_id": "toolu_w1", "transcript_path": cwd + "\\t.jsonl"}
    r = home.hook("PostToolUse", payload)
    assert r.returncode == 0 and r.stdout == b"", r.stderr
    (rec,) = spooled(home)
    assert rec["project"] == "NumWordify"
    assert rec["project_key"] == winpath.key(cwd) and rec["project_key"].endswith("\\numwordify")
    assert rec["project_root"] == winpath.normalise(cwd)
    assert str(home.project) not in rec["project_root"] and not rec["project_root"].startswith("/")


def test_the_live_key_is_the_imported_key() -> None:
    from kenning.history.identity import checkout
    from kenning.project import identify

    cwd = "C:\\Users\\someone\\source\\repos\\NumWordify"
    assert identify(cwd).key == identify(checkout(cwd)[1]).key == "c:\\users\\someone\\source\\repos\\numwordify"
