"""What ``kenning doctor`` and ``kenning status`` say about the team hub (nothing when no team was joined)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time

from kenning.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.team.config import TeamConfig

Check = tuple[str, str, str]
SKEW_WARN_S = 5.0


def lag_line(paths: Paths, now: float | None = None, *, pending: bool = True) -> str:
    """One line for ``kenning status``: the team, how long ago the last good sync (push and pull) was, and
    (``pending``) how many operations wait to be pushed; '' without a team."""
    from kenning.team.config import TeamError, load
    from kenning.team.worker import read_status

    try:
        cfg = load(paths)
    except TeamError as e:
        return str(e)
    if cfg is None:
        return ""
    st = read_status(paths)
    now = time.time() if now is None else now
    last_ok = st.get("last_ok")
    lag = f"last synced {now - float(str(last_ok)):.0f} s ago" if last_ok else "never synced yet"
    failing = "" if st.get("ok", True) else f"; the last try failed: {st.get('error')}"
    waits = f", {waiting(paths, cfg)[0]} operation(s) waiting to be pushed" if pending else ""
    return f"{cfg.team} as {cfg.user}, {len(cfg.projects)} project(s), {lag}{waits}{failing}"


def waiting(paths: Paths, cfg: TeamConfig) -> tuple[int, int]:
    """(operations this machine has not had acknowledged yet: memories to share and tombstones; memories
    refused because they hold a secret)."""
    from kenning.team.sync import candidates, secret_in

    if not os.path.exists(paths.db):
        return 0, 0
    try:
        conn = sqlite3.connect(f"file:{paths.db}?mode=ro", uri=True, timeout=2)
        try:
            refused = 0
            for oid, _remote in candidates(conn, cfg):
                row = conn.execute("SELECT title, narrative FROM observations WHERE id = ?", (oid,)).fetchone()
                refused += bool(row and secret_in(f"{row[0]}\n{row[1]}"))
            n = len(candidates(conn, cfg)) - refused + int(conn.execute(
                "SELECT (SELECT COUNT(*) FROM team_links WHERE team = ?1 AND pushed = 0) + "
                "(SELECT COUNT(*) FROM team_tombstones WHERE team = ?1 AND pushed = 0)", (cfg.team,)).fetchone()[0])
            return n, refused
        finally:
            conn.close()
    except sqlite3.Error:
        return 0, 0


def checks(paths: Paths) -> list[Check]:
    from kenning.team import hub
    from kenning.team.config import TeamError, credential_path, load, password

    try:
        cfg = load(paths)
    except TeamError as e:
        return [("FAIL", "team hub", str(e))]
    if cfg is None:
        return []
    out: list[Check] = []
    try:
        mode = stat.S_IMODE(os.stat(credential_path(paths)).st_mode)
        out.append(("ok" if mode == 0o600 else "warn", "team credential", f"{credential_path(paths)} (mode {mode:o})"))
    except OSError:
        out.append(("FAIL", "team credential", "missing: `kenning team join --dsn … --team …` again"))
    try:
        before = time.time()
        conn = hub.connect(cfg.dsn, password(paths))
        try:
            st = hub.status(conn, cfg.team)
        finally:
            conn.close()
        skew = float(st["hub_time"]) - (before + time.time()) / 2
        old = str(st["schema_version"]) != hub.SCHEMA_VERSION
        out.append(("warn" if old else "ok", "team hub", f"team {cfg.team} reachable, schema {st['schema_version']}"
                    + (f" (this Kenning's is {hub.SCHEMA_VERSION}: the admin runs `kenning team init` again to "
                       "upgrade it)" if old else "") + f", memories {st['memories'] or {}}"))
        out.append(("ok" if abs(skew) < SKEW_WARN_S else "warn", "team clock",
                    f"{skew:+.1f} s against the hub" + ("" if abs(skew) < SKEW_WARN_S else
                                                       ": the clocks still order operations, but check NTP")))
    except TeamError as e:
        out.append(("FAIL", "team hub", f"{e} (the worker retries; nothing is lost meanwhile)"))
    except Exception as e:  # a schema from an older or newer Kenning, a revoked role
        out.append(("FAIL", "team hub", f"{type(e).__name__}: {str(e).strip()[:200]}"))
    n, refused = waiting(paths, cfg)
    lag = lag_line(paths, pending=False)
    out.append(("ok" if n < 1000 else "warn", "team sync", f"{n} operation(s) waiting to be pushed; {lag}"))
    if refused:
        out.append(("warn", "team sync", f"{refused} memor{'y' if refused == 1 else 'ies'} not shared: "
                                         "they hold a secret (`kenning team push` names them; edit or forget them)"))
    return out
