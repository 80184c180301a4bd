"""Project keys in the store: registering checkouts, joining clones, merging, names, migration 0008."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from kenning.project import identify, resolve_key
from kenning.records import ObservationDraft, SummaryDraft
from kenning.store import projects, repo
from kenning.store.db import connect, migrate, open_db

T = 1_709_542_800.0


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "k.db"))
    yield c
    c.close()


def new_session(conn: sqlite3.Connection, sid: str, key: str, root: str, *, remote: str | None = "",
                name: str = "api", at: float = T) -> tuple[int, str]:
    with repo.transaction(conn):
        k = projects.attach(conn, key, name=name, root=root, at=at, remote=remote)
        cur = conn.execute("INSERT INTO sessions (agent_session_id, project, project_root, started_at) "
                           "VALUES (?, ?, ?, ?)", (sid, k, root, at))
        oid = repo.insert_observation(conn, int(cur.lastrowid or 0), k, ObservationDraft(
            type="decision", title=f"note of {sid}", created_at=at), "rules")
        assert oid
    return int(cur.lastrowid or 0), k


def keys_of(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[0] for r in conn.execute(f"SELECT DISTINCT project FROM {table}")}


def test_two_checkouts_without_a_shared_remote_are_two_projects(conn: sqlite3.Connection) -> None:
    _, a = new_session(conn, "s1", "/work/acme/api", "/work/acme/api", remote="github.com/acme/api")
    _, b = new_session(conn, "s2", "/work/beta/api", "/work/beta/api", remote="")
    assert (a, b) == ("/work/acme/api", "/work/beta/api")
    assert projects.names(conn) == {a: "api (/work/acme/api)", b: "api (/work/beta/api)"}
    assert projects.display(conn, a) == "api (/work/acme/api)"


def test_a_second_clone_of_a_known_remote_joins_its_project(conn: sqlite3.Connection) -> None:
    _, a = new_session(conn, "s1", "/src/api", "/src/api", remote="github.com/acme/api")
    _, b = new_session(conn, "s2", "/tmp/review/api-review", "/tmp/review/api-review",
                       remote="github.com/acme/api", name="api-review")
    assert b == a
    assert resolve_key(conn, "/tmp/review/api-review") == a
    assert keys_of(conn, "observations") == {a}
    assert projects.names(conn) == {a: "api"}  # one project, one name


def test_a_project_that_turns_out_to_be_a_clone_is_merged_into_the_known_one(conn: sqlite3.Connection) -> None:
    """Memory recorded before its remote was known (or before an upgrade) is not left behind."""
    _, a = new_session(conn, "s1", "/src/api", "/src/api", remote="github.com/acme/api")
    _, b = new_session(conn, "s2", "/home/me/api2", "/home/me/api2", remote="", name="api2")
    assert b != a
    with repo.transaction(conn):
        repo.upsert_summary(conn, 2, b, SummaryDraft(created_at=T, request="r"), "rules", T)
    _, c = new_session(conn, "s3", "/home/me/api2", "/home/me/api2", remote="github.com/acme/api", name="api2")
    assert c == a
    for table in ("sessions", "observations", "session_summaries"):
        assert keys_of(conn, table) == {a}, table
    assert resolve_key(conn, "/home/me/api2") == a
    assert [r[0] for r in conn.execute("SELECT key FROM projects")] == [a]


def test_a_remote_added_later_is_recorded_without_moving_anything(conn: sqlite3.Connection) -> None:
    _, a = new_session(conn, "s1", "/src/api", "/src/api", remote="")
    _, b = new_session(conn, "s2", "/src/api", "/src/api", remote="github.com/me/api")
    assert a == b
    assert conn.execute("SELECT remote FROM projects").fetchone()[0] == "github.com/me/api"


def test_project_arguments_resolve_to_keys(conn: sqlite3.Connection, tmp_path: Path) -> None:
    _, a = new_session(conn, "s1", "/work/acme/api", "/work/acme/api")
    _, b = new_session(conn, "s2", "/work/beta/api", "/work/beta/api")
    _, c = new_session(conn, "s3", "/work/shop", "/work/shop", name="shop")
    assert projects.one(conn, "shop") == c
    assert projects.one(conn, "SHOP") == c
    assert projects.one(conn, "/work/shop") == c
    assert projects.one(conn, "api (/work/beta/api)") == b
    assert projects.one(conn, "nothing-like-it") == "nothing-like-it"
    with pytest.raises(projects.AmbiguousProject, match="2 projects are called 'api'"):
        projects.one(conn, "api")
    real = tmp_path / "real" / "shop2"
    (real / ".git").mkdir(parents=True)
    assert projects.one(conn, str(real)) == identify(str(real)).key
    assert a not in projects.find(conn, "shop")


def test_the_repository_layer_files_a_new_session_under_the_resolved_key(conn: sqlite3.Connection) -> None:
    _, a = new_session(conn, "s1", "/src/api", "/src/api", remote="github.com/acme/api")
    with repo.transaction(conn):
        conn.execute("INSERT INTO project_aliases (alias, key) VALUES ('/tmp/clone', ?)", (a,))
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="s9", project="/tmp/clone",
                                  project_root="/tmp/clone", cwd="/tmp/clone", at=T)
    assert conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0] == a


def test_a_git_clone_on_disk_is_recognised_by_its_remote(conn: sqlite3.Connection, tmp_path: Path) -> None:
    def git(*args: str, cwd: Path) -> None:
        subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True, capture_output=True)

    one, two = tmp_path / "a" / "api", tmp_path / "b" / "api-copy"
    for d in (one, two):
        d.mkdir(parents=True)
        git("init", "-q", cwd=d)
        git("remote", "add", "origin", "https://github.com/Acme/Api.git", cwd=d)
    with repo.transaction(conn):
        first = repo.upsert_session(conn, platform="claude-code", agent_session_id="x1",
                                    project=identify(str(one)).key, project_root=str(one), cwd=str(one), at=T)
        second = repo.upsert_session(conn, platform="claude-code", agent_session_id="x2",
                                     project=identify(str(two)).key, project_root=str(two), cwd=str(two), at=T)
    got = dict(conn.execute("SELECT id, project FROM sessions").fetchall())
    assert got[first] == got[second] == identify(str(one)).key


# ------------------------------------------------------------------------ migration 0008

def test_migration_0008_rekeys_rows_by_their_checkout(tmp_path: Path) -> None:
    path = str(tmp_path / "old.db")
    old = connect(path)
    migrate(old, target=7)
    rows = [  # (id, agent session, folder name, root)
        (1, "a", "api", "/work/acme/api"), (2, "b", "api", "/work/beta/api"), (3, "c", "shop", "/work/shop"),
        (4, "d", "shop", ""),   # a memory saved without a checkout: the only root of its name
        (5, "e", "api", ""),    # two roots had that name: which one is unknown, it keeps the name
        (6, "f", "notes", ""),  # never had a root
    ]
    for sid, agent, name, root in rows:
        old.execute("INSERT INTO sessions (id, agent_session_id, project, project_root, started_at) "
                    "VALUES (?, ?, ?, ?, ?)", (sid, agent, name, root, T + sid))
        old.execute("INSERT INTO observations (session_id, project, type, title, files_read, created_at, "
                    "recorded_at, content_hash) VALUES (?, ?, 'decision', ?, '[\"src/app.py\"]', ?, ?, ?)",
                    (sid, name, f"note {agent}", T, T, f"h{sid}"))
        old.execute("INSERT INTO session_summaries (session_id, project, request, created_at, recorded_at) "
                    "VALUES (?, ?, 'r', ?, ?)", (sid, name, T, T))
        old.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                    "VALUES (?, 1, 'p', ?)", (sid, T))
    for kind in ("observation", "summary", "prompt"):
        old.execute("INSERT INTO embeddings (kind, row_id, project, model, content_hash, dim, vector, created_at) "
                    "VALUES (?, 1, 'api', 'm', 'h', 1, x'00000000', 0)", (kind,))
    old.close()

    conn = open_db(path)
    want = {1: "/work/acme/api", 2: "/work/beta/api", 3: "/work/shop", 4: "/work/shop", 5: "api", 6: "notes"}
    assert dict(conn.execute("SELECT id, project FROM sessions").fetchall()) == want
    assert dict(conn.execute("SELECT session_id, project FROM observations").fetchall()) == want
    assert dict(conn.execute("SELECT session_id, project FROM session_summaries").fetchall()) == want
    assert dict(conn.execute("SELECT o.session_id, f.project FROM observation_files f "
                             "JOIN observations o ON o.id = f.observation_id").fetchall()) == want
    assert {r[0] for r in conn.execute("SELECT project FROM embeddings")} == {"/work/acme/api"}
    assert {tuple(r) for r in conn.execute("SELECT key, name, root FROM projects")} == {
        ("/work/acme/api", "api", "/work/acme/api"), ("/work/beta/api", "api", "/work/beta/api"),
        ("/work/shop", "shop", "/work/shop"), ("api", "api", ""), ("notes", "notes", "")}
    assert conn.execute("SELECT name FROM sqlite_temp_master WHERE name = 'rekey_names'").fetchall() == []
    conn.close()
