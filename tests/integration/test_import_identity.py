"""Which project imported sessions land in when their folders are not on this machine, through the real
``kenning import-history`` into a real database (transcripts written by tests/support/transcripts.py):

* a Claude Code session on Windows (``C:\\Users\\...\\NumWordify``) is the checkout ``NumWordify``,
  keyed by its Windows path, never filed under the importing process's folder;
* one repository on two machines (``/Users/alice/work/git-sync``, ``/home/coder/git-sync``) is one
  project because their sessions worked on the same files; the import and ``kenning doctor`` say so;
* two unrelated repositories that are both called ``api`` stay apart, and naming one by its name
  lists both with their paths and session counts;
* a worktree ``<anything>/worktrees/<name>/<repo>`` joins its main checkout, so the main checkout's
  session-start context has the worktree's decision and left off where the worktree did.

Importing a second time changes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.support.imports import agent_homes, imported, rows
from tests.support.transcripts import ClaudeSession, CodexSession


@pytest.fixture
def agents(home: Home, tmp_path: Path) -> Home:
    h = agent_homes(home, tmp_path)
    h.codex.mkdir()  # type: ignore[attr-defined]
    return h


def counts(h: Home) -> dict[str, Any]:
    return {t: rows(h, f"SELECT COUNT(*) FROM {t}")[0][0]
            for t in ("sessions", "events", "projects", "project_aliases", "checkout_evidence")}


def test_a_windows_session_is_its_checkout_not_a_folder_here(agents: Home) -> None:
    cwd = "C:\\Users\\someone\\source\\repos\\NumWordify"
    (ClaudeSession(cwd, "2026-05-04T09:00:00Z")
     .prompt("Numbers above a million come out wrong. Find out why.")
     .read("NumWordify/Converter.cs", "public static string ToWords(long n)")
     .edit("NumWordify/Converter.cs", "n < 1000000", "n < 1000000000")
     .say("Fixed: the million branch now handles values up to a billion.")
     .write(agents.claude))  # type: ignore[attr-defined]
    try:
        out = imported(agents)
        assert "Imported 1 session(s)" in out, out
        assert rows(agents, "SELECT key, name, root FROM projects") == [
            ("c:\\users\\someone\\source\\repos\\numwordify", "NumWordify", cwd)]
        assert rows(agents, "SELECT project, project_root FROM sessions") == [
            ("c:\\users\\someone\\source\\repos\\numwordify", cwd)]
        for args in (("--project", "NumWordify"), ("--project", "numwordify"), ("--project", cwd),
                     ("--project", "c:/users/someone/source/repos/NumWordify/"),
                     ("--cwd", "C:/Users/Someone/source/repos/NumWordify")):
            context = agents.kenning("context", *args)
            assert context.returncode == 0, context.stderr
            assert "Memory of NumWordify" in context.stdout and "million" in context.stdout, (args, context.stdout)
        files = rows(agents, "SELECT files_modified FROM observations WHERE files_modified != '[]'")
        assert files and all("NumWordify/Converter.cs" in f[0] and "\\\\" not in f[0] for f in files), files
    finally:
        agents.stop_worker()


def _git_sync(cwd: str, start: str, *, words: str) -> ClaudeSession:
    s = ClaudeSession(cwd, start, branch="main").prompt(words)
    for rel in ("src/remote.rs", "src/sync/plan.rs", "src/sync/apply.rs", "README.md"):
        s.read(rel, "fn plan(local: &Tree, remote: &Tree) -> Plan")
    return s


def test_one_repository_on_two_machines_is_one_project(agents: Home) -> None:
    (_git_sync("/Users/alice/work/git-sync", "2026-05-04T09:00:00Z",
               words="Why does a rename on the remote show up as delete plus add?")
     .edit("src/sync/plan.rs", "Op::Delete", "Op::Rename").say("Renames are detected now.")
     .write(agents.claude))  # type: ignore[attr-defined]
    (_git_sync("/home/coder/git-sync", "2026-05-06T14:00:00Z",
               words="Decision: we never force-push from the sync loop, because a second machine may have pushed.")
     .read("src/sync/conflict.rs").say("Understood: the loop stops and reports instead of force-pushing.")
     .write(agents.claude))  # type: ignore[attr-defined]
    try:
        out = imported(agents)
        assert "Imported 2 session(s)" in out, out
        assert "Joined 1 checkout(s)" in out and "/home/coder/git-sync → /Users/alice/work/git-sync" in out, out
        assert "3 file(s) in common: src/remote.rs, src/sync/apply.rs, src/sync/plan.rs" in out, out
        assert rows(agents, "SELECT key, name FROM projects") == [("/Users/alice/work/git-sync", "git-sync")]
        assert rows(agents, "SELECT DISTINCT project FROM sessions") == [("/Users/alice/work/git-sync",)]
        context = agents.kenning("context", "--project", "git-sync")
        assert context.returncode == 0, context.stderr
        assert "force-push" in context.stdout and "rename" in context.stdout.lower(), context.stdout
        doctor = agents.kenning("doctor")
        assert "1 checkout(s) joined" in doctor.stdout and "file(s) in common" in doctor.stdout, doctor.stdout

        before = counts(agents)
        again = imported(agents)
        assert "Imported 0 session(s)" in again and "Joined" not in again, again
        assert counts(agents) == before
    finally:
        agents.stop_worker()


def test_two_repositories_that_share_a_folder_name_stay_apart(agents: Home) -> None:
    for cwd, day, words, own in (
            ("/Users/alice/shop/api", "2026-05-04T09:00:00Z", "Add a refund endpoint.", "src/routes/refunds.ts"),
            ("/home/bob/blog/api", "2026-05-05T09:00:00Z", "Posts need a draft flag.", "src/models/post.ts")):
        s = ClaudeSession(cwd, day).prompt(words)
        for rel in ("README.md", "package.json", "tsconfig.json", "src/index.ts", own):
            s.read(rel)
        s.edit(own, "a", "b").say("Done.").write(agents.claude)  # type: ignore[attr-defined]
    (CodexSession("/home/bob/blog/api", "2026-05-06T09:00:00Z", branch="main", commit="4b1e0c2d9a7f")
     .prompt("Which commit added drafts?").run("git log --oneline -3", "4b1e0c2 Add drafts\n9d8c7b6 Init\n")
     .answer("4b1e0c2 added them.").write(agents.codex))  # type: ignore[attr-defined]
    try:
        out = imported(agents, "--no-observe")
        assert "Imported 3 session(s)" in out and "Joined" not in out, out
        assert sorted(rows(agents, "SELECT key FROM projects WHERE name = 'api'")) == [
            ("/Users/alice/shop/api",), ("/home/bob/blog/api",)]
        named = agents.kenning("context", "--project", "api")
        message = named.stdout + named.stderr
        assert "2 projects are called 'api'" in message, message
        assert "api (/Users/alice/shop/api) = /Users/alice/shop/api (1 session)" in message, message
        assert "api (/home/bob/blog/api) = /home/bob/blog/api (2 sessions)" in message, message
        assert "Give its path" in message
        assert agents.kenning("context", "--project", "/home/bob/blog/api").returncode == 0
    finally:
        agents.stop_worker()


def test_a_worktree_joins_its_main_checkout_and_its_decision_reaches_it(agents: Home) -> None:
    main = "/Users/dana/dev/flutter-docker-image"
    worktree = "/Users/dana/dev/worktrees/kind-canyon/flutter-docker-image"
    (ClaudeSession(main, "2026-05-01T09:00:00Z").prompt("Bump Flutter to the latest stable in the Dockerfile.")
     .read("Dockerfile", "FROM debian:bookworm-slim").edit("Dockerfile", "3.22.0", "3.24.1")
     .say("Bumped Flutter to 3.24.1.").write(agents.claude))  # type: ignore[attr-defined]
    (ClaudeSession(worktree, "2026-05-03T10:00:00Z", branch="kind-canyon")
     .prompt("Could we move the image to Alpine to make it smaller?")
     .say("Alpine uses musl, and the Flutter engine binaries are linked against glibc.")
     .prompt("Then we stay on debian bookworm-slim: we never use Alpine for this image, Flutter needs glibc.")
     .edit("scripts/build-image.sh", "alpine", "bookworm-slim").say("Kept the Debian base; noted why.")
     .write(agents.claude))  # type: ignore[attr-defined]
    try:
        out = imported(agents)
        assert "Imported 2 session(s)" in out, out
        assert f"{worktree} → {main}: a worktree (worktrees/<name>/<repo>) of the only checkout named " \
               "flutter-docker-image" in out, out
        assert rows(agents, "SELECT key FROM projects") == [(main,)]
        context = agents.kenning("context", "--project", "flutter-docker-image")
        assert context.returncode == 0, context.stderr
        text = context.stdout
        assert "glibc" in text and "Alpine" in text, text
        left_off = text.split("## Where we left off", 1)[1]
        assert "build-image.sh" in left_off or "Debian" in left_off, left_off
    finally:
        agents.stop_worker()


def test_the_summary_also_says_which_checkouts_a_remote_joined(agents: Home) -> None:
    for cwd, day in (("/Users/dev/src/ledger", "2026-06-01T08:00:00Z"),
                     ("/Users/dev/.codex/worktrees/ab12/ledger", "2026-06-02T08:00:00Z")):
        (CodexSession(cwd, day, repository="git@github.com:acme/ledger.git", branch="main")
         .prompt("Run the export tests.").run("npm test -- export", "ok").answer("They pass.")
         .write(agents.codex))  # type: ignore[attr-defined]
    out = imported(agents, "--no-observe")
    assert "/Users/dev/.codex/worktrees/ab12/ledger → /Users/dev/src/ledger: same remote github.com/acme/ledger" \
        in out, out
    assert "Joined" not in imported(agents, "--no-observe")


REAL = Path("/work/shared/data/real-sessions")


@pytest.mark.skipif(not REAL.is_dir(), reason="the real-session dev set is not on this machine")
def test_the_dev_sets_hk_sessions_without_their_remote_are_still_one_project(agents: Home) -> None:
    """Codex worktrees of hk with the remote taken out of their ``session_meta``: the worktrees join the
    one main checkout called hk by their paths alone."""
    for src in sorted((REAL / "jdx-hk").glob("*.jsonl")):
        lines = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
        for rec in lines:
            if rec.get("type") == "session_meta":
                rec["payload"].get("git", {}).pop("repository_url", None)
        dest = agents.codex / "sessions" / f"rollout-{src.name}"  # type: ignore[attr-defined]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("".join(json.dumps(r) + "\n" for r in lines))
        os.utime(dest, (src.stat().st_mtime, src.stat().st_mtime))
    out = imported(agents, "--no-observe")
    assert "Imported 6 session(s)" in out and "Joined 4 checkout(s)" in out, out
    assert rows(agents, "SELECT name, remote FROM projects") == [("hk", "")]
    assert rows(agents, "SELECT COUNT(DISTINCT project) FROM sessions") == [(1,)]
