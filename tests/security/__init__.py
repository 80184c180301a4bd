"""Security and fault proofs (issue 5): shared helpers for the tests in this folder.

Everything here talks to real processes: raw HTTP over a loopback socket (so every header,
including a missing or empty ``Host``, is exactly what the test wrote), the real hook
processes through ``tests.conftest.Home``, and the bytes Kenning left on disk.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any


class Response:
    """A parsed HTTP response; ``status`` is None when the server closed without answering."""

    def __init__(self, status: int | None, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.body[:200]!r})"


def raw_http(port: int, request: bytes, *, host: str = "127.0.0.1", timeout: float = 15.0) -> Response:
    """Send ``request`` byte for byte and read the answer until the server closes."""
    sock = socket.create_connection((host, port), timeout=timeout)
    chunks: list[bytes] = []
    try:
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server refused to read it all (an oversized request): read what it answered
        while True:
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                break
            if not data:
                break
            chunks.append(data)
    finally:
        sock.close()
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    if not raw.startswith(b"HTTP/"):
        return Response(None, {}, raw)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    return Response(status, headers, body)


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2:]
    return bytes(out)


def http(port: int, method: str, path: str, *, token: str | None = None, headers: dict[str, str] | None = None,
         body: bytes = b"", host_header: str | None = None, omit_host: bool = False) -> Response:
    """One HTTP/1.1 request. ``host_header`` replaces the Host line; ``omit_host`` leaves it out."""
    lines = [f"{method} {path} HTTP/1.1"]
    if not omit_host:
        lines.append(f"Host: {host_header if host_header is not None else f'127.0.0.1:{port}'}")
    lines.append("Connection: close")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body or method in ("POST", "PUT", "PATCH", "DELETE"):
        lines.append(f"Content-Length: {len(body)}")
        if body:
            lines.append("Content-Type: application/json")
    return raw_http(port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


def tree_bytes(root: str | os.PathLike[str], *, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every regular file under ``root`` (path relative to root → its raw bytes)."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath, f)
            rel = str(p.relative_to(root))
            if any(rel.startswith(s) for s in skip):
                continue
            try:
                if not stat.S_ISREG(os.lstat(p).st_mode):
                    continue  # the worker's poke pipe holds no data (and reading it would wait for a writer)
                out[rel] = p.read_bytes()
            except OSError:
                pass
    return out


def files_containing(tree: dict[str, bytes], needle: str) -> list[str]:
    """Files whose bytes hold ``needle`` as UTF-8, as a JSON-escaped string, or lower-cased (FTS terms)."""
    forms = {needle.encode(), json.dumps(needle)[1:-1].encode(), needle.lower().encode()}
    return sorted(rel for rel, data in tree.items() if any(f in data or f in data.lower() for f in forms))


def wait_until(cond: Any, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def base_payload(project: str, session_id: str, event: str, **fields: Any) -> dict[str, Any]:
    """A Claude Code hook payload of ``event`` for ``session_id`` in ``project``."""
    return {"session_id": session_id, "transcript_path": f"/tmp/transcripts/{session_id}.jsonl", "cwd": project,
            "hook_event_name": event, **fields}


def prompt(project: str, sid: str, text: str) -> dict[str, Any]:
    return base_payload(project, sid, "UserPromptSubmit", prompt=text, permission_mode="default")


def bash(project: str, sid: str, tool_use_id: str, command: str, stdout: str = "", stderr: str = "",
         failed: bool = False) -> dict[str, Any]:
    if failed:
        return base_payload(project, sid, "PostToolUseFailure", tool_name="Bash", tool_use_id=tool_use_id,
                            tool_input={"command": command, "description": "run it"},
                            error=f"Exit code 1\n{stdout}\n{stderr}".strip(), is_interrupt=False)
    return base_payload(project, sid, "PostToolUse", tool_name="Bash", tool_use_id=tool_use_id,
                        tool_input={"command": command, "description": "run it"},
                        tool_response={"stdout": stdout, "stderr": stderr, "interrupted": False,
                                       "isImage": False})


def write(project: str, sid: str, tool_use_id: str, rel_path: str, content: str) -> dict[str, Any]:
    path = os.path.join(project, rel_path)
    return base_payload(project, sid, "PostToolUse", tool_name="Write", tool_use_id=tool_use_id,
                        tool_input={"file_path": path, "content": content},
                        tool_response={"type": "create", "filePath": path, "content": content,
                                       "structuredPatch": [], "originalFile": None})


def stop(project: str, sid: str, message: str) -> dict[str, Any]:
    return base_payload(project, sid, "Stop", stop_hook_active=False, last_assistant_message=message)


def session_end(project: str, sid: str) -> dict[str, Any]:
    return base_payload(project, sid, "SessionEnd", reason="other")


def session_start(project: str, sid: str, source: str = "startup") -> dict[str, Any]:
    return base_payload(project, sid, "SessionStart", source=source, model="claude-sonnet-4-5")


def hook_json(r: Any) -> dict[str, Any] | None:
    """The hook contract: exit 0, stdout empty or exactly one JSON object."""
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]!r}"
    text = r.stdout.decode("utf-8").strip()
    if not text:
        return None
    value = json.loads(text)
    assert isinstance(value, dict), text[:300]
    return value


def context_of(r: Any) -> str:
    """The SessionStart hook's injected text ('' when it printed nothing)."""
    out = hook_json(r)
    if out is None:
        return ""
    hso = out["hookSpecificOutput"]
    assert hso["hookEventName"] == "SessionStart"
    return str(hso.get("additionalContext") or "")


