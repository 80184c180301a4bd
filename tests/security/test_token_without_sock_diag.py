"""Where the kernel cannot name a listener's owner (no netlink sock_diag, as on macOS), no client sends
the API token before the listener proved it is our worker by the start-token challenge.

The kernel's check is taken away the way macOS lacks it: a ``sitecustomize`` on ``PYTHONPATH`` removes
``AF_NETLINK`` from ``_socket`` in every process the test starts (the MCP server driven by the MCP SDK's
own stdio client, the viewer launcher ``kenning open``, the hooks and the CLI). A process of another
user (``nobody``) squats the worker's port, records every byte it receives, and answers like a worker
that cannot prove itself.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Home
from tests.security import context_of, prompt, session_start
from tests.security.test_api_security import SQUATTER

NO_SOCK_DIAG = "import _socket\ntry:\n    del _socket.AF_NETLINK\nexcept AttributeError:\n    pass\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                                reason="needs root to run a listener as another user (nobody)")


def without_sock_diag(home: Home, tmp: Path) -> dict[str, str]:
    """The environment of a process for which the kernel cannot say who owns a socket."""
    shim = tmp / "no-sock-diag"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(NO_SOCK_DIAG)
    env = dict(home.env)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), *filter(None, [env.get("PYTHONPATH")])])
    return env


def in_process(env: dict[str, str], code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def mcp_calls(env: dict[str, str], cwd: str) -> list[str]:
    """The MCP server (``python -m kenning mcp``, no ``-I`` so that the shim loads), driven by the SDK."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "mcp"], env=env, cwd=cwd)

    async def main() -> list[str]:
        async with Client(params, read_timeout_seconds=60) as c:
            out = []
            for name, args in (("save_memory", {"text": "The parser keeps tabs as they are."}),
                               ("search_memory", {"query": "parser tabs"}),
                               ("memory_timeline", {"query": "parser"})):
                res: Any = await c.call_tool(name, args)
                out.append("\n".join(getattr(x, "text", "") for x in res.content))
            return out

    return anyio.run(main)


def squat(home: Home) -> subprocess.Popen[str]:
    squatter = subprocess.Popen(["/usr/bin/python3", "-I", "-c", SQUATTER, str(home.port)], stdout=subprocess.PIPE,
                                text=True, user=65534, group=65534)
    assert squatter.stdout is not None and squatter.stdout.readline().strip() == "listening"
    return squatter


def test_no_client_sends_the_token_to_a_squatter_the_kernel_cannot_name(home: Home, tmp_path: Path) -> None:
    from kenning.paths import ensure_token, write_private

    home.paths.ensure()
    token = ensure_token(home.paths)
    write_private(home.paths.pid_file, json.dumps({"pid": 2 ** 22 + 7, "port": home.port,
                                                   "start_token": "the-real-one"}).encode())
    env = without_sock_diag(home, tmp_path)
    squatter = squat(home)
    try:
        # The shim works: for these processes the kernel cannot say who listens.
        assert in_process(env, f"from kenning.hook import client; print(client.listeners({home.port}))") == "None"
        assert in_process(env, "from kenning.hook import client; from kenning.paths import Paths; "
                               f"print(client.authed(Paths(), {home.port}, 'GET', '/api/status', timeout=2))") \
            == "None"
        # The viewer launcher: its own request for a sign-in code, and the whole command.
        assert in_process(env, "from kenning.commands.viewer import one_time_code; from kenning.paths import Paths; "
                               f"print(one_time_code(Paths(), {home.port}))") == "None"
        opened = subprocess.run([sys.executable, "-m", "kenning", "open", "--print", "--wait", "2"], env=env,
                                capture_output=True, text=True, timeout=60)
        assert opened.returncode == 1 and "#code=" not in opened.stdout, opened
        # The MCP server, through the MCP SDK's client: it answers from the file, never sends the token.
        answers = mcp_calls({**env, "KENNING_EMBEDDING_BACKEND": "auto"}, str(home.project))
        assert answers[0].startswith("Saved as #1 "), answers
        assert "#1 " in answers[1] and "worker is not running" in answers[1], answers  # the squatter was refused
        # The hooks and the CLI, for completeness.
        ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "nosd-1"), env=env))
        assert isinstance(ctx, str)
        home.hook("UserPromptSubmit", prompt(str(home.project), "nosd-1", "how does the parser handle tabs?"), env=env)
        for args in (("status",), ("search", "parser"), ("doctor",)):
            subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                           timeout=60)
    finally:
        squatter.kill()
        out, _err = squatter.communicate(timeout=10)
    assert token not in out, "the API token was sent to a listener that never proved it is our worker"
    assert "challenge=" in out, "no client even asked the squatter to prove itself: the test proves nothing"
    assert "Authorization" not in out and "X-Kenning-Token" not in out


