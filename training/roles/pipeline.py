"""How much of what the whole offline observer keeps is worth keeping, on projects the role model never saw.

  python training/roles/pipeline.py [--extra DIR] [--json FILE] [--list]

The role model's own numbers (train.py) judge sentences one at a time; what a user gets is what the
observer makes of them after its gates (a task is no rule, a weighed choice no decision, …). This
imports the labelled sessions of the extra projects that training leaves out (sources.json,
``"train": false``) into a throw-away data folder with `kenning import-history` (offline observer,
the shipped model), then joins every current memory of the key and rule layers to the label of the
sentence it rests on (its ``why``: the unit id is a hash of project and text, training/roles/extract.py).
It reports, per layer and kind, how many of those memories rest on a sentence labelled worth keeping
(any role but ``noise``, ``change`` and ``status``), and the same among those each project's session-start
context lists (``kenning context``). ``--list`` prints each memory with its label (text of
the transcripts: read it, never copy it into the repository). Nothing is written but ``--json``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from extract import unit_id  # noqa: E402
from train import DEFAULT_EXTRA, load_labels, not_trained_on  # noqa: E402

KEEPERS = frozenset({"rule", "decision", "rootcause", "fix", "gotcha", "todo", "fact"})


def _last_time(path: str) -> float | None:
    """The last timestamp in a transcript (its copy gets it as mtime: a fresh one reads as still written)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for line in reversed(lines):
        try:
            ts = json.loads(line).get("timestamp")
            return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except (ValueError, AttributeError, TypeError):
            continue
    return None


def place(paths: list[str], claude: str, codex: str) -> int:
    """Copy transcripts where the importer looks: Codex rollouts under sessions/, Claude Code under projects/."""
    for n, path in enumerate(paths):
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
        if '"session_meta"' in first:
            dest = os.path.join(codex, "sessions", "2026", "01", "01", f"rollout-{n:03d}-" + os.path.basename(path))
        else:
            dest = os.path.join(claude, "projects", f"p{n:03d}", os.path.basename(path))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(path, dest)
        at = _last_time(path)
        if at:
            os.utime(dest, (at, at))
    return len(paths)


def sessions(extra: str, projects: set[str]) -> list[str]:
    """The transcripts of the labelled sessions of ``projects`` (label files are named <project>--<session>)."""
    out = []
    for f in sorted(glob.glob(os.path.join(HERE, "labels", "*.tsv"))):
        project, _, session = os.path.basename(f)[:-4].partition("--")
        if project in projects:
            out += sorted(glob.glob(os.path.join(extra, project, "**", f"*{session}*.jsonl"), recursive=True))
    return out


