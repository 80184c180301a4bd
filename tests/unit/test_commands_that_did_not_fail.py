"""Commands that did not fail, though their tool result is an error.

A search that exits 1 with nothing printed (``rg`` with no match, ``git check-ignore`` of paths no rule ignores)
answered the agent's question: nothing failed, so the turn is not about a problem and its answer gives no fix
(real sessions: a "what's next?" turn whose cleanup list became a bugfix row; a search for stale references
titled "Fixed `rg -n …`"). A call auto mode's classifier refused never ran, as one the user refused.
"""

from __future__ import annotations

import pytest

from kenning.observer.evidence import command, found_nothing
from kenning.records import Event
from tests.support.memory_story import Story, Turn, bash, event, read

ROOT = "/work/shop"


def _failed(cmd: str, error: str) -> Event:
    return event({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": cmd},
                  "error": error})


@pytest.mark.parametrize("cmd", [
    'rg -n "legacyAudience|parseAudience" src -g "*.go"',
    "git check-ignore -v .cache/ .tool-state/ 2>&1",
    "cd /work/shop && grep -rn TODO src",
    "git grep -n oldName",
])
def test_a_search_that_printed_nothing_found_nothing(cmd: str) -> None:
    assert found_nothing(cmd)
    c = command(_failed(cmd, "Exit code 1"))
    assert c is not None and c.ok


@pytest.mark.parametrize(("cmd", "error"), [
    ("rg -n TODO src | head -5", "Exit code 1"),           # the status is head's, not the search's
    ("rg -n TODO src && make build", "Exit code 1"),       # which of the two failed is not known
    ("rg -n 'a(b' src", "Exit code 2\nrg: regex parse error"),
    ("grep -rn TODO missing/", "Exit code 1\ngrep: missing/: No such file or directory"),
    ("go test ./...", "Exit code 1"),
])
def test_anything_else_that_exited_nonzero_failed(cmd: str, error: str) -> None:
    c = command(_failed(cmd, error))
    assert c is not None and not c.ok


ANSWER = """`.cache/` and `.tool-state/` are not ignored. Fixed the rounding in `NOTES.md` generation earlier; \
the regenerated file is uncommitted.

Next: commit the cleanup, then release v1.2."""


def test_a_search_that_found_nothing_makes_no_problem_of_the_turn(story: Story) -> None:
    story.session("shop", Turn("What should we do next?", [
        read(ROOT, "ROADMAP.md"), bash("git status --short", "?? .cache/\n?? .tool-state/\n M NOTES.md"),
        bash("git check-ignore -v .cache/ .tool-state/ docs/ 2>&1", fails="")], last=ANSWER))
    # (with the search taken for a failure: "`.cache/` … are not ignored — fix: fixed the rounding …")
    keys = [r for r in story.active("shop") if r["layer"] in ("key", "rule")]
    assert not [r for r in keys if r["type"] == "bugfix"], keys


def test_a_call_auto_modes_classifier_refused_never_ran() -> None:
    refused = ("Permission for this action was denied by the Claude Code auto mode classifier. Reason: Blocked by "
               "classifier. If you have other tasks that don't depend on this action, continue working on those.")
    assert command(_failed("gh release view v2.3.1 --json tagName", refused)) is None
    assert command(_failed("gh release view v2.3.1 --json tagName", "Exit code 1\nrelease not found")) is not None
