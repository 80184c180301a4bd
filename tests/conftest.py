"""Shared fixtures: an isolated data dir, real hook subprocesses, a real worker process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.support.memory_story import Story

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kenning.paths import Paths  # noqa: E402
from kenning.project import canonical  # noqa: E402

# The default embedding back-end (auto) loads all-MiniLM-L6-v2 when its package is installed, as it is
# in the dev venv: no worker, hook or CLI a test starts loads a model unless the test asks for one.
os.environ.setdefault("KENNING_EMBEDDING_BACKEND", "none")


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


class Home:
    """An isolated Kenning installation: data dir, port, env for subprocesses."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "kenning-data"
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(exist_ok=True)
        self.port = free_port()
        self.paths = Paths(str(self.data))
        self.key = canonical(str(self.project))  # the project key of self.project's rows
        self.env = {**os.environ, "KENNING_DATA_DIR": str(self.data), "KENNING_PORT": str(self.port)}
        self.env.pop("KENNING_INTERNAL", None)
        # The interpreter of the CLI, hooks and worker: this checkout's, or an installed wheel's
        # (tests/support/wheel.py), run isolated (-I) so the checkout never shadows the wheel.
        self.python = sys.executable

    def _argv(self) -> list[str]:
        return [self.python, "-m", "kenning"] if self.python == sys.executable else [self.python, "-I", "-m", "kenning"]

    def kenning(self, *args: str, timeout: float = 60, **kw: Any) -> subprocess.CompletedProcess[str]:
        """Run the real ``kenning`` CLI in this installation."""
        return subprocess.run([*self._argv(), *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout, **kw)

    def hook(self, event: str, payload: Any, *, timeout: float = 30,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Pipe one payload (dict, str or bytes) into a real hook process."""
        if isinstance(payload, dict):
            data = json.dumps(payload).encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload
        return subprocess.run([self.python, "-I", "-m", "kenning", "hook", "claude-code", event], input=data,
                              env={**self.env, **(env or {})}, capture_output=True, timeout=timeout,
                              cwd=str(self.project))

    def start_worker(self, wait: float = 20) -> dict[str, Any]:
        r = self.kenning("worker", "start", "--wait", str(wait))
        assert r.returncode == 0, r.stdout + r.stderr + self.worker_logs()
        from kenning.daemon import running

        health = running(self.paths, timeout=2)
        assert health, "worker did not answer"
        return health

    def worker_logs(self, tail: int = 4000) -> str:
        """The ends of the worker's logs and failure note: what a failed start needs to be explained."""
        out = []
        for f in (Path(self.paths.root) / "logs" / "worker.log", Path(self.paths.root) / "logs" / "worker.stdout.log",
                  Path(self.paths.worker_failed)):
            try:
                out.append(f"\n--- {f.name}:\n" + f.read_text(errors="replace")[-tail:])
            except OSError:
                continue
        return "".join(out)

    def stop_worker(self) -> None:
        self.kenning("worker", "stop")

    def flush(self, timeout: float = 30) -> None:
        """Wait until the spool is empty and no event is pending in the database."""
        from kenning.hook.client import read_pid_file, request
        from kenning.paths import read_token

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = read_pid_file(self.paths)
            if info:
                request(info["port"], "POST", "/api/flush", token=read_token(self.paths), timeout=15)
            from kenning import spool

            if spool.depth(self.paths) == 0 and self.pending() == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"not flushed: spool {self.spool_depth()}, pending {self.pending()}"
                             + self.worker_logs(2500))

    def spool_depth(self) -> int:
        from kenning import spool

        return spool.depth(self.paths)

    def pending(self) -> int:
        if not os.path.exists(self.paths.db):
            return 0
        conn = self.db()  # closed here, not whenever it is collected: a live connection keeps the -shm in use
        try:
            return int(conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])
        finally:
            conn.close()

    def db(self) -> Any:
        import sqlite3

        conn = sqlite3.connect(self.paths.db, timeout=10)
        conn.row_factory = sqlite3.Row
        return conn


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Home]:
    """An isolated installation; the test process itself also points at it."""
    h = Home(tmp_path)
    monkeypatch.setenv("KENNING_DATA_DIR", str(h.data))
    monkeypatch.setenv("KENNING_PORT", str(h.port))
    monkeypatch.delenv("KENNING_INTERNAL", raising=False)
    yield h
    h.stop_worker()


def load_fixture(rel: str, *, cwd: str | None = None) -> dict[str, Any]:
    """The stdin payload of a captured Claude Code event (``print-mode/events/Stop.json``).

    With ``cwd``, the captured project path is rewritten to it (so project resolution and
    file paths point into the test's own project directory).
    """
    data = json.loads((FIXTURES / rel).read_text())
    payload = data.get("stdin", data)
    if cwd is None:
        return payload
    old = payload.get("cwd") or ""
    text = json.dumps(payload)
    if old:
        text = text.replace(old, cwd)
    return json.loads(text)


@pytest.fixture
def story(tmp_path: Path) -> Iterator[Story]:
    """Sessions told turn by turn to the offline observer, stored in a real SQLite file
    (tests/support/memory_story.py)."""
    from tests.support.memory_story import Story

    s = Story(tmp_path)
    yield s
    s.close()
