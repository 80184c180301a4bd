"""The checks a session ran (kenning/observer/checks.py) and those the index says passed
(kenning/context/checks.py)."""

from __future__ import annotations

import pytest

from kenning.context import checks as shown
from kenning.observer.checks import check_of, checks_of, line, merged, parse
from tests.support.memory_story import Story, Turn, bash, edit


@pytest.mark.parametrize(("command", "check"), [
    ("cargo test 2>&1", "cargo test"),
    ("cd /work/shop && bun run lint", "bun run lint"),
    ("cargo fmt --check", "cargo fmt --check"),
    ("go test ./pkg/store/...", "go test ./pkg/store/..."),
    ("uv run pytest -q", "uv run pytest -q"),
    ("golangci-lint run ./...", "golangci-lint run ./..."),
    ("cargo test 2>&1 | tail -10", ""),          # tail's exit status, not the tests'
    ("cargo fmt --check && cargo clippy", ""),   # two commands
    ("bun run lint:fix", ""),                    # a fixer
    ("cargo fmt", ""),                           # a formatter that writes
    ("bun test src/a.test.ts", ""),              # one file
    ("uv run pytest -k export", ""),             # one test
    ("golangci-lint --version", ""),             # a version query
    ("cargo run --bin hk -- test", ""),          # the program itself
    ("go build ./...", ""),                      # no check
    ('rg -n "audience" workers test docs', ""),  # "test" is a folder searched, not a check run
    ("corepack pnpm run typecheck", "corepack pnpm run typecheck"),
    ("cargo test structured_argv --lib", ""),    # cargo's test-name filter: one test
    ("cargo test --workspace", "cargo test --workspace"),
])
def test_what_counts_as_a_check(command: str, check: str) -> None:
    assert check_of(command) == check


@pytest.mark.parametrize(("command", "ok", "found"), [
    # `&&` runs a part only after the one before exited 0: a chain that passed says each part passed; a piped
    # part gives its last program's status (tail's), so it says nothing of the check
    ('cargo fmt --check && cargo clippy 2>&1 | tail -5 && cargo test 2>&1 | grep "^test result"', True,
     ["cargo fmt --check"]),
    ("cd /work/shop && bun run lint && bun run typecheck", True, ["bun run lint", "bun run typecheck"]),
    ("mise run fmt && mise run lint 2>&1", True, ["mise run lint"]),
    ("cargo fmt --check && cargo clippy", False, []),     # which part failed is not known
    ("cargo test; cargo clippy", True, []),               # the status is the last part's only
    ("cargo test || true", True, []),                     # passes whatever the tests did
    ("cargo test 2>&1", False, ["cargo test"]),           # one check: its own outcome
])
def test_what_a_chain_says_of_its_checks(command: str, ok: bool, found: list[str]) -> None:
    assert checks_of(command, ok) == found


def test_a_sessions_checks_keep_their_last_outcome_across_summaries() -> None:
    first = merged("", [("cargo fmt --check", False), ("cargo test", True)])
    later = merged(line(first), [("cargo fmt --check", True), ("cargo clippy", False)])
    assert later == [("cargo test", True), ("cargo fmt --check", True), ("cargo clippy", False)]
    assert parse(line(later)) == later


def test_the_index_names_the_latest_sessions_passing_checks_and_the_usual_ones() -> None:
    notes = ["State: committed 1a2b3c4 x\nChecks: cargo clippy (failed), cargo test (ok)",  # newest first
             "Checks: cargo test (ok), cargo fmt --check (ok)",
             "Checks: cargo fmt --check (ok), cargo bench-check (ok)",
             "Commands: ls (ok)"]
    # the latest session's passing check first (clippy failed there), then one that passed in two sessions;
    # bench-check passed in one older session only
    assert shown.passed(notes) == ["cargo test", "cargo fmt --check"]
    assert shown.line(notes) == "Checks that passed: `cargo test`, `cargo fmt --check`"
    assert shown.line(["Commands: ls (ok)"]) == ""


def test_one_check_is_named_once_by_the_variant_that_covers_the_most() -> None:
    notes = ["Checks: go test ./internal/syncer (ok), ./target/debug/hk check --all (ok)",
             "Checks: go test ./... (ok), hk check --all (ok)"]
    assert shown.key("./target/debug/hk check --all") == "hk check" and shown.key("go test ./...") == "go test"
    assert shown.passed(notes) == ["go test ./...", "hk check --all"]


def test_a_check_still_running_when_the_record_ends_did_not_pass() -> None:
    from kenning.observer import git_actions
    from kenning.observer.evidence import Command, command
    from kenning.observer.providers.rules import standing
    from kenning.observer.summary import Notes
    from kenning.records import Event

    ev = Event(1, "PostToolUse", 1.0, {"tool_name": "Bash", "tool_input": {"command": "cargo test"},
                                       "tool_response": {"stdout": "running 12 tests", "stderr": "",
                                                         "unfinished": True}}, "Bash")
    c = command(ev)
    assert c is not None and c.ok and not c.finished
    done = Command("cargo clippy", True, "Finished", 2.0, 2)
    note = Notes()
    standing(note, git_actions.read([c, done]), [c, done], {}, "/work/shop")
    assert note.checks == [("cargo clippy", True)]


def test_a_check_that_failed_and_then_passed_in_a_chain_is_said_to_pass(story: Story) -> None:
    root = story.root("crate")
    story.session("crate", Turn("Refactor the rebase helpers.", [
        edit(root, "src/rebase.rs"),
        bash("cargo fmt --check 2>&1", fails="Diff in src/rebase.rs at line 12"), bash("cargo fmt"),
        bash("cargo fmt --check && cargo clippy 2>&1 | tail -5 && cargo test 2>&1 | grep '^test result'",
             "test result: ok. 620 passed")], last="Done."))
    assert "Checks that passed: `cargo fmt --check`" in story.context("crate"), story.context("crate")
