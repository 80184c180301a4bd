"""``kenning team``: share standing rules and key memories with a team through a PostgreSQL hub.

init (schema, roles, team, members: one command on a database the team already has), grant and revoke
(restrict a member to some of the team's projects), join (this machine, this repository), status, push,
pull, sync, review (approve, reject or edit, with a word diff), leave. Passwords come from
``KENNING_HUB_PASSWORD`` or stdin, never from the command line (docs/team.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kenning.commands.team_membership import cmd_join, cmd_leave, cmd_mine, cmd_status, cmd_sync
from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("team", help="share rules and key memories with a team through a PostgreSQL hub",
                       description="Team memory on a PostgreSQL server the team already runs (docs/team.md).")
    ts = t.add_subparsers(dest="team_command", metavar="ACTION")
    t.set_defaults(func=lambda a: (t.print_help(), 2)[1])

    s = ts.add_parser("init", help="create the hub's schema, roles and a team on an existing database",
                      description="Create the hub's schema and roles, the team, and a login role per member (each "
                                  "gets a generated password, written 0600 to the data dir to hand over). The admin "
                                  "password comes from KENNING_HUB_PASSWORD or stdin.")
    s.add_argument("--dsn", required=True, help="PostgreSQL connection string of an admin role, without password")
    s.add_argument("--team", required=True, help="team name (lower-case letters, digits, _)")
    s.add_argument("--member", action="append", default=[], metavar="NAME", help="a member's login role (repeat)")
    s.add_argument("--remove-member", action="append", default=[], metavar="NAME",
                   help="take a member out of the team: they read none of its rows from then on (repeat)")
    s.add_argument("--auto-approve", action="store_true", help="new team memories are approved without review")
    s.add_argument("--projects", metavar="REMOTE[,REMOTE]",
                   help="the members named here see, write and review only these projects of the team (their git "
                        "remotes); without it a member has the whole team")
    s.set_defaults(func=cmd_init)

    for name, what, desc in (
            ("grant", "let a member see only some of the team's projects (or --all-projects again)",
             "Restrict a member to some of the team's projects (a contractor on one repository): from then on they "
             "read, write and review the rows of the projects granted only, enforced by the hub. Repeat to add "
             "projects; --all-projects gives the whole team back. The admin password comes from "
             "KENNING_HUB_PASSWORD or stdin."),
            ("revoke", "take projects off a restricted member",
             "Take projects off a member restricted with `grant`: they read none of their rows from then on (with "
             "none left, no project of the team). The admin password comes from KENNING_HUB_PASSWORD or stdin.")):
        s = ts.add_parser(name, help=what, description=desc)
        s.add_argument("--dsn", required=True, help="PostgreSQL connection string of an admin role, without password")
        s.add_argument("--team", required=True, help="team name")
        s.add_argument("--member", required=True, metavar="NAME", help="the member's login role")
        g = s.add_mutually_exclusive_group(required=True)
        g.add_argument("--project", action="append", metavar="REMOTE",
                       help="a project: its git remote, as `git remote get-url origin` prints it (repeat)")
        if name == "grant":
            g.add_argument("--all-projects", action="store_true", help="every project of the team again")
        s.set_defaults(func=cmd_grant, revoke=name == "revoke")

    s = ts.add_parser("join", help="join a team with this machine and share this repository's memories",
                      description="Join the team with this machine's member credential (KENNING_HUB_PASSWORD or "
                                  "stdin) and add the repository of the current directory (its git remote names "
                                  "the project on every machine). A machine may be in several teams, on one hub "
                                  "or several; a repository is shared with one team only.")
    s.add_argument("--dsn", help="the hub, with your member role as user, without password (first join of a team)")
    s.add_argument("--team", help="team name (first join of a team; then, when this machine is in several teams, "
                                  "the one this repository joins)")
    s.set_defaults(func=cmd_join)

    s = ts.add_parser("mine", help="share your own preferences across your machines through your space on the hub",
                      description="Your preferences for all your work (said in any project) go to your own space on "
                                  "the hub (a team whose only member is you, made with `init --auto-approve`) and "
                                  "are told on every machine that joins it. Never to the team.")
    s.add_argument("--team", required=True, metavar="SPACE", help="your own space's name on the hub")
    s.add_argument("--through", metavar="TEAM", help="the team whose hub and credential hold your space (when this "
                                                     "machine is in several teams)")
    s.set_defaults(func=cmd_mine)

    s = ts.add_parser("status", help="each team, its projects, the last sync and what waits to be pushed")
    s.add_argument("--team", help="this team only (default: every team this machine is in)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.set_defaults(func=cmd_status)

    for name, what in (("push", "send this machine's shareable memories now"),
                       ("pull", "take the team's approved memories now"), ("sync", "push, then pull, now")):
        s = ts.add_parser(name, help=what, description=f"{what[0].upper()}{what[1:]}, with each team this machine "
                                                       "is in (one hub that cannot be reached does not stop the "
                                                       "others; the command then exits 1).")
        s.add_argument("--team", help="this team only (default: every team this machine is in)")
        s.add_argument("--json", action="store_true", help="print the result as JSON")
        s.set_defaults(func=cmd_sync, push=name != "pull", pull=name != "push")

    s = ts.add_parser("review", help="list memories waiting for review, with the diff against what each replaces; "
                                     "approve, reject or edit one",
                      description="Without options: list pending memories, each with a word diff against what it "
                                  "replaces. A memory is scanned for secrets again before it is approved; an edit "
                                  "(--title, --text-file, or 'e' in --interactive) is scanned too, and the team is "
                                  "told the edited wording.")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--approve", metavar="GID", help="approve the memory with this global id")
    g.add_argument("--reject", metavar="GID", help="reject the memory with this global id")
    g.add_argument("--interactive", "-i", action="store_true",
                   help="walk through the waiting memories and answer each: approve, reject, edit, skip, quit "
                        "(answers read from stdin, so a script can give them)")
    s.add_argument("--title", help="with --approve: approve with this title instead of the author's")
    s.add_argument("--text-file", metavar="FILE",
                   help="with --approve: approve with the text in FILE instead of the author's ('-': stdin)")
    s.add_argument("--team", help="this team only (default: every team this machine is in; a decision goes to the "
                                  "team whose hub has the memory)")
    s.add_argument("--json", action="store_true", help="print the pending memories as JSON")
    s.set_defaults(func=cmd_review)

    s = ts.add_parser("leave", help="stop syncing with a team and remove this machine's credential for it",
                      description="Leave one team (the others stay). When this machine is in several, name it with "
                                  "--team; --all leaves every one.")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--team", help="the team to leave")
    g.add_argument("--all", action="store_true", help="leave every team (also when team.json cannot be read)")
    s.set_defaults(func=cmd_leave)


def _err(msg: str, code: int = 2) -> int:
    print(f"kenning: {msg}", file=sys.stderr)
    return code


def cmd_init(args: argparse.Namespace) -> int:
    from kenning.paths import write_private
    from kenning.team import hub
    from kenning.team.config import TeamError, read_password

    paths = Paths()
    if args.projects and not args.member:
        return _err("--projects restricts the members named with --member in the same command: name them")
    try:
        conn = hub.connect(args.dsn, read_password(sys.stdin.isatty(), "admin password: "))
        try:
            made = hub.init(conn, args.team, auto_approve=args.auto_approve, members=args.member,
                            removed=args.remove_member,
                            projects=[p for p in args.projects.split(",") if p.strip()] if args.projects else None)
        finally:
            conn.close()
    except TeamError as e:
        return _err(str(e))
    print(f"team {args.team}: schema and roles ready{' (automatic approval)' if args.auto_approve else ''}")
    if made:
        paths.ensure()
        out = os.path.join(paths.root, f"team-{args.team}-members.json")
        write_private(out, json.dumps(made, indent=1).encode())
        print(f"new members' passwords are in {out} (0600): hand each its own privately, then delete the file")
    return 0


def cmd_grant(args: argparse.Namespace) -> int:
    from kenning.team import hub
    from kenning.team.config import TeamError, read_password

    try:
        conn = hub.connect(args.dsn, read_password(sys.stdin.isatty(), "admin password: "))
        try:
            if args.revoke:
                left: list[str] | None = hub.revoke(conn, args.team, args.member, args.project)
            else:
                left = hub.grant(conn, args.team, args.member, None if args.all_projects else args.project)
        finally:
            conn.close()
    except TeamError as e:
        return _err(str(e))
    if left is None:
        print(f"{args.member} sees every project of team {args.team}")
    else:
        print(f"{args.member} sees only these projects of team {args.team}: {', '.join(left) or 'none'}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from kenning.team import review
    from kenning.team.config import TeamError

    paths = Paths()
    if (args.title is not None or args.text_file) and not args.approve:
        return _err("--title and --text-file edit a memory at its approval: give them with --approve GID")
    try:
        if args.approve or args.reject:
            gid = args.approve or args.reject
            text = None
            if args.text_file:
                text = sys.stdin.read() if args.text_file == "-" else _read_text(args.text_file)
            done = review.decide(paths, gid, "approved" if args.approve else "rejected", title=args.title, text=text,
                                 team=args.team)
            print(done, gid, *(["with your edit"] if args.title is not None or text is not None else []))
            return 0
        each = review.waiting_each(paths, args.team)
        if not each:
            raise TeamError("this machine joined no team: `kenning team join --dsn … --team …` (docs/team.md)")
    except (TeamError, OSError, UnicodeDecodeError) as e:
        return _err(str(e))
    failed = [(cfg.team, found) for cfg, found in each if isinstance(found, str)]
    if len(failed) == len(each):
        return _err("; ".join(f"team {t}: {why}" if len(each) > 1 else why for t, why in failed))
    for team, why in failed:  # one hub down: the others' lists are still shown
        print(f"kenning: team {team}: {why}", file=sys.stderr)
    waiting = [{**m, "team": cfg.team} for cfg, found in each if not isinstance(found, str) for m in found]
    users = {cfg.team: cfg.user for cfg, _found in each}
    if args.json:
        print(json.dumps(waiting, indent=1, ensure_ascii=False))
    elif args.interactive:
        return _walk(paths, users, waiting) or int(bool(failed))
    else:
        for cfg, found in each:
            if isinstance(found, str):
                continue
            if len(each) > 1:
                print(f"team {cfg.team} (as {cfg.user}):")
            for m in found:
                _show(m)
            if not found:
                print("nothing waits for review")
    return 1 if failed else 0


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read(64_000)  # far past MAX_TEXT: the length check says how long it was


def _show(m: dict[str, Any], *, full: bool = False) -> None:
    """One waiting memory, and for each memory it replaces the word diff of title and text ([-old-]{+new+},
    in colour on a terminal)."""
    from kenning.team.diff import changed, marked

    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    day = time.strftime("%Y-%m-%d", time.localtime(m["created_at"]))
    print(f"{m['gid']}  [{m['layer']}] {m['title']}  (from {m['author']}, {day})")
    if full and m["body"] and m["body"] != m["title"]:
        print(f"    text: {m['body']}")
    for old in m["replaces"]:
        print(f"    replaces: {old['title']}")
        if changed(old["title_diff"]):
            print(f"      title: {marked(old['title_diff'], colour=colour)}")
        if changed(old["body_diff"]) and (old["body"], m["body"]) != (old["title"], m["title"]):
            print(f"      text:  {marked(old['body_diff'], colour=colour)}")


def _ask(prompt: str) -> str | None:
    """One line of the reviewer's answer (None at the end of the input)."""
    print(prompt, end="", flush=True)
    line = sys.stdin.readline()
    if not sys.stdin.isatty():
        print(line.rstrip("\n"))  # scripted answers: the transcript reads like a session, one answer a line
    return None if not line else line.rstrip("\n")


