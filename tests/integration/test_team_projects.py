"""Row-level security per team and project on a real PostgreSQL hub: a member restricted to some of the team's
projects (``kenning team init --projects``, ``grant``, ``revoke``) reads, writes and reviews those only.

Checked with SQL under the member's own credential (what a hostile client could send), and through the real CLI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_team_hub import Dev
from tests.support import postgres
from tests.support.team_rules import rules

psycopg = pytest.importorskip("psycopg")

SHOP = "example.com/acme/shop"
API = "example.com/acme/api"
DEVICE = "abcdef0123456789"
SHOP_GID, API_GID = f"{DEVICE}:1", f"{DEVICE}:2"
SHOP_TEXT = "The shop checkout retries a declined card once, never twice"


def _clock(n: int) -> str:
    return f"{1_700_000_000_000 + n:013d}.00000.{DEVICE}"


@pytest.fixture(scope="module")
def hub() -> Iterator[postgres.Server]:
    with postgres.server() as srv:
        yield srv


def _init(admin: Dev, hub: postgres.Server, *args: str, dbname: str = "postgres") -> dict[str, str]:
    r = admin.team("init", "--dsn", hub.dsn(dbname=dbname), "--team", "alpha", *args, password=hub.admin_password)
    assert "schema and roles ready" in r.stdout
    made = admin.data / "team-alpha-members.json"
    return dict(json.loads(made.read_text())) if made.exists() else {}


@pytest.fixture(scope="module")
def hubteam(hub: postgres.Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Team alpha: ana and li see the whole team, carl only the api project (a contractor)."""
    admin = Dev(tmp_path_factory.mktemp("admin"))
    made = _init(admin, hub, "--member", "ana", "--member", "li")
    made.update(_init(admin, hub, "--member", "carl", "--projects", "git@example.com:acme/api.git"))
    from kenning.team import hub as hubmod

    with hub.connect("ana", made["ana"]) as conn:
        assert hubmod.push(conn, "alpha", [
            hubmod.Op(SHOP_GID, "created", SHOP, DEVICE, _clock(1), "", {"title": SHOP_TEXT, "text": SHOP_TEXT}),
            hubmod.Op(API_GID, "created", API, DEVICE, _clock(1), "", {"title": "The api pages with a cursor",
                                                                       "text": "never with an offset"})]) == 2
    return {"admin": admin, "passwords": made}


def _everything(conn: Any) -> str:
    return "\n".join(repr(r) for t in ("ops", "memories", "audit", "teams")
                     for r in conn.execute(f"SELECT * FROM kenning.{t}").fetchall())


def test_a_member_restricted_to_one_project_reads_no_row_of_another(hub: postgres.Server,
                                                                      hubteam: dict[str, Any]) -> None:
    pw = hubteam["passwords"]
    with hub.connect("carl", pw["carl"]) as conn:
        seen = _everything(conn)
        assert API_GID in seen and "cursor" in seen
        assert SHOP_GID not in seen and SHOP not in seen and "declined card" not in seen
        assert conn.execute("SELECT gid FROM kenning.memories").fetchall() == [(API_GID,)]
        assert {r[0] for r in conn.execute("SELECT project FROM kenning.audit").fetchall()} == {API}
    with hub.connect("li", pw["li"]) as conn:  # unrestricted: the whole team, as before
        assert sorted(r[0] for r in conn.execute("SELECT gid FROM kenning.memories").fetchall()) == [SHOP_GID,
                                                                                                     API_GID]
        assert "member+" in _everything(conn)


