"""The MCP server (stdio) exposing Kenning's memory tools: ``kenning mcp``.

Claude Code defers MCP tool schemas behind a tool search, so the model finds these tools by
their names and descriptions alone: both say "memory", "search", "past sessions" plainly.
Nothing but JSON-RPC goes to stdout (the SDK moves fd 1 aside; our logs go to
``<data dir>/logs/mcp.log``). A tool never takes the server down: a bad argument comes back
as a tool error the model can act on, anything unexpected as a logged, generic tool error.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sqlite3
import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any
from urllib.parse import unquote, urlparse

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from kenning.mcp.tools import GUIDE, MemoryTools
from kenning.paths import FILE_MODE, Paths
from kenning.store.identity import ForeignDatabase

log = logging.getLogger("kenning.mcp")

SERVER_NAME = "kenning"  # tools appear as mcp__kenning__<tool>; the hooks skip mcp__kenning__*
ROOTS_TIMEOUT = 2.0
ROOTS_TTL = 60.0

INSTRUCTIONS = (
    "Kenning is the long-term memory of past coding sessions (work done, bugs fixed, decisions, gotchas), "
    "per project. Before re-investigating something that may have history, search_memory; then "
    "get_observations for the few records you need. save_memory keeps a fact for future sessions. "
    "memory_guide explains the tools."
)

SEARCH_DESCRIPTION = (
    "Search Kenning's long-term memory of past coding sessions in this project: earlier work, bugs fixed, "
    "decisions made, gotchas, files changed, what the user asked before. Use it when a task may have history "
    "(\"how did we…\", \"why is…\", \"last time\", an error seen before, code you did not write in this session). "
    "Returns compact index rows `#id date type title (~N tokens)`, about 50-100 tokens each, best match first; "
    "then read full records with get_observations, or the surrounding history with memory_timeline. "
    "Filters: type, since/until, file, project ('*' = all projects)."
)
TIMELINE_DESCRIPTION = (
    "Show what happened before and after a memory in Kenning's history of past sessions: the observations, "
    "session summaries and prompts around one observation id (from search_memory), or around the best match "
    "for a query. Use it to understand the context of a past change, bug or decision. Compact rows, ~7 by default."
)
GET_DESCRIPTION = (
    "Read full records of Kenning memories (past-session observations) by id, as shown by search_memory or "
    "memory_timeline: narrative, facts, files read and modified, concepts, date and session. Pass ids like "
    "[12, 15] (\"S3\" for a session summary); at most 20 per call, each costs about the tokens its row showed."
)
SAVE_DESCRIPTION = (
    "Save a memory for future sessions in Kenning's long-term memory: a fact, decision, preference, convention "
    "or gotcha worth knowing next time (e.g. \"We use uv, never pip\"). Stored in the current project, "
    "searchable at once with search_memory and listed at the start of the next session. Secrets and "
    "<private> content are removed before storing. Saving the same text twice keeps one copy."
)
SUPERSEDE_DESCRIPTION = (
    "Mark Kenning memories as no longer true because a newer memory replaces them (a rule corrected, a "
    "decision reversed, a status changed): give their ids and `by`, the id of the memory that replaces them "
    "(save_memory it first if needed). They stop being given to future sessions but stay searchable, flagged. "
    "Same project only; the user can undo it with `kenning restore`."
)
GUIDE_DESCRIPTION = (
    "How to use Kenning's memory tools: search past sessions (search_memory) → context (memory_timeline) → "
    "full records (get_observations), save_memory and forget_memory; their filters and token costs. "
    "Call it once when unsure how to look something up in memory."
)
FORGET_DESCRIPTION = (
    "Permanently delete memories from Kenning's long-term memory by explicit observation id (from "
    "search_memory), e.g. when the user says a memory is wrong or must not be kept. Takes ids only, never a "
    "query; cannot be undone, so use it only when the user asks."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)


class ClientDir:
    """The client's working directory: MCP roots, else ``CLAUDE_PROJECT_DIR``, else our cwd.

    Claude Code starts one server per session in the session's directory and answers
    ``roots/list``; other clients may only do one of the two. Cached briefly: a round trip
    to the client per tool call is wasted when the directory does not change.
    """

    def __init__(self) -> None:
        self._value: str | None = None
        self._at = 0.0

    async def get(self, ctx: Context | None) -> str:
        if self._value is not None and time.monotonic() - self._at < ROOTS_TTL:
            return self._value
        found = await self._from_roots(ctx) if ctx is not None else None
        found = found or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
        self._value, self._at = found, time.monotonic()
        return found

    @staticmethod
    async def _from_roots(ctx: Context) -> str | None:
        try:
            caps = ctx.client_capabilities
            if caps is None or caps.roots is None:
                return None
            with anyio.move_on_after(ROOTS_TIMEOUT), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026 protocol, not in 2025-11-25
                result = await ctx.session.list_roots()
                for root in result.roots:
                    url = urlparse(str(root.uri))
                    if url.scheme == "file" and url.path:
                        return unquote(url.path)
        except Exception as e:  # no back channel, a client without roots, a timeout: fall back
            log.debug("roots/list unavailable: %r", e)
        return None


def build(tools: MemoryTools | None = None) -> MCPServer:
    """The server with every tool registered (``tools`` over the default data dir if not given)."""
    t = tools or MemoryTools()
    where = ClientDir()
    server: MCPServer = MCPServer(SERVER_NAME, title="Kenning memory", instructions=INSTRUCTIONS,
                                  version=_version(), log_level="WARNING")

    async def call(fn: Callable[..., str], *args: Any, **kwargs: Any) -> str:
        try:
            return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))
        except ValueError as e:  # ToolInputError, InvalidMemory, the search core's checks
            raise ToolError(str(e)) from None
        except ForeignDatabase as e:
            raise ToolError(str(e)) from None
        except sqlite3.OperationalError as e:
            log.warning("database error in %s: %s", getattr(fn, "__name__", fn), e)
            raise ToolError(f"the memory database could not be read or written ({e}); try again") from None
        except Exception:
            log.exception("tool %s failed", getattr(fn, "__name__", fn))
            raise ToolError(f"internal error in Kenning; details are in {t.paths.logs}/mcp.log") from None

    @server.tool(name="search_memory", title="Search memory of past sessions", description=SEARCH_DESCRIPTION,
                 annotations=READ_ONLY, structured_output=False)
    async def search_memory(
        ctx: Context,
        query: Annotated[str, Field(description="Words to look for, e.g. 'vat rounding' or 'TypeError parse_date'. "
                                                "May be empty when a filter is given (then newest first).")] = "",
        project: Annotated[str | None, Field(description="Project name (default: the current project); "
                                                         "'*' searches every project.")] = None,
        type: Annotated[str | None, Field(description="Only these types, comma-separated: bugfix, feature, "
                                                      "refactor, change, discovery, decision, security_alert, "
                                                      "security_note, summary, prompt.")] = None,
        since: Annotated[str | None, Field(description="Only after this: 2026-11-30, 2026-11-30T14:05, 7d, 12h, "
                                                       "yesterday.")] = None,
        until: Annotated[str | None, Field(description="Only before this (a date includes that day).")] = None,
        file: Annotated[str | None, Field(description="Only memories that read or changed this file path.")] = None,
        limit: Annotated[int, Field(description="How many rows (1-100).")] = 20,
        offset: Annotated[int, Field(description="Skip this many rows (paging).")] = 0,
    ) -> str:
        cwd = await where.get(ctx)
        return await call(t.search, query, cwd=cwd, project=project, type=type, since=since, until=until,
                          file=file, limit=limit, offset=offset)

    @server.tool(name="memory_timeline", title="Memory timeline around an observation",
                 description=TIMELINE_DESCRIPTION, annotations=READ_ONLY, structured_output=False)
    async def memory_timeline(
        ctx: Context,
        id: Annotated[int | str | None, Field(description="Observation id from search_memory, e.g. 12 or '#12'.")]
        = None,
        query: Annotated[str | None, Field(description="Instead of id: center on the best match for these words.")]
        = None,
        before: Annotated[int, Field(description="Rows before (0-20).")] = 3,
        after: Annotated[int, Field(description="Rows after (0-20).")] = 3,
        project: Annotated[str | None, Field(description="Project for a query (default: the current one).")] = None,
    ) -> str:
        cwd = await where.get(ctx)
        return await call(t.timeline, id, query, cwd=cwd, project=project, before=before, after=after)

    @server.tool(name="get_observations", title="Get full memory records by id", description=GET_DESCRIPTION,
                 annotations=READ_ONLY, structured_output=False)
    async def get_observations(
        ctx: Context,
        ids: Annotated[list[int | str], Field(description="Ids from search_memory / memory_timeline, "
                                                          "e.g. [12, 15] or ['#12', 'S3']; at most 20.")],
    ) -> str:
        cwd = await where.get(ctx)
        return await call(t.get, ids, cwd=cwd)

    @server.tool(name="save_memory", title="Save a memory for future sessions", description=SAVE_DESCRIPTION,
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False),
                 structured_output=False)
    async def save_memory(
        ctx: Context,
        text: Annotated[str, Field(description="What to remember, self-contained: the fact or decision and why.")],
        title: Annotated[str | None, Field(description="A short title (default: the first sentence).")] = None,
        type: Annotated[str | None, Field(description="discovery (default), decision, bugfix, feature, change, "
                                                      "refactor, security_note, security_alert.")] = None,
        project: Annotated[str | None, Field(description="Project name (default: the current project).")] = None,
    ) -> str:
        cwd = await where.get(ctx)
        return await call(t.save, text, cwd=cwd, title=title, type=type, project=project)

    @server.tool(name="forget_memory", title="Forget memories by id", description=FORGET_DESCRIPTION,
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False),
                 structured_output=False)
    async def forget_memory(
        ids: Annotated[list[int | str], Field(description="Observation ids to delete, e.g. [12]; at most 100.")],
    ) -> str:
        return await call(t.forget, ids)

    @server.tool(name="supersede_memory", title="Mark memories as replaced by a newer one",
                 description=SUPERSEDE_DESCRIPTION,
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False),
                 structured_output=False)
    async def supersede_memory(
        ctx: Context,
        ids: Annotated[list[int | str], Field(description="Ids of the memories no longer true, e.g. [12]; at most "
                                                          "100.")],
        by: Annotated[int | str, Field(description="Id of the memory that replaces them, e.g. 31.")],
    ) -> str:
        cwd = await where.get(ctx)
        return await call(t.supersede, ids, by, cwd=cwd)

    @server.tool(name="memory_guide", title="How to use the memory tools", description=GUIDE_DESCRIPTION,
                 annotations=READ_ONLY, structured_output=False)
    async def memory_guide() -> str:
        return GUIDE

    return server


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kenning")
    except Exception:
        return "0"


def setup_logging(paths: Paths, level: str) -> None:
    """Everything (ours and the SDK's) to ``logs/mcp.log``; nothing to stdout or stderr."""
    path = os.path.join(paths.logs, "mcp.log")
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]  # before MCPServer(): its basicConfig() is then a no-op
    root.setLevel(logging.WARNING)
    logging.getLogger("kenning").setLevel(level)
    try:
        os.chmod(path, FILE_MODE)
    except OSError:
        pass
    warnings.simplefilter("ignore")  # a warning would land on the client's stderr log


def run(paths: Paths | None = None) -> int:
    """Serve on stdin/stdout until the client closes the pipe."""
    from kenning.settings import load

    paths = paths or Paths()
    paths.ensure()
    settings, problems = load(paths)
    setup_logging(paths, settings.log_level)
    for p in problems:
        log.warning("settings: %s", p)
    log.info("MCP server starting (pid %d, data dir %s)", os.getpid(), paths.root)
    try:
        build(MemoryTools(paths, settings)).run("stdio")
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    log.info("MCP server stopped")
    return 0
