"""What the next session is told about real sessions nobody here wrote: the real-session scorer,
on the development set, with the shipped role model and held out.

    .venv/bin/python bench/real_sessions.py [--write] [--no-heldout] [--transcripts DIR] [--expected FILE]

Runs ``../shared/tools/real_sessions_eval.py`` (it imports the transcripts with ``kenning
import-history`` in a sandbox, offline observer, then scores ``kenning context`` and ``kenning
search`` against ``expected.json``) with this checkout's ``kenning``:

* **shipped**: the role model in the package, trained on labels of these very sessions (an upper
  bound for the observer's part);
* **held out** (two folds): each project scored by a model trained without its labels
  (training/roles/train.py --exclude), the honest figure for sessions of projects it never saw.

Prints context recall, search recall (top 5), the precision proxy (share of context rows that hold
an expected item), contradictions and sizes, overall and per project; ``--write`` puts them in
BENCHMARKS.md. The data stays where it is (its README says what the licences require).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, command_line, md_table, run_header, write_section

SHARED = REPO.parent / "shared"
SCORER = SHARED / "tools" / "real_sessions_eval.py"
DATA = SHARED / "data" / "real-sessions"
EXTRA = REPO.parent / "extra-sessions"  # training/roles/README.md: the extra sessions of other projects
# Folds of the held-out run: transcript folder → the expected.json project it is scored as.
FOLDS = ({"clustercockpit-cc-backend": "cc-backend", "nakamura-shuta-tij": "tij", "jdx-hk": "hk", "jdx-mise": ""},
         {"packmindhub-context-evaluator": "agents-md-evaluator", "teslamint-entirecontext": "entirecontext",
          "entityprocess-agentv": "agentv", "jeffreyca-azure-dev": ""})
TARGETS = {"context_recall": 0.6, "search_recall": 0.85, "context_precision": 0.7}


def score(scorer: Path, transcripts: Path, expected: Path, tmp: str, env: dict[str, str]) -> dict:
    out = os.path.join(tmp, f"result-{time.monotonic_ns()}.json")
    args = [sys.executable, str(scorer), "--kenning", str(Path(sys.executable).parent.parent),
            "--transcripts", str(transcripts), "--expected", str(expected), "--out", out, "--tmp", tmp]
    for k, v in env.items():
        args += ["--env", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=1800, check=False)
    if r.returncode != 0 or not os.path.exists(out):
        raise SystemExit(f"real_sessions_eval failed ({r.returncode}):\n{r.stderr[-2000:]}")
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


def train_without(folders: list[str], out: str, transcripts: Path, extra: Path) -> None:
    """A fold model: train.py with its defaults (the options of the shipped weights), without ``folders``."""
    args = [sys.executable, str(REPO / "training" / "roles" / "train.py"), "--no-cv", "--write", "--out", out,
            "--transcripts", str(transcripts), "--extra", str(extra)]
    for f in folders:
        args += ["--exclude", f]
    r = subprocess.run(args, capture_output=True, text=True, timeout=1800, check=False)
    if r.returncode != 0:
        raise SystemExit(f"training without {folders} failed:\n{r.stderr[-2000:]}")


def combine(parts: list[tuple[dict, set[str]]]) -> dict:
    """One result from several runs: each project's items and rows from the run that held it out."""
    items, projects = [], {}
    for res, names in parts:
        items += [x for x in res["items"] if x["project"] in names]
        projects.update({k: v for k, v in res["by_project"].items() if k in names})
    n = len(items)
    rows = sum(p["context_rows"] for p in projects.values())
    useful = sum(p["context_useful_rows"] for p in projects.values())
    return {"overall": {"items": n, "context_recall": round(sum(x["context"] for x in items) / n, 4),
                        "search_recall": round(sum(x["search"] for x in items) / n, 4),
                        "contradicted": sum(x["contradicted"] for x in items),
                        "context_precision": round(useful / rows, 4) if rows else None,
                        "context_rows": rows, "context_useful_rows": useful,
                        "context_chars": sum(p["context_chars"] for p in projects.values())},
            "by_project": projects}


