"""This machine's memberships of team hubs: ``<data>/team.json`` and one ``<data>/team.<team>.credential`` each.

All are 0600 files in the 0700 data dir, like the worker's token. ``team.json`` holds this machine's device id
(one per machine) and its memberships: each names its hub (a PostgreSQL DSN *without* its password), the team,
the member, the projects shared with that team (their normalised git remote → the local project key) and, on
at most one of them, the user's own space (``mine``). A repository is shared with at most one team: a team's
memories never go to another team's hub. A password lives apart in its membership's credential file and is
never taken from a command line: from ``KENNING_HUB_PASSWORD`` or stdin.

The single-team files of earlier versions (``team.json`` with one dsn/team/user, ``team.credential``) are read
as one membership and rewritten in this shape on the first write.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass, field

from kenning.paths import Paths, write_private

PASSWORD_ENV = "KENNING_HUB_PASSWORD"
TEAM_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
LOOPBACK = ("localhost", "127.0.0.1", "::1", "")


class TeamError(Exception):
    """What went wrong, said so a user can act on it."""


@dataclass
class TeamConfig:
    """One membership (``device`` is the machine's, the same in each)."""

    dsn: str
    team: str
    user: str
    device: str
    projects: dict[str, str] = field(default_factory=dict)  # remote → local project key
    mine: str = ""  # the user's own space on this hub (their preferences on every machine); '' = none

    def as_dict(self) -> dict[str, object]:
        return {"dsn": self.dsn, "team": self.team, "user": self.user, "projects": self.projects, "mine": self.mine}


def config_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.json")


def legacy_credential_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.credential")


def credential_path(paths: Paths, team: str) -> str:
    if not TEAM_NAME.match(team):  # it names a file: never a path
        raise TeamError(f"{team!r} is not a team name (lower-case letters, digits, _)")
    return os.path.join(paths.root, f"team.{team}.credential")


def _membership(d: dict[str, object], device: str) -> TeamConfig:
    cfg = TeamConfig(dsn=str(d["dsn"]), team=str(d["team"]), user=str(d["user"]), device=device,
                     projects={str(k): str(v) for k, v in dict(d.get("projects") or {}).items()},  # type: ignore[call-overload]
                     mine=str(d.get("mine") or ""))
    if not TEAM_NAME.match(cfg.team):  # it names the credential file: never a path
        raise TeamError(f"{cfg.team!r} is not a team name")
    return cfg


def load_all(paths: Paths) -> list[TeamConfig]:
    """Every membership of this machine ([] when it joined no team), in the order they were joined."""
    try:
        with open(config_path(paths), encoding="utf-8") as fh:
            d = json.load(fh)
        if "teams" not in d:  # the single-team file of earlier versions
            return [_membership(d, str(d["device"]))]
        return [_membership(dict(m), str(d["device"])) for m in d["teams"]]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError, AttributeError, TeamError) as e:
        raise TeamError(f"{config_path(paths)} is unreadable ({e}): `kenning team leave --all`, then join "
                        "again") from None


def names(teams: list[TeamConfig]) -> str:
    return ", ".join(c.team for c in teams)


def load(paths: Paths, team: str | None = None) -> TeamConfig | None:
    """The membership of ``team`` (TeamError when this machine is not in it); without ``team`` the only one,
    None when this machine joined none, TeamError naming them when it is in several."""
    teams = load_all(paths)
    if team:
        found = next((c for c in teams if c.team == team), None)
        if found is None:
            raise TeamError(f"this machine is not in team {team}" + (f" (its teams: {names(teams)})" if teams else ""))
        return found
    if len(teams) > 1:
        raise TeamError(f"this machine is in several teams ({names(teams)}): name one with --team")
    return teams[0] if teams else None


def device(paths: Paths) -> str:
    """This machine's device id: the one its memberships share, a new one when it has none yet."""
    teams = load_all(paths)
    return teams[0].device if teams else new_device()


