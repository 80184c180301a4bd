"""JSON-RPC 2.0 over stdio, as MCP's stdio transport speaks it: one JSON message per line.

Small on purpose: the MCP SDK costs ~1.3 s of imports before the first byte, and Claude Code
waits for the handshake before its first model request. This module imports the standard
library only. It answers every request that carries a usable id, whatever is wrong with it
(unparseable JSON gets ``-32700`` with a null id; a lone surrogate or a bad shape
``-32600``/``-32602``), runs handlers that may block on a thread of their own so ``ping``,
cancellation and the answers to our own requests (``roots/list``) keep flowing, and writes
nothing but JSON-RPC to the stdout it was given.
"""

from __future__ import annotations

import json
import os
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, BinaryIO

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MAX_LINE = 32 * 1024 * 1024  # a longer line is answered with a parse error, not buffered
MAX_CONCURRENT = 4           # handlers running at once on their own threads
MAX_QUEUED = 64              # requests running or waiting for a slot; past that, an error at once


class RPCError(Exception):
    """Raised by a handler: becomes the JSON-RPC error of its request."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def has_lone_surrogate(value: Any) -> bool:
    """True when a decoded JSON value holds a string that is not valid Unicode (``"\\udcff"``)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


class Session:
    """One client on a pair of byte streams.

    ``inline`` handlers answer on the reading thread (cheap ones: initialize, tools/list,
    ping); ``threaded`` ones each get a thread (tool calls, which may wait on the database, the
    worker, or a request back to the client). A handler returns the ``result`` object or raises
    :class:`RPCError`; notifications go to ``on_notification``.
    """

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, *, on_error: Callable[[BaseException], None]) -> None:
        self._in = stdin
        self._out = stdout
        self._write_lock = threading.Lock()
        self._on_error = on_error
        self.inline: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self.threaded: dict[str, Callable[[dict[str, Any], Any], Any]] = {}
        self.on_notification: Callable[[str, dict[str, Any]], None] = lambda method, params: None
        self._cancelled: set[Any] = set()
        self._running: dict[Any, threading.Thread] = {}
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT)
        self._lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[str, tuple[threading.Event, list[Any]]] = {}
        self.closed = threading.Event()

    # ------------------------------------------------------------------------- output
    def send(self, message: dict[str, Any]) -> None:
        # ASCII: valid whatever the text holds (a lone surrogate in an echoed string included).
        data = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"
        with self._write_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (OSError, ValueError):  # the client went away: nothing to tell it
                self.closed.set()

    def _reply(self, rid: Any, result: Any = None, error: RPCError | None = None) -> None:
        if error is not None:
            err: dict[str, Any] = {"code": error.code, "message": error.message}
            if error.data is not None:
                err["data"] = error.data
            self.send({"jsonrpc": "2.0", "id": rid, "error": err})
        else:
            self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def request(self, method: str, params: dict[str, Any] | None, timeout: float) -> Any:
        """Send a request to the client and wait for its result (RPCError on its error, TimeoutError)."""
        with self._lock:
            self._next_id += 1
            rid = f"kenning-{self._next_id}"
            done: threading.Event = threading.Event()
            box: list[Any] = []
            self._waiting[rid] = (done, box)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        try:
            if not done.wait(timeout) or not box:
                raise TimeoutError(f"{method}: no answer within {timeout} s")
        finally:
            with self._lock:
                self._waiting.pop(rid, None)
        answer = box[0]
        if "error" in answer:
            e = answer["error"] if isinstance(answer["error"], dict) else {}
            raise RPCError(int(e.get("code") or INTERNAL_ERROR), str(e.get("message") or "error"), e.get("data"))
        return answer.get("result")

    # -------------------------------------------------------------------------- input
    def serve(self) -> None:
        """Read and dispatch until the client closes stdin; then let running handlers finish."""
        try:
            while not self.closed.is_set():
                line = self._in.readline(MAX_LINE)
                if not line:
                    break
                if not line.endswith(b"\n") and len(line) >= MAX_LINE:
                    self._skip_rest_of_line()
                    self._reply(None, error=RPCError(PARSE_ERROR, f"message longer than {MAX_LINE} bytes"))
                    continue
                if line.strip():
                    self.handle_line(line)
        finally:
            self.closed.set()
            for t in list(self._running.values()):
                t.join(timeout=5)

    def _skip_rest_of_line(self) -> None:
        while True:
            chunk = self._in.readline(MAX_LINE)
            if not chunk or chunk.endswith(b"\n"):
                return

    def handle_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line.decode("utf-8", "surrogateescape"))
        except (ValueError, RecursionError) as e:
            self._reply(None, error=RPCError(PARSE_ERROR, f"Parse error: {str(e)[:200]}"))
            return
        if not isinstance(msg, dict):
            # A batch (an array) or a bare value: MCP sends one object per line.
            self._reply(None, error=RPCError(INVALID_REQUEST, "Invalid Request: expected one JSON-RPC object"))
            return
        rid = msg.get("id")
        has_id = "id" in msg
        valid_id = isinstance(rid, str | int) and not isinstance(rid, bool)
        method = msg.get("method")
        if "method" not in msg and has_id and ("result" in msg or "error" in msg):
            self._answer(msg)
            return
        if has_id and not valid_id:
            self._reply(None, error=RPCError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer"))
            return
        if not isinstance(method, str):
            if valid_id:
                self._reply(rid, error=RPCError(INVALID_REQUEST, "Invalid Request: method must be a string"))
            return
        params = msg.get("params", {})
        if params is None:
            params = {}
        if not has_id:
            if isinstance(params, dict):
                self._notification(method, params)
            return
        if not isinstance(params, dict):
            self._reply(rid, error=RPCError(INVALID_PARAMS, "Invalid params: params must be an object"))
            return
        if has_lone_surrogate(method) or has_lone_surrogate(params):
            self._reply(rid, error=RPCError(INVALID_PARAMS, "Invalid params: text that is not valid Unicode "
                                                           "(a lone surrogate such as \\udcff)"))
            return
        if method in self.inline:
            self._run(rid, lambda: self.inline[method](params))
        elif method in self.threaded:
            self._start(rid, method, params)
        else:
            self._reply(rid, error=RPCError(METHOD_NOT_FOUND, "Method not found", method))

    def _answer(self, msg: dict[str, Any]) -> None:
        with self._lock:
            waiter = self._waiting.get(msg.get("id"))  # type: ignore[arg-type]
        if waiter is not None:
            waiter[1].append(msg)
            waiter[0].set()

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            with self._lock:
                self._cancelled.add(params.get("requestId"))
            return
        try:
            self.on_notification(method, params)
        except Exception as e:
            self._on_error(e)

    def _run(self, rid: Any, fn: Callable[[], Any]) -> None:
        try:
            result = fn()
        except RPCError as e:
            self._finish(rid, error=e)
        except Exception as e:
            self._on_error(e)
            self._finish(rid, error=RPCError(INTERNAL_ERROR, f"Internal error: {type(e).__name__}"))
        else:
            self._finish(rid, result)

    def _finish(self, rid: Any, result: Any = None, error: RPCError | None = None) -> None:
        with self._lock:
            cancelled = rid in self._cancelled
            self._cancelled.discard(rid)
            self._running.pop(rid, None)
        if not cancelled:  # a cancelled request gets no answer (MCP: the client has moved on)
            self._reply(rid, result, error)

    def _start(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        handler = self.threaded[method]
        with self._lock:
            busy = len(self._running) >= MAX_QUEUED
        if busy:
            self._reply(rid, error=RPCError(INTERNAL_ERROR, f"busy: {MAX_QUEUED} requests are already waiting"))
            return

        def work() -> None:
            # The slot is taken here, not on the reading thread: that one must stay free to read
            # the answers the running handlers wait for (roots/list).
            with self._slots:
                self._run(rid, lambda: handler(params, rid))

        t = threading.Thread(target=work, name=f"mcp-{method}", daemon=True)
        with self._lock:
            self._running[rid] = t
        t.start()


def private_stdout() -> BinaryIO:
    """The real stdout for JSON-RPC; fd 1 is pointed at stderr so a stray print cannot corrupt it."""
    import sys

    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)
