"""Talking to the team hub (PostgreSQL through ``psycopg``, imported here only: never on a hook path).

The hub's schema is ``hub_schema.sql``; this module connects (TLS unless the host is loopback; the
password never in the DSN a user typed), creates the schema and roles, restricts a member to some of the
team's projects (the hub's row-level security enforces it), appends operations and reads memories by revision.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kenning.team.config import LOOPBACK, TEAM_NAME, TeamError

CONNECT_TIMEOUT_S = 5
PULL_BATCH = 200
MAX_TITLE = 200       # what one memory may carry from the hub (its text is cut to this on the way)
MAX_TEXT = 4_000
ROLE_NAME = TEAM_NAME  # the same shape: a lower-case identifier
SCHEMA_VERSION = "3"  # what hub_schema.sql sets: 2 takes revisions in commit order; 3 reviews with an edit,
# adds `unpinned` and projects per member
MAX_REPLACED = 5      # the memories a waiting one replaces, shown to its reviewer


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise TeamError("the team hub needs the PostgreSQL driver: `kenning extras add team`") from None
    return psycopg


def check_dsn(dsn: str) -> dict[str, str]:
    """The DSN's parts; refused when it carries a password (it would sit in shell history and ``ps``) or
    when a remote host is reached without TLS."""
    psycopg = _psycopg()
    try:
        parts = {k: str(v) for k, v in psycopg.conninfo.conninfo_to_dict(dsn).items() if v is not None}
    except psycopg.ProgrammingError as e:
        raise TeamError(f"not a PostgreSQL connection string: {e}") from None
    if parts.get("password"):
        raise TeamError("the DSN holds a password: leave it out; give it in KENNING_HUB_PASSWORD or on stdin")
    host = parts.get("host", "")
    if not all(h in LOOPBACK or h.startswith("/") for h in host.split(",")) and \
            parts.get("sslmode", "") not in ("require", "verify-ca", "verify-full"):
        raise TeamError(f"the hub at {host} is not on this machine: add sslmode=verify-full (or require) to the DSN")
    return parts


def connect(dsn: str, password: str, *, autocommit: bool = True) -> Any:
    check_dsn(dsn)
    psycopg = _psycopg()
    try:
        return psycopg.connect(dsn, password=password or None, autocommit=autocommit,
                               connect_timeout=CONNECT_TIMEOUT_S, application_name="kenning")
    except psycopg.OperationalError as e:
        raise TeamError(f"cannot reach the team hub: {str(e).strip().splitlines()[0] if str(e).strip() else e}") \
            from None


def schema_sql() -> str:
    return resources.files("kenning.team").joinpath("hub_schema.sql").read_text(encoding="utf-8")


def init(conn: Any, team: str, *, auto_approve: bool, members: list[str],
         removed: list[str] | None = None, projects: list[str] | None = None) -> dict[str, str]:
    """Schema, roles and the team on the database ``conn`` reaches (its role must be able to create roles);
    returns each new member's generated password (shown once, to be handed over privately). ``removed``:
    members taken out of the team (they read none of its rows from then on). ``projects``: the ``members``
    named here see and write only these projects of the team (see :func:`grant`)."""
    if not TEAM_NAME.match(team):
        raise TeamError(f"team name {team!r}: lower-case letters, digits and _, starting with a letter")
    from psycopg import sql

    made: dict[str, str] = {}
    with conn.transaction():
        conn.execute(schema_sql())
        conn.execute("INSERT INTO kenning.teams (name, auto_approve) VALUES (%s, %s) "
                     "ON CONFLICT (name) DO UPDATE SET auto_approve = EXCLUDED.auto_approve", (team, auto_approve))
        for m in members:
            if not ROLE_NAME.match(m):
                raise TeamError(f"member name {m!r}: lower-case letters, digits and _, starting with a letter")
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (m,)).fetchone()
            if not exists:
                pw = secrets.token_urlsafe(24)
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE kenning_member").format(
                    sql.Identifier(m), sql.Literal(pw)))
                made[m] = pw
            else:
                conn.execute(sql.SQL("GRANT kenning_member TO {}").format(sql.Identifier(m)))
            conn.execute("INSERT INTO kenning.members (team, role_name) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                         (team, m))
            conn.execute("INSERT INTO kenning.audit (team, action, gid) VALUES (%s, 'member+', %s)", (team, m))
            if projects is not None:
                _set_projects(conn, team, m, projects, only=True)
        for m in removed or []:
            if conn.execute("DELETE FROM kenning.members WHERE team = %s AND role_name = %s", (team, m)).rowcount:
                conn.execute("INSERT INTO kenning.audit (team, action, gid) VALUES (%s, 'member-', %s)", (team, m))
    return made


def project_name(remote: str) -> str:
    """A project as the hub names it (the normalised git remote ``join`` computes): from a remote URL as git
    prints it, or from that name already (``example.com/acme/shop``, which is no path on this machine)."""
    from kenning.project import normalize_remote

    r = remote.strip()
    if "://" in r or r.startswith("/") or (":" in r and "/" not in r.split(":", 1)[0]):
        return normalize_remote(r)
    r = r.rstrip("/").lower()
    return r[:-4] if r.endswith(".git") else r


def _member(conn: Any, team: str, member: str) -> list[str] | None:
    row = conn.execute("SELECT projects FROM kenning.members WHERE team = %s AND role_name = %s",
                       (team, member)).fetchone()
    if row is None:
        raise TeamError(f"{member} is not a member of team {team}: add them with `kenning team init --member`")
    return None if row[0] is None else list(row[0])


def _set_projects(conn: Any, team: str, member: str, projects: list[str], *, only: bool = False,
                  revoke: bool = False) -> list[str] | None:
    """Restrict ``member`` to ``projects`` of ``team`` (added to their list; ``only``: the list becomes exactly
    these; ``revoke``: taken off it). Each change is in the audit log. Returns the member's list after."""
    wanted = [project_name(p) for p in projects]
    if any(not p or len(p) > 300 for p in wanted):
        raise TeamError("a project is its git remote (for example example.com/acme/shop), at most 300 characters")
    before = _member(conn, team, member)
    if revoke:
        after = [p for p in (before or []) if p not in wanted]
        if before is None:
            raise TeamError(f"{member} sees every project of {team}: grant them the projects they keep "
                            "(`kenning team grant --project`), not a revocation")
    else:
        after = list(dict.fromkeys(([] if only or before is None else before) + wanted))
    conn.execute("UPDATE kenning.members SET projects = %s WHERE team = %s AND role_name = %s", (after, team, member))
    for p in sorted(set(before or []) - set(after)):
        conn.execute("INSERT INTO kenning.audit (team, action, gid, project) VALUES (%s, 'project-', %s, %s)",
                     (team, member, p))
    for p in sorted(set(after) - set(before or [])):
        conn.execute("INSERT INTO kenning.audit (team, action, gid, project) VALUES (%s, 'project+', %s, %s)",
                     (team, member, p))
    if before is None:  # whole team before: restricting is itself a change of access
        conn.execute("INSERT INTO kenning.audit (team, action, gid) VALUES (%s, 'projects:some', %s)",
                     (team, member))
    return after


