"""A push the forge refuses for a protected branch is a gotcha in the forge's own words
(kenning/observer/protected.py); a push rejected for being behind is not."""

from __future__ import annotations

import pytest

from kenning.observer import protected
from kenning.observer.evidence import Command

GITHUB = """To github.com:acme/shop.git
 - [deleted]         v1.2.0
remote: error: GH006: Protected branch update failed for refs/heads/main.
remote:
remote: - 3 of 3 required status checks are expected.
To github.com:acme/shop.git
 ! [remote rejected] main -> main (protected branch hook declined)
error: failed to push some refs to 'github.com:acme/shop.git'"""

GITLAB = """remote: GitLab: You are not allowed to push code to protected branches on this project.
To gitlab.com:acme/shop.git
 ! [remote rejected] master -> master (pre-receive hook declined)"""

RULESET = """remote: error: GH013: Repository rule violations found for refs/heads/release.
remote: - Changes must be made through a pull request.
 ! [remote rejected] release -> release (push declined due to repository rule violations)"""


@pytest.mark.parametrize(("out", "want"), [
    (GITHUB, "`main` is protected: a direct push is rejected (GH006: Protected branch update failed for "
             "refs/heads/main)"),
    (GITLAB, "`master` is protected: a direct push is rejected (You are not allowed to push code to protected "
             "branches on this project)"),
    (RULESET, "`release` is protected: a direct push is rejected (GH013: Repository rule violations found for "
              "refs/heads/release); changes go through a pull request"),
])
def test_the_forges_refusal_names_the_branch_and_says_why(out: str, want: str) -> None:
    (refused,) = protected.refusals([Command("git push origin HEAD --tags", False, out, 1.0, 1)])
    assert protected.title(refused) == want


def test_a_push_behind_the_remote_or_another_command_is_no_refusal() -> None:
    behind = " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs"
    assert protected.refusals([Command("git push", False, behind, 1.0, 1)]) == []
    assert protected.refusals([Command("cat push.log", True, GITHUB, 1.0, 1)]) == []  # not a push
    # the same branch refused twice is one gotcha
    assert len(protected.refusals([Command("git push", False, GITHUB, 1.0, 1),
                                   Command("git push origin main", False, GITHUB, 2.0, 2)])) == 1
