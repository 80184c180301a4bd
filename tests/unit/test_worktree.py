"""What a turn's last `git status` says is not committed (kenning/observer/worktree.py), in the shapes git
prints: short and long format, localized headings, a first line whose leading space was stripped."""

from __future__ import annotations

from kenning.observer.evidence import Command
from kenning.observer.worktree import after, parse

LONG = """On branch main
Your branch is ahead of 'origin/main' by 1 commit.

Changes to be committed:
  (use "git restore --staged <file>..." to unstage)
\tnew file:   scripts/bench_export.py

Changes not staged for commit:
  (use "git add <file>..." to update what will be committed)
\tmodified:   NOTES.md
\trenamed:    old.py -> src/new.py

Untracked files:
  (use "git add <file>..." to include in what will be committed)
\t.cache/
\tdraft.txt
"""

KOREAN = """현재 브랜치 main
커밋할 변경 사항:
\t새 파일:     scripts/bench_export.py

커밋하도록 정하지 않은 변경 사항:
\t수정함:        NOTES.md
"""


def run(cmd: str, out: str, at: float = 1.0) -> Command:
    return Command(cmd, True, out, at, int(at))


def test_the_long_format_says_what_is_staged_changed_and_untracked_but_not_untracked_folders() -> None:
    entries = {e.path: e for e in parse("git status", LONG) or []}
    assert set(entries) == {"scripts/bench_export.py", "NOTES.md", "src/new.py", "draft.txt"}
    assert entries["scripts/bench_export.py"].staged and not entries["scripts/bench_export.py"].unstaged
    assert entries["NOTES.md"].unstaged and entries["draft.txt"].untracked
    localized = {e.path: e for e in parse("git status", KOREAN) or []}
    assert localized["scripts/bench_export.py"].staged and localized["NOTES.md"].unstaged


def test_a_clean_tree_is_said_and_other_output_is_no_status() -> None:
    assert parse("git status", "On branch main\nnothing to commit, working tree clean") == []
    assert parse("git status -sb", "## main...origin/main") == []
    assert parse("git status", "fatal: not a git repository") is None


def test_the_short_format_reads_a_first_line_whose_leading_space_was_stripped() -> None:
    # " M NOTES.md" arrives as "M NOTES.md" (the output is stripped); "M  x" (staged) keeps its two spaces
    entries = {e.path: e for e in parse("git status --short", "M NOTES.md\nM  src/api.py\n?? tmp/\n?? todo.txt") or []}
    assert set(entries) == {"NOTES.md", "src/api.py", "todo.txt"}
    assert entries["NOTES.md"].unstaged and not entries["NOTES.md"].staged
    assert entries["src/api.py"].staged and not entries["src/api.py"].unstaged


def test_a_commit_after_the_status_takes_what_was_added_and_leaves_the_rest() -> None:
    tree = after([run("git status --short", " M NOTES.md\n M docs/retro.md", 1.0),
                  run("git add docs/retro.md && git commit -m 'docs: retro'", "[main ecc6c3c] docs: retro", 2.0)])
    assert tree is not None and tree.files == ["NOTES.md"] and tree.at == 1.0
    every = after([run("git status --short", " M NOTES.md\n?? draft.txt", 1.0),
                   run("git commit -am 'wip'", "[main 1a2b3c4] wip", 2.0)])
    assert every is not None and every.files == ["draft.txt"]  # -a takes tracked changes, not new files
    # staged, then changed again: the commit takes the staged part, the file is still changed
    both = after([run("git status --short", "MM NOTES.md", 1.0), run("git commit -m x", "[main 1a2b3c4] x", 2.0)])
    assert both is not None and both.files == ["NOTES.md"]


def test_stashes_and_discards_after_the_status() -> None:
    assert after([run("git status -s", " M a.py\n?? b.txt", 1.0), run("git stash", "Saved", 2.0)]).files == ["b.txt"]
    assert after([run("git status -s", " M a.py\n?? b.txt", 1.0), run("git stash -u", "Saved", 2.0)]).files == []
    two = " M a.py\n M c.py"
    assert after([run("git status -s", two, 1.0), run("git checkout -- a.py", "", 2.0)]).files == ["c.py"]
    assert after([run("git status -s", " M a.py", 1.0), run("git reset --hard", "HEAD is now at 1", 2.0)]).files == []
    # a stash brought back: what the tree holds can no longer be told from the status
    assert after([run("git status -s", " M a.py", 1.0), run("git stash pop", "", 2.0)]) is None
    # switching branches keeps the changes
    assert after([run("git status -s", " M a.py", 1.0), run("git checkout -b fix/x", "", 2.0)]).files == ["a.py"]


def test_only_a_status_of_this_tree_whose_output_is_its_own_counts() -> None:
    assert after([run("cd ../other && git status -s", " M a.py")], "/work/shop") is None
    assert after([run("git -C /work/other status -s", " M a.py")], "/work/shop") is None
    here = after([run("cd /work/shop && git status -s", " M a.py")], "/work/shop")
    assert here is not None and here.files == ["a.py"]
    # a status followed by other commands' output (the last thing printed is not git's): the earlier one
    tree = after([run("git status -s", " M a.py", 1.0), run("git status -s\ngit diff --stat", '{"output": "x"}', 2.0)])
    assert tree is not None and tree.at == 1.0
    # what another command prints among git's lines cannot be read as status lines
    assert parse("git status -sb", "## main\n M a.py\nsrc/x.py:3: warning") is None
    # "git status" said inside a commit message is no status
    said = after([run("git status -s", " M a.py", 1.0),
                  run("git commit -am 'run git status before'", "[main 1a2b3c4] run git status before", 2.0)])
    assert said is not None and said.files == []


def test_a_status_of_some_paths_or_cut_by_a_pipe_says_nothing_of_the_whole_tree() -> None:
    assert after([run("git status --short src/", " M src/a.py")]) is None
    assert after([run("git status --short | grep '^??'", "?? notes.txt")]) is None
    assert after([run("git status -s | head -20", " M a.py")]) is None
    assert after([run("git status --short --untracked-files=no", " M a.py")]).files == ["a.py"]


def test_a_status_run_through_a_shell_is_read() -> None:
    tree = after([run("bash -lc 'git status --short'", " M a.py\n?? b.txt")])
    assert tree is not None and tree.files == ["a.py", "b.txt"]
    tree = after([run("bash -lc 'git status --short'", " M a.py\n?? b.txt", 1.0),
                  run("bash -lc 'git commit -am wip'", "[main 1a2b3c4] wip", 2.0)])
    assert tree is not None and tree.files == ["b.txt"]


def test_a_command_still_running_when_the_record_ends_proves_nothing() -> None:
    running = Command("git commit -am wip", True, "", 2.0, 2, finished=False)
    assert after([run("git status -s", " M a.py", 1.0), running]) is None  # the commit may or may not have run
    assert after([Command("git status -s", True, " M a.py", 1.0, 1, finished=False)]) is None
