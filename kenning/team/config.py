"""This machine's membership of a team hub: ``<data>/team.json`` and ``<data>/team.credential``.

Both are 0600 files in the 0700 data dir, like the worker's token. ``team.json`` names the hub (a
PostgreSQL DSN *without* its password), the team, this machine's device id and the projects the team
joined (their normalised git remote → the local project key). The password lives apart in
``team.credential`` and is never taken from a command line: from ``KENNING_HUB_PASSWORD`` or stdin.
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
    dsn: str
    team: str
    user: str
    device: str
    projects: dict[str, str] = field(default_factory=dict)  # remote → local project key
    mine: str = ""  # the user's own space on the hub (their preferences on every machine); '' = none

    def to_json(self) -> bytes:
        return json.dumps({"dsn": self.dsn, "team": self.team, "user": self.user, "device": self.device,
                           "projects": self.projects, "mine": self.mine}, indent=1).encode()


def config_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.json")


def credential_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.credential")


def load(paths: Paths) -> TeamConfig | None:
    """The membership, or None when this machine joined no team."""
    try:
        with open(config_path(paths), encoding="utf-8") as fh:
            d = json.load(fh)
        return TeamConfig(dsn=str(d["dsn"]), team=str(d["team"]), user=str(d["user"]), device=str(d["device"]),
                          projects={str(k): str(v) for k, v in dict(d.get("projects") or {}).items()},
                          mine=str(d.get("mine") or ""))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TeamError(f"{config_path(paths)} is unreadable ({e}): `kenning team leave`, then join again") from None


def save(paths: Paths, cfg: TeamConfig, password: str | None = None) -> None:
    paths.ensure()
    write_private(config_path(paths), cfg.to_json())
    if password is not None:
        write_private(credential_path(paths), password.encode())


def password(paths: Paths) -> str:
    try:
        with open(credential_path(paths), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def remove(paths: Paths) -> bool:
    gone = False
    for p in (config_path(paths), credential_path(paths)):
        try:
            os.remove(p)
            gone = True
        except FileNotFoundError:
            pass
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
