"""One machine in two teams, each on its own PostgreSQL server (two real servers, tests/support/postgres.py).

Ana works for a company team (alpha, on hub A) in repository X and contributes to an open-source project's team
(beta, on hub B) in repository Y. Her machine joins both: what she teaches in X reaches her alpha teammate and
is in no table of hub B, and the other way round; hub A down does not stop beta's sync; leaving alpha keeps
beta; repository Y, shared with beta, cannot be joined to alpha. A machine still on the single-team files of
earlier versions syncs with them, and they are rewritten on its next join.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_team_hub import Dev
from tests.support import postgres

psycopg = pytest.importorskip("psycopg")

REMOTE_X, REMOTE_Y = "git@example.com:acme/shop.git", "https://example.org/libre/parser.git"
RULE_X = "From now on every shop invoice carries the buyer's VAT number in the footer"
RULE_Y = "From now on every parser error names the line and the column of the offending token"
RULE_Y2 = "From now on every parser benchmark runs against the large grammar corpus too"
RULE_Y3 = "From now on every public parser function documents the exceptions it raises"


def _repo(dev: Dev, name: str, remote: str) -> Path:
    path = dev.root / name
    (path / ".git").mkdir(parents=True, exist_ok=True)
    (path / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n')
    return path


@contextmanager
def _in(dev: Dev, repo: Path) -> Iterator[Dev]:
    """Hooks and commands of ``dev`` run in ``repo`` meanwhile (another checkout on the same machine)."""
    before = dev.project
    dev.project = repo
    try:
        yield dev
    finally:
        dev.project = before


def _hub_text(hub: postgres.Server) -> str:
    with hub.connect() as conn:
        return "\n".join(repr(r) for t in ("ops", "memories", "audit", "teams", "members", "meta")
                         for r in conn.execute(f"SELECT * FROM kenning.{t}").fetchall())


def _init(admin: Dev, hub: postgres.Server, team: str, *members: str) -> dict[str, str]:
    args = [a for m in members for a in ("--member", m)]
    admin.team("init", "--dsn", hub.dsn(), "--team", team, "--auto-approve", *args, password=hub.admin_password)
    return dict(json.loads((admin.data / f"team-{team}-members.json").read_text()))


@pytest.fixture(scope="module")
def hubs() -> Iterator[tuple[postgres.Server, postgres.Server]]:
    with postgres.server() as a, postgres.server() as b:
        yield a, b


@pytest.fixture(scope="module")
def world(hubs: tuple[postgres.Server, postgres.Server], tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        dict[str, Any]]:
    hub_a, hub_b = hubs
    admin = Dev(tmp_path_factory.mktemp("admin"))
    pw_a, pw_b = _init(admin, hub_a, "alpha", "ana", "li"), _init(admin, hub_b, "beta", "ana", "bo")
    ana, li, bo = (Dev(tmp_path_factory.mktemp(n)) for n in ("ana", "li", "bo"))
    (bo.project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE_Y}\n')
    x, y = ana.project, _repo(ana, "parser", REMOTE_Y)
    ana.start_worker()
    ana.team("join", "--dsn", hub_a.dsn("ana"), "--team", "alpha", password=pw_a["ana"])
    with _in(ana, y):
        ana.team("join", "--dsn", hub_b.dsn("ana"), "--team", "beta", password=pw_b["ana"])
    li.team("join", "--dsn", hub_a.dsn("li"), "--team", "alpha", password=pw_a["li"])
    bo.team("join", "--dsn", hub_b.dsn("bo"), "--team", "beta", password=pw_b["bo"])
    try:
        yield {"ana": ana, "li": li, "bo": bo, "x": x, "y": y, "hub_a": hub_a, "hub_b": hub_b, "pw_a": pw_a,
               "admin": admin}
    finally:
        ana.stop_worker()


def _teach(dev: Dev, repo: Path, rule: str) -> None:
    with _in(dev, repo):
        dev.say(rule)
    dev.flush()


def _titles(dev: Dev) -> str:
    return "\n".join(r[0] for r in dev.rows("SELECT title FROM observations"))


def test_one_machine_in_two_teams_on_two_hubs_keeps_each_repository_with_its_team(world: dict[str, Any]) -> None:
    ana, li, bo, hub_a, hub_b = world["ana"], world["li"], world["bo"], world["hub_a"], world["hub_b"]
    saved = json.loads((ana.data / "team.json").read_text())
    assert [(t["team"], t["user"], list(t["projects"])) for t in saved["teams"]] == [
        ("alpha", "ana", ["example.com/acme/shop"]), ("beta", "ana", ["example.org/libre/parser"])]
    assert len(saved["device"]) == 16 and "password" not in json.dumps(saved)
    for team in ("alpha", "beta"):
        assert oct(os.stat(ana.data / f"team.{team}.credential").st_mode & 0o777) == "0o600"
    _teach(ana, world["x"], RULE_X)
    _teach(ana, world["y"], RULE_Y)
    ana.wait_pushed("VAT number")
    ana.wait_pushed("offending token")
    # Each rule reached its own team's hub only, byte for byte.
    text_a, text_b = _hub_text(hub_a), _hub_text(hub_b)
    assert "VAT number" in text_a and "VAT number" not in text_b
    assert "offending token" in text_b and "offending token" not in text_a
    assert ana.rows("SELECT team FROM team_links l JOIN observations o ON o.id = l.observation_id "
                    "WHERE o.title LIKE '%VAT number%'") == [("alpha",)]
    # Each teammate gets their team's rule, and not the other's.
    assert li.team("pull").returncode == 0 and bo.team("pull").returncode == 0
    assert "VAT number" in li.session_start() and "offending token" not in _titles(li)
    assert "offending token" in bo.session_start() and "VAT number" not in _titles(bo)
    status = json.loads(ana.team("status", "--json").stdout)
    assert [t["team"] for t in status["teams"]] == ["alpha", "beta"]
    assert all(t["restricted_to"] is None for t in status["teams"])
    assert {t["team"]: t["waiting"]["operations"] for t in status["teams"]} == {"alpha": 0, "beta": 0}


def test_a_repository_of_one_team_cannot_join_another(world: dict[str, Any]) -> None:
    ana, hub_a = world["ana"], world["hub_a"]
    before = (ana.data / "team.json").read_text()
    with _in(ana, world["y"]):
        r = ana.team("join", "--team", "alpha", check=False)
        assert r.returncode == 2 and "example.org/libre/parser is shared with team beta already" in r.stderr
        # Nor through a new membership of alpha on another DSN: refused before any password is asked for.
        r = ana.team("join", "--dsn", hub_a.dsn("ana") + " application_name=x", "--team", "alpha", check=False)
        assert r.returncode == 2 and "shared with team beta already" in r.stderr
        # Without --team on a machine in several teams, a join of this repository is its team's (a rejoin).
        assert "joined team beta" in ana.team("join").stdout
    other = _repo(ana, "elsewhere", "git@example.com:acme/tools.git")
    with _in(ana, other):
        r = ana.team("join", check=False)
        assert r.returncode == 2 and "several teams (alpha, beta): name the one this repository joins" in r.stderr
    assert json.loads((ana.data / "team.json").read_text()) == json.loads(before)


def test_hub_a_down_does_not_stop_team_b_and_each_is_reported(world: dict[str, Any]) -> None:
    ana, bo, hub_a = world["ana"], world["bo"], world["hub_a"]
    oid = ana.rows("SELECT l.observation_id FROM team_links l JOIN observations o ON o.id = l.observation_id "
                   "WHERE o.title LIKE '%VAT number%'")[0][0]
    hub_a.stop()
    try:
        r = ana.kenning("unpin", str(oid))  # an edit of alpha's memory waits for alpha's hub
        assert r.returncode == 0, r.stdout + r.stderr
        _teach(ana, world["y"], RULE_Y2)
        ana.wait_pushed("grammar corpus")  # the worker's round with beta goes on
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            st = json.loads((ana.data / "team.status.json").read_text())["teams"]
            if st.get("alpha", {}).get("ok") is False and st.get("beta", {}).get("ok") is True:
                break
            time.sleep(0.3)
        assert st["alpha"]["ok"] is False and "reach" in st["alpha"]["error"] and st["beta"]["ok"] is True
        assert "grammar corpus" in (bo.team("pull") and bo.session_start())
        r = ana.team("sync", check=False)
        assert r.returncode == 1 and "beta: pushed 0" in r.stdout and "kenning: team alpha: cannot reach" in r.stderr
        out = json.loads(ana.team("sync", "--json", check=False).stdout)
        assert out["teams"]["alpha"]["ok"] is False and out["teams"]["beta"]["ok"] is True
        status = ana.team("status").stdout
        assert "team alpha as ana" in status and "failed" in status and "team beta as ana" in status
        assert "1 operation(s) waiting to be pushed (1 edit(s) or pin(s))" in status, status
        waits = {t["team"]: t["waiting"] for t in json.loads(ana.team("status", "--json").stdout)["teams"]}
        assert waits["alpha"] == {"operations": 1, "edits_and_pins": 1, "refused": 0}
        assert waits["beta"]["operations"] == 0
        doctor = ana.kenning("doctor").stdout
        assert "team alpha: cannot reach the team hub" in doctor and "team beta reachable" in doctor, doctor
        lines = [x for x in ana.kenning("status").stdout.splitlines() if x.startswith("team ")]
        assert len(lines) == 2 and "the last try failed" in lines[0] and "alpha" in lines[0], lines
    finally:
        hub_a.start()
    ana.wait("SELECT 1 FROM team_links WHERE observation_id = ? AND pinned = 0", oid)  # sent once it is back


def test_a_hub_that_hangs_holds_back_its_own_team_only(world: dict[str, Any]) -> None:
    """Hub A answers nothing while an admin holds a lock its members' queries wait on (no timeout): alpha's round
    hangs on it, and beta's rounds go on meanwhile (each team syncs on a thread of its own)."""
    ana, bo, hub_a = world["ana"], world["bo"], world["hub_a"]
    rule = "From now on every parser release note lists the grammar changes first"
    with hub_a.connect() as admin, admin.transaction():
        admin.execute("LOCK TABLE kenning.memories IN ACCESS EXCLUSIVE MODE")
        with hub_a.connect() as watch:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not watch.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = 'kenning' AND usename = 'ana' "
                    "AND wait_event_type = 'Lock'").fetchall():
                time.sleep(0.2)
            assert watch.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kenning' "
                                 "AND wait_event_type = 'Lock'").fetchone()[0] >= 1, "alpha's round never hung"
        _teach(ana, world["y"], rule)
        ana.wait_pushed("grammar changes first")
        assert "grammar changes first" in (bo.team("pull") and bo.session_start())
        released = time.time()
    deadline = time.monotonic() + 30  # alpha's round ends once the hub answers, and the next ones run again
    while time.monotonic() < deadline:
        st = json.loads((ana.data / "team.status.json").read_text())["teams"]["alpha"]
        if st.get("ok") and float(st["at"]) > released:
            break
        time.sleep(0.3)
    assert st.get("ok") and float(st["at"]) > released, st


