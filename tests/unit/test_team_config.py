"""A machine's team memberships (kenning/team/config.py): several teams, one device, a credential file each, a
repository with one team only; the single-team files of earlier versions read as they are and rewritten in the
new shape on the first write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kenning.paths import Paths
from kenning.team import config
from kenning.team.config import TeamConfig, TeamError
from kenning.team.worker import read_status

DEVICE = "0123456789abcdef"
SHOP, PARSER = "example.com/acme/shop", "example.org/libre/parser"


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    p = Paths(str(tmp_path / "data"))
    p.ensure()
    return p


def _legacy(paths: Paths, password: str = "old-secret") -> dict[str, object]:
    """team.json and team.credential as a single-team version wrote them."""
    old = {"dsn": "host=127.0.0.1 dbname=hub user=ana", "team": "alpha", "user": "ana", "device": DEVICE,
           "projects": {SHOP: "/src/shop"}, "mine": "ana_mine"}
    Path(config.config_path(paths)).write_text(json.dumps(old))
    cred = Path(config.legacy_credential_path(paths))
    cred.write_text(password + "\n")
    cred.chmod(0o600)
    return old


def _mode(path: str) -> int:
    return os.stat(path).st_mode & 0o777


def test_the_single_team_files_are_read_as_one_membership_without_being_rewritten(paths: Paths) -> None:
    old = _legacy(paths)
    (cfg,) = config.load_all(paths)
    assert (cfg.team, cfg.user, cfg.device, cfg.projects, cfg.mine) == ("alpha", "ana", DEVICE, {SHOP: "/src/shop"},
                                                                       "ana_mine")
    assert config.load(paths) == cfg and config.load(paths, "alpha") == cfg
    assert config.password(paths, "alpha") == "old-secret"
    assert config.device(paths) == DEVICE
    assert json.loads(Path(config.config_path(paths)).read_text()) == old  # reading never writes
    assert os.path.exists(config.legacy_credential_path(paths))


def test_the_first_write_migrates_them_in_place_and_keeps_the_first_team(paths: Paths) -> None:
    _legacy(paths)
    config.save(paths, TeamConfig(dsn="host=127.0.0.1 dbname=other user=ana2", team="beta", user="ana2",
                                  device=DEVICE, projects={PARSER: "/src/parser"}), "new-secret")
    saved = json.loads(Path(config.config_path(paths)).read_text())
    assert saved["device"] == DEVICE and [t["team"] for t in saved["teams"]] == ["alpha", "beta"]
    assert saved["teams"][0]["mine"] == "ana_mine" and saved["teams"][0]["projects"] == {SHOP: "/src/shop"}
    assert not os.path.exists(config.legacy_credential_path(paths))
    assert config.password(paths, "alpha") == "old-secret" and config.password(paths, "beta") == "new-secret"
    for team in ("alpha", "beta"):
        assert _mode(config.credential_path(paths, team)) == 0o600
    assert _mode(config.config_path(paths)) == 0o600
    assert "secret" not in Path(config.config_path(paths)).read_text()


def test_several_memberships_are_named_when_one_is_needed(paths: Paths) -> None:
    assert config.load(paths) is None and config.load_all(paths) == []
    for team in ("alpha", "beta"):
        config.save(paths, TeamConfig(dsn="host=127.0.0.1", team=team, user="ana", device=DEVICE), team)
    with pytest.raises(TeamError, match=r"several teams \(alpha, beta\): name one with --team"):
        config.load(paths)
    with pytest.raises(TeamError, match=r"not in team gamma \(its teams: alpha, beta\)"):
        config.load(paths, "gamma")
    beta = config.load(paths, "beta")
    assert beta is not None and beta.team == "beta"
    # Saving a membership again replaces it in place; the device is the machine's, one for all.
    config.save(paths, TeamConfig(dsn="host=127.0.0.1 port=6543", team="alpha", user="ana", device=DEVICE))
    assert [(c.team, c.dsn) for c in config.load_all(paths)] == [("alpha", "host=127.0.0.1 port=6543"),
                                                                 ("beta", "host=127.0.0.1")]
    assert config.password(paths, "alpha") == "alpha"  # no new password given: the credential stays


def test_a_repository_belongs_to_one_team(paths: Paths) -> None:
    alpha = TeamConfig(dsn="d", team="alpha", user="ana", device=DEVICE, projects={SHOP: "/src/shop"}, mine="ana_mine")
    beta = TeamConfig(dsn="d", team="beta", user="ana", device=DEVICE)
    teams = [alpha, beta]
    with pytest.raises(TeamError, match=f"{SHOP} is shared with team alpha already.*leave --team alpha"):
        config.check_joinable(teams, beta, SHOP)
    config.check_joinable(teams, alpha, SHOP)  # a rejoin of its own team
    config.check_joinable(teams, beta, PARSER)
    with pytest.raises(TeamError, match="ana_mine is your own space"):
        config.check_joinable(teams, TeamConfig(dsn="d", team="ana_mine", user="ana", device=DEVICE), PARSER)
    assert config.owner(teams, SHOP) is alpha and config.owner(teams, PARSER) is None


def test_leaving_one_keeps_the_others_and_the_last_takes_the_files_with_it(paths: Paths) -> None:
    _legacy(paths)
    config.save(paths, TeamConfig(dsn="d", team="beta", user="ana", device=DEVICE), "b")
    assert config.remove(paths, "alpha")
    assert [c.team for c in config.load_all(paths)] == ["beta"]
    assert not os.path.exists(config.credential_path(paths, "alpha"))
    assert not config.remove(paths, "alpha")
    assert config.remove(paths, "beta")
    assert not any(n.startswith("team") for n in os.listdir(paths.root))


def test_leaving_the_only_team_of_the_single_team_files(paths: Paths) -> None:
    _legacy(paths)
    assert config.remove(paths, "alpha")
    assert not any(n.startswith("team") for n in os.listdir(paths.root))


def test_an_unreadable_or_hostile_file_is_refused_with_what_to_do(paths: Paths) -> None:
    Path(config.config_path(paths)).write_text("{not json")
    with pytest.raises(TeamError, match=r"unreadable.*leave --all"):
        config.load_all(paths)
    # A team name names the credential file: one that is a path is refused.
    Path(config.config_path(paths)).write_text(json.dumps(
        {"device": DEVICE, "teams": [{"dsn": "d", "team": "../../etc/x", "user": "ana"}]}))
    with pytest.raises(TeamError, match="unreadable"):
        config.load_all(paths)
    assert config.remove_unreadable(paths) and not os.path.exists(config.config_path(paths))


def test_the_status_file_of_a_single_team_version_is_its_teams(paths: Paths) -> None:
    Path(paths.root, "team.status.json").write_text(json.dumps({"at": 1.0, "ok": False, "error": "down"}))
    assert read_status(paths, "alpha")["error"] == "down"
    Path(paths.root, "team.status.json").write_text(json.dumps({"teams": {"alpha": {"ok": True},
                                                                          "beta": {"ok": False}}}))
    assert read_status(paths, "beta") == {"ok": False} and read_status(paths, "gamma") == {}
