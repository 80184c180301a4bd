"""``kenning show ID``: one memory in full, with what the observer judged it to be and on whose words."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from kenning.commands.args import row_id
from kenning.memory.judged import judged
from kenning.paths import Paths
from kenning.settings import load


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("show", help="print one observation in full")
    s.add_argument("id", type=row_id, help="the observation's id")
    s.add_argument("--json", action="store_true", help="print the observation as JSON")
    s.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    from kenning.service import Memory

    paths = Paths()
    settings, _ = load(paths)
    obs = Memory(paths, settings).observation(args.id)
    if obs is None:
        print(f"kenning: no observation {args.id}", file=sys.stderr)
        return 1
    if args.json:
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
    return 0


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
