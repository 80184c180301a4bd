"""Marking memories that are no longer true: superseded by a newer one, or put back.

Three ways in, one place that writes: the offline rule (:func:`automatic`, run after every
stored batch: a new rule, decision or status replaces older ones on the same subject, see
:mod:`kenning.memory.supersession`), an LLM observer naming the ids it replaces (validated
before they get here), and a user (CLI, MCP, viewer API: :func:`by_hand`). A superseded row
stays searchable (``--all``), flagged, and is never injected; its near-duplicates go with it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from kenning.memory.judged import said_by_user
from kenning.memory.layers import KEY, RULE
from kenning.memory.order import earlier_sql
from kenning.memory.supersession import (
    CHANGEABLE,
    NEVER_REPLACED,
    Memory,
    changed_value,
    could_replace,
    has_change,
    replaces,
)
from kenning.store.memory_index import memory_text, rows

CANDIDATE_RULES = 300  # a project's standing rules are few; each new rule is compared with all of them


class SupersedeError(ValueError):
    """A request to supersede that cannot be done as given (the message says why)."""


@dataclass
class Result:
    superseded: list[int] = field(default_factory=list)
    by: int = 0
    skipped: dict[int, str] = field(default_factory=dict)  # id -> why not

    def as_dict(self) -> dict[str, object]:
        return {"superseded": self.superseded, "by": self.by, "skipped": {str(k): v for k, v in self.skipped.items()}}


def mark(conn: sqlite3.Connection, old_ids: Iterable[int], new_id: int, *, at: float | None = None) -> list[int]:
    """Supersede ``old_ids`` (and their near-duplicates) by ``new_id``. Inside a transaction; no checks."""
    at = time.time() if at is None else at
    done: list[int] = []
    for oid in dict.fromkeys(old_ids):
        cur = conn.execute(
            "UPDATE observations SET status = 'superseded', superseded_by = ?, superseded_at = ? "
            "WHERE (id = ? OR duplicate_of = ?) AND status = 'active' AND id != ?", (new_id, at, oid, oid, new_id))
        if cur.rowcount:
            done.append(oid)
    return done


def _memory(r: sqlite3.Row) -> Memory:
    return Memory.of(int(r["id"]), str(r["type"]), str(r["layer"] or ""),
                     memory_text(r["title"], r["subtitle"], r["facts"]), float(r["created_at"]),
                     kind=str(r["kind"] or ""))


_COLS = "o.id, o.type, o.layer, o.title, o.subtitle, o.facts, o.created_at, o.project, o.kind, o.scope, o.why"


def automatic(conn: sqlite3.Connection, new_ids: Sequence[int], *, at: float | None = None) -> list[tuple[int, int]]:
    """Apply the offline rule to newly stored observations; returns (old, new) pairs. Inside a transaction."""
    out: list[tuple[int, int]] = []
    for nid in sorted(new_ids):
        found = rows(conn, f"SELECT {_COLS} FROM observations o WHERE o.id = ? AND o.status = 'active'", (nid,))
        row = found[0] if found else None
        if row is None:
            continue
        new = _memory(row)
        if row["layer"] not in (RULE, KEY):
            out += _changed_values(conn, row, new, at)  # a note that a value changed still makes the old one untrue
            continue
        # Only rows replaces() could say yes to, before their text is read (could_replace, in SQL): a
        # subject like cmd:pytest is shared by most of a project's rows, none of them fix-like.
        may, may_args = _could_replace_sql(new)
        candidates: dict[int, sqlite3.Row] = {}
        subs = sorted(new.subjects)
        for i in range(0, len(subs), 200):
            chunk = subs[i:i + 200]
            for r in rows(
                    conn, f"SELECT DISTINCT {_COLS} FROM observation_subjects s "
                    "JOIN observations o ON o.id = s.observation_id "
                    f"WHERE s.project = ? AND s.subject IN ({','.join('?' * len(chunk))}) AND o.status = 'active' "
                    f"AND o.duplicate_of IS NULL AND o.id != ?{may}", (row["project"], *chunk, nid, *may_args)):
                candidates[int(r["id"])] = r
        if new.layer == RULE or new.type == "decision":
            for r in rows(
                    conn, f"SELECT {_COLS} FROM observations o WHERE o.project = ? AND o.layer = 'rule' "
                    "AND o.status = 'active' AND o.duplicate_of IS NULL AND o.id != ? "
                    "ORDER BY o.created_at DESC LIMIT ?", (row["project"], nid, CANDIDATE_RULES)):
                candidates[int(r["id"])] = r
        if new.layer == RULE and row["scope"] == "user":
            # The user's own preferences hold in every project: a newer one replaces an older one said anywhere.
            for r in rows(
                    conn, f"SELECT {_COLS} FROM observations o INDEXED BY observations_user_scope WHERE "
                    "o.scope = 'user' AND o.duplicate_of IS NULL AND o.layer = 'rule' AND o.status = 'active' "
                    "AND o.id != ? ORDER BY o.created_at DESC LIMIT ?", (nid, CANDIDATE_RULES)):
                candidates[int(r["id"])] = r
        if any(s.startswith("work:") for s in new.subjects):
            # workstreams are matched by most of their words, not the exact subject string
            for r in rows(
                    conn, f"SELECT DISTINCT {_COLS} FROM observation_subjects s "
                    "JOIN observations o ON o.id = s.observation_id "
                    "WHERE s.project = ? AND s.subject >= 'work:' AND s.subject < 'work;' AND o.status = 'active' "
                    f"AND o.duplicate_of IS NULL AND o.id != ?{may}", (row["project"], nid, *may_args)):
                candidates[int(r["id"])] = r
        # Only the user replaces a standing rule (DESIGN.md §9): not the agent's conclusion, not its plan.
        users = said_by_user(row["kind"], row["why"])
        gone = [oid for oid, r in candidates.items()
                if could_replace(new, oid, str(r["type"]), str(r["layer"] or ""), float(r["created_at"]),
                                 str(r["kind"] or "")) and (users or r["layer"] != RULE)
                and replaces(new, _memory(r))]
        for oid in mark(conn, gone, nid, at=at):
            out.append((oid, nid))
        out += _changed_values(conn, row, new, at)
    return out


def among(conn: sqlite3.Connection, old_ids: Sequence[int], new_ids: Sequence[int],
          *, at: float | None = None) -> list[tuple[int, int]]:
    """The offline rule between two given sets of rows, as :func:`automatic` applies it (only the
    user replaces a standing rule): ``kenning repair`` asks it of the rows a backup gave back and the
    newer rows the damaged file kept, since the mark on a row the damage took was lost with it.
    Returns (old, new) pairs. Inside a transaction."""
    def fetch(ids: Sequence[int]) -> list[sqlite3.Row]:
        out: list[sqlite3.Row] = []
        for i in range(0, len(ids), 500):
            chunk = list(ids[i:i + 500])
            out += rows(conn, f"SELECT {_COLS} FROM observations o WHERE o.id IN ({','.join('?' * len(chunk))}) "
                              "AND o.status = 'active' AND o.layer IN (?, ?)", (*chunk, RULE, KEY))
        return out

    olds = [(r, _memory(r)) for r in fetch(old_ids)]
    out: list[tuple[int, int]] = []
    for row in sorted(fetch(new_ids), key=lambda r: int(r["id"])):
        new = _memory(row)
        users = not row["kind"] or '"by": "user"' in (row["why"] or "")
        gone = [m.id for r, m in olds if r["project"] == row["project"] and (users or r["layer"] != RULE)
                and replaces(new, m)]
        out += [(oid, new.id) for oid in mark(conn, gone, new.id, at=at)]
    return out


VALUE_CANDIDATES = 300  # a project's newest key memories a changed value is checked against


def _changed_values(conn: sqlite3.Connection, row: sqlite3.Row, new: Memory,
                    at: float | None) -> list[tuple[int, int]]:
    """"… the deadline from 10s to 120s": the project's key memories that state the old value of the
    same thing stop being true, whether or not they share a subject with the new one (the words that
    name the value are what they share)."""
    if not has_change(new.text):
        return []
    before, before_args = earlier_sql("o", new.created_at, new.id)
    gone = [int(r["id"]) for r in rows(
        conn, f"SELECT {_COLS} FROM observations o WHERE o.project = ? AND o.layer = 'key' AND o.status = 'active' "
              f"AND o.duplicate_of IS NULL AND {before} AND o.id != ? ORDER BY o.created_at DESC LIMIT ?",
        (row["project"], *before_args, new.id, VALUE_CANDIDATES)) if changed_value(new.text, _memory(r).text)]
    return [(oid, new.id) for oid in mark(conn, gone, new.id, at=at)]


def _could_replace_sql(new: Memory) -> tuple[str, tuple[object, ...]]:
    """could_replace(new, …) as a condition on ``o`` (type and created_at are NOT NULL columns)."""
    before, before_args = earlier_sql("o", new.created_at, new.id)  # older by the clock, or by arrival
    sql = (f" AND {before} AND (o.type NOT IN ({','.join('?' * len(NEVER_REPLACED))}) OR "
           f"o.kind IN ({','.join('?' * len(CHANGEABLE))}))")
    args: tuple[object, ...] = (*before_args, *NEVER_REPLACED, *CHANGEABLE)
    if new.type in NEVER_REPLACED and new.kind not in CHANGEABLE:
        sql += f" AND (o.layer = '{RULE}' OR o.kind IN ({','.join('?' * len(CHANGEABLE))}))"
        args = (*args, *CHANGEABLE)
    return sql, args


def named(conn: sqlite3.Connection, new_id: int, old_ids: Iterable[int], *, at: float | None = None) -> list[int]:
    """What an observer named: only active rows of the same project, older than the new one; a standing
    rule only when the new one rests on the user's words."""
    row = conn.execute("SELECT project, created_at, kind, why FROM observations WHERE id = ?", (new_id,)).fetchone()
    if row is None:
        return []
    users = said_by_user(row[2], row[3])
    ok = []
    for oid in dict.fromkeys(int(i) for i in old_ids):
        r = conn.execute("SELECT project, status, created_at, layer FROM observations WHERE id = ?",
                         (oid,)).fetchone()
        if r is not None and r[0] == row[0] and r[1] == "active" and oid != new_id and (users or r[3] != RULE):
            ok.append(oid)
    return mark(conn, ok, new_id, at=at)