def owner(teams: list[TeamConfig], remote: str) -> TeamConfig | None:
    """The membership that shares ``remote`` (a repository belongs to at most one team)."""
    return next((c for c in teams if remote in c.projects), None)


def check_joinable(teams: list[TeamConfig], cfg: TeamConfig, remote: str) -> None:
    """TeamError when ``remote`` may not be shared with ``cfg``'s team: another membership shares it (its
    memories would reach that team's hub too), or ``cfg``'s team is the user's own space in another one."""
    other = owner([c for c in teams if c.team != cfg.team], remote)
    if other is not None:
        raise TeamError(f"{remote} is shared with team {other.team} already: a repository belongs to one team, so "
                        f"its memories never reach another team's hub. `kenning team leave --team {other.team}` "
                        "first, or join another repository")
    for c in teams:
        if c.team != cfg.team and c.mine == cfg.team:
            raise TeamError(f"{cfg.team} is your own space (through team {c.team}): a team is another one")


def _write(paths: Paths, teams: list[TeamConfig]) -> None:
    paths.ensure()
    if not teams:
        return
    write_private(config_path(paths), json.dumps({"device": teams[0].device, "teams": [c.as_dict() for c in teams]},
                                                 indent=1).encode())


def _migrate_credential(paths: Paths, teams: list[TeamConfig]) -> None:
    """The single-team ``team.credential`` becomes its membership's file (kept 0600: it is renamed)."""
    old = legacy_credential_path(paths)
    if len(teams) == 1 and os.path.exists(old) and not os.path.exists(credential_path(paths, teams[0].team)):
        os.replace(old, credential_path(paths, teams[0].team))
    elif os.path.exists(old) and teams:  # already migrated: a stale copy
        os.remove(old)


def save(paths: Paths, cfg: TeamConfig, password: str | None = None) -> None:
    """Add ``cfg`` or replace the membership of its team (the others stay); ``password``: its credential."""
    teams = load_all(paths)
    _migrate_credential(paths, teams)
    at = next((i for i, c in enumerate(teams) if c.team == cfg.team), None)
    if at is None:
        teams.append(cfg)
    else:
        teams[at] = cfg
    for c in teams:
        c.device = cfg.device
    paths.ensure()
    if password is not None:
        write_private(credential_path(paths, cfg.team), password.encode())
    _write(paths, teams)


def password(paths: Paths, team: str) -> str:
    for p in (credential_path(paths, team), legacy_credential_path(paths)):
        try:
            with open(p, encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError:
            continue
    return ""


def remove(paths: Paths, team: str) -> bool:
    """Leave ``team``: its membership and credential go, the others stay (the files go with the last)."""
    teams = load_all(paths)
    kept = [c for c in teams if c.team != team]
    if len(kept) == len(teams):
        return False
    _migrate_credential(paths, teams)
    for p in (credential_path(paths, team),) + (() if kept else (legacy_credential_path(paths),)):
        try:
            os.remove(p)
        except FileNotFoundError:
            pass
    if kept:
        _write(paths, kept)
    else:
        os.remove(config_path(paths))
    return True


def remove_unreadable(paths: Paths) -> bool:
    """``leave --all`` on a ``team.json`` that cannot be read: every team file of the data dir goes."""
    gone = False
    for name in os.listdir(paths.root) if os.path.isdir(paths.root) else []:
        if name == "team.json" or (name.startswith("team.") and name.endswith(".credential")):
            os.remove(os.path.join(paths.root, name))
            gone = True
    return gone


def new_device() -> str:
    return secrets.token_hex(8)


def read_password(stdin_is_tty: bool, prompt: str = "hub password: ") -> str:
    """The password from ``KENNING_HUB_PASSWORD``, else the terminal (not echoed), else one line of stdin."""
    value = os.environ.get(PASSWORD_ENV, "")
    if value:
        return value
    import sys

    if stdin_is_tty:
        import getpass

        return getpass.getpass(prompt)
    return sys.stdin.readline().strip()
