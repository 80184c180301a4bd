"""``kenning team join | mine | status | push | pull | sync | leave``: this machine's memberships.

A machine may be in several teams, on one hub or several (kenning/team/config.py): each has its own DSN,
member, credential and projects; a repository is shared with one team only, and the user's own space
(``mine``) goes with one membership. Commands that talk to the hubs do so per team: one hub that cannot be
reached is reported for its team and the others go on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kenning.paths import Paths


def _err(msg: str, code: int = 2) -> int:
    print(f"kenning: {msg}", file=sys.stderr)
    return code


def cmd_join(args: argparse.Namespace) -> int:
    from kenning.project import find_root, git_remote
    from kenning.team import config, hub
    from kenning.team.config import TeamConfig, TeamError

    paths = Paths()
    try:
        teams = config.load_all(paths)
        name, root = find_root(os.getcwd())
        remote = git_remote(root) if root else ""
        if not remote:
            return _err("run `kenning team join` inside a git checkout with a remote: the remote names the project "
                        "on every machine")
        if args.dsn and not args.team:
            return _err("--dsn needs --team: the team this machine joins on that hub")
        cfg = _target(teams, args.team, remote)
        pw = None
        if cfg is None or (args.dsn and args.dsn != cfg.dsn):
            if not (args.dsn and args.team):
                return _err(f"the first join of a team needs --dsn and --team (this machine is in: "
                            f"{config.names(teams) or 'no team'})")
            if not config.TEAM_NAME.match(args.team):
                return _err(f"{args.team!r} is not a team name (lower-case letters, digits, _)")
            new = TeamConfig(dsn=args.dsn, team=args.team, user="", device=config.device(paths),
                             projects=dict(cfg.projects) if cfg else {}, mine=cfg.mine if cfg else "")
            config.check_joinable(teams, new, remote)  # before any password is asked for
            parts = hub.check_dsn(args.dsn)
            new.user = parts.get("user") or ""
            if not new.user:
                return _err("the DSN names no user: add user=<your member role>")
            pw = config.read_password(sys.stdin.isatty())
            conn = hub.connect(args.dsn, pw)
            try:
                if not conn.execute("SELECT kenning.is_member(%s)", (args.team,)).fetchone()[0]:
                    return _err(f"{new.user} is not a member of team {args.team} on this hub")
                if hub.not_granted(conn, args.team, [remote]):
                    return _err(f"{new.user} may not share {remote} in team {args.team}: the admin grants it "
                                "(`kenning team grant --project`)")
            finally:
                conn.close()
            cfg = new
        config.check_joinable(teams, cfg, remote)
        from kenning.memory_service import MemoryService
        from kenning.project import project_key
        from kenning.store.db import open_db

        paths.ensure()
        conn = open_db(paths.db)
        try:
            cfg.projects[remote] = MemoryService(conn, "team").team_joined(
                cfg.team, project_key(root, name), name=name, root=root, remote=remote)
        finally:
            conn.close()
        config.save(paths, cfg, pw)
    except TeamError as e:
        return _err(str(e))
    print(f"joined team {cfg.team} as {cfg.user}: project {remote} is shared (standing rules and key memories; "
          "never your personal preferences, prompts or transcripts)")
    return 0


def _target(teams: list[Any], team: str | None, remote: str) -> Any:
    """The membership a join adds this repository to: ``team``'s, the one that shares it already (a rejoin), or
    the only one; None when it is a team this machine is not in yet."""
    from kenning.team import config
    from kenning.team.config import TeamError

    if team:
        return next((c for c in teams if c.team == team), None)
    found = config.owner(teams, remote)
    if found is not None or len(teams) < 2:
        return found or (teams[0] if teams else None)
    raise TeamError(f"this machine is in several teams ({config.names(teams)}): name the one this repository "
                    "joins with --team")


def cmd_mine(args: argparse.Namespace) -> int:
    from kenning.team import config, hub
    from kenning.team.config import TeamError

    paths = Paths()
    try:
        teams = config.load_all(paths)
        if not teams:
            return _err("join a team first (`kenning team join`): your space uses the same hub and credential")
        if len(teams) > 1 and not args.through:
            return _err(f"this machine is in several teams ({config.names(teams)}): name the one whose hub holds "
                        "your space with --through TEAM")
        cfg = config.load(paths, args.through)
        assert cfg is not None
        if any(args.team == c.team for c in teams):
            return _err(f"{args.team} is a team of yours: your own space is another one, whose only member is you")
        other = next((c for c in teams if c.mine and c.team != cfg.team), None)
        if other is not None:
            return _err(f"your own space is {other.mine} already, through team {other.team}: one space per machine")
        conn = hub.connect(cfg.dsn, config.password(paths, cfg.team))
        try:
            row = conn.execute("SELECT auto_approve FROM kenning.teams WHERE name = %s", (args.team,)).fetchone()
            others = conn.execute("SELECT count(DISTINCT author) FROM kenning.memories WHERE team = %s "
                                  "AND author != %s", (args.team, cfg.user)).fetchone()[0]
        finally:
            conn.close()
        if row is None:
            return _err(f"{cfg.user} is not a member of {args.team} on this hub")
        if others:
            return _err(f"{args.team} holds memories of others: it is a team, not your own space")
        cfg.mine = args.team
        config.save(paths, cfg)
        _reset_cursor(paths, args.team)
    except TeamError as e:
        return _err(str(e))
    print(f"your preferences go to {args.team} and come from it on every machine that joins it"
          + ("" if row[0] else " (it is not set to approve automatically: approve them from another machine)"))
    return 0


def _reset_cursor(paths: Paths, team: str) -> None:
    if not os.path.exists(paths.db):
        return
    from kenning.memory_service import MemoryService
    from kenning.store.db import open_db

    conn = open_db(paths.db)
    try:
        MemoryService(conn, "team").team_left(team)
    finally:
        conn.close()


def cmd_status(args: argparse.Namespace) -> int:
    from kenning.team import config
    from kenning.team.doctor import restriction_text, waiting, waits_text
    from kenning.team.worker import read_status

    paths = Paths()
    try:
        teams = [c for c in config.load_all(paths) if not args.team or c.team == args.team]
        if args.team and not teams:
            config.load(paths, args.team)  # says this machine is not in it
    except config.TeamError as e:
        return _err(str(e))
    if not teams:
        print("no team: `kenning team join --dsn … --team …` in a repository (docs/team.md)")
        return 0
    out: list[dict[str, Any]] = []
    waits = []
    for cfg in teams:
        w = waiting(paths, cfg)
        waits.append(w)
        st = read_status(paths, cfg.team)
        out.append({"team": cfg.team, "user": cfg.user, "projects": sorted(cfg.projects), "mine": cfg.mine or None,
                    "restricted_to": st.get("granted"),
                    "waiting": {"operations": w.ops, "edits_and_pins": w.changes, "refused": w.refused},
                    "last_sync": st})
    if args.json:
        print(json.dumps({"device": teams[0].device, "teams": out}, indent=1))
        return 0
    for cfg, o, w in zip(teams, out, waits, strict=True):
        print(f"team {cfg.team} as {cfg.user} (device {cfg.device}); projects: {', '.join(sorted(cfg.projects))}")
        if cfg.mine:
            print(f"  your own space: {cfg.mine}")
        if restriction_text(o["restricted_to"]):
            print(f"  {restriction_text(o['restricted_to'])}")
        print(f"  {waits_text(w)}")
        last: dict[str, Any] = o["last_sync"]
        if last:
            age = time.time() - float(str(last.get("at") or 0))
            print(f"  last sync {age:.0f} s ago: " + ("ok" if last.get("ok") else f"failed ({last.get('error')})"))
            refused = last.get("refused")
            for line in refused if isinstance(refused, list) else []:
                print(f"    refused: {line}")
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    from kenning.store.db import open_db
    from kenning.team import config, sync
    from kenning.team.config import TeamError

    paths = Paths()
    at = time.time()
    try:
        if not config.load_all(paths):  # before the database is opened: a machine with no team has none yet
            raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` in a repository")
    except TeamError as e:
        return _err(str(e), 1)
    conn = open_db(paths.db)
    try:
        each = sync.every(paths, conn, do_push=args.push, do_pull=args.pull, team=args.team)
    except TeamError as e:
        return _err(str(e), 1)
    finally:
        conn.close()
    if args.push and args.pull:  # a whole round, as the worker's: `team status` tells it
        from kenning.team.worker import note

        for team, outcome in each.items():
            note(paths, team, outcome, at)
    reports = {t: r for t, r in each.items() if isinstance(r, sync.Report)}
    failed = {t: str(r) for t, r in each.items() if not isinstance(r, sync.Report)}
    total = sync.Report()
    for r in reports.values():
        total.pushed, total.pulled = total.pushed + r.pushed, total.pulled + r.pulled
        total.forgotten, total.superseded = total.forgotten + r.forgotten, total.superseded + r.superseded
        total.refused += r.refused
    if args.json:
        # The totals first (what one team's round printed before), then each team's round or why it failed.
        print(json.dumps({**{k: v for k, v in total.as_dict().items() if k != "granted"},
                          "teams": {t: ({"ok": True, **r.as_dict()} if isinstance(r, sync.Report)
                                        else {"ok": False, "error": str(r)}) for t, r in each.items()}}))
    else:
        for team, r in reports.items():
            print((f"{team}: " if len(each) > 1 else "") + f"pushed {r.pushed}, pulled {r.pulled}, "
                  f"forgotten {r.forgotten}, superseded {r.superseded}")
    for line in total.refused:
        print(f"refused: {line}", file=sys.stderr)
    for team, why in failed.items():  # said per team; the others' rounds went on
        print(f"kenning: team {team}: {why}", file=sys.stderr)
    return 1 if failed else 0


def cmd_leave(args: argparse.Namespace) -> int:
    from kenning.team import config

    paths = Paths()
    try:
        teams = config.load_all(paths)
    except config.TeamError as e:
        if args.all:
            config.remove_unreadable(paths)
            print("left every team; memories already pulled stay until you forget them")
            return 0
        return _err(str(e))
    if args.all or args.team:
        leaving = [c for c in teams if args.all or c.team == args.team]
        if args.team and not leaving:
            return _err(f"this machine is not in team {args.team}" + (f" (its teams: {config.names(teams)})"
                                                                        if teams else ""))
    elif len(teams) > 1:
        return _err(f"this machine is in several teams: {config.names(teams)}. Leave one with --team NAME (or "
                    "every one with --all)")
    else:
        leaving = teams
    if not leaving:
        print("no team to leave")
        return 0
    for cfg in leaving:
        for space in (cfg.team, cfg.mine):
            if space:
                _reset_cursor(paths, space)
        config.remove(paths, cfg.team)
        print(f"left team {cfg.team}; memories already pulled stay until you forget them")
    return 0
