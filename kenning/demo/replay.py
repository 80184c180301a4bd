"""``kenning demo``: replay a bundled coding story through the real hook commands.

Everything runs for real in a throwaway data dir: each event is piped into
``python -m kenning hook claude-code <Event>`` exactly as Claude Code would, the first
SessionStart starts a worker on a free port, the rules observer turns the spooled events
into observations, and the context the *next* session would receive is printed.
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
from importlib import resources
from typing import Any


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


def run_demo(*, keep: bool = False, out: Any = None) -> int:
    out = out or sys.stdout
    story = load_story()
    base = tempfile.mkdtemp(prefix="kenning-demo-")
    data = os.path.join(base, "data")
    project = os.path.join(base, str(story.get("project_name") or "demo-project"))
    transcripts = os.path.join(base, "transcripts")
    os.makedirs(project)
    os.makedirs(transcripts)
    for rel, content in (story.get("files") or {}).items():
        path = os.path.join(project, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
    os.makedirs(os.path.join(project, ".git"))  # the project is a git root, named after its folder
    # The demo is offline and free whatever the user configured: the rules observer, always.
    env = {**os.environ, "KENNING_DATA_DIR": data, "KENNING_PORT": str(_free_port()), "KENNING_PROVIDER": "rules"}
    env.pop("KENNING_INTERNAL", None)
    hook = [sys.executable, "-I", "-m", "kenning", "hook", "claude-code"]
    print(f"Replaying {len(story['sessions'])} sessions of '{story.get('project_name')}' through the real hooks "
          f"(data dir {data})", file=out)
    try:
        timings: list[float] = []
        for i, session in enumerate(story["sessions"], 1):
            n = 0
            for item in session["events"]:
                payload = _fill(item["payload"], project, transcripts)
                t0 = time.perf_counter()
                r = subprocess.run([*hook, item["event"]], input=json.dumps(payload).encode(), env=env,
                                   cwd=project, capture_output=True, timeout=30)
                timings.append(time.perf_counter() - t0)
                if r.returncode != 0:
                    print(f"hook {item['event']} exited {r.returncode}: {r.stderr.decode()[:300]}", file=out)
                    return 1
                n += 1
            print(f"  session {i}: {n} events captured", file=out)
        env_cli = {**env}
        subprocess.run([sys.executable, "-m", "kenning", "worker", "start"], env=env_cli, capture_output=True,
                       timeout=60)
        ctx = subprocess.run([sys.executable, "-m", "kenning", "context", "--cwd", project], env=env_cli,
                             capture_output=True, timeout=60, text=True)
        timings.sort()
        median = timings[len(timings) // 2] * 1000 if timings else 0.0
        print(f"Hook wall time (median over {len(timings)} events): {median:.0f} ms\n", file=out)
        print("What the next Claude Code session in this project is told:\n", file=out)
        print(ctx.stdout, file=out)
        print("Try: KENNING_DATA_DIR=" + data + " kenning show <ID>" if keep else
              "(run `kenning demo --keep` to explore the demo data dir afterwards)", file=out)
        return 0 if ctx.returncode == 0 else 1
    finally:
        subprocess.run([sys.executable, "-m", "kenning", "worker", "stop"], env=env, capture_output=True, timeout=60)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
