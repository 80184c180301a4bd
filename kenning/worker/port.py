"""Who holds the worker's port when it is not the worker: named for the user, with the fix.

Standard library only (``kenning.daemon`` asks before it spawns a worker that could not bind).
The listener comes from the kernel (netlink sock_diag: its uid and socket inode); its process
from ``/proc/<pid>/fd`` (only readable for one's own processes unless root).
"""

from __future__ import annotations

import os
import socket

from kenning.hook import client


class Holder:
    """A process listening on a port."""

    __slots__ = ("name", "pid", "uid")

    def __init__(self, uid: int | None, pid: int | None = None, name: str = "") -> None:
        self.uid = uid
        self.pid = pid
        self.name = name

    def describe(self) -> str:
        if self.pid is not None:
            return f"pid {self.pid} ({self.name or '?'})"
        if self.uid is not None and self.uid != os.getuid():
            return f"a process of user {_user(self.uid)} (uid {self.uid})"
        return "another process"


def holders(port: int) -> list[Holder]:
    """The processes listening on TCP ``port`` on this machine ([] when none)."""
    found = client.listeners(port)
    if found is None:  # no sock_diag (not Linux): only a bind can tell
        return [Holder(None)] if not _bindable(port) else []
    if not found:
        return []
    by_inode = _socket_pids({inode for _uid, inode in found})
    out = []
    for uid, inode in found:
        pid = by_inode.get(inode)
        out.append(Holder(uid, pid, _comm(pid) if pid is not None else ""))
    return out


def in_use_message(port: int, found: list[Holder] | None = None) -> str | None:
    """'port N is in use by pid M (name)…' with the fix, or None when nobody listens."""
    found = holders(port) if found is None else found
    if not found:
        return None
    who = ", ".join(dict.fromkeys(h.describe() for h in found))
    return (f"port {port} is in use by {who}, not by Kenning's worker: stop that process, or give Kenning "
            f"another port (`port` in settings.json, or KENNING_PORT)")


def _socket_pids(inodes: set[int]) -> dict[int, int]:
    """socket inode -> pid of a process holding it (the processes we may inspect)."""
    wanted = {f"socket:[{i}]": i for i in inodes}
    out: dict[int, int] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in sorted(pids):
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                link = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            inode = wanted.get(link)
            if inode is not None and inode not in out:
                out[inode] = pid
        if len(out) == len(wanted):
            break
    return out


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _user(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def _bindable(port: int) -> bool:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the worker binds: TIME_WAIT is no owner
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
