"""What a path says about its checkout when the folder is not on this machine (kenning/layouts.py): the
worktree conventions of the agents and tools that make worktrees, POSIX and Windows alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.history.identity import checkout
from kenning.layouts import layout


@pytest.mark.parametrize(("path", "name", "root", "rule"), [
    # Inside the repository: the path says where the main checkout is.
    ("/Users/a/src/api/.claude/worktrees/brave-owl", "api", "/Users/a/src/api", "<repo>/.claude/worktrees/<name>"),
    ("/Users/a/src/api/.claude/worktrees/brave-owl/pkg/x", "api", "/Users/a/src/api",
     "<repo>/.claude/worktrees/<name>"),
    ("/home/a/api/.letta/worktrees/fix", "api", "/home/a/api", "<repo>/.letta/worktrees/<name>"),
    ("/home/a/api/.worktrees/fix-login", "api", "/home/a/api", "<repo>/.worktrees/<name>"),
    # Next to it.
    ("/home/a/src/api.worktrees/fix", "api", "/home/a/src/api", "<repo>.worktrees/<name>"),
    ("/home/a/src/api-worktrees/fix", "api", "/home/a/src/api", "<repo>-worktrees/<name>"),
    ("C:\\src\\Api_worktrees\\fix", "Api", "C:\\src\\Api", "<repo>_worktrees/<name>"),
    ("C:\\Users\\me\\repos\\Api\\.claude\\worktrees\\x", "Api", "C:\\Users\\me\\repos\\Api",
     "<repo>/.claude/worktrees/<name>"),
])
def test_a_worktree_inside_or_beside_its_repository_is_the_repository(path: str, name: str, root: str,
                                                                       rule: str) -> None:
    found = layout(path)
    assert (found.name, found.root, found.worktree, found.rule) == (name, root, False, rule)


@pytest.mark.parametrize(("path", "name", "root", "names"), [
    ("/Users/dev/.codex/worktrees/4f2a/ledger", "ledger", "/Users/dev/.codex/worktrees/4f2a/ledger",
     ("ledger", "4f2a")),
    ("/Users/dev/.codex/worktrees/4f2a/ledger/src/lib", "ledger", "/Users/dev/.codex/worktrees/4f2a/ledger",
     ("ledger", "4f2a")),
    # The held-out layout: <anything>/worktrees/<worktree-name>/<repo-name>.
    ("/Users/dana/dev/worktrees/kind-canyon/flutter-docker-image", "flutter-docker-image",
     "/Users/dana/dev/worktrees/kind-canyon/flutter-docker-image", ("flutter-docker-image", "kind-canyon", "dev")),
    ("/srv/ci/worktrees/pr-1234/shop", "shop", "/srv/ci/worktrees/pr-1234/shop", ("shop", "pr-1234", "ci")),
    # <store>/<repo>/<generated id>: the id is not the repository.
    ("/Users/me/.cursor/worktrees/api/a1b2", "api", "/Users/me/.cursor/worktrees/api/a1b2", ("api", "a1b2")),
    ("/Users/me/conductor/workspaces/api/bangkok", "api", "/Users/me/conductor/workspaces/api/bangkok",
     ("api", "bangkok", "conductor")),
    # A folder of worktrees by its short name: wt/<repo>/<name> (an unseen project's sessions were a project
    # called "experiment"), or wt/<name> (joined to the repository beside it on evidence).
    ("/Users/al/Projects/wt/skills/experiment", "skills", "/Users/al/Projects/wt/skills/experiment",
     ("skills", "experiment", "Projects")),
    ("/Users/al/Projects/wt/api-code-review", "api-code-review", "/Users/al/Projects/wt/api-code-review",
     ("api-code-review", "Projects")),
    # One folder after `worktrees`: it, or the folder holding `worktrees`, names the repository.
    ("/Users/me/src/api/worktrees/fix-login", "fix-login", "/Users/me/src/api/worktrees/fix-login",
     ("fix-login", "api")),
    ("/Users/me/worktrees/fix-login", "fix-login", "/Users/me/worktrees/fix-login", ("fix-login",)),
    # <store>/<repo>/<name>/<repo>: a folder per worktree holding a clone named like the repository.
    ("/home/eli/Code/worktrees/flutter-docker-image/quiet-minnow/flutter-docker-image", "flutter-docker-image",
     "/home/eli/Code/worktrees/flutter-docker-image/quiet-minnow/flutter-docker-image",
     ("flutter-docker-image", "quiet-minnow", "Code")),
    ("/home/eli/Code/worktrees/web/quiet-minnow/web/src/app", "web", "/home/eli/Code/worktrees/web/quiet-minnow/web",
     ("web", "quiet-minnow", "Code")),
    ("C:\\Users\\me\\worktrees\\a1b2\\Shop\\shop", "shop", "C:\\Users\\me\\worktrees\\a1b2\\Shop\\shop",
     ("shop", "a1b2")),
    ("C:\\Users\\me\\dev\\worktrees\\kind-canyon\\Flutter", "Flutter",
     "C:\\Users\\me\\dev\\worktrees\\kind-canyon\\Flutter", ("Flutter", "kind-canyon", "dev")),
])
def test_a_worktree_in_a_store_names_its_repository_candidates(path: str, name: str, root: str,
                                                               names: tuple[str, ...]) -> None:
    found = layout(path)
    assert (found.name, found.root, found.worktree, found.names) == (name, root, True, names)


@pytest.mark.parametrize(("path", "name"), [
    ("/Users/alice/work/git-sync", "git-sync"), ("/home/coder/git-sync/", "git-sync"),
    ("/tmp/worktrees", "worktrees"), ("/Users/me/src/workspaces/api", "api"), ("C:\\x\\y\\NumWordify", "NumWordify"),
    ("/Users/me/src/wt", "wt"),  # a repository called wt
    ("/Users/me/src/git-worktrees/src/cli", "cli"),  # deep in a repository called git-worktrees: no worktree
])
def test_other_folders_are_checkouts_of_their_own(path: str, name: str) -> None:
    found = layout(path)
    assert (found.name, found.worktree, found.rule) == (name, False, "")


def test_an_imported_folder_that_is_gone_is_read_by_its_path(tmp_path: Path) -> None:
    assert checkout("/nonexistent/dev/worktrees/kind-canyon/flutter-docker-image") == (
        "flutter-docker-image", "/nonexistent/dev/worktrees/kind-canyon/flutter-docker-image")
    # A known store of worktrees, wherever the home folder is.
    assert checkout("/nonexistent/me/.cursor/worktrees/api/a1b2") == (
        "api", "/nonexistent/me/.cursor/worktrees/api/a1b2")
    assert checkout("/nonexistent/src/api/.claude/worktrees/x") == ("api", "/nonexistent/src/api")


def test_a_gone_worktree_of_a_repository_on_this_disk_is_that_repository(tmp_path: Path) -> None:
    repo = tmp_path / "api"
    (repo / ".git").mkdir(parents=True)
    assert checkout(str(repo / ".claude" / "worktrees" / "gone")) == ("api", str(repo.resolve()))
    assert checkout(str(tmp_path / "api.worktrees" / "gone")) == ("api", str(repo.resolve()))
    assert checkout(str(repo / "deleted" / "subdir")) == ("api", str(repo.resolve()))  # find_root walks up, as before