def test_our_own_worker_passes_the_challenge_without_the_kernel(home: Home, tmp_path: Path) -> None:
    """The same clients, without sock_diag, with our real worker on the port: it proves itself and is used."""
    home.start_worker()
    env = without_sock_diag(home, tmp_path)
    assert in_process(env, "from kenning.hook import client; from kenning.paths import Paths; "
                           f"print(client.listeners({home.port}), "
                           f"client.authed(Paths(), {home.port}, 'GET', '/api/status', timeout=5)[0])") \
        == "None 200"
    opened = subprocess.run([sys.executable, "-m", "kenning", "open", "--print"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert opened.returncode == 0 and f"http://127.0.0.1:{home.port}/#code=" in opened.stdout, opened
    # The MCP server's search is the worker's (no "worker is not running" fallback note).
    answers = mcp_calls({**env, "KENNING_EMBEDDING_BACKEND": "auto"}, str(home.project))
    assert answers[0].startswith("Saved as #") and "#" in answers[1], answers
    assert "worker is not running" not in answers[1], answers
    status = subprocess.run([sys.executable, "-m", "kenning", "status", "--json"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert status.returncode == 0, status.stderr


def test_the_token_goes_on_the_connection_that_answered_the_challenge(home: Home, tmp_path: Path) -> None:
    """Proof and token share one connection: nobody can take the port between the two (an established
    connection stays with the process that answered). A relay in front of the real worker records what
    each connection carries."""
    from kenning.paths import read_token

    home.start_worker()
    env = without_sock_diag(home, tmp_path)
    relay = socket.create_server(("127.0.0.1", 0))
    seen: list[bytearray] = []

    def pipe(src: socket.socket, dst: socket.socket, record: bytearray | None) -> None:
        try:
            while data := src.recv(65536):
                if record is not None:
                    record += data  # the worker accepts only its own port in Host: named as it expects
                    data = data.replace(f"Host: 127.0.0.1:{port}".encode(), f"Host: 127.0.0.1:{home.port}".encode())
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def serve() -> None:
        while True:
            try:
                conn, _addr = relay.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", home.port))
            record = bytearray()
            seen.append(record)
            threading.Thread(target=pipe, args=(conn, upstream, record), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, conn, None), daemon=True).start()

    port = relay.getsockname()[1]
    threading.Thread(target=serve, daemon=True).start()
    try:
        status = in_process(env, "from kenning.hook import client; from kenning.paths import Paths; "
                                 f"print(client.authed(Paths(), {port}, 'GET', '/api/status', timeout=5)[0])")
    finally:
        relay.close()
    assert status == "200"
    assert len(seen) == 1, f"{len(seen)} connections: the proof and the token must share one"
    sent = bytes(seen[0])
    challenge, token_at = sent.find(b"/api/health?challenge="), sent.find(read_token(home.paths).encode())
    assert 0 <= challenge < token_at, sent[:400]
    assert sent[:challenge].count(b"Authorization") == 0
