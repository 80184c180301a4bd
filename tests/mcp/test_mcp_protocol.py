"""The wire as Claude Code speaks it (raw newline-delimited JSON-RPC, no SDK on the client side):
a ``server/discover`` probe first, ``initialize`` with 2025-11-25 or a version the server does
not know, ``tools/call`` with Claude Code's ``_meta``; garbage lines; stdout holds nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_helpers import SERVER_ARGS


class Wire:
    def __init__(self, data: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, *SERVER_ARGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd,
                                     env={"KENNING_DATA_DIR": str(data), "PATH": "/usr/bin:/bin", "HOME": str(cwd)})
        self.lines: list[bytes] = []

    def send(self, msg: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(msg if isinstance(msg, bytes) else json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        assert self.proc.stdout
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode() if self.proc.stderr else "server closed stdout"
        self.lines.append(line)
        return json.loads(line)

    def request(self, id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params is not None else {})})
        while True:
            msg = self.recv()
            if msg.get("id") == id and "method" not in msg:
                return msg

    def close(self) -> tuple[int, bytes, bytes]:
        assert self.proc.stdin
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=30)
        rest = self.proc.stdout.read() if self.proc.stdout else b""
        err = self.proc.stderr.read() if self.proc.stderr else b""
        return rc, rest, err


def initialize(w: Wire, version: str) -> dict[str, Any]:
    return w.request(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                       "clientInfo": {"name": "claude-code", "version": "2.1.332"}})


def test_claude_codes_handshake_with_a_discover_probe(tmp_path: Path) -> None:
    w = Wire(tmp_path / "data", tmp_path)
    probe = w.request(0, "server/discover", {})
    assert "error" in probe or "result" in probe  # "method not found" is fine; crashing is not
    init = initialize(w, "2025-11-25")
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert init["result"]["serverInfo"]["name"] == "kenning"
    w.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = w.request(2, "tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} >= {"search_memory", "save_memory", "get_observations"}
    call = w.request(3, "tools/call", {"name": "search_memory", "arguments": {"query": "anything"},
                                       "_meta": {"claudecode/toolUseId": "toolu_01", "progressToken": 3}})
    assert call["result"]["isError"] is False
    assert call["result"]["content"][0]["text"].startswith("No memory yet")
    # A bad line must not kill the session.
    w.send(b"this is not json\n")
    w.send(b"\n")
    again = w.request(4, "tools/call", {"name": "memory_guide", "arguments": {}})
    assert "search_memory" in again["result"]["content"][0]["text"]
    err = w.request(5, "tools/call", {"name": "get_observations", "arguments": {"ids": "twelve"}})
    assert err["result"]["isError"] is True
    rc, rest, stderr = w.close()
    assert rc == 0, stderr.decode()
    # stdout carried JSON-RPC and nothing else.
    for line in [*w.lines, *rest.splitlines()]:
        if line.strip():
            assert json.loads(line)["jsonrpc"] == "2.0", line
    assert (tmp_path / "data" / "logs" / "mcp.log").exists()


def test_an_unknown_protocol_version_is_negotiated_not_refused(tmp_path: Path) -> None:
    for version in ("2099-01-01", "1.0"):
        w = Wire(tmp_path / "data", tmp_path)
        init = initialize(w, version)
        assert "result" in init, init
        agreed = init["result"]["protocolVersion"]
        assert agreed != version and agreed >= "2025-06-18"  # the server offers one it speaks
        w.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert w.request(2, "tools/list")["result"]["tools"]
        assert w.close()[0] == 0