def test_leaving_one_team_keeps_the_other(world: dict[str, Any]) -> None:
    ana, bo, hub_a = world["ana"], world["bo"], world["hub_a"]
    r = ana.team("leave", check=False)
    assert r.returncode == 2 and "several teams: alpha, beta" in r.stderr
    assert "left team alpha" in ana.team("leave", "--team", "alpha").stdout
    saved = json.loads((ana.data / "team.json").read_text())
    assert [t["team"] for t in saved["teams"]] == ["beta"]
    assert not (ana.data / "team.alpha.credential").exists() and (ana.data / "team.beta.credential").exists()
    _teach(ana, world["y"], RULE_Y3)
    ana.wait_pushed("exceptions it raises")
    assert "exceptions it raises" in (bo.team("pull") and bo.session_start())
    assert "exceptions it raises" not in _hub_text(hub_a)
    # Alpha joins again; the repository of beta still cannot.
    ana.team("join", "--dsn", hub_a.dsn("ana"), "--team", "alpha", password=world["pw_a"]["ana"])
    assert [t["team"] for t in json.loads((ana.data / "team.json").read_text())["teams"]] == ["beta", "alpha"]


def test_your_own_space_goes_through_one_membership_and_never_to_another_hub(world: dict[str, Any]) -> None:
    ana, hub_a, hub_b = world["ana"], world["hub_a"], world["hub_b"]
    world["admin"].team("init", "--dsn", hub_a.dsn(), "--team", "ana_mine", "--member", "ana", "--auto-approve",
                        password=hub_a.admin_password)
    r = ana.team("mine", "--team", "ana_mine", check=False)
    assert r.returncode == 2 and "several teams (beta, alpha): name the one whose hub holds your space" in r.stderr
    assert "your preferences go to ana_mine" in ana.team("mine", "--team", "ana_mine", "--through", "alpha").stdout
    r = ana.team("mine", "--team", "ana_other", "--through", "beta", check=False)
    assert r.returncode == 2 and "your own space is ana_mine already, through team alpha" in r.stderr
    with _in(ana, _repo(ana, "notes", "git@example.com:ana/notes.git")):
        r = ana.team("join", "--dsn", hub_a.dsn("ana"), "--team", "ana_mine", check=False)
        assert r.returncode == 2 and "ana_mine is your own space (through team alpha)" in r.stderr
    with _in(ana, world["y"]):  # said in beta's repository: a preference for all her work
        ana.say("In every project, answer me in Portuguese please")
    ana.flush()
    ana.wait_pushed("Portuguese")
    assert "Portuguese" in _hub_text(hub_a) and "Portuguese" not in _hub_text(hub_b)
    with hub_a.connect() as conn:
        assert conn.execute("SELECT team FROM kenning.memories WHERE title LIKE '%Portuguese%'").fetchall() == [
            ("ana_mine",)]