def table(name: str, res: dict) -> list[str]:
    o = res["overall"]
    return [name, f"{o['context_recall']:.3f}", f"{o['search_recall']:.3f}",
            f"{o['context_precision']:.3f}" if o["context_precision"] is not None else "–",
            str(o["contradicted"]), f"{o['context_useful_rows']}/{o['context_rows']}", f"{o['context_chars']:,}"]


def _extra_note(extra: Path) -> str:
    """The held-out models' training material beyond the development set (training/roles/README.md)."""
    if not extra.is_dir():
        return " The held-out models were trained on the development set's other projects and our own sentences."
    return (" The shipped and the held-out models were trained with train.py's default options on the development "
            "set (the held-out ones on its other projects), our own sentences and the extra sessions of other projects "
            f"in `{extra.name}/` (training/roles/sources.json; not those it marks `\"train\": false`).")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--transcripts", type=Path, default=DATA)
    ap.add_argument("--expected", type=Path, default=DATA / "expected.json")
    ap.add_argument("--scorer", type=Path, default=SCORER, help="real_sessions_eval.py (../shared/tools)")
    ap.add_argument("--extra", type=Path, default=EXTRA, help="the extra sessions the fold models also train on")
    ap.add_argument("--no-heldout", action="store_true", help="only the shipped model")
    ap.add_argument("--write", action="store_true", help="write the results into BENCHMARKS.md")
    a = ap.parse_args()
    if not a.scorer.exists() or not a.transcripts.is_dir():
        raise SystemExit(f"the scorer and data live outside the repository ({a.scorer}, {a.transcripts})")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="kenning-bench-real-") as tmp:
        shipped = score(a.scorer, a.transcripts, a.expected, tmp, {})
        runs = [("shipped model (trained on these sessions)", shipped)]
        if not a.no_heldout:
            parts = []
            for fold in FOLDS:
                weights = os.path.join(tmp, f"roles-{len(parts)}.bin")
                train_without(list(fold), weights, a.transcripts, a.extra)
                parts.append((score(a.scorer, a.transcripts, a.expected, tmp, {"KENNING_ROLE_MODEL": weights}),
                              {v for v in fold.values() if v}))
            runs.append(("held out (each project scored by a model trained without it)", combine(parts)))
    headers = ["role model", "context recall", "search recall (top 5)", "precision proxy", "contradictions",
               "rows holding an item", "context chars"]
    body = [md_table(headers, [table(n, r) for n, r in runs])]
    per = ["project", *(f"{n.split(' (')[0]}: context / search / precision" for n, _ in runs)]
    rows = []
    for name in shipped["by_project"]:
        cells = [name]
        for _n, r in runs:
            p = r["by_project"].get(name)
            cells.append("–" if p is None or not p["items"] else
                         f"{p['context_recall']:.2f} / {p['search_recall']:.2f} / "
                         f"{(p['context_precision'] or 0):.2f}")
        rows.append(cells)
    body.append(md_table(per, rows))
    goals = ", ".join(f"{k.replace('_', ' ')} ≥ {v}" for k, v in TARGETS.items())
    text = "\n\n".join(body)
    print(text)
    print(f"\ntargets (issue 25): {goals}, no contradictions; {time.time() - started:.0f} s")
    if a.write:
        write_section("real_sessions", "\n\n".join([
            "## Real sessions: what the next session is told", run_header(command_line()),
            "Scorer: `../shared/tools/real_sessions_eval.py` on `../shared/data/real-sessions` (53 transcripts "
            "of 8 public projects, 98 expected items; offline observer). Precision proxy: the share of "
            "context rows (`#id`, `S<id>` lines) that hold an expected item; agentv has rows and no items. "
            f"Targets: {goals}, no contradiction." + _extra_note(a.extra), text]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
