"""How a capture hook wakes the worker: a byte into the worker's pipe (no socket, no pid file), or
one UDP datagram where there is no pipe or no one reads it; the worker's end of the pipe."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from kenning.hook import main as hook
from kenning.paths import Paths
from kenning.settings import Settings
from kenning.worker import server


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    p = Paths(str(tmp_path / "data"))
    p.ensure()
    return p


def udp_listener(paths: Paths) -> socket.socket:
    """A UDP socket standing in for the worker's, named by a pid file as the worker writes it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(2)
    Path(paths.pid_file).write_text(json.dumps({"pid": os.getpid(), "port": sock.getsockname()[1],
                                                "start_token": "t"}))
    return sock


def test_a_hook_pokes_through_the_pipe_when_the_worker_reads_it(paths: Paths) -> None:
    os.mkfifo(paths.poke_fifo, 0o600)
    reader = os.open(paths.poke_fifo, os.O_RDONLY | os.O_NONBLOCK)
    sock = udp_listener(paths)
    try:
        hook._poke(paths, Settings())
        assert os.read(reader, 64) == b"p"
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            sock.recv(64)  # one poke, not two
    finally:
        os.close(reader)
        sock.close()


@pytest.mark.parametrize("pipe", ["missing", "no reader", "a regular file"])
def test_without_a_pipe_to_write_the_hook_pokes_over_udp(paths: Paths, pipe: str) -> None:
    if pipe == "no reader":  # a worker that stopped (or was killed) left its pipe behind
        os.mkfifo(paths.poke_fifo, 0o600)
    if pipe == "a regular file":
        Path(paths.poke_fifo).write_bytes(b"")
    sock = udp_listener(paths)
    try:
        started = time.monotonic()
        hook._poke(paths, Settings())
        assert time.monotonic() - started < 0.5  # never waits for a reader
        assert sock.recv(64) == b"kenning-poke"
    finally:
        sock.close()
    if pipe == "a regular file":
        assert Path(paths.poke_fifo).read_bytes() == b""  # nothing written into a file that is not the pipe


def test_no_worker_at_all_costs_nothing(paths: Paths) -> None:
    hook._poke(paths, Settings())  # neither pipe nor pid file: returns, raises nothing
    assert not os.path.exists(paths.poke_fifo)


def test_a_full_pipe_never_blocks_the_hook(paths: Paths) -> None:
    os.mkfifo(paths.poke_fifo, 0o600)
    reader = os.open(paths.poke_fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(paths.poke_fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BlockingIOError):
            while True:
                os.write(writer, b"x" * 65536)  # a stalled worker: nothing read
        started = time.monotonic()
        hook._poke(paths, Settings())
        assert time.monotonic() - started < 0.5
    finally:
        os.close(writer)
        os.close(reader)


class Pokes:
    def __init__(self) -> None:
        self.count = 0
        self.event = threading.Event()

    def poke(self) -> None:
        self.count += 1
        self.event.set()


def test_the_worker_makes_a_private_pipe_and_wakes_on_each_byte(paths: Paths) -> None:
    Path(paths.poke_fifo).write_text("not a pipe")  # whatever stands there is replaced
    fd = server._open_poke_fifo(paths)
    assert fd is not None
    st = os.lstat(paths.poke_fifo)
    assert stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    pokes, stop = Pokes(), threading.Event()
    t = threading.Thread(target=server._fifo_listener, args=(fd, pokes, stop), daemon=True)
    t.start()
    hook._poke(paths, Settings())
    assert pokes.event.wait(2) and pokes.count == 1
    # Stopping: the worker sets the flag and writes one byte; the listener closes the pipe.
    stop.set()
    os.write(fd, b"!")
    t.join(2)
    assert not t.is_alive() and pokes.count == 1
    with pytest.raises(OSError):
        os.fstat(fd)
    # With no reader left, the hook's open fails at once (and it falls back to UDP).
    with pytest.raises(OSError):
        os.open(paths.poke_fifo, os.O_WRONLY | os.O_NONBLOCK)


def test_a_second_worker_reuses_the_pipe_and_tightens_its_mode(paths: Paths) -> None:
    os.mkfifo(paths.poke_fifo, 0o600)
    os.chmod(paths.poke_fifo, 0o644)
    fd = server._open_poke_fifo(paths)
    assert fd is not None
    try:
        assert stat.S_IMODE(os.lstat(paths.poke_fifo).st_mode) == 0o600
    finally:
        os.close(fd)
