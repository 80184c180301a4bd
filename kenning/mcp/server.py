"""The MCP server (stdio) exposing Kenning's memory tools: ``kenning mcp``.

MCP over stdio is newline-delimited JSON-RPC; :mod:`kenning.mcp.protocol` speaks it with the
standard library alone, so the handshake (``initialize``, ``tools/list``) is answered in the
time it takes Python to start, and the tools themselves (:mod:`kenning.mcp.tools`: SQLite,
the search core) are imported in the background meanwhile. The MCP SDK is the test oracle:
its own client drives this server in tests/mcp, and the real Claude Code CLI in tests/e2e.

Claude Code defers MCP tool schemas behind a tool search, so the model finds these tools by
their names and descriptions alone: both say "memory", "search", "past sessions" plainly.
Nothing but JSON-RPC goes to stdout (fd 1 is pointed at stderr; logs go to
``<data dir>/logs/mcp.log``). A tool never takes the server down: a bad argument comes back as
a tool error the model can act on, anything unexpected as a logged, generic tool error. Every
answer goes through the fence's neutraliser (kenning/context/fence.py): stored text that poses as
a ``</kenning-context>`` or ``<system-reminder>`` tag reaches the model as inert bracketed words.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from kenning.mcp import protocol, schema
from kenning.paths import FILE_MODE, Paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.mcp.tools import MemoryTools

SERVER_NAME = "kenning"  # tools appear as mcp__kenning__<tool>; the hooks skip mcp__kenning__*
SERVER_TITLE = "Kenning memory"
VERSION = "0.1.0"
# Handshake-era revisions (initialize); a client asking for another one is offered the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ROOTS_TIMEOUT = 2.0
ROOTS_TTL = 60.0

INSTRUCTIONS = (
    "Kenning is the long-term memory of past coding sessions (work done, bugs fixed, decisions, gotchas), "
    "per project. Before re-investigating something that may have history, search_memory; then "
    "get_observations for the few records you need. save_memory keeps a fact for future sessions. "
    "memory_guide explains the tools."
)


class Log:
    """``logs/mcp.log``, set up on first use (``logging`` costs ~15 ms to import: not before the handshake)."""

    def __init__(self, paths: Paths, level: str = "INFO") -> None:
        self.paths = paths
        self.level = level
        self._logger: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._logger is None:
                self._logger = _setup_logging(self.paths, self.level)
            return self._logger

    def __getattr__(self, name: str) -> Any:  # log.info(...), log.warning(...), log.exception(...)
        return getattr(self.get(), name)


def _setup_logging(paths: Paths, level: str) -> Any:
    """Everything (ours and any library's) to ``logs/mcp.log``; nothing to stdout or stderr."""
    import logging
    import logging.handlers
    import warnings

    path = os.path.join(paths.logs, "mcp.log")
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("kenning").setLevel(level)
    try:
        os.chmod(path, FILE_MODE)
    except OSError:
        pass
    warnings.simplefilter("ignore")  # a warning would land on the client's stderr log
    return logging.getLogger("kenning.mcp")


class KenningServer:
    """The MCP methods over one data directory; the tools load in the background after start."""

    def __init__(self, session: protocol.Session, paths: Paths, tools: MemoryTools | None = None) -> None:
        self.session = session
        self.paths = paths
        self.log = Log(paths)
        self.client_caps: dict[str, Any] = {}
        self._tools = tools
        self._tools_ready = threading.Event()
        self._tools_error: BaseException | None = None
        self._dir: tuple[str, float] | None = None
        if tools is not None:
            self._tools_ready.set()
        session.inline.update({"initialize": self.initialize, "ping": lambda params: {},
                               "tools/list": self.list_tools})
        session.threaded["tools/call"] = self.call_tool

    # ------------------------------------------------------------------- background load
    def load_tools(self) -> None:
        """Import the tools and read the settings (on a thread of its own, right after start)."""
        try:
            from kenning.mcp.tools import MemoryTools
            from kenning.settings import load

            settings, problems = load(self.paths)
            self.log.level = settings.log_level
            log = self.log.get()
            for p in problems:
                log.warning("settings: %s", p)
            log.info("MCP server starting (pid %d, data dir %s)", os.getpid(), self.paths.root)
            self._tools = MemoryTools(self.paths, settings)
        except BaseException as e:  # reported on the first call, with what failed
            self._tools_error = e
        finally:
            self._tools_ready.set()

    def tools(self) -> MemoryTools:
        self._tools_ready.wait()
        if self._tools is None:
            raise RuntimeError(f"the memory tools could not be loaded: {self._tools_error!r}")
        return self._tools

    # ------------------------------------------------------------------------- methods
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        caps = params.get("capabilities")
        self.client_caps = caps if isinstance(caps, dict) else {}
        return {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "title": SERVER_TITLE, "version": VERSION},
                "instructions": INSTRUCTIONS}

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [t.listing() for t in schema.TOOLS]}

    def call_tool(self, params: dict[str, Any], request_id: Any) -> dict[str, Any]:
        name = params.get("name")
        tool = schema.BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            return _result(f"Unknown tool: {str(name)[:100]}", error=True)
        try:
            args = tool.arguments(params.get("arguments"))
        except schema.ArgumentError as e:
            return _result(str(e), error=True)
        try:
            text = self._run(tool.name, args)
        except ValueError as e:  # ToolInputError, InvalidMemory, the search core's checks
            return _result(str(e), error=True)
        except Exception as e:
            import sqlite3

            from kenning.store import health
            from kenning.store.identity import ForeignDatabase

            if isinstance(e, ForeignDatabase):  # not our database: say which file and what to do
                return _result(str(e), error=True)
            if isinstance(e, sqlite3.Error):  # damaged, locked, read-only, full: as every surface says it
                self.log.warning("database error in %s: %s", tool.name, e)
                kind, message = health.classify(self.paths.db, e)
                if kind == health.CORRUPT:
                    health.note_damage(self.paths.db, message)
                return _result(f"Kenning's memory is unavailable: {message}", error=True)
            self.log.exception("tool %s failed", tool.name)
            return _result(f"internal error in Kenning; details are in {self.paths.logs}/mcp.log", error=True)
        if tool.name != "memory_guide":
            from kenning.store.health import noted_damage

            damage = noted_damage(self.paths.db)
            if damage:  # what was read came from the intact part of a damaged file: never silent
                from kenning.context.session_start import damage_note

                text = damage_note(damage) + "\n\n" + text
        return _result(text)

    def _run(self, name: str, a: dict[str, Any]) -> str:
        if name == "memory_guide":
            from kenning.mcp.tools import GUIDE

            return GUIDE
        t = self.tools()
        cwd = self.client_dir()
        if name == "forget_memory":
            return t.forget(a["ids"], cwd=cwd)
        if name == "search_memory":
            return t.search(a["query"], cwd=cwd, project=a["project"], type=a["type"], since=a["since"],
                            until=a["until"], file=a["file"], limit=a["limit"], offset=a["offset"])
        if name == "memory_timeline":
            return t.timeline(a["id"], a["query"], cwd=cwd, project=a["project"], before=a["before"],
                              after=a["after"])
        if name == "get_observations":
            return t.get(a["ids"], cwd=cwd)
        if name == "save_memory":
            return t.save(a["text"], cwd=cwd, title=a["title"], type=a["type"], project=a["project"])
        if name == "supersede_memory":
            return t.supersede(a["ids"], a["by"], cwd=cwd)
        if name == "memory_ledger":
            return t.ledger(a["id"], a["session"], cwd=cwd)
        raise AssertionError(name)

    # ------------------------------------------------------------------------ the cwd
    def client_dir(self) -> str:
        """The client's working directory: MCP roots, else ``CLAUDE_PROJECT_DIR``, else our cwd.

        Claude Code starts one server per session in the session's directory and answers
        ``roots/list``; other clients may only do one of the two. Cached briefly: a round trip
        to the client per tool call is wasted when the directory does not change.
        """
        if self._dir is not None and time.monotonic() - self._dir[1] < ROOTS_TTL:
            return self._dir[0]
        found = self._from_roots() or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
        self._dir = (found, time.monotonic())
        return found

    def _from_roots(self) -> str | None:
        if "roots" not in self.client_caps:
            return None
        try:
            result = self.session.request("roots/list", None, ROOTS_TIMEOUT)
            for root in (result or {}).get("roots") or []:
                uri = root.get("uri") if isinstance(root, dict) else None
                if isinstance(uri, str) and uri.startswith("file://"):
                    from urllib.parse import unquote, urlparse

                    url = urlparse(uri)
                    if url.path:
                        return unquote(url.path)
        except (protocol.RPCError, TimeoutError, AttributeError) as e:  # a client without roots, a timeout
            self.log.debug("roots/list unavailable: %r", e)
        return None


def _result(text: str, *, error: bool = False) -> dict[str, Any]:
    # Every answer holds stored text (titles, facts, narratives, summaries, project names) or echoes
    # the call's own: a fence or system tag in it reaches the model as plain bracketed words.
    from kenning.context.fence import neutralise

    return {"content": [{"type": "text", "text": neutralise(text)}], "isError": error}


def run(paths: Paths | None = None) -> int:
    """Serve on stdin/stdout until the client closes the pipe."""
    paths = paths or Paths()
    paths.ensure()
    out = protocol.private_stdout()
    server: KenningServer | None = None

    def on_error(e: BaseException) -> None:
        if server is not None:
            server.log.error("MCP protocol error: %r", e)

    session = protocol.Session(sys.stdin.buffer, out, on_error=on_error)
    server = KenningServer(session, paths)
    threading.Thread(target=server.load_tools, name="kenning-mcp-load", daemon=True).start()
    try:
        session.serve()
    except KeyboardInterrupt:
        pass
    if server._tools_ready.is_set():
        server.log.info("MCP server stopped")
    return 0
