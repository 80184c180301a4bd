"""``kenning demo``: replay a bundled coding story through the real hook commands, into your memory.

The replay runs for real in a throwaway data dir: each event is piped into
``python -m kenning hook claude-code <Event>`` exactly as Claude Code would, the first
SessionStart starts a worker on a free port, and the offline rules observer (whatever the user
configured: the demo is free and deterministic) turns the spooled events into observations.
What it remembered is then imported into the user's own data dir as the project ``kenning-demo``
(keyed, like every project, by its checkout's path: ``<data dir>/demo/kenning-demo``, a folder no
real repository has, so the demo's memory is never told to the user's own sessions), where the
commands that follow in the README (``context``, ``show``, ``search``, ``open``) find it.
Importing is idempotent: a second demo adds nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

DEMO_PROJECT = "kenning-demo"


def load_story() -> dict[str, Any]:
    text = resources.files("kenning.demo").joinpath("sessions.json").read_text("utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("demo story is not an object")
    return data


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def _fill(value: Any, project: str, transcripts: str) -> Any:
    # str.replace, not format: the payloads hold real code full of braces.
    if isinstance(value, str):
        return value.replace("{PROJECT}", project).replace("{TRANSCRIPTS}", transcripts)
    if isinstance(value, dict):
        return {k: _fill(v, project, transcripts) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, project, transcripts) for v in value]
    return value


@dataclass
class Replay:
    data: str  # the scratch data dir that holds the replayed memory
    project: str  # the story's project directory (a git root)
    hook_ms_median: float


def replay(base: str, *, project_dir: str | None = None, out: Any = None) -> Replay:
    """Replay the story into the data dir ``base/data``, the project's files in ``project_dir``
    (default ``base/<the story's project name>``; it must not exist yet); the worker is stopped
    afterwards. Raises RuntimeError when a hook fails."""
    out = out or sys.stdout
    story = load_story()
    data = os.path.join(base, "data")
    project = project_dir or os.path.join(base, str(story.get("project_name") or "demo-project"))
    name = os.path.basename(project)
    transcripts = os.path.join(base, "transcripts")
    os.makedirs(project)
    os.makedirs(transcripts)
    for rel, content in (story.get("files") or {}).items():
        path = os.path.join(project, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
    os.makedirs(os.path.join(project, ".git"))  # the project is a git root, named after its folder
    env = {**os.environ, "KENNING_DATA_DIR": data, "KENNING_PORT": str(_free_port()), "KENNING_PROVIDER": "rules",
           "KENNING_EMBEDDING_BACKEND": "none"}
    env.pop("KENNING_INTERNAL", None)
    hook = [sys.executable, "-I", "-m", "kenning", "hook", "claude-code"]
    print(f"Replaying {len(story['sessions'])} sessions of '{name}' through the real hooks", file=out)
    timings: list[float] = []
    try:
        for i, session in enumerate(story["sessions"], 1):
            for item in session["events"]:
                payload = _fill(item["payload"], project, transcripts)
                t0 = time.perf_counter()
                r = subprocess.run([*hook, item["event"]], input=json.dumps(payload).encode(), env=env,
                                   cwd=project, capture_output=True, timeout=30)
                timings.append(time.perf_counter() - t0)
                if r.returncode != 0:
                    raise RuntimeError(f"hook {item['event']} exited {r.returncode}: {r.stderr.decode()[:300]}")
            print(f"  session {i}: {len(session['events'])} events captured", file=out)
        # Start (if the hooks' start is still under way) and drain: `worker start` returns once it
        # answers, and the flush below waits until every spooled event is stored.
        started = subprocess.run([sys.executable, "-m", "kenning", "worker", "start"], env=env, capture_output=True,
                                 timeout=60, text=True)
        if started.returncode != 0:
            raise RuntimeError(f"the demo's worker did not start: {started.stderr.strip()[:300]}")
        _flush(data)
    finally:
        subprocess.run([sys.executable, "-m", "kenning", "worker", "stop"], env=env, capture_output=True, timeout=60)
    timings.sort()
    return Replay(data=data, project=project, hook_ms_median=timings[len(timings) // 2] * 1000 if timings else 0.0)


def _flush(data: str, timeout: float = 60.0) -> None:
    """Wait until the demo worker has stored every event (its flush route drains spool and queue)."""
    from kenning.hook.client import authed, read_pid_file
    from kenning.paths import Paths

    paths = Paths(data)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = read_pid_file(paths)
        res = authed(paths, info["port"], "POST", "/api/flush", timeout=30) if info else None
        if res and res[0] == 200:
            try:
                body = json.loads(res[1] or b"{}")
            except ValueError:
                body = {}
            if body.get("flushed") and not body.get("spool_depth") and not _pending(paths.db):
                return
        time.sleep(0.1)
    raise RuntimeError("the demo's worker did not store every event in time")


def _pending(db: str) -> int:
    from kenning.store.db import connect

    conn = connect(db, readonly=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])
    finally:
        conn.close()


def merge(source_data: str, target_db: str) -> dict[str, int]:
    """Import everything the replay remembered into ``target_db`` (one transaction, idempotent)."""
    from kenning.memory_service import MemoryService
    from kenning.store import transfer
    from kenning.store.db import connect, open_db

    src = connect(os.path.join(source_data, "kenning.db"), readonly=True)
    try:
        records = list(transfer.export(src, include_sensitive=True))
    finally:
        src.close()
    dst = open_db(target_db)
    try:
        return MemoryService(dst, "demo").import_records(enumerate(records, 1))
    finally:
        dst.close()


def run_demo(*, out: Any = None) -> int:
    from kenning.paths import Paths
    from kenning.service import Memory
    from kenning.settings import load

    out = out or sys.stdout
    paths = Paths()
    paths.ensure()
    base = tempfile.mkdtemp(prefix="kenning-demo-")
    # A project is keyed by its checkout's path: the same path every time keeps one demo project
    # (a second demo adds nothing). Its files live there only while the story is replayed.
    project_dir = os.path.join(paths.root, "demo", DEMO_PROJECT)
    shutil.rmtree(project_dir, ignore_errors=True)
    try:
        try:
            rep = replay(base, project_dir=project_dir, out=out)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            print(f"kenning: the demo failed: {e}", file=sys.stderr)
            return 1
        added = merge(rep.data, paths.db)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(os.path.dirname(project_dir), ignore_errors=True)
    from kenning.project import canonical

    key = canonical(project_dir)
    print(f"Hook wall time (median): {rep.hook_ms_median:.0f} ms", file=out)
    if added["observations"] or added["summaries"]:
        print(f"Added to your memory ({paths.db}), as project {DEMO_PROJECT}: {added['observations']} observations, "
              f"{added['summaries']} session summaries, {added['prompts']} prompts.", file=out)
    else:
        print(f"The demo is already in your memory ({paths.db}), as project {DEMO_PROJECT}: nothing added.",
              file=out)
    settings, _problems = load(paths)
    memory = Memory(paths, settings)
    print(f"\nWhat the next Claude Code session in a project named {DEMO_PROJECT} is told:\n", file=out)
    print(memory.context(project=key)["context"], file=out)
    first = _first_decision(paths.db, key)
    print("\nLook around:", file=out)
    print(f"  kenning context --project {DEMO_PROJECT}", file=out)
    if first:
        print(f"  kenning show {first}", file=out)
    print("  kenning search vat rounding\n  kenning open", file=out)
    print(f"It stays out of your own projects' sessions; remove it with: "
          f"kenning forget --project {DEMO_PROJECT} --yes", file=out)
    return 0


def _first_decision(db: str, key: str) -> int | None:
    from kenning.store.db import connect

    conn = connect(db, readonly=True)
    try:
        row = conn.execute("SELECT id FROM observations WHERE project = ? AND type = 'decision' ORDER BY id LIMIT 1",
                           (key,)).fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else None
