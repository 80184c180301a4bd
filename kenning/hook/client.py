"""A tiny HTTP/1.1 client over a raw socket (``http.client`` costs ~15 ms to import).

Only talks to the local worker; every call has a hard deadline and returns None on any
failure, so a slow or dead worker can never hold a hook up.
"""

from __future__ import annotations

import _socket  # the C module: `socket` drags in enum/selectors (~5 ms at import)
import posix  # not os (~1 ms at import; see kenning.paths)
import sys
import time

from kenning import fastjson
from kenning.paths import Paths, read_token

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any


def request(port: int, method: str, path: str, *, body: bytes = b"", token: str = "",
            timeout: float = 0.25, owner_checked: bool = False) -> tuple[int, bytes] | None:
    """Send one request to 127.0.0.1:port; return (status, body) or None on failure/timeout.

    The token goes only to a listener proven to be our worker: after a crash or a reboot the pid
    file can name a port that another local user now listens on, and would be handed the token.
    ``owner_checked``: the caller proved it (:func:`authed`, or the kernel as in
    :func:`proven_get`); otherwise only the kernel's word counts, and where the kernel cannot say
    (no sock_diag: macOS) no token is sent. Clients call :func:`authed`, which proves it first.
    """
    if token and not owner_checked and not listener_is_ours(port):
        return None
    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    chunks: list[bytes] = []
    try:
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", port))
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}\r\n")
        if body:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        sock.sendall(head.encode("ascii") + b"\r\n" + body)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    except OSError:
        return None
    finally:
        sock.close()
    raw = b"".join(chunks)
    head_end = raw.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None
    headers = raw[:head_end].lower()
    payload = raw[head_end + 4:]
    if b"transfer-encoding: chunked" in headers:
        payload = _dechunk(payload)
    return status, payload


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def quote(text: str) -> str:
    """Percent-encode ``text`` for a query value, as ``urllib.parse.quote`` does (``urllib.parse``
    and the ``ipaddress`` it pulls in cost a hook ~3 ms to import)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8", "surrogateescape"))


def listener_is_ours(port: int) -> bool:
    """True only when the kernel (Linux sock_diag) says every socket listening on TCP ``port`` is this
    user's; False for another user's, for no listener, and when the kernel cannot say."""
    return kernel_vouches(port) is True


def kernel_vouches(port: int) -> bool | None:
    """Whether the listeners on ``port`` are all this user's (False: another user's, or none); None when
    the kernel cannot say (no sock_diag)."""
    found = listeners(port)
    if found is None:
        return None
    uid = posix.getuid()
    return bool(found) and all(owner == uid for owner, _inode in found)


def authed(paths: Paths, port: int, method: str, path: str, *, body: bytes = b"",
           timeout: float = 0.25) -> tuple[int, bytes] | None:
    """``request`` with the API token, sent only to a listener proven to be our worker.

    The kernel's word when it has one (a listener of this user, who can read the token file anyway).
    Where it cannot say (no sock_diag, as on macOS), the start-token challenge proves it on the very
    connection that then carries the token (:func:`_proven_request`): a squatter cannot take the port
    between the proof and the token, since an established connection stays with the process that
    answered the challenge.
    """
    vouched = kernel_vouches(port)
    if vouched is False:
        return None
    if vouched:
        return request(port, method, path, body=body, token=token(paths), timeout=timeout, owner_checked=True)
    return _proven_request(paths, port, method, path, body=body, timeout=timeout)


def _proven_request(paths: Paths, port: int, method: str, path: str, *, body: bytes,
                    timeout: float) -> tuple[int, bytes] | None:
    """Challenge, then the request with the token, on one keep-alive connection; None unless the
    listener answered a fresh nonce with the start token's proof (nothing of the token sent before)."""
    info = read_pid_file(paths)
    start_token = info.get("start_token") if info else None
    if not isinstance(start_token, str) or not start_token:
        return None
    deadline = time.monotonic() + timeout
    nonce = posix.urandom(16).hex()
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", port))
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        sock.sendall(f"GET /api/health?challenge={nonce} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Content-Length: 0\r\n\r\n".encode("ascii"))
        answer, _rest = _one_response(sock, deadline)
        health = json_answer(answer)
        if health is None or health.get("proof") != health_proof(start_token, nonce):
            return None
        secret = token(paths)
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}\r\nAuthorization: Bearer {secret}\r\n")
        if body:
            head += "Content-Type: application/json\r\n"
        sock.sendall(head.encode("ascii") + b"\r\n" + body)
        res, _rest = _one_response(sock, deadline)
        return res
    except OSError:
        return None
    finally:
        sock.close()