def by_hand(conn: sqlite3.Connection, old_ids: Sequence[int], new_id: int, *, agent: bool = False) -> Result:
    """A user's request: validated (the rows exist, one project, the new one active), in one transaction.
    ``agent``: the agent asks (the MCP tool), and a standing rule is left as it is (only the user replaces one)."""
    if not old_ids:
        raise SupersedeError("name the observation(s) that are no longer true")
    bad = [i for i in (*old_ids, new_id) if isinstance(i, bool) or not isinstance(i, int) or not 0 < i < 2**63]
    if bad:
        raise SupersedeError(f"{str(bad[0])[:30]} is not an observation id (1 to 2**63-1)")
    if new_id in old_ids:
        raise SupersedeError(f"#{new_id} cannot supersede itself")
    res = Result(by=new_id)
    with _transaction(conn):
        new = conn.execute("SELECT project, status FROM observations WHERE id = ?", (new_id,)).fetchone()
        if new is None:
            raise SupersedeError(f"no observation #{new_id} (the one that replaces them)")
        if new[1] != "active":
            raise SupersedeError(f"#{new_id} is {new[1]} itself: it cannot replace anything")
        ok: list[int] = []
        for oid in dict.fromkeys(old_ids):
            r = conn.execute("SELECT project, status, layer FROM observations WHERE id = ?", (oid,)).fetchone()
            if r is None:
                res.skipped[oid] = "no such observation"
            elif r[0] != new[0]:
                res.skipped[oid] = "belongs to another project"
            elif r[1] != "active":
                res.skipped[oid] = f"already {r[1]}"
            elif agent and r[2] == RULE:
                res.skipped[oid] = (f"a standing rule: only the user replaces it (`kenning supersede {oid} --by "
                                    f"{new_id}`, or the viewer)")
            else:
                ok.append(oid)
        res.superseded = mark(conn, ok, new_id)
    return res


def restore(conn: sqlite3.Connection, ids: Sequence[int]) -> list[int]:
    """Make superseded or retracted rows active again (undo); returns the ids restored."""
    done: list[int] = []
    with _transaction(conn):
        for oid in dict.fromkeys(ids):
            cur = conn.execute("UPDATE observations SET status = 'active', superseded_by = NULL, superseded_at = NULL "
                               "WHERE (id = ? OR (duplicate_of = ? AND superseded_by = (SELECT superseded_by FROM "
                               "observations WHERE id = ?))) AND status != 'active'", (oid, oid, oid))
            if cur.rowcount:
                done.append(oid)
    return done


def _transaction(conn: sqlite3.Connection) -> AbstractContextManager[sqlite3.Connection]:
    from kenning.store.repo import transaction  # repo stores outcomes through this module: import late

    return transaction(conn)
