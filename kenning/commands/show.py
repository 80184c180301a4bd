"""``kenning show ID``: one memory in full, with what the observer judged it to be and on whose words."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from kenning.commands.args import shown_id
from kenning.memory.judged import judged
from kenning.paths import Paths
from kenning.settings import load


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("show", help="print one observation in full")
    s.add_argument("id", type=shown_id, help="what to print in full: an observation (12 or #12), a session summary "
                                            "(S1) or a prompt (P6), as search and the context name them")
    s.add_argument("--json", action="store_true", help="print it as JSON")
    s.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    from kenning.service import Memory

    paths = Paths()
    settings, _ = load(paths)
    kind, oid = args.id
    if kind != "observation":
        return _show_other(paths, kind, oid, args.json)
    memory = Memory(paths, settings)
    obs = memory.observation(oid)
    if obs is None:
        print(f"kenning: no observation {oid}", file=sys.stderr)
        return 1
    checked = memory.evidence(oid, os.getcwd())
    obs["ledger"] = _ledger(paths, oid)
    if args.json:
        obs = {**obs, "evidence": checked}
        print(json.dumps(obs, indent=2, ensure_ascii=False))
        return 0
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(obs["created_at"]))
    print(f"#{obs['id']} [{obs['type']}] {obs['title']}")
    from kenning.integrations import LABELS

    agent = LABELS.get(str(obs.get("platform") or ""), str(obs.get("platform") or ""))
    print(f"{obs['project']} · {when} · {agent} session {obs['agent_session_id']} · prompt {obs['prompt_number']}"
          + (f" · {obs['status']}" if obs["status"] != "active" else ""))
    if obs["subtitle"]:
        print(obs["subtitle"])
    if obs["narrative"]:
        print(f"\n{obs['narrative']}")
    if obs["facts"]:
        print("\nFacts:")
        for f in obs["facts"]:
            print(f"  - {f}")
    for key, label in (("files_modified", "Modified"), ("files_read", "Read"), ("concepts", "Concepts")):
        if obs[key]:
            print(f"{label}: {', '.join(obs[key])}")
    for line in judged_lines(obs):
        print(line)
    for line in [*evidence_lines(checked), *ledger_lines(obs["ledger"])]:
        print(line)
    return 0


def evidence_lines(checked: dict[str, Any]) -> list[str]:
    """What the evidence check found: gone here and now, and since when (the review's record)."""
    out = []
    rec = checked.get("record")
    if checked.get("gone_here"):
        out.append("\nPossibly stale in this working tree: " + "; ".join(checked["gone_here"]))
    if rec:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(rec["since"]))
        out.append(f"Evidence gone since {when} ({rec['sessions']} session start(s)): " + "; ".join(rec["notes"]))
    return out


def _ledger(paths: Paths, oid: int) -> dict[str, Any]:
    """What the injection ledger knows of ``oid`` (empty on a database from before it)."""
    import sqlite3

    from kenning.store import injections
    from kenning.store.db import connect

    conn = connect(paths.db, readonly=True)
    try:
        return injections.for_memory(conn, oid, limit=20)
    except sqlite3.OperationalError:
        return {"given": 0, "used": 0, "last_given": None, "last_used": None, "injections": [], "uses": []}
    finally:
        conn.close()


def ledger_lines(led: dict[str, Any]) -> list[str]:
    """Given N times, used M times, last used …, then the latest handings and uses."""
    from kenning.commands.audit import VIA

    def when(at: float | None) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "never"

    n, m = led["given"], led["used"]
    out = [f"\nGiven {n} time{'s' if n != 1 else ''} to agents, used {m} time{'s' if m != 1 else ''}; "
           f"last given {when(led['last_given'])}, last used {when(led['last_used'])}."]
    for i in led["injections"][:10]:
        out.append(f"  {when(i['at'])}  {VIA.get(i['via'], i['via']):<14} {(i['session'] or '-')[:12]:<12} "
                   f"{i['reason']}")
    for u in led["uses"][:10]:
        out.append(f"  {when(u['at'])}  used: {u['kind']} {u['detail']}".rstrip())
    return out


def judged_lines(obs: dict[str, Any]) -> list[str]:
    """What the observer judged a memory to be, and why (the sentence, who said it, where): how a user
    tells a standing rule from what only looked like one, and undoes it."""
    j = judged(obs)
    if j is None:
        return []
    layer = {"rule": "a standing rule", "key": "a key memory", "log": "the session log"}.get(str(obs.get("layer")), "")
    out = [f"\nJudged: {j['kind']}" + (f" ({layer}" + (", for all your projects" if j["scope"] == "user" else "")
                                       + (", tentative" if j["tentative"] else "") + ")" if layer else "")]
    if j.get("said"):
        out.append(f"Because {j['who']} said" + (f" ({j['where']})" if j.get("where") else "")
                   + f": \u201c{j['said']}\u201d")
    if j.get("how"):
        out.append(f"How: {j['how']}")
    if obs.get("layer") == "rule":
        out.append(f"Not a rule? `kenning unpin {obs['id']}` keeps it as an ordinary memory.")
    elif j["kind"] == "proposed":
        out.append(f"Proposed by the agent, not confirmed: `kenning pin {obs['id']}` makes it a standing rule.")
    return out


def _show_other(paths: Paths, kind: str, rid: int, as_json: bool) -> int:
    """A session summary (``S1``) or a prompt (``P6``), as search and the context print their ids."""
    import os

    from kenning.store.db import connect

    label = {"summary": "S", "prompt": "P"}[kind] + str(rid)
    row = None
    if os.path.exists(paths.db):
        conn = connect(paths.db, readonly=True)
        try:
            sql = ("SELECT x.*, s.agent_session_id, s.platform FROM session_summaries x "
                   "JOIN sessions s ON s.id = x.session_id WHERE x.id = ?") if kind == "summary" else (
                  "SELECT x.*, s.project, s.agent_session_id, s.platform FROM user_prompts x "
                  "JOIN sessions s ON s.id = x.session_id WHERE x.id = ?")
            found = conn.execute(sql, (rid,)).fetchone()
            row = dict(found) if found is not None else None
        finally:
            conn.close()
    if row is None:
        print(f"kenning: no {'session summary' if kind == 'summary' else 'prompt'} {label}", file=sys.stderr)
        return 1
    for key in ("files_read", "files_modified"):
        if isinstance(row.get(key), str):
            try:
                row[key] = json.loads(row[key] or "[]")
            except ValueError:
                row[key] = []
    if as_json:
        print(json.dumps({"kind": kind, **row}, indent=2, ensure_ascii=False))
        return 0
    if kind == "summary":
        from kenning.mcp.render import summary

        print(summary(row))
        return 0
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
    print(f"{label} [prompt {row['prompt_number']}] {row['project']} · {when} · session {row['agent_session_id']}")
    print(f"\n{row['prompt_text']}")
    return 0
