"""Our hand-written MCP server against the official SDK as the oracle, and its wire behaviour on
what the SDK's own server could not answer.

* The tool listing equals what the SDK's ``MCPServer`` derives from typed signatures of the same
  tools (schemas, defaults, required, titles, hints), compared through the SDK's client.
* The SDK's client (its pydantic models validate every message) runs the handshake, ``ping``,
  ``roots/list`` back to the client and a tool call, in both connect modes.
* Raw lines: an unparseable message, a batch, a lone surrogate (issue 11: the SDK's server gave
  no reply at all), invalid UTF-8, a cancelled call; the server never imports the SDK.
"""

from __future__ import annotations

import inspect
import json
import select
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp_helpers import SERVER_ARGS, run_client, text_of

from kenning.mcp import schema, server

PY_TYPES: dict[str, Any] = {"str": str, "str?": str | None, "int": int, "id": int | str, "id?": int | str | None,
                            "ids": list[int | str]}


def reference_server() -> Any:
    """The SDK's server with the same tools declared as typed Python functions."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations
    from pydantic import Field

    ref = MCPServer(server.SERVER_NAME, title=server.SERVER_TITLE, instructions=server.INSTRUCTIONS)
    for tool in schema.TOOLS:
        params = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Annotated[PY_TYPES[p.kind], Field(description=p.description)],
                                    default=inspect.Parameter.empty if p.default is schema.REQUIRED else p.default)
                  for p in tool.params]

        def fn(**kw: Any) -> str:
            return ""

        fn.__name__ = fn.__qualname__ = tool.name
        fn.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
        fn.__annotations__ = {p.name: p.annotation for p in params} | {"return": str}
        a = tool.annotations
        ref.tool(name=tool.name, title=tool.title, description=tool.description, structured_output=False,
                 annotations=ToolAnnotations(read_only_hint=a["readOnlyHint"], destructive_hint=a["destructiveHint"],
                                             idempotent_hint=a["idempotentHint"],
                                             open_world_hint=a["openWorldHint"]))(fn)
    return ref


def listing(tools: Any) -> dict[str, dict[str, Any]]:
    return {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in tools.tools}


def test_the_tool_listing_is_what_the_sdk_derives_from_typed_signatures(tmp_path: Path) -> None:
    from mcp import Client

    async def listed_by_reference() -> Any:
        async with Client(reference_server()) as c:
            return await c.list_tools()

    async def listed(c: Any) -> Any:
        return await c.list_tools()

    expected = listing(anyio.run(listed_by_reference))
    ours = listing(run_client(listed, env={"KENNING_DATA_DIR": str(tmp_path / "data")}, cwd=str(tmp_path)))
    assert set(ours) == set(expected)
    for name in expected:
        assert ours[name]["inputSchema"] == expected[name]["inputSchema"], name
        for key in ("title", "description", "annotations"):
            assert ours[name].get(key) == expected[name].get(key), (name, key)


def test_the_sdk_client_handshake_ping_roots_and_a_call_in_both_modes(tmp_path: Path) -> None:
    from mcp_types import ListRootsResult, Root

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    asked: list[bool] = []

    async def roots(_ctx: Any) -> ListRootsResult:
        asked.append(True)
        return ListRootsResult(roots=[Root.model_validate({"uri": project.as_uri(), "name": "proj"})])

    async def legacy(c: Any) -> tuple[str, Any, Any, str | None, str, bool]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ping is deprecated in the 2026 protocol, not in 2025-11-25
            await c.send_ping()
        r = await c.call_tool("save_memory", {"text": "The roots name the project of a saved memory."})
        return c.protocol_version, c.server_info, c.server_capabilities, c.instructions, text_of(r), r.is_error

    env = {"KENNING_DATA_DIR": str(tmp_path / "data")}
    version, info, caps, instructions, text, is_error = run_client(legacy, env=env, cwd=str(tmp_path), mode="legacy",
                                                                   list_roots_callback=roots)
    assert version == "2025-11-25" and info.name == "kenning" and info.version == server.VERSION
    assert caps.tools is not None and instructions == server.INSTRUCTIONS
    assert not is_error and "in project proj:" in text and asked == [True]  # the roots named it, not the cwd

    async def auto(c: Any) -> str:  # discover probe answered "method not found": the SDK falls back
        return text_of(await c.call_tool("memory_guide", {}))

    assert "search_memory" in run_client(auto, env=env, cwd=str(tmp_path))


class Raw:
    def __init__(self, tmp: Path, code: str | None = None) -> None:
        argv = [sys.executable, *SERVER_ARGS] if code is None else [sys.executable, "-I", "-c", code]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=tmp, env={"KENNING_DATA_DIR": str(tmp / "data"), "PATH": "/usr/bin:/bin"})

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 20.0) -> dict[str, Any]:
        assert self.proc.stdout
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer within {timeout} s"
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        return json.loads(line)

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin and self.proc.stderr
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=30)
        return rc, self.proc.stderr.read()


def msg(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}).encode()


INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def test_every_request_gets_an_answer_even_when_the_sdk_could_not_parse_it(tmp_path: Path) -> None:
    w = Raw(tmp_path)
    w.send(msg(1, "initialize", INIT))
    assert w.recv()["result"]["serverInfo"]["name"] == "kenning"
    # A lone surrogate (valid JSON, not valid Unicode): the SDK's server answered nothing at all.
    w.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_memory",'
           b'"arguments":{"query":"caf\\udce9"}}}')
    bad = w.recv()
    assert bad["id"] == 2 and bad["error"]["code"] == -32602 and "Unicode" in bad["error"]["message"]
    # Invalid UTF-8 bytes inside a string: the same answer, to the same id.
    w.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memory",'
           b'"arguments":{"query":"caf\xe9"}}}')
    assert w.recv()["error"]["code"] == -32602
    w.send(b"{not json")
    parse = w.recv()
    assert parse["id"] is None and parse["error"]["code"] == -32700
    w.send(b"[" + msg(4, "ping") + b"]")  # a batch: MCP sends one message per line
    assert w.recv()["error"]["code"] == -32600
    w.send(b'{"jsonrpc":"2.0","id":5}')
    assert w.recv() == {"jsonrpc": "2.0", "id": 5,
                        "error": {"code": -32600, "message": "Invalid Request: method must be a string"}}
    w.send(b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}')
    assert w.recv()["error"]["code"] == -32602
    w.send(msg(7, "resources/list"))
    assert w.recv()["error"] == {"code": -32601, "message": "Method not found", "data": "resources/list"}
    w.send(msg(8, "ping"))
    assert w.recv() == {"jsonrpc": "2.0", "id": 8, "result": {}}
    rc, err = w.close()
    assert rc == 0, err.decode()


def test_a_cancelled_call_gets_no_answer_and_a_slow_one_does_not_block_the_others(tmp_path: Path) -> None:
    w = Raw(tmp_path)
    # The client says it answers roots/list, then never does: the call waits on it (up to 2 s).
    w.send(msg(1, "initialize", {**INIT, "capabilities": {"roots": {}}}))
    w.recv()
    w.send(msg(2, "tools/call", {"name": "search_memory", "arguments": {"query": "x"}}))
    ask = w.recv()
    assert ask["method"] == "roots/list" and isinstance(ask["id"], str)
    started = time.monotonic()
    w.send(msg(3, "ping"))  # answered while the call waits
    assert w.recv()["id"] == 3 and time.monotonic() - started < 1.5
    w.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 2, "reason": "user"}}).encode())
    time.sleep(server.ROOTS_TIMEOUT + 0.5)  # the call finishes now, and must stay silent
    w.send(msg(4, "ping"))
    assert w.recv()["id"] == 4
    rc, err = w.close()
    assert rc == 0, err.decode()


def test_the_server_never_imports_the_sdk_and_answers_initialize_before_its_tools_load(tmp_path: Path) -> None:
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
            "from kenning.mcp.server import run\nrun()")
    w = Raw(tmp_path, code)
    w.send(msg(1, "initialize", INIT))
    assert "result" in w.recv()
    w.send(msg(2, "tools/call", {"name": "search_memory", "arguments": {"query": "x"}}))
    assert w.recv()["result"]["isError"] is False
    rc, err = w.close()
    assert rc == 0
    modules = set(err.decode().split("MODULES ", 1)[1].split())
    assert "kenning.mcp.tools" in modules
    assert not modules & {"mcp", "mcp_types", "pydantic", "anyio", "starlette", "typing_extensions"}, modules