def _walk(paths: Paths, users: dict[str, str], waiting: list[dict[str, Any]]) -> int:
    """``--interactive``: each waiting memory, then a/r/e/s/q from stdin. An edit asks for the title (Enter keeps
    it) and the text (lines up to one holding only '.'; a '.' alone keeps it), then approves with them."""
    from kenning.team import review
    from kenning.team.config import TeamError

    if not waiting:
        print("nothing waits for review")
    failed = 0
    for m in waiting:
        _show(m, full=True)
        if m["author"] == users.get(m["team"]):
            print("    yours: a teammate reviews it")
            continue
        while True:
            answer = _ask("[a]pprove, [r]eject, [e]dit then approve, [s]kip, [q]uit? ")
            if answer is None or answer.strip().lower() in ("q", "quit"):
                return 1 if failed else 0
            choice = answer.strip().lower()[:1]
            if choice in ("a", "r", "e", "s"):
                break
            print("answer a, r, e, s or q")
        if choice == "s":
            continue
        title = text = None
        if choice == "e":
            title = _ask(f"title (Enter keeps: {m['title']}): ")
            print("text, ending with a line holding only '.' (a '.' alone keeps it):")
            lines: list[str] = []
            while (line := _ask("")) is not None and line != ".":
                lines.append(line)
            title, text = (title or None), ("\n".join(lines) if lines else None)
            if title is None and text is None:
                print("    nothing edited: approving as it is")
        try:
            done = review.decide(paths, m["gid"], "rejected" if choice == "r" else "approved", title=title, text=text,
                                 team=m["team"])
        except TeamError as e:
            print(f"kenning: {e}", file=sys.stderr)
            failed += 1
            continue
        print(f"    {done}{' with your edit' if title is not None or text is not None else ''}")
    return 1 if failed else 0
