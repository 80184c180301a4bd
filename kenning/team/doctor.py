"""What ``kenning doctor`` and ``kenning status`` say about the team hubs: each membership's (nothing when no
team was joined)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from dataclasses import dataclass

from kenning.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.team.config import TeamConfig

Check = tuple[str, str, str]
SKEW_WARN_S = 5.0


@dataclass
class Waiting:
    ops: int = 0  # operations this machine has not had acknowledged yet (changes included)
    changes: int = 0  # of them, edits, pins and unpins of memories the hub knows
    refused: int = 0  # memories not shared: they hold a secret


def lag_lines(paths: Paths, now: float | None = None, *, pending: bool = True) -> list[str]:
    """One line per membership for ``kenning status``: the team, how long ago its last good sync (push and pull)
    was, and (``pending``) what waits to be pushed; [] without a team."""
    from kenning.team.config import TeamError, load_all

    try:
        teams = load_all(paths)
    except TeamError as e:
        return [str(e)]
    return [lag_line(paths, cfg, now, pending=pending) for cfg in teams]


def lag_line(paths: Paths, cfg: TeamConfig, now: float | None = None, *, pending: bool = True) -> str:
    from kenning.team.worker import read_status

    st = read_status(paths, cfg.team)
    now = time.time() if now is None else now
    last_ok = st.get("last_ok")
    lag = f"last synced {now - float(str(last_ok)):.0f} s ago" if last_ok else "never synced yet"
    failing = "" if st.get("ok", True) else f"; the last try failed: {st.get('error')}"
    waits = f", {waits_text(waiting(paths, cfg))}" if pending else ""
    return f"{cfg.team} as {cfg.user}, {len(cfg.projects)} project(s), {lag}{waits}{failing}"


def waits_text(w: Waiting) -> str:
    return f"{w.ops} operation(s) waiting to be pushed" + (f" ({w.changes} edit(s) or pin(s))" if w.changes else "")


def restriction_text(granted: object) -> str:
    """'' for a member of the whole team; else the projects the hub restricts them to."""
    if not isinstance(granted, list):
        return ""
    return ("the hub restricts you to these projects of the team: " + ", ".join(map(str, granted)) if granted
            else "the hub restricts you to no project of the team (the admin runs `kenning team grant`)")


def waiting(paths: Paths, cfg: TeamConfig) -> Waiting:
    """What this machine has not had acknowledged yet by ``cfg``'s hub: memories to share, edges, tombstones,
    edits and pins (in each of the membership's spaces); and memories refused because they hold a secret."""
    from kenning.team.sync import candidates, secret_in, spaces

    out = Waiting()
    if not os.path.exists(paths.db):
        return out
    try:
        conn = sqlite3.connect(f"file:{paths.db}?mode=ro", uri=True, timeout=2)
        try:
            for space in spaces(cfg):
                found = candidates(conn, cfg, space)
                for oid, _remote in found:
                    row = conn.execute("SELECT title, narrative FROM observations WHERE id = ?", (oid,)).fetchone()
                    out.refused += bool(row and secret_in(f"{row[0]}\n{row[1]}"))
                links, tombs, changes = conn.execute(
                    "SELECT (SELECT COUNT(*) FROM team_links WHERE team = ?1 AND pushed = 0), "
                    "(SELECT COUNT(*) FROM team_tombstones WHERE team = ?1 AND pushed = 0), "
                    "(SELECT COUNT(*) FROM team_links l JOIN observations o ON o.id = l.observation_id "
                    " WHERE l.team = ?1 AND l.pushed = 1 AND o.status = 'active' AND (l.edited = 1 OR l.pinned = 1))",
                    (space.team,)).fetchone()
                out.ops += len(found) + int(links) + int(tombs) + int(changes)
                out.changes += int(changes)
            out.ops -= out.refused
            return out
        finally:
            conn.close()
    except sqlite3.Error:
        return out


def checks(paths: Paths) -> list[Check]:
    from kenning.team.config import TeamError, load_all

    try:
        teams = load_all(paths)
    except TeamError as e:
        return [("FAIL", "team hub", str(e))]
    out: list[Check] = []
    for cfg in teams:
        out += _checks(paths, cfg)
    return out


def _checks(paths: Paths, cfg: TeamConfig) -> list[Check]:
    """One membership: its credential, its hub (reachable, schema, the member's project restriction), the clock
    against it, and what waits to be pushed to it."""
    from kenning.team import hub
    from kenning.team.config import TeamError, credential_path, legacy_credential_path, password

    out: list[Check] = []
    name = cfg.team
    cred = credential_path(paths, name)
    if not os.path.exists(cred) and os.path.exists(legacy_credential_path(paths)):
        cred = legacy_credential_path(paths)  # the single-team file, until the next write migrates it
    try:
        mode = stat.S_IMODE(os.stat(cred).st_mode)
        out.append(("ok" if mode == 0o600 else "warn", "team credential", f"{name}: {cred} (mode {mode:o})"))
    except OSError:
        out.append(("FAIL", "team credential", f"{name}: missing: `kenning team join --dsn … --team {name}` again"))
    try:
        before = time.time()
        conn = hub.connect(cfg.dsn, password(paths, name))
        try:
            st = hub.status(conn, name)
            granted = hub.restriction(conn, name, sorted(cfg.projects))
        finally:
            conn.close()
        skew = float(st["hub_time"]) - (before + time.time()) / 2
        old = str(st["schema_version"]) != hub.SCHEMA_VERSION
        out.append(("warn" if old else "ok", "team hub", f"team {name} reachable, schema {st['schema_version']}"
                    + (f" (this Kenning's is {hub.SCHEMA_VERSION}: the admin runs `kenning team init` again to "
                       "upgrade it)" if old else "") + f", memories {st['memories'] or {}}"))
        if granted is not None:
            off = sorted(set(map(hub.project_name, cfg.projects)) - set(granted))
            out.append(("warn" if off else "ok", "team projects", f"{name}: {restriction_text(granted)}"
                        + (f"; not granted, so not shared from here: {', '.join(off)}" if off else "")))
        out.append(("ok" if abs(skew) < SKEW_WARN_S else "warn", "team clock",
                    f"{name}: {skew:+.1f} s against the hub" + ("" if abs(skew) < SKEW_WARN_S else
                                                                ": the clocks still order operations, but check NTP")))
    except TeamError as e:
        out.append(("FAIL", "team hub", f"team {name}: {e} (the worker retries; nothing is lost meanwhile)"))
    except Exception as e:  # a schema from an older or newer Kenning, a revoked role
        out.append(("FAIL", "team hub", f"team {name}: {type(e).__name__}: {str(e).strip()[:200]}"))
    w = waiting(paths, cfg)
    lag = lag_line(paths, cfg, pending=False)
    out.append(("ok" if w.ops < 1000 else "warn", "team sync", f"{waits_text(w)}; {lag}"))
    if w.refused:
        out.append(("warn", "team sync", f"{name}: {w.refused} memor{'y' if w.refused == 1 else 'ies'} not shared: "
                                         "they hold a secret (`kenning team push` names them; edit or forget them)"))
    return out