# --------------------------------------------------------------------------- the real app

def build_app(data_dir: str, port: int) -> tuple[Any, Any, Any]:
    """The worker's ASGI app built exactly as ``kenning.worker.server.run`` builds it.

    Returns ``(app, state, conn)``; the pipeline thread is not started (call
    ``state.thread.start()`` when requests should be served by a live pipeline).
    """
    from kenning.observer.registry import choose
    from kenning.paths import Paths, ensure_token
    from kenning.service import Memory
    from kenning.settings import load
    from kenning.store.db import open_db
    from kenning.worker.app import WorkerState, create_app
    from kenning.worker.pipeline import Pipeline, PipelineThread

    paths = Paths(data_dir)
    paths.ensure()
    settings, problems = load(paths, create=True)
    ensure_token(paths)
    conn = open_db(paths.db)
    observer, note = choose(settings)
    thread = PipelineThread(Pipeline(paths, conn, observer))
    state = WorkerState(paths=paths, memory=Memory(paths, settings, pooled=True), thread=thread, port=port,
                        start_token="test-start-token", started_at=time.time(), observer_note=note,
                        settings_problems=problems)
    return create_app(state), state, conn


def routes_of(app: Any) -> list[tuple[str, tuple[str, ...]]]:
    """(concrete path, methods) of every route of the app behind the guard; path params become ``1``."""
    import re

    from starlette.routing import Mount, Route, WebSocketRoute

    inner = app
    while not hasattr(inner, "routes") and hasattr(inner, "app"):  # the counter, then the guard
        inner = inner.app
    out: list[tuple[str, tuple[str, ...]]] = []

    def walk(routes: list[Any], prefix: str) -> None:
        for r in routes:
            path = prefix + re.sub(r"\{[^}]+\}", "1", getattr(r, "path", ""))
            if isinstance(r, Mount):
                sub = getattr(r, "routes", None)
                if sub:
                    walk(list(sub), path)
                else:  # a mounted app (static files…): probe its root
                    out.append((path.rstrip("/") + "/", ("GET",)))
            elif isinstance(r, Route):
                methods = sorted(m for m in (r.methods or {"GET"}) if m != "HEAD")
                out.append((path, tuple(methods)))
            elif isinstance(r, WebSocketRoute):
                out.append((path, ("GET",)))

    walk(list(inner.routes), "")
    return out
