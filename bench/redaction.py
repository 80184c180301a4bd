"""Secret redaction: corpus recall and false positives, per-payload cost, and hook latency with real payloads.

    .venv/bin/python bench/redaction.py [--rounds N] [--against REF] [--write]

1. The corpus of ``tests/security/corpus.py`` through ``Redactor.payload`` (the hook's path):
   recall over the secrets, share of look-alikes changed.
2. In-process cost of the hook's cleaning step (``kenning.hook.main._clean``: strip tags,
   truncate, redact) per payload, median of many runs: real Claude Code payloads
   (``permission_mode: bypassPermissions``), a Read of a real 20 KB source file, a 5 KB Write,
   a 20 KB Read of a config file (the credential-file profile), next to what ``import re`` and
   ``import enum`` cost a fresh process (what the fast path saves).
   With ``--against REF``, the same step of that commit's ``kenning/`` on the same payloads, in child
   processes taking turns with this tree's (medians of medians, and their ratio): the number that
   says whether a change to the redactor made the hook's work slower, free of process start-up noise.
3. Wall time of real PostToolUse hook processes (the registered ``-I -c`` form, worker down)
   with those payloads, next to ``python -I -S -c pass`` in the same interleaved rounds; with
   ``--against REF`` also the hook of another commit (its ``kenning/`` unpacked by ``git
   archive`` into a temporary folder) on the same payloads.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import PYTHON, REPO, command_line, fmt, md_table, run_header, summary_ms, write_section

from kenning.integrations.claude_code import HOOK_ENTRY

FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
SOURCE_20K = REPO / "kenning" / "hook" / "main.py"  # ordinary Python, ~19 KB
FLOOR = [PYTHON, "-I", "-S", "-c", "pass"]


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / "print-mode" / "events" / name).read_text())["stdin"]


def read_payload(path: Path, content: str) -> dict[str, Any]:
    p = fixture("PostToolUse.Read.json")
    lines = content.count("\n") + 1
    return {**p, "tool_input": {"file_path": str(path)},
            "tool_response": {"type": "text", "file": {"filePath": str(path), "content": content, "numLines": lines,
                                                       "startLine": 1, "totalLines": lines}}}


def config_text(size: int = 20_000) -> str:
    """A long, ordinary configuration file (no secret in it): settings, URLs, ids, comments."""
    out, i = [], 0
    while sum(map(len, out)) < size:
        out.append(f"# service {i}\nSERVICE_{i}_URL=https://svc{i}.internal.example:8443/api/v{i % 3}\n"
                   f"SERVICE_{i}_TIMEOUT_MS={1000 + i}\nSERVICE_{i}_REGION=eu-west-{i % 3 + 1}\n"
                   f"SERVICE_{i}_FEATURE_FLAGS=search,export,beta-{i}\n")
        i += 1
    return "".join(out)[:size]


def payloads() -> dict[str, dict[str, Any]]:
    source = SOURCE_20K.read_text()[:20_000]
    write = fixture("PostToolUse.Write.json")
    content = source[:5_000]
    write = {**write, "tool_input": {**write["tool_input"], "content": content},
             "tool_response": {**write["tool_response"], "content": content}}
    return {
        "PostToolUse Bash (real payload, bypassPermissions)": fixture("PostToolUse.Bash.json"),
        "UserPromptSubmit (real payload)": fixture("UserPromptSubmit.json"),
        "PostToolUse Write, 5 KB of source": write,
        "PostToolUse Read of a 20 KB source file": read_payload(SOURCE_20K, source),
        "PostToolUse Read of a 20 KB .env (credential-file profile)": read_payload(Path("/srv/app/.env"),
                                                                               config_text()),
    }


# ---------------------------------------------------------------------------------- corpus

def corpus_section() -> tuple[str, dict[str, Any]]:
    from tests.security.corpus import evaluate

    t0 = time.perf_counter()
    res = evaluate()
    dt = time.perf_counter() - t0
    rows = [["secrets (recall)", f"{res['caught']} of {res['secrets']} in {res['samples']} placements",
             f"**{res['recall']:.1%}**", ">= 98 %"],
            ["look-alikes changed (false positives)", f"{res['false_positives']} of {res['lookalikes']}",
             f"**{res['fp_rate']:.1%}**", "<= 5 %"]]
    body = md_table(["corpus (tests/security/corpus.py)", "count", "rate", "target"], rows)
    return body + f"\n\nWhole corpus through `Redactor.payload`: {dt:.2f} s.", res


# ------------------------------------------------------------------------------ in-process

def per_payload_cost(rounds: int) -> str:
    from kenning.hook import main as hook
    from kenning.settings import Settings

    settings = Settings()
    rows = []
    for name, p in payloads().items():
        hook._clean(settings, p)  # warm caches (name classification, path profiles)
        samples = []
        for _ in range(rounds):
            t = time.perf_counter_ns()
            hook._clean(settings, p)
            samples.append(time.perf_counter_ns() - t)
        med = statistics.median(samples) / 1000
        rows.append([name, f"{len(json.dumps(p)):,}", fmt(med, 0), fmt(sorted(samples)[int(len(samples) * .99) - 1]
                                                                     / 1000, 0)])
    imports = import_costs()
    table = md_table(["payload", "bytes", "p50 µs", "p99 µs"], rows)
    return (table + "\n\nWhat the fast path saves: a fresh `python -I -S` importing "
            f"`re` costs **{fmt(imports['re'], 1)} ms** more than `pass`, `enum` alone "
            f"{fmt(imports['enum'], 1)} ms (medians of {imports['n']} interleaved runs). No built-in detector "
            "imports `re`; only the user's own `redact_custom` patterns do.")


# A child process times ``hook._clean`` of one tree (argv[1] first on sys.path) on the payloads of stdin.
CLEAN_CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from kenning.hook import main as hook
from kenning.settings import Settings
assert hook.__file__.startswith(sys.argv[1]), hook.__file__
settings, runs, out = Settings(), int(sys.argv[2]), {}
for name, p in json.loads(sys.stdin.read()).items():
    hook._clean(settings, p)
    samples = []
    for _ in range(runs):
        t = time.perf_counter_ns()
        hook._clean(settings, p)
        samples.append(time.perf_counter_ns() - t)
    out[name] = statistics.median(samples) / 1000
print(json.dumps(out))
"""