def test_a_restricted_member_writes_no_op_for_another_project_whatever_it_claims(hub: postgres.Server,
                                                                                 hubteam: dict[str, Any]) -> None:
    insert = ("INSERT INTO kenning.ops (team, gid, kind, project, device, hlc, payload) "
              "VALUES ('alpha', %s, %s, %s, %s, %s, %s)")
    with hub.connect("carl", hubteam["passwords"]["carl"]) as conn:
        attempts = [(f"{DEVICE}:9", "created", SHOP, {"title": "Skip the tests", "text": "x"}),
                    # An op on the shop memory that claims to be of carl's project: the hub judges the memory's.
                    (SHOP_GID, "edited", API, {"title": "Skip the tests", "text": "x"}),
                    (SHOP_GID, "pinned", API, None), (SHOP_GID, "unpinned", API, None),
                    (SHOP_GID, "forgotten", "unknown", None), (SHOP_GID, "superseded", API, {"by": API_GID})]
        for n, (gid, kind, project, payload) in enumerate(attempts, start=10):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(insert, (gid, kind, project, DEVICE, _clock(n), json.dumps(payload) if payload else None))
        # In his own project he writes as any member does; a batch the hub refuses part of (what his machine
        # sends) keeps the rest, and names what was refused.
        from kenning.team import hub as hubmod

        refused: list[hubmod.Op] = []
        batch = [hubmod.Op(SHOP_GID, "pinned", API, DEVICE, _clock(29)),
                 hubmod.Op(API_GID, "edited", API, DEVICE, _clock(30), "",
                           {"title": "The api pages with a cursor, 100 at most", "text": "never with an offset"})]
        assert hubmod.push(conn, "alpha", batch, refused) == 1 and refused == batch[:1]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            hubmod.push(conn, "alpha", batch[:1])
    with hub.connect() as admin:
        assert admin.execute("SELECT title, body, layer, forgotten, superseded_by FROM kenning.memories "
                             "WHERE gid = %s", (SHOP_GID,)).fetchone() == (SHOP_TEXT, SHOP_TEXT, "key", False, None)
        assert admin.execute("SELECT count(*) FROM kenning.ops WHERE gid = %s OR gid = %s",
                             (SHOP_GID, f"{DEVICE}:9")).fetchone()[0] == 1
        assert admin.execute("SELECT title FROM kenning.memories WHERE gid = %s", (API_GID,)).fetchone()[0] == \
            "The api pages with a cursor, 100 at most"


def test_a_restricted_member_reviews_no_memory_of_another_project(hub: postgres.Server,
                                                                  hubteam: dict[str, Any]) -> None:
    with hub.connect("carl", hubteam["passwords"]["carl"]) as conn:
        with pytest.raises(psycopg.errors.RaiseException, match=r"no memory .* to review in your teams"):
            conn.execute("SELECT kenning.review(%s, 'approved')", (SHOP_GID,))
        # Nor in their own wording (approval with an edit): the same check, in its own function.
        with pytest.raises(psycopg.errors.RaiseException, match=r"no memory .* to review in your teams"):
            conn.execute("SELECT kenning.review_edited(%s, 'Shop rule, reworded', '', %s, %s, '')",
                         (SHOP_GID, _clock(90), DEVICE))
        assert conn.execute("SELECT kenning.review(%s, 'approved')", (API_GID,)).fetchone()[0] == "approved"
    with hub.connect() as admin:
        assert admin.execute("SELECT review FROM kenning.memories WHERE gid = %s", (SHOP_GID,)).fetchone()[0] == \
            "pending"
        assert admin.execute("SELECT actor, project FROM kenning.audit WHERE action = 'approved'").fetchall() == [
            ("carl", API)]


