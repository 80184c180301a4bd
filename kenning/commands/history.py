"""``kenning import-history``: what past Claude Code, Codex and Copilot CLI sessions did, into memory."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kenning.paths import Paths


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("import-history", help="import past Claude Code, Codex and Copilot CLI sessions",
                       description="Read past sessions (~/.claude/projects/*/*.jsonl with subagents, "
                                   "$CODEX_HOME/sessions/**/rollout-*.jsonl, ~/.copilot/session-state/*/events.jsonl), "
                                   "store their events with their "
                                   "original times, and let the observer turn them into memory. Idempotent: "
                                   "a second run adds nothing, a transcript that grew adds only its new turns; "
                                   "sessions the hooks captured live are left alone.")
    s.add_argument("--since", metavar="DATE", help="only sessions and events from this ISO date on (local time)")
    s.add_argument("-p", "--project", help="only this project (its name or root folder)")
    s.add_argument("--agent", dest="agents", action="append", choices=("claude-code", "codex", "copilot"),
                   help="only this agent's history (repeatable; default all)")
    s.add_argument("--dry-run", action="store_true", help="count what would be imported; store nothing")
    s.add_argument("--no-observe", action="store_true", help="store the events; leave observing to the worker later")
    s.set_defaults(func=cmd_import_history)


def cmd_import_history(args: argparse.Namespace) -> int:
    from kenning.commands.search import _local_time
    from kenning.history import importer
    from kenning.settings import load

    paths = Paths()
    settings, problems = load(paths)
    for p in problems:
        print(f"settings: {p}", file=sys.stderr)
    since = _local_time(args.since, "--since")
    agents = tuple(args.agents or importer.READERS)
    files = importer.discover(agents)
    bar = _bar(sum(f.size for f in files), "reading")
    done_bytes = [0]

    def progress(f: Any, t: importer.Totals) -> None:
        if bar is not None:
            bar.update(f.size)
            bar.set_postfix(sessions=t.sessions, events=t.events, refresh=False)
        done_bytes[0] += f.size

    totals = importer.run(paths, settings, agents=agents, since=since, project=args.project, dry_run=args.dry_run,
                          progress=progress)
    if bar is not None:
        bar.close()
    verb = "Would import" if args.dry_run else "Imported"
    per = ", ".join(f"{_label(a)} {n}" for a, n in sorted(totals.per_agent.items())) or "none"
    print(f"{verb} {totals.sessions} session(s) ({per}), {totals.events} event(s) "
          f"in {totals.seconds:.1f} s from {totals.files} file(s)"
          + (f"; {totals.already} event(s) were stored already" if totals.already else ""))
    skipped = [f"{totals.unchanged} unchanged since the last import" if totals.unchanged else "",
               f"{totals.live} captured live by the hooks" if totals.live else "",
               f"{totals.excluded} in excluded projects" if totals.excluded else "",
               f"{totals.filtered} outside --project/--since" if totals.filtered else ""]
    if any(skipped):
        print("Skipped: " + "; ".join(s for s in skipped if s))
    _problems(totals)
    if totals.joined:
        print(f"Joined {len(totals.joined)} checkout(s) to the project of the same repository "
              "(`kenning doctor` lists every join):")
        for line in totals.joined:
            print(f"  {line}")
    if args.dry_run or args.no_observe or not totals.events:
        return 0
    start = importer.pending_count(paths)
    obs_bar = _bar(start, "observing", unit="event")

    def observed(left: int) -> None:
        if obs_bar is not None:
            obs_bar.n = max(0, start - left)
            obs_bar.refresh()

    left = importer.observe(paths, progress=observed)
    if obs_bar is not None:
        obs_bar.close()
    if left < 0:
        print("kenning: the worker did not start: the events wait in the database; `kenning worker start` "
              "observes them", file=sys.stderr)
        return 1
    print("The observer has turned them into memory" + (f" ({left} event(s) of open turns wait)" if left else "")
          + ": `kenning search --since <date>` or `kenning context` shows it.")
    return 0


def _problems(totals: Any) -> None:
    """What could not be read, one line a file and one for the lines, so nothing is skipped unsaid."""
    if totals.not_read:
        print(f"Not read: {len(totals.not_read)} path(s) (only regular files are read):")
        for path, why in totals.not_read:
            print(f"  {path}: {why}")
    if totals.bad_lines:
        n = sum(totals.bad_lines.values())
        print(f"Unreadable lines skipped: {n} (" + "; ".join(f"{c} {why}" for why, c in
                                                       sorted(totals.bad_lines.items())) + ")")
    if totals.cut_deep:
        print(f"Cut: {totals.cut_deep} line(s) nested deeper than the levels kept (the deeper part left out)")


def _label(agent: str) -> str:
    from kenning.integrations import LABELS

    return LABELS.get(agent, agent)


def _bar(total: int | None, desc: str, unit: str = "B") -> Any:
    """A tqdm bar on a terminal (counts, rate and time left); None elsewhere or without tqdm."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000,
                leave=False, file=sys.stderr)
