"""The worker's team sync thread: a push and a pull with each membership every ``team_sync_seconds``.

Hooks never wait on it and never talk to a hub. Each membership's round runs on a thread of its own, with
its own database connection: a hub that is down, or hangs, delays its own team only. A round that fails is
logged and noted per team in ``<data>/team.status.json`` (``kenning team status`` shows it), and the next
round catches up: nothing unacknowledged is marked sent.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

from kenning.paths import Paths, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.team.sync import Report

log = logging.getLogger("kenning.team")
_status_lock = threading.Lock()


def status_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.status.json")


def read_all(paths: Paths) -> dict[str, dict[str, object]]:
    """The last round of each team (team → outcome); a status file of the single-team versions is its team's."""
    try:
        with open(status_path(paths), encoding="utf-8") as fh:
            out = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(out, dict):
        return {}
    if "teams" not in out:
        return {str(out.get("team") or ""): out} if out else {}
    teams = out["teams"]
    return {str(k): v for k, v in teams.items() if isinstance(v, dict)} if isinstance(teams, dict) else {}


def read_status(paths: Paths, team: str) -> dict[str, object]:
    """The last round of ``team`` ({} before the first); an old single-team status file counts for any team."""
    found = read_all(paths)
    return found.get(team) or found.get("") or {}


def _record(paths: Paths, team: str, state: dict[str, object], teams: list[str]) -> None:
    """Write ``team``'s outcome, keeping the other teams' (of ``teams``: a team left is dropped)."""
    with _status_lock:
        everything = {k: v for k, v in read_all(paths).items() if k in teams}
        everything[team] = state
        write_private(status_path(paths), json.dumps({"teams": everything}).encode())


def note(paths: Paths, team: str, outcome: Report | Exception, at: float) -> dict[str, object]:
    """Record ``team``'s round that started at ``at`` (its Report, or the exception that ended it) in the status
    file, for ``kenning team status`` and ``kenning status``; returns what was recorded."""
    from kenning.team import config

    state: dict[str, object] = {"at": at, "team": team}
    if isinstance(outcome, Exception):  # the hub down, a credential revoked, a driver missing: said, retried later
        state.update(ok=False, error=f"{type(outcome).__name__}: {str(outcome).strip()[:300]}",
                     last_ok=read_status(paths, team).get("last_ok"))
        log.warning("team sync (%s): %s", team, state["error"])
    else:
        state.update(outcome.as_dict(), ok=True, last_ok=at)
    try:
        teams = [c.team for c in config.load_all(paths)]
    except config.TeamError:
        teams = [team]
    _record(paths, team, state, teams)
    return state


def run_team(paths: Paths, team: str) -> dict[str, object]:
    """One round of ``team`` with a connection of its own; the outcome is written to the status file and returned."""
    from kenning.store.db import open_db
    from kenning.team import config, sync

    try:
        cfg = next((c for c in config.load_all(paths) if c.team == team), None)
    except config.TeamError as e:
        log.warning("team sync: %s", e)
        return {}
    if cfg is None:  # left meanwhile
        return {}
    at = time.time()
    conn = open_db(paths.db)
    try:
        outcome: Report | Exception = sync.round_for(paths, conn, cfg)
    except Exception as e:
        outcome = e
    finally:
        conn.close()
    return note(paths, team, outcome, at)


def run_once(paths: Paths) -> dict[str, dict[str, object]]:
    """A round with every membership, one after the other (each failing on its own); team → outcome."""
    from kenning.team import config

    if not os.path.exists(config.config_path(paths)):
        return {}
    try:
        teams = [c.team for c in config.load_all(paths)]
    except config.TeamError as e:
        log.warning("team sync: %s", e)
        return {}
    return {team: run_team(paths, team) for team in teams}


class SyncThread(threading.Thread):
    """Every ``interval``, starts a round for each membership whose previous round has finished."""

    def __init__(self, paths: Paths, interval: float) -> None:
        super().__init__(name="kenning-team-sync", daemon=True)
        self.paths = paths
        self.interval = interval
        self.stopping = threading.Event()
        self.rounds: dict[str, threading.Thread] = {}

    def run(self) -> None:
        from kenning.team import config

        while not self.stopping.wait(self.interval):
            if not os.path.exists(config.config_path(self.paths)):
                continue
            try:
                teams = [c.team for c in config.load_all(self.paths)]
            except config.TeamError as e:
                log.warning("team sync: %s", e)
                continue
            for team in teams:
                busy = self.rounds.get(team)
                if busy is not None and busy.is_alive():
                    continue  # its hub is slow: its next round waits, the other teams' do not
                t = threading.Thread(target=run_team, args=(self.paths, team), name=f"kenning-team-sync-{team}",
                                     daemon=True)
                self.rounds[team] = t
                t.start()

    def stop(self) -> None:
        self.stopping.set()
