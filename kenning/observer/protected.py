"""A push the remote refused because the branch is protected: a gotcha the remote's own words prove.

The agent (or the user, with ``!`` in Claude Code) pushes straight to ``main`` and the forge refuses:
the next session should not try again, and should go through a branch and a pull request. Only the
forges' refusals of a protected branch count (GitHub's GH006 and rulesets, GitLab, Bitbucket, Azure
DevOps), never a push rejected for being behind ("fetch first", "non-fast-forward").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.observer.evidence import Command
from kenning.observer.git_actions import PUSH

_REFUSED = re.compile(
    r"GH006: Protected branch update failed[^\n]*|GH013: Repository rule violations found[^\n]*|"
    r"You are not allowed to push code to protected branches[^\n]*|"
    r"Branch refs/heads/\S+ can only be modified through pull requests[^\n]*|"
    r"TF402455: Pushes to this branch are not permitted[^\n]*", re.IGNORECASE)
_BRANCH = re.compile(r"(?:for|Branch) refs/heads/([\w./-]+?)\.?(?=\s|$)|"
                     r"!\s*\[remote rejected\]\s+\S+\s+->\s+([\w./-]+)")
_BY_PR = re.compile(r"pull request", re.IGNORECASE)


@dataclass
class Refusal:
    branch: str     # '' when the remote did not name it
    words: str      # the remote's line that says why
    at: float
    by_pr: bool     # the remote says changes go through a pull request


def refusals(commands: list[Command]) -> list[Refusal]:
    """The pushes of ``commands`` the remote refused for a protected branch (one per branch)."""
    out: list[Refusal] = []
    for c in commands:
        if not PUSH.search(c.command):
            continue
        m = _REFUSED.search(c.output)
        if m is None:
            continue
        b = _BRANCH.search(c.output)
        branch = next((g for g in b.groups() if g), "") if b else ""
        words = re.sub(r"^\s*remote:\s*", "", m.group(0)).strip().rstrip(".")
        if not any(r.branch == branch for r in out):
            out.append(Refusal(branch, words, c.at, bool(_BY_PR.search(c.output))))
    return out


def title(r: Refusal) -> str:
    name = f"`{r.branch}`" if r.branch else "The branch"
    return (f"{name} is protected: a direct push is rejected ({r.words})"
            + ("; changes go through a pull request" if r.by_pr else ""))
