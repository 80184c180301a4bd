"""Export memory as JSON Lines and import it back, idempotently.

One record per line, ``{"kind": "header" | "session" | "prompt" | "observation" | "summary", ...}``.
Sessions are keyed by (platform, agent session id); the other records name their session
that way, so an export can be imported into any database. Importing the same file twice
changes nothing the second time (sessions by key, prompts by number, observations by
content hash, summaries by session). Observations of type ``sensitive`` stay out of an
export unless asked for. An import is one transaction: one bad line and nothing is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kenning.project import canonical
from kenning.records import ObservationDraft, SummaryDraft
from kenning.store import repo
from kenning.store.projects import attach as attach_project
from kenning.store.projects import names as project_names

FORMAT_VERSION = 1
SENSITIVE = "sensitive"
OBS_FIELDS = ("type", "title", "subtitle", "facts", "narrative", "concepts", "files_read", "files_modified",
              "prompt_number", "tokens_spent", "source_tokens", "created_at", "agent_id", "agent_type",
              "observer", "status", "user_layer")  # user_layer: a pin or demotion (kenning/store/decisions.py)
SUMMARY_TEXT = ("request", "investigated", "learned", "completed", "next_steps", "notes")
SUMMARY_FIELDS = (*SUMMARY_TEXT, "files_read", "files_modified", "prompt_number", "tokens_spent", "source_tokens",
                  "created_at", "observer")
SESSION_STATUSES = ("active", "completed", "abandoned")
OBS_STATUSES = ("active", "superseded", "retracted")
USER_LAYERS = ("rule", "key")
MAX_TEXT = 1_000_000  # characters in one field of an imported record
MAX_LIST = 10_000  # items in one list field


class BadRecord(ValueError):
    """An import line that cannot be used; the message names the line."""


# ----------------------------------------------------------------------------------- export

def export(conn: sqlite3.Connection, *, project: str | None = None, since: float | None = None,
           until: float | None = None, include_sensitive: bool = False) -> Iterator[dict[str, Any]]:
    """Yield export records: a header, then each session followed by its records.

    The date range applies to each record's own time; a session is exported when it started
    in the range or holds a record that is.
    """
    yield {"kind": "header", "format": FORMAT_VERSION, "exported_at": time.time(),
           "filters": {"project": project, "since": since, "until": until, "include_sensitive": include_sensitive}}
    where, params = "1", []
    if project:
        where, params = "project = ?", [project]
    shown = project_names(conn)

    def in_range(t: Any) -> bool:
        return (since is None or t >= since) and (until is None or t < until)

    for s in conn.execute(f"SELECT * FROM sessions WHERE {where} ORDER BY id", params).fetchall():
        key = {"platform": s["platform"], "agent_session_id": s["agent_session_id"]}
        records: list[dict[str, Any]] = []
        for p in conn.execute("SELECT * FROM user_prompts WHERE session_id = ? ORDER BY prompt_number", (s["id"],)):
            if in_range(p["created_at"]):
                records.append({"kind": "prompt", "session": key, "prompt_number": p["prompt_number"],
                                "prompt_text": p["prompt_text"], "created_at": p["created_at"]})
        for o in conn.execute("SELECT * FROM observations WHERE session_id = ? ORDER BY id", (s["id"],)):
            if (o["type"] == SENSITIVE and not include_sensitive) or not in_range(o["created_at"]):
                continue
            rec: dict[str, Any] = {"kind": "observation", "session": key}
            for f in OBS_FIELDS:
                rec[f] = _loads_list(o[f]) if f in repo.JSON_LIST_FIELDS else o[f]
            # What the observer judged it to be (migration 0025); "kind" already names the record.
            # sqlite3.Row answers ``in`` by value, not by column name, hence keys().
            if "why" in o.keys():  # noqa: SIM118
                rec.update(role=o["kind"], scope=o["scope"], tentative=bool(o["tentative"]),
                           why=_loads_dict(o["why"]))
            records.append(rec)
        for m in conn.execute("SELECT * FROM session_summaries WHERE session_id = ?", (s["id"],)):
            if in_range(m["created_at"]):
                rec = {"kind": "summary", "session": key}
                for f in SUMMARY_FIELDS:
                    rec[f] = _loads_list(m[f]) if f in ("files_read", "files_modified") else m[f]
                records.append(rec)
        if not records and not in_range(s["started_at"]):
            continue
        yield {"kind": "session", **key, "project": s["project"],
               "project_name": shown.get(s["project"], s["project"]), "project_root": s["project_root"],
               "cwd": s["cwd"], "started_at": s["started_at"], "ended_at": s["ended_at"],
               "end_reason": s["end_reason"], "status": s["status"], "prompt_count": s["prompt_count"]}
        yield from records


def export_lines(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL text, one line per record (UTF-8 as is: exports are for humans too)."""
    for rec in records:
        yield json.dumps(rec, ensure_ascii=False) + "\n"