def test_revoking_a_project_removes_access_and_grant_all_gives_the_whole_team_back(
        hub: postgres.Server, hubteam: dict[str, Any]) -> None:
    admin, pw = hubteam["admin"], hubteam["passwords"]["carl"]
    args = ("--dsn", hub.dsn(), "--team", "alpha", "--member", "carl")

    def seen() -> list[str]:
        with hub.connect("carl", pw) as conn:
            return sorted(r[0] for r in conn.execute("SELECT gid FROM kenning.memories").fetchall())
    try:
        r = admin.team("revoke", *args, "--project", "https://example.com/acme/api", password=hub.admin_password)
        assert "sees only these projects of team alpha: none" in r.stdout
        assert seen() == []
        with hub.connect("carl", pw) as conn:
            assert conn.execute("SELECT count(*) FROM kenning.ops").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM kenning.audit").fetchone()[0] == 0
        admin.team("grant", *args, "--project", "git@example.com:acme/shop.git", password=hub.admin_password)
        assert seen() == [SHOP_GID]
        r = admin.team("grant", *args, "--all-projects", password=hub.admin_password)
        assert "sees every project of team alpha" in r.stdout
        assert seen() == [SHOP_GID, API_GID]
        bad = admin.team("revoke", *args, "--project", API, password=hub.admin_password, check=False)
        assert bad.returncode == 2 and "sees every project" in bad.stderr
        bad = admin.team("grant", "--dsn", hub.dsn(), "--team", "alpha", "--member", "nobody", "--project", API,
                         password=hub.admin_password, check=False)
        assert bad.returncode == 2 and "nobody is not a member of team alpha" in bad.stderr
    finally:
        admin.team("init", "--dsn", hub.dsn(), "--team", "alpha", "--member", "carl", "--projects", API,
                   password=hub.admin_password)
    assert seen() == [API_GID]
    with hub.connect() as conn:
        assert conn.execute("SELECT action, project FROM kenning.audit WHERE gid = 'carl' AND action IN "
                            "('project+', 'project-') ORDER BY id").fetchall() == [
            ("project+", API), ("project-", API), ("project+", SHOP), ("project+", API)]
        assert [r[0] for r in conn.execute("SELECT action FROM kenning.audit WHERE gid = 'carl' AND action LIKE "
                                           "'projects:%' ORDER BY id")] == ["projects:some", "projects:all",
                                                                            "projects:some"]


def test_an_older_hub_is_upgraded_in_place_by_running_init_again(hub: postgres.Server,
                                                                 hubteam: dict[str, Any]) -> None:
    with hub.connect() as conn:
        conn.execute("CREATE DATABASE oldhub")
    v2 = (Path(__file__).parent.parent / "fixtures" / "hub_schema_v2.sql").read_text()
    with hub.connect(dbname="oldhub") as conn:
        conn.execute(v2)
        conn.execute("INSERT INTO kenning.teams (name) VALUES ('alpha')")
        conn.execute("INSERT INTO kenning.members (team, role_name) VALUES ('alpha', 'ana'), ('alpha', 'carl')")
    from kenning.team import hub as hubmod

    with hub.connect("ana", hubteam["passwords"]["ana"], dbname="oldhub") as conn:
        hubmod.push(conn, "alpha", [
            hubmod.Op(SHOP_GID, "created", SHOP, DEVICE, _clock(1), "", {"title": SHOP_TEXT, "text": SHOP_TEXT}),
            hubmod.Op(API_GID, "created", API, DEVICE, _clock(1), "", {"title": "Old api rule", "text": "t"})])
        with pytest.raises(psycopg.errors.CheckViolation):  # schema 2 knows no unpinning
            hubmod.push(conn, "alpha", [hubmod.Op(API_GID, "unpinned", API, DEVICE, _clock(2))])
    admin = hubteam["admin"]
    bad = admin.team("grant", "--dsn", hub.dsn(dbname="oldhub"), "--team", "alpha", "--member", "carl", "--project",
                     API, password=hub.admin_password, check=False)
    assert bad.returncode == 2 and "the hub's schema is 2: run `kenning team init" in bad.stderr
    for _ in range(2):  # idempotent: a second run changes nothing
        _init(admin, hub, "--member", "carl", "--projects", API, dbname="oldhub")
    with hub.connect(dbname="oldhub") as conn:
        assert conn.execute("SELECT value FROM kenning.meta WHERE key = 'schema_version'").fetchone()[0] == \
            hubmod.SCHEMA_VERSION == "3"
        assert conn.execute("SELECT gid, title FROM kenning.memories ORDER BY gid").fetchall() == [
            (SHOP_GID, SHOP_TEXT), (API_GID, "Old api rule")]
        # The audit rows written by schema 2 name their project now (what a restricted member may read).
        assert conn.execute("SELECT gid, project FROM kenning.audit WHERE action = 'write:created' ORDER BY gid"
                            ).fetchall() == [(SHOP_GID, SHOP), (API_GID, API)]
    with hub.connect("carl", hubteam["passwords"]["carl"], dbname="oldhub") as conn:
        assert conn.execute("SELECT gid FROM kenning.memories").fetchall() == [(API_GID,)]
        assert SHOP not in _everything(conn)
    with hub.connect("ana", hubteam["passwords"]["ana"], dbname="oldhub") as conn:
        assert hubmod.push(conn, "alpha", [hubmod.Op(API_GID, "pinned", API, DEVICE, _clock(3))]) == 1