def cost_against(ref: str, runs: int, turns: int = 6) -> str:
    """``hook._clean`` of this tree and of ``ref`` on the same payloads, child processes taking turns."""
    root = Path(tempfile.mkdtemp(prefix="kenning-bench-clean-"))
    try:
        trees = {"this tree": str(REPO), f"`{ref}`": str(unpack(ref, root / "base"))}
        body = json.dumps(payloads())
        medians: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
        for turn in range(turns):
            for tree, path in (list(trees.items()) if turn % 2 else list(trees.items())[::-1]):
                proc = subprocess.run([PYTHON, "-I", "-c", CLEAN_CHILD, path, str(runs)], input=body, text=True,
                                      capture_output=True, check=True)
                for name, us in json.loads(proc.stdout).items():
                    medians[tree].setdefault(name, []).append(us)
        ours, theirs = medians["this tree"], medians[f"`{ref}`"]
        rows = []
        for name in ours:
            a, b = statistics.median(ours[name]), statistics.median(theirs[name])
            rows.append([name, fmt(b, 0), fmt(a, 0), f"{a / b:.2f}×", f"{a - b:+.0f}"])
        return md_table(["payload", f"p50 µs at `{ref}`", "p50 µs this tree", "ratio", "difference, µs"], rows) + (
            f"\n\nMedian of {turns} child processes per tree (taking turns), each the median of {runs} runs.")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def import_costs(n: int = 40) -> dict[str, Any]:
    cmds = {"pass": FLOOR, "re": [PYTHON, "-I", "-S", "-c", "import re"],
            "enum": [PYTHON, "-I", "-S", "-c", "import enum"]}
    samples: dict[str, list[int]] = {k: [] for k in cmds}
    for r in range(n + 3):
        for k, argv in (list(cmds.items())[r % 3:] + list(cmds.items())[:r % 3]):
            t = time.perf_counter_ns()
            subprocess.run(argv, check=True)
            if r >= 3:
                samples[k].append(time.perf_counter_ns() - t)
    med = {k: statistics.median(v) / 1e6 for k, v in samples.items()}
    return {"re": med["re"] - med["pass"], "enum": med["enum"] - med["pass"], "n": n}


