"""Sessions told turn by turn, observed by the offline observer and stored in a real SQLite file.

A small stand-in for the worker's loop that keeps the test in one process: each session's events
are built in the shape the hooks capture (prompt, tool results, the Stop with the agent's texts),
observed by :class:`RulesObserver` with what the store knows of the session (``repo.session_info``),
and stored by ``repo.store_outcome`` (supersession, groups and layers included). The context is the
real session-start index of the stored rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.context.session_start import build
from kenning.observer.providers.rules import RulesObserver
from kenning.observer.transcript import PAYLOAD_KEY
from kenning.records import Event
from kenning.settings import Settings
from kenning.store import repo
from kenning.store.db import open_db

T0 = 1_760_000_000.0


@dataclass
class Turn:
    prompt: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    last: str = "Done."
    said: list[str] = field(default_factory=list)   # the agent's texts before its last message
    origin: str = ""                                # prompt_origin, when not typed
    during: list[tuple[str, str]] = field(default_factory=list)  # (origin, text) the user adds mid-turn


def event(payload: dict[str, Any], i: int = 1) -> Event:
    """The ``i``-th captured event of a turn, of ``payload`` (a hook's shape, as the builders below give it)."""
    tool = payload.get("tool_name")
    return Event(id=i, kind=payload["hook_event_name"], occurred_at=float(i), payload=payload,
                 tool_name=tool if isinstance(tool, str) else None, prompt_number=1, size_chars=100)


def bash(command: str, out: str = "", *, fails: str | None = None) -> dict[str, Any]:
    if fails is not None:
        return {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": command},
                "error": f"Exit code 1\n{fails}"}
    return {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": {"stdout": out, "stderr": "", "interrupted": False}}


def edit(root: str, rel: str, old: str = "a = 1", new: str = "a = 2") -> dict[str, Any]:
    return {"hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": f"{root}/{rel}", "old_string": old, "new_string": new}, "tool_response": {}}


def read(root: str, rel: str) -> dict[str, Any]:
    return {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": f"{root}/{rel}"},
            "tool_response": {"type": "text", "file": {"filePath": f"{root}/{rel}"}}}


# The cause and fix the matcher turn's conclusion states, after whatever the test puts in front of them
MATCHER_FINDING = ("The broadened matcher treated `.github/workflows/test.yml` as a test artifact because it matched "
                   "`test` anywhere in the path. Fixed: `isTestPath` now only looks at the file name.")


def matcher_turn(root: str, last: str) -> Turn:
    """A turn that finds and fixes why a matcher flags a workflow file (a failing test, the edit, the test passing),
    its conclusion ``last``: for what an answer puts in front of its cause."""
    return Turn("why does the matcher flag the workflow file?", [
        read(root, "matcher.go"), bash("go test ./...", fails="--- FAIL: TestWorkflowQuery (0.01s)"),
        edit(root, "matcher.go"), bash("go test ./...", "ok  \tacme/trainer\t0.4s")], last=last)


class Story:
    def __init__(self, tmp: Path) -> None:
        self.conn = open_db(str(tmp / "kenning.db"))
        self.t = T0
        self.n = 0
        self.settings = Settings()

    def root(self, project: str) -> str:
        return f"/work/{project}"

    def session(self, project: str, *turns: Turn, name: str | None = None) -> int:
        """Observe one session of ``turns`` in ``project``; returns its session id."""
        self.n += 1
        sid_name = name or f"s{self.n}"
        root = self.root(project)
        with repo.transaction(self.conn):
            sid = repo.upsert_session(self.conn, platform="claude-code", agent_session_id=sid_name, project=root,
                                      project_root=root, cwd=root, at=self.t)
        events: list[Event] = []
        for number, turn in enumerate(turns, 1):
            prompt: dict[str, Any] = {"hook_event_name": "UserPromptSubmit", "prompt": turn.prompt}
            if turn.origin:
                prompt["prompt_origin"] = turn.origin
            with repo.transaction(self.conn):
                repo.add_prompt(self.conn, sid, number, turn.prompt, self.t)
            payloads = [prompt, *turn.tools]
            payloads += [{"hook_event_name": "UserPromptSubmit", "prompt": text, "prompt_origin": origin}
                         for origin, text in turn.during]
            payloads.append({"hook_event_name": "Stop", "last_assistant_message": turn.last, PAYLOAD_KEY: turn.said})
            for p in payloads:
                self.t += 7
                tool = p.get("tool_name")
                events.append(Event(id=len(events) + 1, kind=p["hook_event_name"], occurred_at=self.t,
                                    payload={**p, "cwd": root, "session_id": sid_name},
                                    tool_name=tool if isinstance(tool, str) else None, prompt_number=number,
                                    size_chars=len(json.dumps(p))))
        self.t += 3600
        info = repo.session_info(self.conn, sid)
        info.ended = True
        out = RulesObserver().observe(info, events, now=self.t)
        with repo.transaction(self.conn):
            repo.store_outcome(self.conn, sid, root, out, "rules")
        return sid

    def context(self, project: str) -> str:
        return build(self.conn, self.settings, self.root(project), now=self.t + 60, name=project)

    def rows(self, project: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT id, type, kind, layer, status, scope, tentative, title, facts, why, superseded_by "
               "FROM observations")
        args: tuple[Any, ...] = ()
        if project:
            sql += " WHERE project = ?"
            args = (self.root(project),)
        cur = self.conn.execute(sql + " ORDER BY id", args)
        names = [d[0] for d in cur.description]
        out = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        for r in out:
            r["why"] = json.loads(r["why"]) if r["why"] else {}
            r["facts"] = json.loads(r["facts"]) if r["facts"] else []
        return out

    def active(self, project: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.rows(project) if r["status"] == "active"]

    def close(self) -> None:
        self.conn.close()
