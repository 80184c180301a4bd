"""Redaction settings honoured by real hook processes: what lands in the spool.

No worker runs, so every captured event stays in the spool where the test reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Home

AWS_KEY = "AKIA" + "IOSFODNN7Q2R4T6V"


def write_settings(home: Home, values: dict[str, Any]) -> None:
    home.data.mkdir(parents=True, exist_ok=True)
    (home.data / "settings.json").write_text(json.dumps(values))


def capture(home: Home, prompt: str, output: str, env: dict[str, str] | None = None) -> str:
    """One prompt and one tool call through real hooks; returns the spool's text."""
    base = {"session_id": "s-redact", "transcript_path": "/tmp/t/s.jsonl", "cwd": str(home.project)}
    for event, fields in (("UserPromptSubmit", {"prompt": prompt}),
                          ("PostToolUse", {"tool_name": "Bash", "tool_use_id": "toolu_1",
                                           "tool_input": {"command": "cat notes.txt"},
                                           "tool_response": {"stdout": output, "stderr": ""}})):
        r = home.hook(event, {**base, "hook_event_name": event, **fields}, env=env)
        assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", r.stderr
    files = sorted(Path(home.paths.spool).glob("*.json"))
    assert len(files) == 2
    return "".join(f.read_text() for f in files)


def test_a_custom_pattern_is_redacted_in_the_spool(home: Home) -> None:
    write_settings(home, {"redact_custom": ["ticket=TICKET-\\d{5}", "codename=\\bProject [A-Z][a-z]+\\b"]})
    spooled = capture(home, "See TICKET-48213 about Project Falcon", "TICKET-99120 is blocked")
    assert "TICKET-48213" not in spooled and "TICKET-99120" not in spooled and "Falcon" not in spooled
    assert spooled.count("[REDACTED:ticket]") == 2 and "[REDACTED:codename]" in spooled


def test_a_custom_pattern_from_the_environment(home: Home) -> None:
    env = {"KENNING_REDACT_CUSTOM": '["emp=EMP-\\\\d{6}"]'}
    spooled = capture(home, "ask EMP-123456", "ok", env=env)
    assert "EMP-123456" not in spooled and "[REDACTED:emp]" in spooled


def test_a_disabled_detector_no_longer_redacts(home: Home) -> None:
    spooled = capture(home, f"key {AWS_KEY}", "DB_PASSWORD=hunter2hunter2")
    assert AWS_KEY not in spooled  # on by default
    for f in Path(home.paths.spool).glob("*.json"):
        f.unlink()
    write_settings(home, {"redact_disabled": ["aws_access_key"]})
    spooled = capture(home, f"key {AWS_KEY}", "DB_PASSWORD=hunter2hunter2")
    assert AWS_KEY in spooled
    assert "hunter2hunter2" not in spooled and "[REDACTED:password_assignment]" in spooled  # the others still run


def test_bad_redaction_settings_never_break_capture_and_are_reported(home: Home) -> None:
    write_settings(home, {"redact_custom": ["broken=(", "ticket=TICKET-\\d{5}"], "redact_disabled": ["nope"]})
    spooled = capture(home, f"TICKET-12345 and {AWS_KEY}", "fine")
    assert "TICKET-12345" not in spooled and AWS_KEY not in spooled  # good items still apply
    r = home.kenning("settings")
    assert r.returncode == 0
    assert "redact_custom: 'broken=('" in r.stderr and "unknown detector 'nope'" in r.stderr
    r = home.kenning("doctor")
    assert "broken=(" in r.stdout