def _one_response(sock: _socket.socket, deadline: float) -> tuple[tuple[int, bytes] | None, bytes]:
    """Read one HTTP response off a kept-alive connection: its head, then exactly its Content-Length
    (a chunked body is read to its last chunk). (None, b"") on a timeout or anything unexpected."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = _recv(sock, deadline)
        if not chunk:
            return None, b""
        raw += chunk
        if len(raw) > 65536:
            return None, b""
    head_end = raw.index(b"\r\n\r\n")
    headers = raw[:head_end].lower()
    payload = raw[head_end + 4:]
    try:
        status = int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None, b""
    length = None
    for line in headers.split(b"\r\n")[1:]:
        name, _sep, value = line.partition(b":")
        if name.strip() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None, b""
    if length is not None:
        while len(payload) < length:
            chunk = _recv(sock, deadline)
            if not chunk:
                return None, b""
            payload += chunk
        return (status, payload[:length]), payload[length:]
    if b"transfer-encoding: chunked" in headers:
        while not payload.endswith(b"0\r\n\r\n"):
            chunk = _recv(sock, deadline)
            if not chunk:
                return None, b""
            payload += chunk
        return (status, _dechunk(payload)), b""
    while True:  # neither: the body runs to the end of the connection
        chunk = _recv(sock, deadline)
        if not chunk:
            return (status, payload), b""
        payload += chunk


def _recv(sock: _socket.socket, deadline: float) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise OSError("timed out")
    sock.settimeout(left)
    return sock.recv(65536)


def listeners(port: int) -> list[tuple[int, int]] | None:
    """(uid, socket inode) of every TCP socket listening on ``port``; None when the kernel cannot say."""
    found = _tcp_sockets(1 << 10)  # TCP_LISTEN
    return None if found is None else [(uid, inode) for sport, _dport, uid, inode in found if sport == port]


def connection_owner(local_port: int, remote_port: int) -> int | None:
    """The uid owning the client end of a loopback connection to ``remote_port`` (None: unknown).

    The worker asks it of the browser's connection before it trades a one-time code for a
    session: a code read from another user's view of a command line is useless to them.
    """
    found = _tcp_sockets(1 << 1)  # TCP_ESTABLISHED
    for sport, dport, uid, _inode in found or ():
        if sport == local_port and dport == remote_port:
            return uid
    return None


def _tcp_sockets(states: int) -> list[tuple[int, int, int, int]] | None:
    """(sport, dport, uid, inode) of the TCP sockets in ``states`` (a bit mask); None when unknown.

    Asks the kernel through netlink sock_diag (well under a millisecond), not /proc/net/tcp
    (every socket of the machine, ~10 ms here).
    """
    # Netlink speaks host byte order; ports are big-endian. int.to_bytes, not struct (~0.3 ms to import).
    order = sys.byteorder
    try:
        nl = _socket.socket(_socket.AF_NETLINK, _socket.SOCK_DGRAM, 4)  # NETLINK_SOCK_DIAG
    except (AttributeError, OSError):
        return None  # not Linux, or netlink not allowed: cannot tell
    found: list[tuple[int, int, int, int]] = []
    try:
        nl.settimeout(0.5)
        for family in (_socket.AF_INET, _socket.AF_INET6):
            # inet_diag_req_v2: TCP sockets of this family in these states, any address.
            req = bytes((family, _socket.IPPROTO_TCP, 0, 0)) + states.to_bytes(4, order) + bytes(48)
            # nlmsghdr: length, SOCK_DIAG_BY_FAMILY (20), NLM_F_REQUEST | NLM_F_DUMP, sequence 1, port 0
            nl.send((16 + len(req)).to_bytes(4, order) + (20).to_bytes(2, order) + (0x301).to_bytes(2, order)
                    + (1).to_bytes(4, order) + bytes(4) + req)
            done = False
            while not done:
                data = nl.recv(65536)
                if not data:
                    break
                off = 0
                while off + 16 <= len(data):
                    length = int.from_bytes(data[off:off + 4], order)
                    kind = int.from_bytes(data[off + 4:off + 6], order)
                    if kind in (2, 3) or length < 16:  # NLMSG_ERROR, NLMSG_DONE
                        done = True
                        break
                    if off + 16 + 72 > len(data):
                        return None  # a short message: cannot tell
                    # inet_diag_msg: sport, dport at 4 (big-endian); idiag_uid at 64, idiag_inode at 68
                    m = off + 16
                    ports = (int.from_bytes(data[m + 4:m + 6], "big"), int.from_bytes(data[m + 6:m + 8], "big"))
                    found.append((*ports, int.from_bytes(data[m + 64:m + 68], order),
                                  int.from_bytes(data[m + 68:m + 72], order)))
                    off += (length + 3) & ~3
        return found
    except OSError:
        return None
    finally:
        nl.close()


def poke_udp(port: int) -> bool:
    """Send the worker's wake-up datagram to 127.0.0.1:port (never blocks)."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.sendto(POKE_DATAGRAM, ("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        sock.close()


