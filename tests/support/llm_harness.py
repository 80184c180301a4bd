"""A real pipeline (spool → SQLite → observer → rows) in the test process, for LLM observer tests.

Events are spooled in the exact record shape the hook writes, ingested and observed by the
real :class:`Pipeline` on a real database; the observer is whatever ``registry.choose``
builds from the given settings (pointed at a fake server), or one passed in. ``run_until``
cycles the pipeline the way its thread does: again whenever the observer pokes it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kenning import spool
from kenning.observer.base import Observer
from kenning.observer.registry import choose
from kenning.paths import Paths
from kenning.project import canonical
from kenning.settings import Settings
from kenning.store.db import open_db
from kenning.worker.pipeline import Pipeline

KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-test"}


def observation(type: str, title: str, *, facts: tuple[str, ...] = (), narrative: str = "",
                concepts: tuple[str, ...] = ("how-it-works",), files_read: tuple[str, ...] = (),
                files_modified: tuple[str, ...] = (), kind: str | None = None, scope: str | None = None,
                tentative: bool | None = None, why: str | None = None) -> str:
    """One ``<observation>`` block as a model would write it (what it is: only the fields given, so the
    format from before kinds existed is the default)."""
    def items(outer: str, inner: str, values: tuple[str, ...]) -> str:
        return f"<{outer}>" + "".join(f"<{inner}>{v}</{inner}>" for v in values) + f"</{outer}>"

    roles = "".join(f"<{tag}>{value}</{tag}>" for tag, value in (
        ("kind", kind), ("scope", scope), ("tentative", None if tentative is None else str(tentative).lower()),
        ("why", why)) if value is not None)
    return (f"<observation>{roles}<type>{type}</type><title>{title}</title><subtitle>{title} (subtitle)</subtitle>"
            f"{items('facts', 'fact', facts or (title + ' holds',))}<narrative>{narrative or title}</narrative>"
            f"{items('concepts', 'concept', concepts)}{items('files_read', 'file', files_read)}"
            f"{items('files_modified', 'file', files_modified)}</observation>")


def summary(request: str = "the request", learned: str = "what was learned") -> str:
    return (f"<summary><request>{request}</request><investigated>the code</investigated><learned>{learned}</learned>"
            "<completed>the change</completed><next_steps>ship it</next_steps><notes></notes></summary>")


class Session:
    """Builds hook payloads of one agent session."""

    def __init__(self, root: Path, sid: str | None = None) -> None:
        self.root = root
        self.sid = sid or str(uuid.uuid4())
        self.n = 0

    def _base(self, event: str) -> dict[str, Any]:
        return {"session_id": self.sid, "transcript_path": f"/tmp/{self.sid}.jsonl", "cwd": str(self.root),
                "hook_event_name": event}

    def start(self) -> dict[str, Any]:
        return {**self._base("SessionStart"), "source": "startup"}

    def prompt(self, text: str, origin: str | None = None) -> dict[str, Any]:
        """``origin``: the ``prompt_origin`` an imported prompt carries (queued, rejection, headless …)."""
        extra = {"prompt_origin": origin} if origin else {}
        return {**self._base("UserPromptSubmit"), "prompt": text, **extra}

    def tool(self, name: str, tool_input: dict[str, Any], response: Any, *, failed: bool = False) -> dict[str, Any]:
        self.n += 1
        p = {**self._base("PostToolUseFailure" if failed else "PostToolUse"), "tool_name": name,
             "tool_input": tool_input, "tool_use_id": f"toolu_{self.sid[:8]}_{self.n:04d}"}
        if failed:
            p["error"] = response
        else:
            p["tool_response"] = response
        return p

    def read(self, rel: str, content: str = "def total(lines):\n    return sum(l.net for l in lines)\n" * 4) -> dict:
        path = f"{self.root}/{rel}"
        return self.tool("Read", {"file_path": path}, {"type": "text", "file": {"filePath": path, "content": content}})

    def edit(self, rel: str, old: str = "a = 1", new: str = "a = 2") -> dict[str, Any]:
        path = f"{self.root}/{rel}"
        return self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                         {"filePath": path, "oldString": old, "newString": new, "originalFile": "x" * 5000})

    def bash(self, command: str, stdout: str = "3 passed", *, failed: bool = False) -> dict[str, Any]:
        if failed:
            return self.tool("Bash", {"command": command}, f"Exit code 1\n{stdout}", failed=True)
        return self.tool("Bash", {"command": command}, {"stdout": stdout, "stderr": "", "interrupted": False})

    def stop(self, message: str = "Done.") -> dict[str, Any]:
        return {**self._base("Stop"), "last_assistant_message": message, "stop_hook_active": False}

    def end(self) -> dict[str, Any]:
        return {**self._base("SessionEnd"), "reason": "other"}


class Harness:
    def __init__(self, tmp: Path, *, observer: Observer | None = None, env: dict[str, str] | None = None,
                 **settings: Any) -> None:
        self.paths = Paths(str(tmp / "data"))
        self.paths.ensure()
        self.root = tmp / "project"
        self.root.mkdir(exist_ok=True)
        self.key = canonical(str(self.root))  # the project key its rows are filed under
        self.conn = open_db(self.paths.db)
        self.settings = Settings(**settings)
        if observer is None:
            observer, self.why = choose(self.settings, paths=self.paths, env=env or KEYS)
        self.observer = observer
        self.pipeline = Pipeline(self.paths, self.conn, observer)
        self._poked = threading.Event()
        self.pipeline.wake = self._poked.set
        self.at = time.time() - 600

    def session(self, sid: str | None = None) -> Session:
        return Session(self.root, sid)

    def spool(self, *payloads: dict[str, Any], step: float = 1.0) -> None:
        for p in payloads:
            self.at += step
            spool.write(self.paths, {"v": 1, "agent": "claude-code", "event": p["hook_event_name"], "at": self.at,
                                     "project": "project", "project_root": str(self.root), "truncated": False,
                                     "payload": p}, sync_dir=False)

    def cycle(self) -> None:
        self.pipeline.cycle()
        assert not self.pipeline.stats.last_error, self.pipeline.stats.last_error

    def run_until(self, cond: Callable[[], bool], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self._poked.clear()
            self.cycle()
            if cond():
                return
            assert time.monotonic() < deadline, "condition not reached"
            self._poked.wait(0.05)

    def settle(self, timeout: float = 15.0) -> None:
        """Until nothing is pending."""
        self.run_until(lambda: self.pending() == 0, timeout)

    def pending(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM events WHERE status = 'pending'").fetchone()[0])

    def observations(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM observations ORDER BY id").fetchall()
        out = []
        for r in rows:
            d = dict(r)
            for k in ("facts", "concepts", "files_read", "files_modified"):
                d[k] = json.loads(d[k])
            out.append(d)
        return out

    def summaries(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM session_summaries ORDER BY id")]

    def close(self) -> None:
        self.pipeline.close()
        self.conn.close()


@contextmanager
def served(provider: str, reply: Callable[[str], str], tmp: Path) -> Iterator[Harness]:
    """A harness whose observer talks to a fake ``provider`` API ("anthropic" or "openai") over real HTTP,
    the model's reply to each turn's text given by ``reply``."""
    from tests.support import fake_anthropic, fake_openai

    def anthropic_script(body: dict[str, Any]) -> Any:
        text = reply(body["messages"][-1]["content"][-1]["text"])
        return [fake_anthropic.text(text)] if text else []

    def openai_script(body: dict[str, Any]) -> Any:
        return reply(fake_openai.user_text(body))

    fake: Any = (fake_anthropic.FakeAnthropic(script=anthropic_script) if provider == "anthropic"
                 else fake_openai.FakeOpenAI(script=openai_script))
    fake.start()
    h = Harness(tmp, provider=provider, base_url=fake.base_url)
    try:
        yield h
    finally:
        h.close()
        fake.stop()