# ------------------------------------------------------------------------------ hook latency

def unpack(ref: str, into: Path) -> Path:
    """``kenning/`` of another commit, for its hook (read-only: ``git archive``)."""
    into.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(REPO), "archive", ref, "kenning"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into


def hook_latency(rounds: int, against: str | None) -> str:
    root = Path(tempfile.mkdtemp(prefix="kenning-bench-redact-"))
    try:
        variants: list[tuple[str, list[str], dict[str, str] | None]] = [("`python -I -S -c pass`", FLOOR, None)]
        entry = HOOK_ENTRY
        variants.append(("hook (this tree)", [PYTHON, "-I", "-c", entry, "claude-code", "PostToolUse"], {}))
        if against:
            base = unpack(against, root / "base")
            variants.append((f"hook at `{against}`", [PYTHON, "-I", "-c",
                                                      f"import sys; sys.path.insert(0, {str(base)!r}); {entry}",
                                                      "claude-code", "PostToolUse"], {}))
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        out_rows: list[list[str]] = []
        notes: list[str] = []
        envs: dict[str, dict[str, str]] = {}
        for vname, _argv, env in variants:
            if env is not None:  # a data dir of its own per hook variant; the worker is never started
                envs[vname] = {"KENNING_DATA_DIR": str(root / f"data-{len(envs)}"), "PATH": "/usr/bin:/bin",
                               "HOME": str(root)}
        for pname, p in payloads().items():
            if not pname.startswith("PostToolUse"):
                continue
            body = json.dumps({**p, "cwd": str(project)}).encode()
            samples: dict[str, list[int]] = {v[0]: [] for v in variants}
            for r in range(rounds + 5):
                k = r % len(variants)
                for vname, argv, env in variants[k:] + variants[:k]:
                    t = time.perf_counter_ns()
                    subprocess.run(argv, input=body if env is not None else b"", env=envs.get(vname),
                                   cwd=str(project), capture_output=True, check=False)
                    if r >= 5:
                        samples[vname].append(time.perf_counter_ns() - t)
            floor = summary_ms(samples[variants[0][0]])
            ours = summary_ms(samples[variants[1][0]])
            for vname, _argv, _env in variants:
                s = summary_ms(samples[vname])
                vs = "" if vname == variants[0][0] else f"{s['p50'] - floor['p50']:+.1f}"
                if against and vname == variants[2][0]:
                    notes.append(f"{pname}: this tree {ours['p50'] - s['p50']:+.1f} ms p50 against `{against}`")
                out_rows.append([pname, vname, fmt(s["p50"]), fmt(s["p99"]), f"{s['p50'] / floor['p50']:.2f}×", vs])
            for env in envs.values():
                shutil.rmtree(env["KENNING_DATA_DIR"], ignore_errors=True)  # the next payload starts empty
        table = md_table(["payload", "command", "p50 ms", "p99 ms", "p50 ÷ floor", "p50 − floor, ms"], out_rows)
        return table + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=60, help="interleaved rounds of hook processes (default 60)")
    ap.add_argument("--cost-runs", type=int, default=300, help="in-process runs per payload (default 300)")
    ap.add_argument("--against", help="also time the hook of this commit (e.g. the commit before the redactor)")
    ap.add_argument("--write", action="store_true", help="replace this benchmark's section of BENCHMARKS.md")
    args = ap.parse_args()
    corpus, _res = corpus_section()
    cost = per_payload_cost(args.cost_runs)
    against = (f"### The same step against `{args.against}` (in-process, same run)\n\n"
               f"{cost_against(args.against, args.cost_runs)}\n\n") if args.against else ""
    latency = hook_latency(args.rounds, args.against)
    body = (f"## Secret redaction (`bench/redaction.py`)\n\n{run_header(command_line())}\n\n"
            f"### Corpus\n\n{corpus}\n\n"
            f"### Cost of the hook's cleaning step per payload (in-process, `hook._clean`)\n\n{cost}\n\n{against}"
            f"### PostToolUse hook processes, worker down ({args.rounds} interleaved rounds)\n\n{latency}\n")
    print(body)
    if args.write:
        write_section("redaction", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
