"""A program the shell could not find, and the run that reached it another way in the same turn: a gotcha the
commands prove (kenning/observer/not_on_path.py). The shapes are those of the real sessions (zsh's "command not
found: x", a ``command -v`` that printed nothing, a build, a vendored copy, a container, a runner); the words are
our own."""

from __future__ import annotations

from kenning.observer.evidence import Command
from kenning.observer.not_on_path import routes, title
from tests.support.memory_story import Story, Turn, bash, edit


def _ran(command: str, ok: bool, output: str = "", at: float = 1.0) -> Command:
    return Command(command, ok, output if ok else f"Exit code 127\n{output}", at, int(at))


def _titles(commands: list[Command]) -> list[str]:
    return [title(r) for r in routes(commands)]


def test_the_shell_could_not_find_it_and_a_build_of_it_ran() -> None:
    assert _titles([_ran("lintr check --all", False, "zsh:1: command not found: lintr"),
                    _ran("./target/debug/lintr check --all", True, "all good", 2.0)]) == \
        ["`lintr` is not on the PATH here (zsh:1: command not found: lintr); `./target/debug/lintr` runs it"]
    # bash says it the other way round; a vendored copy after ``cd x &&``
    assert _titles([_ran("batsx test/a.bats", False, "bash: line 1: batsx: command not found"),
                    _ran("cd /w/app && test/vendor/bin/batsx test/a.bats", True, "ok 1 a", 2.0)]) == \
        ["`batsx` is not on the PATH here (bash: line 1: batsx: command not found); `test/vendor/bin/batsx` runs it"]


def test_a_lookup_that_found_nothing_and_a_container_or_runner_that_ran_it() -> None:
    assert _titles([_ran("command -v wfaudit || true; wfaudit --version 2>/dev/null || true", True, ""),
                    _ran('docker run --rm -v "$PWD:/src" -w /src ghcr.io/acme/wfaudit@sha256:0f3a .', True,
                         "No findings", 2.0)]) == \
        ["`wfaudit` is not on the PATH here (`command -v wfaudit` found nothing); `docker run … ghcr.io/acme/wfaudit` "
         "runs it"]
    assert _titles([_ran("git diff --check && shelllint scripts/a.sh", False, "zsh:1: command not found: shelllint"),
                    _ran("mise x shelllint@0.9 -- shelllint scripts/a.sh", True, "", 2.0)]) == \
        ["`shelllint` is not on the PATH here (zsh:1: command not found: shelllint); `mise x shelllint@0.9` runs it"]
    assert _titles([_ran("python tools/gen.py", False, "zsh:1: command not found: python"),
                    _ran("python3 tools/gen.py", True, "wrote 3 files", 2.0)]) == \
        ["`python` is not on the PATH here (zsh:1: command not found: python); `python3` runs it"]


def test_no_proof_no_gotcha() -> None:
    missing = _ran("lintr check", False, "zsh:1: command not found: lintr")
    assert _titles([missing]) == []  # nothing ran it another way
    # the lookup found it: a path, or its version, names it
    assert _titles([_ran("command -v lintr", True, "/usr/local/bin/lintr"),
                    _ran("./target/debug/lintr check", True, "", 2.0)]) == []
    # the route's run did not pass, or its status belongs to another part (a pipe, a ``;``, an ``||``)
    assert _titles([missing, _ran("./target/debug/lintr check", False, "error: 2 findings", 2.0)]) == []
    for hidden in ("./target/debug/lintr check | tail -3", "./target/debug/lintr check; git status",
                   "./target/debug/lintr check || true"):
        assert _titles([missing, _ran(hidden, True, "", 2.0)]) == [], hidden
    # it ran from the PATH after all in this turn (installed in between): nothing proved about this machine
    assert _titles([missing, _ran("cargo install lintr", True, "", 2.0), _ran("lintr check", True, "", 3.0),
                    _ran("./target/debug/lintr check", True, "", 4.0)]) == []
    # a word the shell could not run is no program when the command did not run it (an unquoted backtick in rg)
    assert _titles([_ran("rg -n `audience` src", False, "zsh:1: command not found: audience"),
                    _ran("./bin/audience", True, "", 2.0)]) == []
    # a shell that reports it and still exits 0 did not run it from the PATH
    assert _titles([_ran("lintr check", True, "zsh:1: command not found: lintr"),
                    _ran("./target/debug/lintr check", True, "", 2.0)]) == \
        ["`lintr` is not on the PATH here (zsh:1: command not found: lintr); `./target/debug/lintr` runs it"]


def test_the_program_not_on_the_path_is_a_key_gotcha_of_the_turn(story: Story) -> None:
    root = story.root("shop")
    story.session("shop", Turn("Run the workflow audit on the CI files", [
        bash(f"cd {root} && command -v wfaudit || true", ""),
        bash(f"cd {root} && docker run --rm -v \"$PWD:/src\" -w /src ghcr.io/acme/wfaudit:1.4 .", "No findings")],
        last="The audit found nothing to fix."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert "`wfaudit` is not on the PATH here (`command -v wfaudit` found nothing); `docker run … " \
           "ghcr.io/acme/wfaudit:1.4` runs it" in keys, keys


def test_two_programs_of_one_session_are_two_gotchas(story: Story) -> None:
    """Gotchas the commands prove share their wording: only the same program says one again."""
    root = story.root("shop")
    story.session("shop", Turn("Check the whole tree", [
        bash(f"cd {root} && lintr check --all", "zsh:1: command not found: lintr"),
        bash(f"cd {root} && ./target/debug/lintr check --all", "all good")], last="The tree is clean."),
        Turn("Fetch the review comments", [
            bash(f"cd {root} && python tools/comments.py", fails="zsh:1: command not found: python"),
            bash(f"cd {root} && python3 tools/comments.py", "2 comments")], last="There are two comments."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    lintr = "`lintr` is not on the PATH here (zsh:1: command not found: lintr); `./target/debug/lintr` runs it"
    python = "`python` is not on the PATH here (zsh:1: command not found: python); `python3` runs it"
    assert lintr in keys and python in keys, keys
    context = story.context("shop")
    assert lintr in context and python in context, context


def test_env_could_not_find_it_and_no_edit_made_it_pass(story: Story) -> None:
    """An unseen project's key memory "Fixed `env GOCACHE=… golangci-lint …`: env: golangci-lint: No such file or
    directory (compact.go)": env(1) could not find the program, the turn edited a file, and the linter ran later.
    env's words are the shell's ("env: x: No such file or directory", GNU's ‘x’); no edit fixes a missing program."""
    from kenning.observer.not_on_path import missing

    assert missing(_ran("env GOCACHE=/tmp/c lintr run ./...", False, "env: lintr: No such file or directory"))
    assert missing(_ran("env lintr run", False, "env: ‘lintr’: No such file or directory"))
    assert not missing(_ran("go test ./...", False, "open fixture.txt: No such file or directory"))
    root = story.root("shop")
    story.session("shop", Turn("fix the lint finding in compact.go", [
        bash(f"cd {root} && env GOCACHE=/tmp/c lintr run ./...", fails="env: lintr: No such file or directory"),
        edit(root, "compact.go"), bash(f"cd {root} && env GOCACHE=/tmp/c lintr run ./...", "0 issues")],
        last="Lint is clean."))
    assert not [r["title"] for r in story.active("shop") if r["title"].startswith("Fixed `env")], story.active("shop")