def memories(db: str) -> list[tuple[int, str, str, str, str, str]]:
    """(id, project, layer, kind, the sentence it rests on, title) of every current key and rule memory."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT id, project, layer, kind, why, title FROM observations WHERE status = 'active' "
                           "AND layer IN ('key', 'rule')").fetchall()
    finally:
        con.close()
    out = []
    for oid, project, layer, kind, why, title in rows:
        try:
            said = json.loads(why).get("said", "") if why else ""
        except ValueError:
            said = ""
        out.append((oid, project or "", layer, kind or "", said, title))
    return out


SHOWN_ROW = re.compile(r"^#(\d+) ", re.M)


def shown(kenning: str, env: dict[str, str], cwd: str, projects: set[str]) -> set[int]:
    """The ids of the memories each project's session-start context lists (``kenning context``)."""
    out: set[int] = set()
    for project in sorted(projects):
        r = subprocess.run([kenning, "context", "--project", project], env=env, cwd=cwd, capture_output=True,
                           text=True, timeout=120, check=False)
        if r.returncode != 0:
            print(f"kenning context --project {project} exited {r.returncode}: {(r.stderr or r.stdout)[-300:]}",
                  file=sys.stderr)
        out |= {int(m) for m in SHOWN_ROW.findall(r.stdout)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extra", default=DEFAULT_EXTRA)
    ap.add_argument("--kenning", default=os.path.join(os.path.dirname(sys.executable), "kenning"))
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--list", action="store_true", help="print every memory with its label")
    a = ap.parse_args()
    held = not_trained_on()
    paths = sessions(a.extra, held)
    if not paths:
        print(f"no labelled sessions of {sorted(held)} under {a.extra} (training/roles/sources.py rebuild)")
        return 2
    labels = load_labels()
    root = tempfile.mkdtemp(prefix="kenning-pipeline-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "CLAUDE", "CODEX_", "XDG_"))}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env.update(HOME=os.path.join(root, "home"), CLAUDE_CONFIG_DIR=os.path.join(root, "claude"),
               CODEX_HOME=os.path.join(root, "codex"), XDG_CONFIG_HOME=os.path.join(root, "config"),
               XDG_DATA_HOME=os.path.join(root, "share"), XDG_CACHE_HOME=os.path.join(root, "cache"),
               XDG_STATE_HOME=os.path.join(root, "state"), KENNING_DATA_DIR=os.path.join(root, "data"),
               KENNING_PORT=str(port), KENNING_PROVIDER="rules")
    try:
        place(paths, env["CLAUDE_CONFIG_DIR"], env["CODEX_HOME"])
        t0 = time.monotonic()
        r = subprocess.run([a.kenning, "import-history"], env=env, cwd=root, capture_output=True, text=True,
                           timeout=1800, check=False)
        if r.returncode != 0:
            print(f"import-history exited {r.returncode}: {(r.stderr or r.stdout)[-400:]}")
            return 1
        took = time.monotonic() - t0
        found = memories(os.path.join(env["KENNING_DATA_DIR"], "kenning.db"))
        told = shown(a.kenning, env, root, {project for _i, project, *_rest in found})
    finally:
        subprocess.run([a.kenning, "worker", "stop"], env=env, cwd=root, capture_output=True, timeout=30, check=False)
        shutil.rmtree(root, ignore_errors=True)
    counts: Counter[tuple[str, str, str]] = Counter()
    in_context: Counter[str] = Counter()
    for oid, _project, layer, kind, said, title in found:
        label = next((labels[u][0] for p in held if (u := unit_id(p, said)) in labels), None) if said else None
        verdict = "unlabelled" if label is None else "worth" if label in KEEPERS else "not"
        counts[(layer, kind, verdict)] += 1
        if oid in told:
            in_context[verdict] += 1
        if a.list:
            print(f"{label or '?':10s} {layer}/{kind:9s} {'shown' if oid in told else '     '} | {title[:160]}")
    result: dict[str, object] = {"sessions": len(paths), "projects": sorted(held), "import_seconds": round(took, 1)}
    groups = sorted({(layer, kind) for layer, kind, _ in counts})
    by_kind = {}
    for layer, kind in groups:
        w, n, u = (counts[(layer, kind, v)] for v in ("worth", "not", "unlabelled"))
        by_kind[f"{layer}/{kind}"] = {"memories": w + n + u, "worth": w, "not": n, "unlabelled": u}
    total_w = sum(v for (_l, _k, verdict), v in counts.items() if verdict == "worth")
    total_n = sum(v for (_l, _k, verdict), v in counts.items() if verdict == "not")
    result.update(by_kind=by_kind, worth=total_w, labelled=total_w + total_n,
                  share_worth=round(total_w / max(1, total_w + total_n), 3))
    print(f"{len(paths)} sessions of {', '.join(sorted(held))} (never trained on), imported in {took:.0f} s")
    for name, c in by_kind.items():
        print(f"  {name:18s} {c['memories']:3d} memories, {c['worth']:3d} rest on a sentence worth keeping"
              + (f" ({c['unlabelled']} unlabelled)" if c["unlabelled"] else ""))
    print(f"worth keeping: {total_w} of {total_w + total_n} labelled = {result['share_worth']}")
    cw, cn = in_context["worth"], in_context["not"]
    result.update(shown_worth=cw, shown_labelled=cw + cn, shown_share_worth=round(cw / max(1, cw + cn), 3))
    print(f"shown at session start: {cw} of {cw + cn} labelled = {result['shown_share_worth']}"
          + (f" ({in_context['unlabelled']} unlabelled)" if in_context["unlabelled"] else ""))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
