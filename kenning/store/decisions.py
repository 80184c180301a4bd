"""A user's decisions about which layer a memory is in: pin, unpin, bring back from the archive.

The layer of a memory is derived from what it says (:mod:`kenning.memory.layers`); a user
can overrule it, and that decision is canonical (``user_layer``, migration 0019), so rebuilding
the memory index keeps it (:func:`kenning.store.memory_index.rebuild` applies it on top):

* :func:`pin`: the memory becomes a standing rule, given to every session of its project (the
  session-start index lists rules first, newest version only);
* :func:`unpin`: a rule becomes an ordinary key memory (ranked by importance, no longer
  always given), or, if it only was a rule because it was pinned, what it was before;
* :func:`unarchive`: routine work older than ``archive_after_days`` (the archive: searchable,
  never injected) becomes a key memory, injectable again and never archived.

Each acts on the memory's near-duplicate group (the index shows the group's head; a later
restatement inherits the decision). Every surface (HTTP, CLI, viewer) calls these; they
validate and say why not with a :class:`DecisionError`.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from kenning.memory.layers import KEY, LOG, RULE
from kenning.store import memory_index, projects
from kenning.store.repo import transaction


class DecisionError(ValueError):
    """A decision that cannot be applied as asked; ``kind`` says how a surface should answer."""

    def __init__(self, message: str, kind: str = "conflict") -> None:
        super().__init__(message)
        self.kind = kind  # "not_found" | "wrong_project" | "conflict"


def archive_cutoff(archive_after_days: int, now: float | None = None) -> float:
    """Routine work created before this instant is the archive (0.0: nothing is archived)."""
    if not archive_after_days or archive_after_days <= 0:
        return 0.0
    return (time.time() if now is None else now) - archive_after_days * 86400


def is_archived(layer: str | None, status: str | None, created_at: float, cutoff: float) -> bool:
    return layer == LOG and status == "active" and created_at < cutoff


def _row(conn: sqlite3.Connection, oid: int, project: str | None) -> sqlite3.Row:
    if isinstance(oid, bool) or not isinstance(oid, int) or not 0 < oid < 2**63:
        raise DecisionError(f"{str(oid)[:30]} is not an observation id (1 to 2**63-1)", "not_found")
    found = memory_index.rows(
        conn, "SELECT id, project, layer, status, created_at, duplicate_of, user_layer FROM observations WHERE id = ?",
        (oid,))
    if not found:
        raise DecisionError(f"no observation #{oid}", "not_found")
    r = found[0]
    if project:
        try:
            wanted = projects.one(conn, project)
        except projects.AmbiguousProject as e:
            raise DecisionError(str(e), "wrong_project") from None
        if r["project"] != wanted:
            raise DecisionError(f"#{oid} belongs to another project, not {project}", "wrong_project")
    if r["status"] != "active":
        raise DecisionError(f"#{oid} is {r['status']}: restore it first (it is not true as it stands)")
    return r


def _apply(conn: sqlite3.Connection, r: sqlite3.Row, user_layer: str | None, layer: str) -> dict[str, Any]:
    head = int(r["duplicate_of"] if r["duplicate_of"] is not None else r["id"])
    at = time.time()
    n = conn.execute("UPDATE observations SET user_layer = ?, user_layer_at = ?, layer = ? "
                     "WHERE id = ? OR duplicate_of = ?", (user_layer, at if user_layer else None, layer,
                                                          head, head)).rowcount
    return {"id": int(r["id"]), "head": head, "layer": layer, "previous": r["layer"], "pinned": user_layer == RULE,
            "decided": user_layer, "rows": n}


def pin(conn: sqlite3.Connection, oid: int, *, project: str | None = None) -> dict[str, Any]:
    """Make an active memory a standing rule of its project."""
    with transaction(conn):
        r = _row(conn, oid, project)
        if r["layer"] == RULE:
            raise DecisionError(f"#{oid} is already a standing rule" + (" (pinned)" if r["user_layer"] == RULE else ""))
        return _apply(conn, r, RULE, RULE)


def confirm(conn: sqlite3.Connection, oid: int, *, project: str | None = None) -> dict[str, Any]:
    """The user confirms a standing rule: it stays one whatever a rebuild of the index derives (a pin of a
    rule that is a rule by what it says; ``kenning review``)."""
    with transaction(conn):
        r = _row(conn, oid, project)
        if r["layer"] != RULE:
            raise DecisionError(f"#{oid} is not a standing rule: pin it to make it one")
        return _apply(conn, r, RULE, RULE)


def put_back(conn: sqlite3.Connection, oid: int, *, layer: str, user_layer: str | None,
             project: str | None = None) -> dict[str, Any]:
    """Undo a pin or unpin: the layer and the user's decision the memory had before (the viewer's undo)."""
    if layer not in (RULE, KEY, LOG) or user_layer not in (None, RULE, KEY, LOG):
        raise DecisionError(f"cannot put #{oid} back in layer {layer!r} (decided {user_layer!r})")
    with transaction(conn):
        return _apply(conn, _row(conn, oid, project), user_layer, layer)


def unpin(conn: sqlite3.Connection, oid: int, *, project: str | None = None) -> dict[str, Any]:
    """Make a standing rule an ordinary memory: a key memory, or the layer it had before a pin."""
    with transaction(conn):
        r = _row(conn, oid, project)
        if r["layer"] != RULE:
            raise DecisionError(f"#{oid} is not a standing rule")
        derived = memory_index.derived_layer(conn, oid) or KEY
        if derived == RULE:  # a rule by what it says: kept as a key memory, by decision
            return _apply(conn, r, KEY, KEY)
        return _apply(conn, r, None, derived)  # only a rule because it was pinned: back to what it says


def unarchive(conn: sqlite3.Connection, oid: int, *, archive_after_days: int, project: str | None = None,
              now: float | None = None) -> dict[str, Any]:
    """Bring archived routine work back: a key memory, injectable again and never archived."""
    with transaction(conn):
        r = _row(conn, oid, project)
        cutoff = archive_cutoff(archive_after_days, now)
        if not is_archived(r["layer"], r["status"], float(r["created_at"]), cutoff):
            if r["layer"] != LOG:
                raise DecisionError(f"#{oid} is not in the archive: a {_LAYER_NAME.get(r['layer'], r['layer'])} "
                                    "never ages out")
            raise DecisionError(f"#{oid} is not in the archive yet: routine work is archived after "
                                f"{archive_after_days} days" if archive_after_days else
                                f"#{oid} is not in the archive: archiving is off (archive_after_days = 0)")
        return _apply(conn, r, KEY, KEY)


_LAYER_NAME = {RULE: "standing rule", KEY: "key memory", LOG: "session log entry"}
