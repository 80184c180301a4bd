"""A real, throwaway PostgreSQL server for the team hub's tests.

``initdb`` into a temporary directory, ``pg_ctl start`` on a free loopback port, stopped and removed
after. The server binaries come from the distribution's ``postgresql`` package (/usr/lib/postgresql/N/bin;
.ci/run and scripts/test.sh install it); without them, or without the ``psycopg`` driver, the tests skip.
PostgreSQL refuses to run as root: as root, the server runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

ADMIN = "kenning_admin"


def binaries() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@dataclass
class Server:
    port: int
    admin_password: str
    datadir: str

    def dsn(self, user: str = ADMIN, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user={user}"

    def connect(self, user: str = ADMIN, password: str | None = None, dbname: str = "postgres"):  # type: ignore[no-untyped-def]
        import psycopg

        return psycopg.connect(self.dsn(user, dbname), password=password or self.admin_password, autocommit=True)

    def stop(self, mode: str = "fast") -> None:
        _run(self._bin("pg_ctl"), "-D", self.datadir, "-m", mode, "stop", check=False)

    def start(self) -> None:
        _run(self._bin("pg_ctl"), "-D", self.datadir, "-w", "-t", "30", "-l", os.path.join(self.datadir, "log"),
             "-o", f"-p {self.port} -k {self.datadir} -c listen_addresses=127.0.0.1", "start")

    def _bin(self, name: str) -> str:
        b = binaries()
        assert b
        return os.path.join(b, name)


def _as_owner() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([*_as_owner(), *argv], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} failed: {r.stdout}{r.stderr}")
    return r


@contextmanager
def server() -> Iterator[Server]:
    b = binaries()
    if b is None:
        import pytest

        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    root = tempfile.mkdtemp(prefix="kenning-pg-")
    try:
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(root, pw.pw_uid, pw.pw_gid)
        datadir = os.path.join(root, "data")
        password = secrets.token_hex(12)
        pwfile = os.path.join(root, "pw")
        with open(pwfile, "w") as fh:
            fh.write(password)
        if os.geteuid() == 0:
            os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        _run(os.path.join(b, "initdb"), "-D", datadir, "-U", ADMIN, f"--pwfile={pwfile}", "--auth-local=trust",
             "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
        srv = Server(_free_port(), password, datadir)
        srv.start()
        try:
            yield srv
        finally:
            srv.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)