def test_a_restricted_member_joins_and_syncs_only_their_projects(hub: postgres.Server, hubteam: dict[str, Any],
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    pw = hubteam["passwords"]["carl"]
    with hub.connect("li", hubteam["passwords"]["li"]) as conn:
        for gid in (SHOP_GID, API_GID):
            conn.execute("SELECT kenning.review(%s, 'approved')", (gid,))
    shop = Dev(tmp_path_factory.mktemp("carl_shop"))  # a checkout of the shop: not his
    r = shop.team("join", "--dsn", hub.dsn("carl"), "--team", "alpha", password=pw, check=False)
    assert r.returncode == 2 and f"carl may not share {SHOP} in team alpha" in r.stderr
    assert not (shop.data / "team.json").exists()
    api = Dev(tmp_path_factory.mktemp("carl_api"))
    (api.project / ".git" / "config").write_text('[remote "origin"]\n\turl = git@example.com:acme/api.git\n')
    api.team("join", "--dsn", hub.dsn("carl"), "--team", "alpha", password=pw)
    out = json.loads(api.team("sync", "--json").stdout)
    assert out["pulled"] == 1 and out["refused"] == []
    # His restriction is told: by the round (in `team status`) and by `doctor`, which asks the hub.
    assert out["teams"]["alpha"]["granted"] == [API]
    assert json.loads(api.team("status", "--json").stdout)["teams"][0]["restricted_to"] == [API]
    assert f"the hub restricts you to these projects of the team: {API}" in api.team("status").stdout
    assert f"alpha: the hub restricts you to these projects of the team: {API}" in api.kenning("doctor").stdout
    assert [r[0] for r in api.rows("SELECT l.gid FROM team_links l")] == [API_GID]
    assert api.rows("SELECT count(*) FROM observations WHERE title LIKE '%declined card%'") == [(0,)]
    # Access taken away while his machine has memories to send: the round goes on, tells why, and they wait.
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.store.db import open_db

    key = api.rows("SELECT key FROM projects WHERE remote = ?", API)[0][0]
    conn = open_db(str(api.paths.db))
    try:
        title, text = rules(1, who="carl")[0]
        MemoryService(conn, "cli").save(ObservationDraft(type="decision", title=title, narrative=text,
                                                         created_at=time.time(), kind="rule"), project=key)
    finally:
        conn.close()
    hubteam["admin"].team("revoke", "--dsn", hub.dsn(), "--team", "alpha", "--member", "carl", "--project", API,
                          password=hub.admin_password)
    try:
        out = json.loads(api.team("sync", "--json").stdout)
        assert out["pushed"] == 0 and any(f"project {API} is not granted to you" in x for x in out["refused"])
        with hub.connect() as admin:
            assert admin.execute("SELECT count(*) FROM kenning.memories WHERE title = %s", (title,)).fetchone()[0] == 0
    finally:
        hubteam["admin"].team("grant", "--dsn", hub.dsn(), "--team", "alpha", "--member", "carl", "--project", API,
                              password=hub.admin_password)
    out = json.loads(api.team("sync", "--json").stdout)
    assert out["pushed"] == 1 and out["refused"] == []
    with hub.connect() as admin:
        assert admin.execute("SELECT project, author FROM kenning.memories WHERE title = %s", (title,)).fetchall() \
            == [(API, "carl")]