def grant(conn: Any, team: str, member: str, projects: list[str] | None) -> list[str] | None:
    """Let ``member`` see and write ``projects`` of ``team`` (a member restricted to some projects reads,
    writes and reviews those only); ``None``: every project of the team again. Returns their list after
    (None: the whole team)."""
    with conn.transaction():
        _current(conn)
        if projects is not None:
            return _set_projects(conn, team, member, projects)
        if _member(conn, team, member) is not None:
            conn.execute("UPDATE kenning.members SET projects = NULL WHERE team = %s AND role_name = %s",
                         (team, member))
            conn.execute("INSERT INTO kenning.audit (team, action, gid) VALUES (%s, 'projects:all', %s)",
                         (team, member))
        return None


def revoke(conn: Any, team: str, member: str, projects: list[str]) -> list[str]:
    """Take ``projects`` off a restricted member's list (their rows of those projects are unreadable at
    once); returns what they keep (an empty list: no project of the team)."""
    with conn.transaction():
        _current(conn)
        return _set_projects(conn, team, member, projects, revoke=True) or []


def _current(conn: Any) -> None:
    """Refuse to grant on a hub older than projects per member (schema 3): ``init`` upgrades it first."""
    try:
        row = conn.execute("SELECT value FROM kenning.meta WHERE key = 'schema_version'").fetchone()
    except _psycopg().errors.UndefinedTable:
        raise TeamError("no team hub on this database: `kenning team init --dsn … --team …` creates it") from None
    if row is None or not str(row[0]).isdigit() or int(row[0]) < 3:
        raise TeamError(f"the hub's schema is {row[0] if row else 'missing'}: run `kenning team init --dsn … --team …` "
                        "again to upgrade it (nothing is lost), then grant")


