"""A command that failed inside the agent's sandbox and passed when run outside it: a gotcha the record proves
(kenning/observer/outside_sandbox.py). Codex records the rerun's ``sandbox_permissions: require_escalated`` in its
rollout; Claude Code's sandboxed Bash takes ``dangerouslyDisableSandbox``. The shapes are those of the real
sessions (a test server that may not bind localhost, a ref git may not lock); the words are our own."""

from __future__ import annotations

import time
from pathlib import Path

from kenning.history import SessionFile, codex
from kenning.observer.evidence import Command, command, error_headline
from kenning.observer.outside_sandbox import found, title
from tests.support.memory_story import Story, Turn, bash, event
from tests.support.transcripts import CodexSession

EPERM = "\x1b[31mError: listen EPERM: operation not permitted 127.0.0.1\x1b[39m\n    at Server.setupListenHandle"


def _ran(cmd: str, ok: bool, output: str = "", *, outside: bool = False, at: float = 1.0) -> Command:
    return Command(cmd, ok, output if ok else f"Exit code 1\n{output}", at, int(at), outside=outside)


def test_codex_records_the_run_it_asked_to_make_outside_the_sandbox(tmp_path: Path) -> None:
    rollout = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("run the tests") \
        .run("pnpm run test", EPERM, code=1).run("pnpm run test", "Tests 42 passed", outside=True) \
        .answer("All 42 tests pass.").write(tmp_path / "codex")
    events = list(codex.events(SessionFile("codex", str(rollout), 1, 0.0), now=time.time()))
    ran = [c for c in (command(event(e.payload)) for e in events if e.kind.startswith("PostToolUse")) if c is not None]
    assert [(c.command, c.ok, c.outside) for c in ran] == [("pnpm run test", False, False),
                                                          ("pnpm run test", True, True)]
    assert [title(o) for o in found(ran)] == [
        "`pnpm run test` fails inside the sandbox (Error: listen EPERM: operation not permitted 127.0.0.1) and passes "
        "when run outside it"]


def test_claude_codes_unsandboxed_run_is_outside_too() -> None:
    payload = bash("git switch -c fix/refunds", "Switched to a new branch 'fix/refunds'")
    payload["tool_input"]["dangerouslyDisableSandbox"] = True
    c = command(event(payload))
    assert c is not None and c.outside
    plain = command(event(bash("git status")))
    assert plain is not None and not plain.outside


def test_no_proof_no_gotcha() -> None:
    inside = _ran("pnpm run test", False, EPERM)
    passed = _ran("pnpm run test", True, "Tests 42 passed", outside=True, at=2.0)
    assert found([passed]) == []  # run outside at once: nothing failed inside
    assert found([inside, _ran("pnpm run test", False, EPERM, outside=True, at=2.0)]) == []  # failed outside too
    assert found([inside, _ran("pnpm run test -- --bail", True, "ok", outside=True, at=2.0)]) == []  # another command
    assert found([inside, _ran("pnpm run test", True, "ok", at=2.0)]) == []  # passed inside: it was something else
    # the last run inside before it passed, not an older one: here the sandboxed run had passed just before
    assert found([inside, _ran("pnpm run test", True, "ok", at=2.0), _ran("pnpm run test", True, "ok",
                                                                          outside=True, at=3.0)]) == []


def test_a_terminals_colour_codes_do_not_hide_the_error_line() -> None:
    assert error_headline("\x1b[33m⛅️ wrangler 4.1\x1b[0m\n\x1b[31m✘ \x1b[41;31m[\x1b[41;97mERROR\x1b[41;31m]\x1b[0m "
                          "Failed to bind to 127.0.0.1:9229: permission denied.") == \
        "✘ [ERROR] Failed to bind to 127.0.0.1:9229: permission denied."


def test_the_command_the_sandbox_stopped_is_a_key_gotcha_of_the_turn(story: Story) -> None:
    outside = bash("pnpm run test", "Tests 42 passed")
    outside["tool_input"]["dangerouslyDisableSandbox"] = True
    story.session("shop", Turn("Run the tests", [bash("pnpm run test", fails=EPERM), outside],
                               last="All 42 tests pass."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert "`pnpm run test` fails inside the sandbox (Error: listen EPERM: operation not permitted 127.0.0.1) and " \
           "passes when run outside it" in keys, keys
