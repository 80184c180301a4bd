"""Checkouts of one repository that no ``.git`` or remote joins (kenning/store/checkouts.py), and what an
imported session shows about its repository (kenning/history/evidence.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.history.evidence import inside, of_record
from kenning.project import resolve_key
from kenning.records import ObservationDraft
from kenning.store import checkouts, projects, repo
from kenning.store.db import open_db

T = 1_780_000_000.0
SYNC_FILES = ("src/remote.rs", "src/sync/plan.rs", "src/sync/apply.rs")


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = open_db(str(tmp_path / "k.db"))
    yield c
    c.close()


def session(conn: sqlite3.Connection, root: str, *, at: float = T, remote: str = "", name: str = "",
            evidence: tuple[tuple[str, str], ...] = ()) -> str:
    """One imported session of the checkout at ``root`` with what it showed; the key it was filed under."""
    key = root.lower() if root[1:2] == ":" else root
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id=f"s-{root}-{at}", project=key,
                                  project_root=root, cwd=root, at=at, name=name or root.rstrip("/\\").rsplit("/", 1)[-1]
                                  .rsplit("\\", 1)[-1], remote=remote)
        project = conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
        repo.insert_observation(conn, sid, project, ObservationDraft(type="decision", title=f"note of {root}",
                                                                     created_at=at), "rules")
        checkouts.add_evidence(conn, key, evidence)
    return str(project)


def files(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple(("file", n) for n in names)


def join(conn: sqlite3.Connection) -> list[checkouts.Join]:
    with repo.transaction(conn):
        return checkouts.join_checkouts(conn, T + 100)


def keys(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT key FROM projects ORDER BY key")]


# ---------------------------------------------------------------------------------------- evidence

def record(event: str, payload: dict[str, Any], root: str = "/Users/alice/work/git-sync") -> dict[str, Any]:
    return {"event": event, "payload": payload, "project_root": root}


def test_a_session_shows_the_files_it_read_and_changed_relative_to_its_checkout() -> None:
    root = "/Users/alice/work/git-sync"
    assert of_record(record("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": f"{root}/src/a.rs"}})) \
        == {("file", "src/a.rs")}
    assert of_record(record("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": "/tmp/elsewhere.rs"}})) \
        == set()  # outside the checkout: says nothing about it
    patch = "*** Begin Patch\n*** Update File: src/b.rs\n@@\n*** Add File: docs/c.md\n*** End Patch"
    assert of_record(record("PostToolUse", {"tool_name": "apply_patch", "tool_input": {"command": patch}})) == {
        ("file", "src/b.rs"), ("file", "docs/c.md")}
    shell = record("PostToolUse", {"tool_name": "Bash", "tool_input": {
        "command": "sed -n '1,80p' src/sync/plan.rs && rg -n Plan src --glob '*.rs' | head -5 && cat ../other/x.rs"}})
    assert of_record(shell) == {("file", "src/sync/plan.rs")}
    # An address and a range of revisions are shaped like files, and are none.
    commit = record("PostToolUse", {"tool_name": "Bash", "tool_input": {
        "command": "git diff origin/main...HEAD -- src/a.rs v1.2..v1.3 assets/icon@2x.png && git commit -m x -m 'y' "
                   "-m Co-Authored-By: Bot <noreply@example.com> dev@team.io ops@mail.example.co.uk"}})
    assert of_record(commit) == {("file", "src/a.rs"), ("file", "assets/icon@2x.png")}


def test_a_session_shows_the_commits_git_printed_and_its_branch() -> None:
    log = record("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "git log --oneline -3"},
                                 "tool_response": {"stdout": "1a2b3c4 Detect renames\n9f8e7d6 Init\nabcdefa word"}})
    assert of_record(log) == {("commit", "1a2b3c4"), ("commit", "9f8e7d6")}  # letters alone are no commit
    made = record("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "git commit -m 'x'"},
                                  "tool_response": "[fix/renames 5e6f7a8] Detect renames\n 1 file changed"})
    assert of_record(made) == {("commit", "5e6f7a8")}
    not_git = record("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "sha1sum a"},
                                     "tool_response": {"stdout": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c  a"}})
    assert of_record(not_git) == set()
    start = record("SessionStart", {"git_branch": "fix/renames",
                                    "git_commit": "0F1E2D3C4B5A69788796A5B4C3D2E1F00F1E2D3C"})
    assert of_record(start) == {("branch", "fix/renames"), ("commit", "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c")}


def test_files_of_a_windows_checkout_compare_with_a_posix_one() -> None:
    root = "C:\\Users\\me\\repos\\git-sync"
    assert of_record(record("PostToolUse", {"tool_name": "Read", "tool_input": {
        "file_path": "C:\\Users\\me\\repos\\git-sync\\src\\remote.rs"}}, root)) == {("file", "src/remote.rs")}
    assert inside("src\\sync\\plan.rs", root) == "src/sync/plan.rs"
    assert inside("../x.rs", "/r") is None and inside("https://x.io/a.rs", "/r") is None
    assert inside("*.rs", "/r") is None


# ------------------------------------------------------------------------------------------- joins

def test_one_repository_on_two_machines_is_joined_by_its_files(conn: sqlite3.Connection) -> None:
    a = session(conn, "/Users/alice/work/git-sync", evidence=files(*SYNC_FILES, "README.md", "src/cli.rs"))
    b = session(conn, "/home/coder/git-sync", at=T + 10, evidence=files(*SYNC_FILES, "Cargo.toml"))
    (made,) = join(conn)
    assert (made.checkout, made.into) == (b, a)
    assert made.reason == "same folder name git-sync, 3 file(s) in common: src/remote.rs, src/sync/apply.rs, " \
                          "src/sync/plan.rs"
    assert keys(conn) == [a] and resolve_key(conn, b) == a
    assert {r[0] for r in conn.execute("SELECT DISTINCT project FROM observations")} == {a}
    assert [j.line() for j in checkouts.joins(conn)] == [made.line()]
    assert join(conn) == []  # nothing more: running it again changes nothing


def test_two_repositories_sharing_a_folder_name_and_boilerplate_stay_apart(conn: sqlite3.Connection) -> None:
    common = files("README.md", "package.json", "tsconfig.json", "src/index.ts", ".github/workflows/ci.yml")
    session(conn, "/Users/alice/shop/api", evidence=common + files("src/routes/refunds.ts"))
    session(conn, "/home/bob/blog/api", evidence=common + files("src/models/post.ts"), at=T + 1)
    assert join(conn) == [] and len(keys(conn)) == 2
    with pytest.raises(projects.AmbiguousProject, match=r"= /home/bob/blog/api \(1 session\)"):
        projects.one(conn, "api")


def test_a_few_shared_files_among_many_are_not_enough(conn: sqlite3.Connection) -> None:
    shared = files("src/routes/users.ts", "src/models/user.ts", "src/db/migrate.ts")
    session(conn, "/a/api", evidence=shared + files(*(f"src/a/{i}.ts" for i in range(20))))
    session(conn, "/b/api", evidence=shared + files(*(f"src/b/{i}.ts" for i in range(20))), at=T + 1)
    assert join(conn) == []  # 3 of 23 each: two web APIs laid out alike, not one repository


def test_a_commit_or_a_branch_with_a_file_joins(conn: sqlite3.Connection) -> None:
    a = session(conn, "/m1/tool", evidence=(("commit", "0f1e2d3c4b5a6978"),))
    b = session(conn, "/m2/tool", at=T + 1, evidence=(("commit", "0f1e2d3"),))
    c = session(conn, "/m3/tool", at=T + 2, evidence=(("branch", "fix/renames"), *files("src/x.rs")))
    d = session(conn, "/m4/tool", at=T + 3, evidence=(("branch", "fix/renames"), ("branch", "main"),
                                                      *files("src/x.rs")))
    e = session(conn, "/m5/tool", at=T + 4, evidence=(("branch", "main"), *files("src/x.rs")))
    made = join(conn)
    assert [(j.checkout, j.into) for j in made] == [(b, a), (d, c)]
    assert made[0].reason == "same folder name tool, commit 0f1e2d3 in both"
    assert made[1].reason.startswith("same folder name tool, branch fix/renames in both; 1 file(s) in common")
    assert sorted(keys(conn)) == sorted([a, c, e])  # `main` is every repository's branch


def test_checkouts_of_two_known_remotes_never_join(conn: sqlite3.Connection) -> None:
    session(conn, "/a/ledger", remote="github.com/acme/ledger", evidence=files(*SYNC_FILES))
    session(conn, "/b/ledger", remote="github.com/other/ledger", at=T + 1, evidence=files(*SYNC_FILES))
    assert join(conn) == []


def test_a_folder_on_this_disk_keeps_its_identity_and_others_join_it(conn: sqlite3.Connection, tmp_path: Path) -> None:
    here = tmp_path / "git-sync"
    (here / ".git").mkdir(parents=True)
    later = session(conn, "/Users/alice/work/git-sync", evidence=files(*SYNC_FILES))
    local = session(conn, str(here), at=T + 50, evidence=files(*SYNC_FILES))
    (made,) = join(conn)
    assert (made.checkout, made.into) == (later, local)  # the older one moves: the folder here stays put


def test_a_worktree_joins_the_only_checkout_of_its_repository(conn: sqlite3.Connection) -> None:
    main = session(conn, "/Users/dana/dev/flutter-docker-image")
    tree = session(conn, "/Users/dana/dev/worktrees/kind-canyon/flutter-docker-image", at=T - 50)
    session(conn, "/Users/dana/dev/other-tool")
    (made,) = join(conn)
    assert (made.checkout, made.into) == (tree, main)
    assert made.reason == "a worktree (worktrees/<name>/<repo>) of the only checkout named flutter-docker-image"


def test_a_worktree_whose_repository_comes_second_in_the_path_still_finds_it(conn: sqlite3.Connection) -> None:
    main = session(conn, "/Users/me/src/api")
    tree = session(conn, "/Users/me/.grok/worktrees/api/fix-login")  # ~/.grok/worktrees/<repo>/<name>
    assert [(j.checkout, j.into) for j in join(conn)] == [(tree, main)]


def test_a_worktree_among_namesakes_needs_evidence(conn: sqlite3.Connection) -> None:
    shop = session(conn, "/Users/a/shop/api", evidence=files(*SYNC_FILES))
    session(conn, "/Users/a/blog/api", evidence=files("src/models/post.ts"))
    lonely = session(conn, "/Users/a/worktrees/x1/api", evidence=files("docs/unrelated.md"))
    tree = session(conn, "/Users/a/worktrees/x2/api", evidence=files(*SYNC_FILES))
    made = join(conn)
    assert [(j.checkout, j.into) for j in made] == [(tree, shop)]
    assert made[0].reason.startswith("a worktree (worktrees/<name>/<repo>) of api, 3 file(s) in common")
    assert lonely in keys(conn)  # nothing says which `api` it belongs to


def test_a_windows_and_a_mac_checkout_of_one_repository_join(conn: sqlite3.Connection) -> None:
    mac = session(conn, "/Users/me/src/NumWordify", evidence=files("NumWordify/Converter.cs",
                                                                  "NumWordify/Scales.cs", "Tests/ConverterTests.cs"))
    win = session(conn, "C:\\Users\\me\\source\\repos\\NumWordify", at=T + 1,
                  evidence=files("NumWordify/Converter.cs", "NumWordify/Scales.cs", "tests/convertertests.cs"))
    (made,) = join(conn)
    assert (made.checkout, made.into) == (win, mac)


def test_forgetting_a_project_forgets_what_its_checkouts_showed(conn: sqlite3.Connection, tmp_path: Path) -> None:
    from kenning.store import forget

    a = session(conn, "/Users/alice/work/git-sync", evidence=files(*SYNC_FILES))
    session(conn, "/home/coder/git-sync", at=T + 10, evidence=files(*SYNC_FILES))
    other = session(conn, "/Users/alice/work/notes", evidence=files("notes/today.md"))
    join(conn)
    forget.forget(conn, str(tmp_path / "k.db"), forget.Filters(project=a), dry_run=False)
    assert [r[0] for r in conn.execute("SELECT DISTINCT checkout FROM checkout_evidence")] == [other]


def test_a_checkout_beside_its_repository_and_named_after_it_joins_on_evidence(conn: sqlite3.Connection) -> None:
    main = session(conn, "/Users/me/src/api", evidence=files(*SYNC_FILES))
    tree = session(conn, "/Users/me/src/api-fix-login", at=T + 1, evidence=files(*SYNC_FILES))
    session(conn, "/Users/me/src/api-gateway", at=T + 2, evidence=files("cmd/gateway/main.go", "internal/proxy.go"))
    session(conn, "/Users/me/other/api-v2", at=T + 3, evidence=files(*SYNC_FILES))  # elsewhere: not beside it
    made = join(conn)
    assert [(j.checkout, j.into) for j in made] == [(tree, main)]
    assert made[0].reason.startswith("a checkout beside api named after it (api-fix-login), 3 file(s) in common")


def test_a_checkout_in_a_folder_of_worktrees_beside_its_repository_joins_on_evidence(conn: sqlite3.Connection) -> None:
    """A never-trained project's sessions in ``~/Projects/wt/external-agents-code-review`` (a worktree on branch
    code-review, a commit and 12 files in common) stood as a project of their own."""
    main = session(conn, "/Users/me/src/api", evidence=files(*SYNC_FILES))
    tree = session(conn, "/Users/me/src/wt/api-code-review", at=T + 1, evidence=files(*SYNC_FILES))
    deeper = session(conn, "/Users/me/src/wt/old/api-spike", at=T + 2, evidence=files(*SYNC_FILES))
    unrelated = session(conn, "/Users/me/src/wt/api-gateway", at=T + 3, evidence=files("cmd/gateway/main.go"))
    made = join(conn)
    assert [(j.checkout, j.into) for j in made] == [(tree, main)]
    assert made[0].reason.startswith("a checkout beside api named after it (api-code-review), 3 file(s) in common")
    assert {deeper, unrelated}.isdisjoint({j.checkout for j in made})
