"""A field or option a tool refused in its own words, which the same tool then did without: a gotcha the commands
prove (kenning/observer/rejected_usage.py). The shapes are those of the real sessions (BSD cat's "illegal option",
gh's "Unknown JSON field"); the words are our own."""

from __future__ import annotations

from kenning.observer.evidence import Command
from kenning.observer.rejected_usage import refused, title
from tests.support.memory_story import Story, Turn, bash

GH_FIELDS = ('Unknown JSON field: "reviewThreads"\nAvailable fields:\n  additions\n  author\n  comments\n'
             "  reviews\n  title")


def _ran(command: str, ok: bool, output: str = "", at: float = 1.0) -> Command:
    return Command(command, ok, output if ok else f"Exit code 1\n{output}", at, int(at))


def test_an_option_the_tool_refused_and_the_run_without_it() -> None:
    found = refused([
        _ran("sed -n '30,34p' src/wal.go | cat -A", False, "cat: illegal option -- A\nusage: cat [-belnstuv] [file]"),
        _ran("sed -n '30,34p' src/wal.go | cat -v -e -t", True, "\tfunc flush() {$", 2.0)])
    assert [title(r) for r in found] == \
        ["`cat` has no option `-A` (cat: illegal option -- A); `cat -v -e -t` passed"]


def test_a_json_field_the_tool_refused_and_the_fields_that_passed() -> None:
    found = refused([
        _ran("gh pr view 58 --comments --json title,reviewThreads,reviews", False, GH_FIELDS),
        _ran("git status --short", True, "", 2.0),
        _ran("gh pr view 58 --comments --json title,reviews", True, "{}", 3.0)])
    assert [title(r) for r in found] == ['`gh pr view --json` has no field `reviewThreads` (Unknown JSON field: '
                                         '"reviewThreads"); `gh pr view --json title,reviews` passed']


def test_a_tool_that_lists_its_fields_proves_the_refusal_by_itself() -> None:
    checks = ('Unknown JSON field: "conclusion"\nAvailable fields:\n  bucket\n  completedAt\n  link\n  name\n'
              "  state\n  workflow")
    found = refused([_ran("gh pr checks 22 --json name,state,conclusion --jq '.[] | .name'", False, checks)])
    assert [title(r) for r in found] == ['`gh pr checks --json` has no field `conclusion` (Unknown JSON field: '
                                         '"conclusion"; its fields: bucket, completedAt, link, name, state, workflow)']
    many = 'Unknown JSON field: "checks"\nAvailable fields:\n' + "".join(f"  field{i}\n" for i in range(40))
    found = refused([_ran("gh pr list --json number,checks", False, many)])
    assert [title(r) for r in found] == ['`gh pr list --json` has no field `checks` (Unknown JSON field: "checks")']


def test_no_proof_no_gotcha() -> None:
    refusal = _ran("sed -n 1,4p a.go | cat -A", False, "cat: illegal option -- A")
    assert refused([refusal]) == []  # the tool was never run without it
    assert refused([refusal, _ran("sed -n 1,4p a.go | od -c", True, "0000000", 2.0)]) == []  # another tool
    # a wrapper that rewrote the command refused its option; what passed is the wrapper running another program
    assert refused([_ran("git -C /w/app add a.ts", False, "error: unexpected argument '-C' found"),
                    _ran("rtk git add a.ts", True, "", 2.0)]) == []
    # the word passed after all (the run that failed had another problem)
    assert refused([_ran("cat -A notes.txt", False, "cat: illegal option -- A"),
                    _ran("cat -n notes.txt", True, "1 a", 2.0), _ran("cat -A notes.txt", True, "a$", 3.0)]) == []


def test_the_refused_word_is_a_key_gotcha_of_the_turn(story: Story) -> None:
    root = story.root("shop")
    story.session("shop", Turn("Why does the WAL line look misaligned?", [
        bash(f"sed -n '30,34p' {root}/src/wal.go | cat -A", fails="cat: illegal option -- A\nusage: cat [-belnstuv]"),
        bash(f"sed -n '30,34p' {root}/src/wal.go | cat -v -e -t", "^Ifunc flush() {$")],
        last="The line is indented with a tab, the others with spaces."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert "`cat` has no option `-A` (cat: illegal option -- A); `cat -v -e -t` passed" in keys, keys