@dataclass
class Op:
    gid: str
    kind: str
    project: str
    device: str
    hlc: str
    content_hash: str = ""
    payload: dict[str, Any] | None = None


def push(conn: Any, team: str, ops: list[Op], refused: list[Op] | None = None) -> int:
    """Append ``ops`` (idempotent: an op already there, same id, kind and clock, is skipped); returns how
    many were new. With ``refused``, when the hub's row-level security refuses an op (a member restricted to
    other projects), the batch is sent again op by op, each in its own savepoint: the refused ones are put in
    ``refused``, the others go. Without it, the refusal is raised."""
    if not ops:
        return 0
    denied = _psycopg().errors.InsufficientPrivilege
    try:
        with conn.transaction():
            return sum(conn.execute(_INSERT_OP, _op_args(team, op)).rowcount for op in ops)
    except denied:
        if refused is None:
            raise
    new = 0
    with conn.transaction():
        for op in ops:
            try:
                with conn.transaction():
                    new += conn.execute(_INSERT_OP, _op_args(team, op)).rowcount
            except denied:
                refused.append(op)
    return new


def _op_args(team: str, op: Op) -> tuple[Any, ...]:
    return (team, op.gid, op.kind, op.project, op.device, op.hlc, op.content_hash,
            None if op.payload is None else json.dumps(op.payload))


_INSERT_OP = ("INSERT INTO kenning.ops (team, gid, kind, project, device, hlc, content_hash, payload) "
              "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (gid, kind, hlc) DO NOTHING")


def not_granted(conn: Any, team: str, projects: list[str]) -> set[str]:
    """Of ``projects``, those the connected member may not see nor write (restricted to other projects of the
    team); none on a hub older than schema 3."""
    if not projects:
        return set()
    try:
        rows = conn.execute("SELECT p FROM unnest(%s::text[]) p WHERE NOT kenning.may_see(%s, p)",
                            (projects, team)).fetchall()
    except _psycopg().errors.UndefinedFunction:
        return set()
    return {str(r[0]) for r in rows}


def restriction(conn: Any, team: str, known: list[str]) -> list[str] | None:
    """None when the connected member sees every project of ``team``; else the projects they are restricted to,
    of those named in ``known`` or holding memories they can read (a member cannot list the grants themselves).
    A project name is never empty, so ``may_see(team, '')`` holds for a whole-team member only."""
    try:
        if conn.execute("SELECT kenning.may_see(%s, '')", (team,)).fetchone()[0]:
            return None
        seen = {str(r[0]) for r in conn.execute("SELECT DISTINCT project FROM kenning.memories WHERE team = %s",
                                                (team,)).fetchall()}
    except _psycopg().errors.UndefinedFunction:  # older than schema 3: no projects per member
        return None
    wanted = sorted(seen | {project_name(p) for p in known})
    return sorted(str(r[0]) for r in conn.execute("SELECT p FROM unnest(%s::text[]) p WHERE kenning.may_see(%s, p)",
                                                  (wanted, team)).fetchall())


PULL_COLS = ("gid", "project", "author", "created_at", "hlc", "content_hash", "layer", "type", "title", "body",
             "review", "reviewer", "reviewed_at", "superseded_by", "forgotten", "rev")