def test_the_single_team_files_of_earlier_versions_still_sync_and_are_migrated_on_the_next_join(
        world: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    hub_a, pw = world["hub_a"], world["pw_a"]["li"]
    old = Dev(tmp_path_factory.mktemp("li-old-laptop"))
    old.team("join", "--dsn", hub_a.dsn("li"), "--team", "alpha", password=pw)
    # As an earlier version wrote them: one membership at the top of team.json, the password in team.credential.
    new = json.loads((old.data / "team.json").read_text())
    legacy = {**new["teams"][0], "device": new["device"]}
    (old.data / "team.json").write_text(json.dumps(legacy))
    os.rename(old.data / "team.alpha.credential", old.data / "team.credential")
    out = json.loads(old.team("sync", "--json").stdout)
    assert out["teams"]["alpha"]["ok"] is True and out["pulled"] >= 1
    assert "VAT number" in old.session_start()
    assert "team alpha as li" in old.team("status").stdout
    assert json.loads((old.data / "team.json").read_text()) == legacy  # reading never rewrites
    old.team("join")  # the first write: the files take the new shape, the credential its membership's name
    assert json.loads((old.data / "team.json").read_text()) == new
    assert not (old.data / "team.credential").exists()
    assert oct(os.stat(old.data / "team.alpha.credential").st_mode & 0o777) == "0o600"
    assert old.team("sync", "--json").returncode == 0