def _loads_dict(raw: Any) -> dict[str, Any]:
    try:
        v = json.loads(raw or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _loads_list(raw: Any) -> list[Any]:
    try:
        v = json.loads(raw or "[]")
    except ValueError:
        return []
    return v if isinstance(v, list) else []


# ----------------------------------------------------------------------------------- import

MAX_LINE_BYTES = 16 * 1024 * 1024   # one record; an export line is a few KB
MAX_IMPORT_BYTES = 4 * 1024 ** 3     # a whole file: far above any real memory, finite for /dev/zero or `yes`


def bounded_lines(fh: Any, max_line: int = MAX_LINE_BYTES, max_total: int = MAX_IMPORT_BYTES) -> Iterator[bytes]:
    """The lines of a binary stream, refusing (BadRecord) a line or a total beyond the bounds."""
    total = 0
    n = 0
    while True:
        line = fh.readline(max_line + 1)
        if not line:
            return
        n += 1
        total += len(line)
        if len(line) > max_line:
            raise BadRecord(f"line {n}: longer than {max_line // (1024 * 1024)} MiB; not an export file")
        if total > max_total:
            raise BadRecord(f"more than {max_total // 1024 ** 3} GiB; import it in parts")
        yield line


def read_jsonl(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each non-blank line; BadRecord names the first unusable line."""
    for n, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                raise BadRecord(f"line {n}: not UTF-8 text") from None
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise BadRecord(f"line {n}: not JSON ({e})") from None
        if not isinstance(rec, dict):
            raise BadRecord(f"line {n}: expected a JSON object")
        yield n, rec


def import_records(conn: sqlite3.Connection, records: Iterable[tuple[int, dict[str, Any]]],
                   clean: Callable[[str], str] | None = None) -> dict[str, int]:
    """Insert what is not there yet, in one transaction; returns counts of what was added.

    ``clean`` is applied to every text that becomes memory (prompts, observations, summaries):
    the surfaces pass the same cleaning the hooks apply (``privacy.ingress``), so an export
    from elsewhere cannot bring in a secret or a ``<private>`` block. Raises BadRecord (naming
    the line) on the first unusable record; nothing is written then.
    """
    c = clean or _same
    added = {"sessions": 0, "prompts": 0, "observations": 0, "summaries": 0, "skipped": 0}
    known: dict[tuple[str, str], int] = {}
    with repo.transaction(conn):
        for line, rec in records:
            try:
                kind = rec.get("kind")
                if kind == "header":
                    if rec.get("format") != FORMAT_VERSION:
                        raise ValueError(f"unsupported export format {rec.get('format')!r} "
                                         f"(this version reads {FORMAT_VERSION})")
                elif kind == "session":
                    _import_session(conn, rec, known, added)
                elif kind == "prompt":
                    _import_prompt(conn, rec, known, added, c)
                elif kind == "observation":
                    _import_observation(conn, rec, known, added, c)
                elif kind == "summary":
                    _import_summary(conn, rec, known, added, c)
                else:
                    raise ValueError(f"unknown kind {str(kind)[:40]!r}")
            except BadRecord:
                raise
            except sqlite3.OperationalError:
                raise  # locked or busy: not the line's fault
            except (ValueError, TypeError, sqlite3.Error, UnicodeEncodeError) as e:
                # UnicodeEncodeError: a lone surrogate (valid JSON) that SQLite cannot store.
                raise BadRecord(f"line {line}: {e}") from None
    return added


def _import_session(conn: sqlite3.Connection, rec: dict[str, Any], known: dict[tuple[str, str], int],
                    added: dict[str, int]) -> None:
    k = _key(rec)
    project = _text(rec, "project", required=True, limit=4096)
    root = _text(rec, "project_root", limit=4096)
    row = conn.execute("SELECT id FROM sessions WHERE platform = ? AND agent_session_id = ?", k).fetchone()
    if row is not None:
        known[k] = int(row[0])
        added["skipped"] += 1
        return
    status = _text(rec, "status") or "completed"
    if status not in SESSION_STATUSES:
        raise ValueError(f"status must be one of {', '.join(SESSION_STATUSES)}")
    # An export written before projects had keys (no project_name) names the folder: the key is its root's.
    key = project if "project_name" in rec or not root else canonical(root)
    name = _text(rec, "project_name", limit=512) or (os.path.basename(project) if project == key else project)
    project = attach_project(conn, key, name=name, root=root, at=_number(rec, "started_at"))
    cur = conn.execute(
        "INSERT INTO sessions (platform, agent_session_id, project, project_root, cwd, started_at, ended_at, "
        "end_reason, status, prompt_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (k[0], k[1], project, root, _text(rec, "cwd", limit=4096),
         _number(rec, "started_at"), _number(rec, "ended_at", optional=True),
         _text(rec, "end_reason", optional=True, limit=200), status, _int(rec, "prompt_count")))
    known[k] = int(cur.lastrowid or 0)
    added["sessions"] += 1


def _same(text: str) -> str:
    return text


def _import_prompt(conn: sqlite3.Connection, rec: dict[str, Any], known: dict[tuple[str, str], int],
                   added: dict[str, int], clean: Callable[[str], str]) -> None:
    sid = _session(conn, rec, known)
    n = _int(rec, "prompt_number", minimum=1)
    cur = repo.insert(
        conn, "user_prompts",
        "INSERT OR IGNORE INTO user_prompts (id, session_id, prompt_number, prompt_text, created_at) "
        f"VALUES ({repo.next_id('user_prompts')}, ?, ?, ?, ?)",
        (sid, n, clean(_text(rec, "prompt_text")), _number(rec, "created_at")))
    added["prompts" if cur.rowcount else "skipped"] += 1
    # Later prompts captured in this session must not reuse an imported number.
    conn.execute("UPDATE sessions SET prompt_count = MAX(prompt_count, ?) WHERE id = ?", (n, sid))


def _import_observation(conn: sqlite3.Connection, rec: dict[str, Any], known: dict[tuple[str, str], int],
                        added: dict[str, int], clean: Callable[[str], str]) -> None:
    sid = _session(conn, rec, known)
    status = _text(rec, "status") or "active"
    if status not in OBS_STATUSES:
        raise ValueError(f"status must be one of {', '.join(OBS_STATUSES)}")
    user_layer = _text(rec, "user_layer", optional=True, limit=16)
    if user_layer is not None and user_layer not in USER_LAYERS:
        raise ValueError(f"user_layer must be one of {', '.join(USER_LAYERS)} or null")
    d = ObservationDraft(
        type=_text(rec, "type", required=True, limit=64),
        title=clean(_text(rec, "title", required=True, limit=10_000)),
        created_at=_number(rec, "created_at"), subtitle=clean(_text(rec, "subtitle")),
        facts=[clean(f) for f in _strs(rec, "facts")], narrative=clean(_text(rec, "narrative")),
        concepts=[clean(x) for x in _strs(rec, "concepts")], files_read=_strs(rec, "files_read"),
        files_modified=_strs(rec, "files_modified"), prompt_number=_int(rec, "prompt_number", optional=True),
        tokens_spent=_int(rec, "tokens_spent"), source_tokens=_int(rec, "source_tokens"),
        agent_id=_text(rec, "agent_id", optional=True, limit=200),
        agent_type=_text(rec, "agent_type", optional=True, limit=200), **_role(rec, clean))
    project = conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    oid = repo.insert_observation(conn, sid, project, d, _text(rec, "observer", limit=64) or "import")
    if oid and status != "active":
        conn.execute("UPDATE observations SET status = ? WHERE id = ?", (status, oid))
    if oid and user_layer:  # the user's decision outlives the trip, as it outlives a rebuild
        conn.execute("UPDATE observations SET user_layer = ?, user_layer_at = ?, layer = ? WHERE id = ?",
                     (user_layer, time.time(), user_layer, oid))
    added["observations" if oid else "skipped"] += 1


def _import_summary(conn: sqlite3.Connection, rec: dict[str, Any], known: dict[tuple[str, str], int],
                    added: dict[str, int], clean: Callable[[str], str]) -> None:
    sid = _session(conn, rec, known)
    s = SummaryDraft(created_at=_number(rec, "created_at"), **{f: clean(_text(rec, f)) for f in SUMMARY_TEXT},
                     files_read=_strs(rec, "files_read"), files_modified=_strs(rec, "files_modified"),
                     prompt_number=_int(rec, "prompt_number", optional=True),
                     tokens_spent=_int(rec, "tokens_spent"), source_tokens=_int(rec, "source_tokens"))
    if conn.execute("SELECT 1 FROM session_summaries WHERE session_id = ?", (sid,)).fetchone():
        added["skipped"] += 1  # a session has one summary: the one already here wins
        return
    project = conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    repo.upsert_summary(conn, sid, project, s, _text(rec, "observer", limit=64) or "import", time.time())
    added["summaries"] += 1


# ----------------------------------------------------------------------- field validation

def _role(rec: dict[str, Any], clean: Callable[[str], str]) -> dict[str, Any]:
    """What the observer judged an exported memory to be: checked like every other field (an export of
    an older version has none of it)."""
    from kenning.memory.layers import KIND_LAYERS

    role = _text(rec, "role", optional=True, limit=32)
    if role is not None and role not in KIND_LAYERS:
        raise ValueError(f"role must be one of {', '.join(sorted(KIND_LAYERS))} or null")
    scope = _text(rec, "scope", optional=True, limit=16) or "project"
    if scope not in ("project", "user"):
        raise ValueError("scope must be project or user")
    tentative = rec.get("tentative", False)
    if not isinstance(tentative, bool):
        raise ValueError("tentative must be true or false")
    why = rec.get("why") or {}
    if not isinstance(why, dict) or len(why) > 20 or not all(
            isinstance(k, str) and len(k) <= 32 and (isinstance(v, int | float) or (isinstance(v, str) and
                                                                                   len(v) <= 10_000))
            for k, v in why.items()):
        raise ValueError("why must be an object of short texts and numbers")
    return {"kind": role or "", "scope": scope, "tentative": tentative,
            "why": {k: clean(v) if isinstance(v, str) else v for k, v in why.items()}}


def _key(rec: dict[str, Any]) -> tuple[str, str]:
    platform = rec.get("platform", "claude-code")
    sid = rec.get("agent_session_id")
    if not isinstance(platform, str) or not platform or len(platform) > 64:
        raise ValueError("platform must be a short non-empty string")
    if not isinstance(sid, str) or not sid or len(sid) > 512:
        raise ValueError("agent_session_id must be a non-empty string")
    return platform, sid


def _session(conn: sqlite3.Connection, rec: dict[str, Any], known: dict[tuple[str, str], int]) -> int:
    key = rec.get("session")
    if not isinstance(key, dict):
        raise ValueError("missing its session key {platform, agent_session_id}")
    k = _key(key)
    if k not in known:
        row = conn.execute("SELECT id FROM sessions WHERE platform = ? AND agent_session_id = ?", k).fetchone()
        if row is None:
            raise ValueError(f"its session {k[1][:60]!r} is neither in the database nor earlier in the file")
        known[k] = int(row[0])
    return known[k]


def _text(rec: dict[str, Any], name: str, *, required: bool = False, optional: bool = False,
          limit: int = MAX_TEXT) -> Any:
    v = rec.get(name)
    if v is None:
        if required:
            raise ValueError(f"{name} is required")
        return None if optional else ""
    if not isinstance(v, str):
        raise ValueError(f"{name} must be a string")
    if required and not v.strip():
        raise ValueError(f"{name} must not be empty")
    if len(v) > limit:
        raise ValueError(f"{name} is longer than {limit} characters")
    return v


def _number(rec: dict[str, Any], name: str, *, optional: bool = False) -> Any:
    v = rec.get(name)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be a number (epoch seconds)")
    if not 0 <= v < 1e11:
        raise ValueError(f"{name} is out of range")
    return float(v)


def _int(rec: dict[str, Any], name: str, *, optional: bool = False, minimum: int = 0) -> Any:
    v = rec.get(name)
    if v is None:
        if optional:
            return None
        if minimum <= 0:
            return 0
    if isinstance(v, bool) or not isinstance(v, int) or not minimum <= v < 2**53:
        raise ValueError(f"{name} must be an integer of at least {minimum}")
    return v


def _strs(rec: dict[str, Any], name: str) -> list[str]:
    v = rec.get(name)
    if v is None:
        return []
    if not isinstance(v, list) or len(v) > MAX_LIST or not all(isinstance(x, str) and len(x) <= MAX_TEXT for x in v):
        raise ValueError(f"{name} must be a list of strings")
    return list(v)
