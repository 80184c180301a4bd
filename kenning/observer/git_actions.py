"""What the shell commands of a turn did to the repository: commits (their message and hash),
pushes, pull requests opened or merged, reverts and discarded changes.

A commit message is the agent's own summary of a change, written when the change was done; a push,
a PR or a merge says where the work stands. Only commands that ran without error count.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from kenning.observer.evidence import Command

_COMMIT = re.compile(r"(?:^|[;&|]\s*|\s)git\s+(?:-C\s+\S+\s+)?commit\b")
# A scratch worktree the command adds and removes again ("git worktree add --detach $TMP …; trap 'git worktree
# remove …' EXIT"): a commit made there to try something out goes with it, no commit of the project.
_SCRATCH = re.compile(r"(?:^|[;&|('\"{]\s*|\s)git\s+(?:-C\s+\S+\s+)?worktree\s+add\b[\s\S]*"
                      r"(?:^|[;&|('\"{]\s*|\s)git\s+(?:-C\s+\S+\s+)?worktree\s+remove\b")
# A commit made in another checkout the command names: a variable's or a temporary folder ("git -C $S commit
# --allow-empty -m 'same tree'" in a scratch clone, to try the cache on a new commit): no commit of the project.
_ELSEWHERE = re.compile(r"-C\s+['\"]?(?:\$\{?\w+|/tmp/|/private/tmp/|/var/folders/|\S*scratch)")
# A heredoc's body; the line that opens it may go on ("git commit -F - <<'EOF' && git log --oneline -1")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\b", re.DOTALL)
# What git prints of a commit: "[main 1e4eb9d] subject", "[main (root-commit) …]", "[detached HEAD 1e4eb9d] …" (also
# localized: "[HEAD détachée …]", "[分离头指针 …]")
_COMMITTED = re.compile(r"^\[([^\]\n]+?)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
PUSH = re.compile(r"(?:^|[;&|]\s*|\s)git\s+(?:-C\s+\S+\s+)?push\b")
_PR_CREATE = re.compile(r"\bgh\s+pr\s+create\b")
_PR_MERGE = re.compile(r"\bgh\s+pr\s+merge\b")
_PR_URL = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/pull/(\d+)")
_REVERT = re.compile(r"(?:^|[;&|]\s*|\s)git\s+(?:-C\s+\S+\s+)?revert\s+(?:--no-edit\s+)?([0-9a-f]{7,40}|HEAD\S*)")
# Uncommitted changes thrown away: not ``git stash`` (it keeps them), not ``reset --hard <ref>`` (moving a
# branch to another commit, as syncing with a remote does).
_DISCARD = re.compile(r"(?:^|[;&|]\s*|\s)git\s+(?:-C\s+\S+\s+)?(?:checkout\s+(?:--\s+)?\.|"
                      r"restore\s+(?:--worktree\s+|--staged\s+)*\.|reset\s+--hard(?:\s+HEAD)?)(?=\s*(?:$|[;&|)]))")
_BRANCH = re.compile(r"(?:-u|--set-upstream)\s+\S+\s+([\w./-]+)|\bHEAD:([\w./-]+)")
# "git push origin feat/x", "git push --force-with-lease origin feat/x:feat/x": the remote, then the branch
_REFSPEC = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?push\s+(?:--?[\w-]+(?:=\S+)?\s+)*[\w.-]+\s+\+?(?:[\w./-]+:)?"
                      r"(?!-)([\w./-]+)(?=\s|$|[;&|])")


@dataclass
class Commit:
    subject: str
    body: str = ""
    hash: str = ""
    branch: str = ""
    at: float = 0.0


@dataclass
class Actions:
    commits: list[Commit] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)      # branches (or "" when not said)
    prs: list[str] = field(default_factory=list)         # "#1020"
    merged: list[str] = field(default_factory=list)
    reverted: list[str] = field(default_factory=list)    # commit hashes (or HEAD…)
    discarded: bool = False                              # uncommitted changes thrown away
    discarded_at: float = 0.0                            # when, the last time
    pushed_at: float = 0.0                               # the last push that went through

    @property
    def empty(self) -> bool:
        return not (self.commits or self.pushed or self.prs or self.merged or self.reverted or self.discarded)


def read(commands: list[Command]) -> Actions:
    out = Actions()
    for c in commands:
        if not c.ok or not c.finished:
            continue  # (a command still running when the record ends did nothing we know of)
        cmd = c.command
        if _COMMIT.search(cmd) and not _SCRATCH.search(cmd) \
                and not all(_ELSEWHERE.search(m.group()) for m in _COMMIT.finditer(cmd)):
            msg = commit_message(cmd)
            m = _COMMITTED.search(c.output or "")
            if m and not msg:
                msg = m.group(3)
            if msg:
                subject, _, body = msg.strip().partition("\n")
                out.commits.append(Commit(subject.strip(), body.strip(), m.group(2) if m else "",
                                          m.group(1) if m else "", c.at))
        if PUSH.search(cmd) and not _rejected(c.output or ""):
            b = _BRANCH.search(cmd) or _REFSPEC.search(cmd)
            out.pushed.append(_pushed_branch(next((g for g in b.groups() if g), "") if b else "", c.output or "",
                                             out.commits))
            out.pushed_at = max(out.pushed_at, c.at)
        if _PR_CREATE.search(cmd):
            m2 = _PR_URL.search(c.output or "")
            out.prs.append(f"#{m2.group(1)}" if m2 else "")
        if _PR_MERGE.search(cmd):
            m3 = re.search(r"\bmerge\s+(\d+)", cmd) or _PR_URL.search(cmd)
            out.merged.append(f"#{m3.group(1)}" if m3 else "")
        for m4 in _REVERT.finditer(cmd):
            out.reverted.append(m4.group(1))
        if _DISCARD.search(cmd):
            out.discarded = True
            out.discarded_at = max(out.discarded_at, c.at)
    return out


# A pull request the user says is merged ("1066 is merged", "I merged #1066", "PR 12 has been merged", "#12 머지했어요",
# "#12 をマージしました", "1066 已经合并了"): they saw it on the forge, where no command of the session shows it.
_SAID_MERGED = re.compile(
    r"(?:(?:\bPR\s*#?|#)(\d{1,7})|\b(\d{2,7}))\s+(?:is|was|has been|got|'s)\s+(?:now\s+|already\s+)?merged\b"
    r"(?!\s*\?)"
    r"|\bmerged\s+(?:PR\s*#?|#)(\d{1,7})\b(?!\s*\?)"
    r"|(?:PR\s*#?|#)(\d{1,7})\s*(?:을|를|は|を|이|가)?\s*(?:머지|병합|マージ|合并|合併)"
    r"(?:했|됐|되었|완료|しました|済み|された|了|完成)"
    r"|\b(\d{2,7})\s*(?:已经|已)(?:被)?(?:合并|合併)", re.IGNORECASE)


def said_merged(words: str) -> list[str]:
    """The pull requests the user's words say are merged ("#1066"), not those a question or a condition is about
    ("is 1066 merged?", "once #12 is merged, release")."""
    return [f"#{next(g for g in m.groups() if g)}" for m in _SAID_MERGED.finditer(words or "")
            if not _CONDITION.search(words[max(0, m.start() - 24):m.start()])]


_CONDITION = re.compile(r"\b(?:if|whether|once|when|after|until|unless|before)\s+(?:\S+\s+){0,2}$|"
                        r"(?:면|したら|すれば|后|之后|以后)\s*$", re.IGNORECASE)


# What git prints for each ref it pushed: "   1a2b3c4..5d6e7f8  HEAD -> fix/x", " * [new branch]      HEAD -> fix/x"
# (not "!", a ref the remote refused, nor "=", one already there)
_PUSHED_REF = re.compile(r"^\s*(?:[*+-]\s+)?(?:\[(?:new [^\]\n]+|forced update|deleted)\]|"
                         r"[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})\s+\S+\s+->\s+([\w./-]+)", re.MULTILINE)
_REFUSED = re.compile(r"^\s*!\s+\[(?:remote )?rejected\]|^error: failed to push some refs", re.MULTILINE)
_REFUSED_REF = re.compile(r"^\s*!\s+\[(?:remote )?rejected\]\s+\S+\s+->\s+([\w./-]+)", re.MULTILINE)


def _rejected(output: str) -> bool:
    """The remote refused every ref of a push (a protected branch: "! [remote rejected] main -> main"), though
    the command, piped or chained, ended well: nothing went up."""
    return bool(_REFUSED.search(output)) and not _PUSHED_REF.search(output)


def _pushed_branch(named: str, output: str, commits: list[Commit]) -> str:
    """The branch a push went to: as the command names it, unless it names only ``HEAD`` (``git push -u origin
    HEAD``); then as git printed it ("HEAD -> fix/x"), else the branch the last commit was made on, else ''."""
    went = [m.group(1) for m in _PUSHED_REF.finditer(output) if "[new tag]" not in m.group(0)]
    refused = {m.group(1) for m in _REFUSED_REF.finditer(output)}
    if named and named != "HEAD" and named not in refused:
        return named
    if went or refused:  # what git printed: the branch that went up ("HEAD -> fix/x"), none if it was refused
        return went[0] if went else ""
    return next((c.branch for c in reversed(commits) if c.branch and c.branch != "HEAD"), "")


def commit_message(cmd: str) -> str:
    """The message a ``git commit`` command gives (``-m`` parts, or a heredoc), '' when none is given."""
    here = _HEREDOC.search(cmd)
    # (the heredoc opens on the commit's own line: one a later line opens feeds another program, "python3 - <<EOF")
    if here and _COMMIT.search(cmd[cmd.rfind("\n", 0, here.start()) + 1:here.start()] + " "):
        return here.group(2).strip()
    head = cmd
    m = _COMMIT.search(head)
    if not m:
        return ""
    tail = head[m.end():]
    try:
        words = shlex.split(tail.split("\n&&", 1)[0], posix=True)
    except ValueError:
        return ""
    parts: list[str] = []
    for i, w in enumerate(words):
        if w in ("&&", "||", ";", "|"):
            break
        if w in ("-m", "--message") and i + 1 < len(words):
            parts.append(words[i + 1])
        elif w.startswith("--message="):
            parts.append(w.split("=", 1)[1])
        elif re.fullmatch(r"-[a-zA-Z]*m", w) and i + 1 < len(words):
            parts.append(words[i + 1])
    return "\n\n".join(p.strip() for p in parts if p.strip())