POKE_DATAGRAM = b"kenning-poke"
EMBED_DATAGRAM = b"kenning-embed"  # new rows were written outside the worker: embed them now


def poke_embedder(paths: Paths) -> bool:
    """Tell a running worker that memories were saved by another process (never blocks)."""
    info = read_pid_file(paths)
    if not info:
        return False
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.sendto(EMBED_DATAGRAM, ("127.0.0.1", int(info["port"])))
        return True
    except (OSError, KeyError, TypeError, ValueError):
        return False
    finally:
        sock.close()


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    i = 0
    while True:
        j = data.find(b"\r\n", i)
        if j < 0:
            break
        try:
            size = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += data[j + 2:j + 2 + size]
        i = j + 2 + size + 2
    return bytes(out)


def read_pid_file(paths: Paths) -> dict[str, Any] | None:
    """The worker's pid file (pid, port, start_token) or None."""
    try:
        with open(paths.pid_file, encoding="utf-8") as fh:
            info = fastjson.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not isinstance(info.get("port"), int):
        return None
    return info


def pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        posix.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_health(paths: Paths, port: int, timeout: float = 0.3) -> dict[str, Any] | None:
    """The worker's health answer if the process on ``port`` is *our* worker, else None.

    Identity is a challenge, never a published secret: the worker proves it knows the start token
    of the 0600 pid file by answering a fresh nonce with its HMAC. A reused PID, a stranger on our
    port, or one replaying an earlier answer never passes for the worker.
    """
    info = read_pid_file(paths)
    start_token = info.get("start_token") if info else None
    if not isinstance(start_token, str) or not start_token:
        return None
    nonce = posix.urandom(16).hex()
    health = json_answer(request(port, "GET", f"/api/health?challenge={nonce}", timeout=timeout))
    if health is None or health.get("service") != "kenning":
        return None
    if health.get("proof") != health_proof(start_token, nonce):
        return None
    return health


def proven_get(paths: Paths, info: dict[str, Any], path: str, timeout: float) -> dict[str, Any] | None:
    """GET ``path`` (an authenticated route that answers ``challenge``) from our worker in one round trip.

    The answer counts only with the proof a health check would ask for (``worker_health``), for
    a nonce fresh in this request. The token goes only to a listener the kernel says is this
    user's (who can read the token file anyway): when it cannot say, or the port has no
    listener, None at once, and the caller proves identity first with ``worker_health``.
    """
    start_token = info.get("start_token")
    port = info.get("port")
    if not isinstance(start_token, str) or not start_token or not isinstance(port, int):
        return None
    if kernel_vouches(port) is not True:
        return None
    nonce = posix.urandom(16).hex()
    sep = "&" if "?" in path else "?"
    body = json_answer(request(port, "GET", f"{path}{sep}challenge={nonce}", token=token(paths), timeout=timeout,
                               owner_checked=True))
    if body is None or body.get("proof") != health_proof(start_token, nonce):
        return None
    return body


def json_answer(res: tuple[int, bytes] | None) -> dict[str, Any] | None:
    """The JSON object of a 200 answer; None for anything else."""
    if not res or res[0] != 200:
        return None
    try:
        body = fastjson.loads(res[1].decode("utf-8", "replace"))
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def health_proof(start_token: str, nonce: str) -> str:
    """What the worker answers to ``nonce``: HMAC-SHA256 keyed by its start token."""
    return _hmac_sha256(start_token.encode("utf-8"), b"kenning-health:" + nonce.encode("ascii", "replace")).hex()


def _hmac_sha256(key: bytes, msg: bytes) -> bytes:
    """RFC 2104 over the bare C sha256 (``hmac``/``hashlib`` load OpenSSL: ~2-4 ms per hook)."""
    sha256: Any = None
    for module in ("_sha2", "_sha256"):  # 3.12+, 3.11: the builtin C hashes, no OpenSSL
        try:  # __import__, not importlib (~0.5 ms more at import, with warnings)
            sha256 = __import__(module).sha256
            break
        except (ImportError, AttributeError):
            continue
    if sha256 is None:  # pragma: no cover - interpreters without the builtin module
        from hashlib import sha256
    if len(key) > 64:
        key = sha256(key).digest()
    key = key.ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + msg).digest()
    return bytes(sha256(bytes(b ^ 0x5C for b in key) + inner).digest())


def token(paths: Paths) -> str:
    return read_token(paths)
