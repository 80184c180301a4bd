"""Helpers for the MCP tests: a memory filled through the real pipeline, and a way to
talk to ``kenning mcp`` with the MCP SDK's own stdio client.

The bundled demo story (3 sessions of an invoice API) is replayed once per module through the
real hook processes and a real worker, exactly as ``kenning demo`` does; the worker is stopped
afterwards, so every MCP test also proves the server needs no worker.
"""

from __future__ import annotations

import io
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
SERVER_ARGS = ["-I", "-m", "kenning", "mcp"]


@dataclass
class Story:
    data: str      # KENNING_DATA_DIR of the replayed memory
    project: str   # the demo project's directory (a git root named invoice-api)
    name: str      # its project name

    def env(self, **extra: str) -> dict[str, str]:
        return {"KENNING_DATA_DIR": self.data, **extra}


def replay_story() -> tuple[Story, str]:
    """Replay the demo story into a scratch data dir; returns it and the folder to delete afterwards."""
    import tempfile

    from kenning.demo.replay import replay

    base = tempfile.mkdtemp(prefix="kenning-mcp-story-")
    rep = replay(base, out=io.StringIO())
    assert os.path.basename(rep.project) == "invoice-api" and os.path.isdir(rep.project)
    return Story(data=rep.data, project=rep.project, name="invoice-api"), base


def run_client(fn: Callable[[Any], Awaitable[T]], *, env: dict[str, str], cwd: str | None = None,
               **client_kw: Any) -> T:
    """Start ``python -I -m kenning mcp`` and run ``fn(client)`` with the SDK's ``mcp.Client``."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=SERVER_ARGS, env=env, cwd=cwd)

    async def main() -> T:
        async with Client(params, read_timeout_seconds=60, **client_kw) as client:
            return await fn(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    """The text the model would read from a tool result."""
    return "\n".join(getattr(c, "text", "") for c in result.content)


def scratch_dir(tmp: Path) -> str:
    """A directory that belongs to no project of the story (the server's cwd in some tests)."""
    d = tmp / "elsewhere"
    d.mkdir(exist_ok=True)
    return str(d)


def db_rows(story: Story, sql: str, *args: Any) -> list[sqlite3.Row]:
    """Rows of the story's database, read-only (what the tools left behind)."""
    conn = sqlite3.connect(f"file:{story.data}/kenning.db?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()