def pull(conn: Any, team: str, after: int, limit: int = PULL_BATCH) -> list[dict[str, Any]]:
    """Memories of ``team`` changed after revision ``after``, oldest change first. Texts are cut on the hub
    (a 10 MB row never crosses the wire whole); times as epoch seconds."""
    rows = conn.execute(
        "SELECT gid, project, left(author, 64), extract(epoch FROM created_at)::float8, hlc, content_hash, layer, "
        f"left(type, 40), left(title, {MAX_TITLE + 1}), left(body, {MAX_TEXT + 1}), review, left(reviewer, 64), "
        "extract(epoch FROM reviewed_at)::float8, superseded_by, forgotten, rev FROM kenning.memories "
        "WHERE team = %s AND rev > %s ORDER BY rev LIMIT %s", (team, after, limit)).fetchall()
    return [dict(zip(PULL_COLS, r, strict=True)) for r in rows]


def review(conn: Any, gid: str, decision: str) -> str:
    psycopg = _psycopg()
    try:
        return str(conn.execute("SELECT kenning.review(%s, %s)", (gid, decision)).fetchone()[0])
    except psycopg.errors.RaiseException as e:
        raise TeamError(str(e.diag.message_primary or e)) from None


def review_edited(conn: Any, gid: str, title: str, text: str, hlc: str, device: str, content_hash: str) -> str:
    """Approve ``gid`` with the reviewer's wording: the hub writes it as an ``edited`` op of the reviewer (audited)
    under the clock ``hlc`` (after the memory's own) and approves it, in one transaction."""
    psycopg = _psycopg()
    try:
        return str(conn.execute("SELECT kenning.review_edited(%s, %s, %s, %s, %s, %s)",
                                (gid, title, text, hlc, device, content_hash)).fetchone()[0])
    except psycopg.errors.RaiseException as e:
        raise TeamError(str(e.diag.message_primary or e)) from None
    except psycopg.errors.UndefinedFunction:
        raise TeamError("the hub's schema is older than this Kenning: the admin runs `kenning team init` again "
                        "to upgrade it") from None


def pending(conn: Any, team: str) -> list[dict[str, Any]]:
    """Memories waiting for review, each with its clock and what it supersedes (gid, title and text, bounded
    like the rest: the reviewer sees both)."""
    rows = conn.execute(
        "SELECT gid, left(author, 64), extract(epoch FROM created_at)::float8, layer, left(title, %s), "
        "left(body, %s), hlc, (SELECT coalesce(json_agg(json_build_object('gid', o.gid, 'title', left(o.title, %s), "
        "'body', left(o.body, %s)) ORDER BY o.created_at), '[]') FROM (SELECT * FROM kenning.memories o "
        "WHERE o.team = m.team AND o.superseded_by = m.gid AND NOT o.forgotten ORDER BY o.created_at LIMIT %s) o) "
        "FROM kenning.memories m WHERE team = %s AND review = 'pending' AND NOT forgotten "
        "ORDER BY created_at", (MAX_TITLE, MAX_TEXT, MAX_TITLE, MAX_TEXT, MAX_REPLACED, team)).fetchall()
    out = []
    for r in rows:
        m = dict(zip(("gid", "author", "created_at", "layer", "title", "body", "hlc", "replaces"), r, strict=True))
        m["replaces"] = [{"gid": str(o.get("gid") or ""), "title": str(o.get("title") or ""),
                          "body": str(o.get("body") or "")} for o in (m["replaces"] or []) if isinstance(o, dict)]
        out.append(m)
    return out


def status(conn: Any, team: str) -> dict[str, Any]:
    version = conn.execute("SELECT value FROM kenning.meta WHERE key = 'schema_version'").fetchone()
    counts = dict(conn.execute("SELECT review, count(*) FROM kenning.memories WHERE team = %s AND NOT forgotten "
                               "GROUP BY review", (team,)).fetchall())
    skew = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()[0]
    return {"schema_version": version[0] if version else None, "memories": counts, "hub_time": float(skew)}
