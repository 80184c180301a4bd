"""Copilot CLI's hook half: the exit code read from a shell result's text, the final answer read from the
session's transcript (bounded, waiting for Copilot's batched writes), and whether a folder is trusted.
Shapes as the real Copilot CLI 1.0.102 writes them (tests/e2e/test_copilot_memory.py runs it)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kenning.integrations import copilot, copilot_trust

STAMP = 1796100000900


def _line(kind: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "data": data, "id": "e", "timestamp": "2026-11-30T10:00:00.000Z",
                       "parentId": None}, separators=(",", ":"))


def _stop_start(stamp: int = STAMP) -> str:
    return _line("hook.start", {"hookInvocationId": "h", "hookType": "agentStop",
                                "input": {"sessionId": "s", "timestamp": stamp, "transcriptPath": "x"}})


def _turn(*answers: str, sub: str | None = None) -> list[str]:
    lines = [_line("user.message", {"content": "Make the check pass"})]
    for a in answers:
        lines.append(_line("assistant.message", {"messageId": "m", "content": a, "toolRequests": []}))
    if sub is not None:  # a subagent's message, after the main one
        lines.append(_line("assistant.message", {"content": sub, "parentToolCallId": "call_task"}))
    return [*lines, _line("assistant.turn_end", {"turnId": "1"})]


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(("text", "code", "output"), [
    ("boom\n<shellId: 0 completed with exit code 3>", 3, "boom"),
    ("<shellId: 1 completed with exit code 0>", 0, ""),
    ("a\nb\n<detached command with shellId: 7 completed with exit code 2>\n", 2, "a\nb"),
    ("err\n<shellId: 0 completed with exit code 1>\n<sandbox is active for this command>", 1, "err"),
    ("AssertionError: add is broken\n<exited with exit code 1>", 1, "AssertionError: add is broken"),
    ("<command started in background with shellId: 3>", None, "<command started in background with shellId: 3>"),
    # The command's own output mimicking the line earlier on: only the last line is Copilot's.
    ("<shellId: 9 completed with exit code 5>\nfine\n<shellId: 0 completed with exit code 0>", 0,
     "<shellId: 9 completed with exit code 5>\nfine"),
    ("printed <shellId: 0 completed with exit code 4> inline", None,
     "printed <shellId: 0 completed with exit code 4> inline"),
])
def test_shell_exit_reads_copilots_own_last_line(text: str, code: int | None, output: str) -> None:
    assert copilot.shell_exit(text) == (code, output)


def test_a_failing_command_reported_as_success_is_a_failure() -> None:
    payload = {"sessionId": "s", "timestamp": 1, "cwd": "/p", "toolName": "bash",
               "toolArgs": {"command": "pytest -q", "description": "Run tests"},
               "toolResult": {"resultType": "success",
                              "textResultForLlm": "1 failed\n<shellId: 0 completed with exit code 1>"}}
    event, out = copilot.HOOK.translate("postToolUse", payload)
    assert (event, out["tool_name"], out["error"]) == ("PostToolUseFailure", "Bash", "Exit code 1\n1 failed")
    assert out["tool_input"] == {"command": "pytest -q", "description": "Run tests"} and "tool_response" not in out
    ok = {**payload, "toolResult": {"resultType": "success", "textResultForLlm": "3 passed\n<shellId: 1 completed with "
                                                                                 "exit code 0>"}}
    event, out = copilot.HOOK.translate("postToolUse", ok)
    assert (event, out["tool_response"]) == ("PostToolUse", {"stdout": "3 passed", "stderr": ""})
    # Another tool's text is kept as is, whatever it ends with.
    view = {**ok, "toolName": "view", "toolArgs": {"path": "/p/log.txt"}}
    event, out = copilot.HOOK.translate("postToolUse", view)
    assert event == "PostToolUse" and out["tool_response"].endswith("exit code 0>")


def test_final_answer_is_the_turns_last_top_level_message(tmp_path: Path) -> None:
    path = _write(tmp_path / "events.jsonl", [*_turn("Let me look.", "Done: the check passes.", sub="sub note"),
                                               _stop_start()])
    assert copilot.final_answer(path, STAMP, wait=0) == "Done: the check passes."
    stop = {"sessionId": "s", "timestamp": STAMP, "cwd": "/p", "transcriptPath": path, "stopReason": "end_turn"}
    assert copilot.HOOK.translate("agentStop", stop)[1]["last_assistant_message"] == "Done: the check passes."
    # A turn that ended without words has no answer: not the previous turn's.
    earlier = [*_turn("Old answer."), _stop_start(STAMP - 500)]
    silent = [_line("user.message", {"content": "again"}), _line("assistant.turn_end", {"turnId": "2"}), _stop_start()]
    assert copilot.final_answer(_write(tmp_path / "b.jsonl", earlier + silent), STAMP, wait=0) == ""
    # A message given in the payload (older builds) is taken as is, the file is not read.
    given = {**stop, "lastAssistantMessage": "From the payload.", "transcriptPath": str(tmp_path / "none.jsonl")}
    assert copilot.HOOK.translate("agentStop", given)[1]["last_assistant_message"] == "From the payload."


def test_final_answer_waits_for_copilots_batched_writes_but_not_forever(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, _turn("Done: written late.")[:1])  # only the prompt is on disk when agentStop runs

    def late() -> None:
        time.sleep(0.2)
        with open(path, "a") as fh:
            fh.write("\n".join([*_turn("Done: written late.")[1:], _stop_start()]) + "\n")

    writer = threading.Thread(target=late)
    writer.start()
    try:
        assert copilot.final_answer(str(path), STAMP, wait=3) == "Done: written late."
    finally:
        writer.join()
    # Never written: '' once the wait is over, not a guess from the lines there.
    lagging = _write(tmp_path / "lag.jsonl", _turn("Let me look."))
    t0 = time.monotonic()
    assert copilot.final_answer(lagging, STAMP, wait=0.3) == ""
    assert 0.3 <= time.monotonic() - t0 < 2
    # Another agentStop's line (an earlier turn's timestamp) is not this one's.
    other = _write(tmp_path / "other.jsonl", [*_turn("Earlier."), _stop_start(STAMP - 1), *_turn("Now.")])
    assert copilot.final_answer(other, STAMP, wait=0) == ""
    assert copilot.final_answer(str(tmp_path / "missing.jsonl"), STAMP, wait=0) == ""
    assert copilot.final_answer(str(tmp_path / "events.json"), STAMP, wait=0) == ""


def test_final_answer_reads_only_the_files_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "events.jsonl"
    bulk = _line("tool.execution_complete", {"result": {"content": "x" * 4000}})
    _write(path, [bulk] * 2000 + _turn("Done at the end.") + [_stop_start()])  # ~8 MB before the turn
    reads: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def seek(self, *a: Any) -> int:
            return int(self.fh.seek(*a))

        def read(self, n: int = -1) -> bytes:
            data = self.fh.read(n)
            reads.append(len(data))
            return bytes(data)

    def counting_open(file: Any, mode: str = "r", *a: Any, **k: Any) -> Any:
        fh = real_open(file, mode, *a, **k)
        return Counting(fh) if str(file) == str(path) else fh

    monkeypatch.setattr("builtins.open", counting_open)
    assert copilot.final_answer(str(path), STAMP, wait=0, tail_bytes=64 * 1024) == "Done at the end."
    monkeypatch.undo()
    assert reads and max(reads) <= 64 * 1024 and os.path.getsize(path) > 100 * 64 * 1024


def test_trusted_folders_as_copilot_writes_them(tmp_path: Path) -> None:
    repo, other = tmp_path / "work" / "repo", tmp_path / "elsewhere"
    (repo / "src").mkdir(parents=True)
    other.mkdir()
    config = tmp_path / "config.json"
    assert not copilot_trust.is_trusted(str(repo), str(config))  # no config at all
    config.write_text("// User settings belong in settings.json.\n// This file is managed automatically.\n"
                      + json.dumps({"trustedFolders": [str(tmp_path / "work")], "firstLaunchAt": "x"}, indent=2))
    assert copilot_trust.is_trusted(str(repo), str(config))  # below a trusted folder
    assert copilot_trust.is_trusted(str(repo / "src"), str(config))
    assert not copilot_trust.is_trusted(str(other), str(config))
    assert not copilot_trust.is_trusted(str(tmp_path / "work-2"), str(config))  # a prefix is not a parent
    config.write_text(json.dumps({"trusted_folders": [str(repo)]}))  # the older key, still honoured
    assert copilot_trust.is_trusted(str(repo), str(config))
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert copilot_trust.is_trusted(str(link), str(config))  # the same folder by another path
    config.write_text("{not json")
    assert not copilot_trust.is_trusted(str(repo), str(config))


def test_copilot_home_and_the_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "ch"))
    assert copilot_trust.config_path() == str(tmp_path / "ch" / "config.json")
    warning = copilot_trust.untrusted_warning("/w/repo")
    assert "does not trust /w/repo" in warning and "trustedFolders" in warning and str(tmp_path / "ch") in warning
    assert "\n" not in warning
    later = copilot_trust.session_only_warning("/w/repo")
    assert "for this session only" in later and "trustedFolders" in later and "\n" not in later
