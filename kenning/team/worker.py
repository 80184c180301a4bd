"""The worker's team sync thread: a push and a pull every ``team_sync_seconds``, in the background.

Hooks never wait on it and never talk to the hub; when the hub is down a round fails, is logged and
noted in ``<data>/team.status.json`` (``kenning team status`` shows it), and the next round catches
up: nothing unacknowledged is marked sent. It has its own database connection.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

from kenning.paths import Paths, write_private

log = logging.getLogger("kenning.team")


def status_path(paths: Paths) -> str:
    return os.path.join(paths.root, "team.status.json")


def read_status(paths: Paths) -> dict[str, object]:
    try:
        with open(status_path(paths), encoding="utf-8") as fh:
            out = json.load(fh)
        return out if isinstance(out, dict) else {}
    except (OSError, ValueError):
        return {}


def run_once(paths: Paths) -> dict[str, object]:
    """One round with a connection of its own; the outcome is written to the status file and returned."""
    from kenning.store.db import open_db
    from kenning.team import sync
    from kenning.team.config import config_path

    if not os.path.exists(config_path(paths)):
        return {}
    state: dict[str, object] = {"at": time.time()}
    conn = open_db(paths.db)
    try:
        report = sync.once(paths, conn)
        state.update(report.as_dict(), ok=True, last_ok=state["at"])
    except Exception as e:  # the hub down, a credential revoked, a driver missing: said, retried later
        state.update(ok=False, error=f"{type(e).__name__}: {str(e).strip()[:300]}",
                     last_ok=read_status(paths).get("last_ok"))
        log.warning("team sync: %s", state["error"])
    finally:
        conn.close()
    write_private(status_path(paths), json.dumps(state).encode())
    return state


class SyncThread(threading.Thread):
    def __init__(self, paths: Paths, interval: float) -> None:
        super().__init__(name="kenning-team-sync", daemon=True)
        self.paths = paths
        self.interval = interval
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            run_once(self.paths)

    def stop(self) -> None:
        self.stopping.set()
