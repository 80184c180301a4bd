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


def _said(text: str, role: str, origin: str, message: int) -> Any:
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    return Judged(units(text)[0], role=role, p=0.95, speaker="agent", origin=origin, worth=0.95, message=message)


def _kinds(words: str, commands: list[Command], slips: frozenset[str]) -> list[str]:
    from kenning.observer.compose import agent_memories

    cause = _said("The issue is that `pairs` is inferred as `never[]` from the `?? []` default of the context.",
                  "rootcause", "progress", 0)
    fix = _said("The engine now passes `pairs` to the prompt generator after grouping the files by folder.",
                "fix", "final", 1)
    r = Reading(prompt=words or "Implement the following plan: group the files by folder", words=words,
                agent=[cause, fix], commands=commands)
    drafts, _used = agent_memories(r, 0.0, "prompt 1", ["src/engine.ts"], [], slips=slips)
    return [d.kind for d in drafts if "`pairs` is inferred" in d.title]


def test_a_cause_found_on_the_way_of_the_turns_own_slip_is_no_root_cause() -> None:
    cmds = [_run("bun run typecheck", False, 3), _run("bun run typecheck", True, 6)]
    assert _kinds("", cmds, frozenset({"bun run typecheck"})) == ["note"]  # the session log's, no key memory
    # The same words, when the user reported the problem or a failure was not the turn's own: the turn's cause.
    assert _kinds("the typecheck fails on main since yesterday", cmds, frozenset({"bun run typecheck"})) == \
        ["rootcause"]
    assert _kinds("", cmds, frozenset()) == ["rootcause"]


def test_a_push_refused_then_made_elsewhere_is_no_slip() -> None:
    tools = [_edit(1, "CHANGELOG.md", 1)]
    cmds = [_run("git tag v1.2.0 && git push origin main --tags", False, 2,
                 "remote: error: GH006: Protected branch update failed for refs/heads/main."),
            _run("git branch release/v1.2.0 && git push origin release/v1.2.0", True, 3)]
    assert _slips(Reading(commands=cmds), tools, ROOT) == frozenset()
