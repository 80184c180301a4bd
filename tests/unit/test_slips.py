"""Which failed commands were the turn's own doing: a check broken by what the turn had just written and
passing again before it ended, or a command a wrapper rejected that passed without it. Neither makes the
turn one about a problem (a feature's type error is no root cause, its steps no fix)."""

from __future__ import annotations

from typing import Any

from kenning.observer.conclusion import problem
from kenning.observer.evidence import Command
from kenning.observer.providers.rules import _slips
from kenning.observer.reading import Reading
from kenning.records import Event

ROOT = "/w/app"


def _edit(at: float, path: str, i: int) -> Event:
    payload: dict[str, Any] = {"hook_event_name": "PostToolUse", "tool_name": "Edit",
                               "tool_input": {"file_path": f"{ROOT}/{path}", "old_string": "a", "new_string": "b"},
                               "tool_response": {"filePath": f"{ROOT}/{path}"}}
    return Event(id=i, kind="PostToolUse", occurred_at=at, payload=payload, tool_name="Edit", prompt_number=1,
                 size_chars=100)


def _run(cmd: str, ok: bool, at: float, output: str = "") -> Command:
    return Command(cmd, ok, output or ("ok" if ok else "error TS2345: Argument of type 'never[]'"), at, int(at))


def test_a_check_broken_by_the_turns_own_edit_and_fixed_is_a_slip() -> None:
    tools = [_edit(1, "src/engine.ts", 1), _edit(5, "src/engine.ts", 2)]
    cmds = [_run("bun run typecheck", False, 3), _run("bun run typecheck", True, 6)]
    r = Reading(prompt="Add colocated pairs to the engine", commands=cmds)
    assert _slips(r, tools, ROOT) == {"bun run typecheck"}
    assert not problem(r, _slips(r, tools, ROOT))


def test_a_fixer_run_between_counts_as_the_turns_own_lint() -> None:
    tools = [_edit(1, "src/a.ts", 1)]
    cmds = [_run("bun run lint", False, 2), _run("bun run lint:fix", True, 3), _run("bun run lint", True, 4)]
    assert _slips(Reading(commands=cmds), tools, ROOT) == {"bun run lint"}


def test_a_failure_before_any_edit_is_what_was_there() -> None:
    tools = [_edit(5, "src/engine.ts", 1)]
    cmds = [_run("go test ./...", False, 2), _run("go test ./...", True, 6)]
    r = Reading(prompt="make the tests pass", commands=cmds)
    assert _slips(r, tools, ROOT) == frozenset()
    assert problem(r, _slips(r, tools, ROOT))


def test_fixing_code_the_turn_had_not_touched_found_a_fault() -> None:
    # The turn wrote a test (which failed), then changed the code under test: a bug of what was there.
    tools = [_edit(1, "tests/test_totals.py", 1), _edit(4, "src/totals.py", 2)]
    cmds = [_run("pytest", False, 2), _run("pytest", True, 5)]
    assert _slips(Reading(commands=cmds), tools, ROOT) == frozenset()


def test_a_failure_that_never_passed_again_is_no_slip() -> None:
    tools = [_edit(1, "src/a.ts", 1)]
    cmds = [_run("bun run test", False, 2), _run("bun run lint", True, 3)]
    assert _slips(Reading(commands=cmds), tools, ROOT) == frozenset()


def test_a_wrapper_that_rejects_the_command_is_no_problem_of_the_project() -> None:
    cmds = [_run("rtk bun run test", False, 2, "error: unrecognized subcommand 'bun'"),
            _run("bun run test", True, 3)]
    r = Reading(prompt="run the tests", commands=cmds)
    assert _slips(r, [], ROOT) == {"rtk bun run test"}
    assert not problem(r, _slips(r, [], ROOT))
    # The same failure, never run again without the wrapper: nothing proves it was the wrapper's alone.
    assert _slips(Reading(commands=cmds[:1]), [], ROOT) == frozenset()
