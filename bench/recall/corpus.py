"""The recall corpus: real payloads turned into observations by the real pipeline.

Sources (all in the repository): the bundled demo story (kenning/demo/sessions.json), the
captured Claude Code fixtures (tests/fixtures/claude-code/*/events), and synthetic coding
sessions (tests/support/synthetic.py). Each payload is spooled exactly as the hook writes it and
the worker's Pipeline with the offline rules observer turns it into rows. Same input, same rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kenning import spool  # noqa: E402
from kenning.observer.registry import choose  # noqa: E402
from kenning.paths import Paths  # noqa: E402
from kenning.settings import Settings  # noqa: E402
from kenning.store.db import open_db  # noqa: E402
from kenning.worker.pipeline import Pipeline  # noqa: E402

SYNTHETIC_SESSIONS = 40
SYNTHETIC_EVENTS = 40
START = 1_790_000_000.0  # fixed clock: reproducible rows
EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd")


def _fill(value: Any, project: str) -> Any:
    if isinstance(value, str):
        return value.replace("{PROJECT}", project).replace("{TRANSCRIPTS}", project + "/.transcripts")
    if isinstance(value, dict):
        return {k: _fill(v, project) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, project) for v in value]
    return value


def streams() -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(project, project root, payloads) per session, in replay order."""
    from tests.support.synthetic import synthetic_sessions

    out: list[tuple[str, str, list[dict[str, Any]]]] = []
    story = json.loads((REPO / "kenning" / "demo" / "sessions.json").read_text())
    root = "/work/demo/invoice-api"
    for s in story["sessions"]:
        out.append(("invoice-api", root, [_fill(item["payload"], root) | {"hook_event_name": item["event"]}
                                          for item in s["events"]]))
    for mode in ("print-mode", "interactive"):
        events = []
        for p in sorted((REPO / "tests" / "fixtures" / "claude-code" / mode / "events").glob("*.json")):
            data = json.loads(p.read_text())
            payload = data.get("stdin", data)
            if isinstance(payload, dict) and payload.get("hook_event_name") in EVENTS:
                events.append(payload)
        order = {e: i for i, e in enumerate(EVENTS)}
        events.sort(key=lambda pl: order[pl["hook_event_name"]])
        if events:
            out.append(("fixture-" + mode, "/work/fixtures/" + mode, events))
    root = "/work/synth/shop-backend"
    for events in synthetic_sessions(SYNTHETIC_SESSIONS, SYNTHETIC_EVENTS, seed=11, cwd=root):
        out.append(("shop-backend", root, events))
    return out


def build(data_dir: str) -> str:
    """Replay everything into a fresh data dir; returns the database path."""
    paths = Paths(data_dir)
    paths.ensure()
    at = START
    n = 0
    for project, root, events in streams():
        for payload in events:
            at += 7.0
            n += 1
            rec = {"v": 1, "id": f"recall-{n:06d}", "agent": "claude-code", "event": payload["hook_event_name"],
                   "at": at, "project": project, "project_root": root, "truncated": False, "payload": payload}
            spool.write(paths, rec, sync_dir=False)
    conn = open_db(paths.db)
    observer, _why = choose(Settings(provider="rules"))
    pipe = Pipeline(paths, conn, observer)
    for _ in range(50):
        pipe.cycle()
        if spool.depth(paths) == 0 and not conn.execute(
                "SELECT 1 FROM events WHERE status = 'pending' LIMIT 1").fetchone():
            break
    pipe.observe(now=at + 3600)  # close turns left open (no Stop) as the idle timeout would
    conn.close()
    return paths.db


if __name__ == "__main__":
    import tempfile

    db = build(tempfile.mkdtemp(prefix="kenning-recall-"))
    from kenning.store.db import connect

    c = connect(db, readonly=True)
    for r in c.execute("SELECT id, project, type, title FROM observations ORDER BY id"):
        print(r["id"], r["project"], r["type"], r["title"][:150], sep=" | ")
    print(db, file=sys.stderr)
