"""The memory index of each observation: its layer, importance, subjects and near-duplicate group.

All of it derives from the canonical columns (type, title, subtitle, facts, concepts, project,
created_at, status), through :mod:`kenning.memory`: :func:`index` fills it for new rows as they
are stored, :func:`rebuild` recomputes it for every row (``kenning reindex``, migration 0012).

Groups (consolidation): the newest row of a group of near-duplicates is its *head*
(``duplicate_of IS NULL``, ``occurrences`` = how many rows the group holds); the others point
at it. Rows are assigned in time order, so assigning them one by one as they arrive and
rebuilding them all at once give the same groups; assigning a row twice changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kenning.memory.duplicates import WINDOW, idents, signature_of, similar, words_of
from kenning.memory.judged import said_by_user
from kenning.memory.layers import classify
from kenning.memory.order import cutoff, precedes
from kenning.memory.subjects import subjects
from kenning.store.columns import has_columns

SUBJECT_TEXT_FIELDS = ("title", "subtitle", "facts")


def memory_text(title: str, subtitle: str, facts: Sequence[str] | str) -> str:
    """The text a memory's layer and subjects are read from: its title, subtitle and the facts that
    add to the title (the narrative is left out: it wanders). Parts are joined as sentences."""
    if isinstance(facts, str):
        try:
            facts = json.loads(facts or "[]")
        except ValueError:
            facts = []
    title = title or ""
    extra = [str(f) for f in facts if isinstance(f, str) and str(f).removeprefix("User: ").strip() != title.strip()]
    return ". ".join(p.rstrip(". ") for p in (title, subtitle or "", *extra) if p.strip())


def _list(raw: object) -> list[str]:
    if isinstance(raw, list):
        return [str(x) for x in raw]
    try:
        v = json.loads(str(raw or "[]"))
    except ValueError:
        return []
    return [str(x) for x in v] if isinstance(v, list) else []


def index(conn: sqlite3.Connection, ids: Iterable[int], *, group: bool = True) -> None:
    """Classify and list the subjects of the given (new) observations, and (``group``) put them in
    their groups. Inside a transaction. Supersession must run between the two steps, so that a
    correction never joins the group of what it corrects: see :func:`kenning.store.repo.store_outcome`."""
    rows = _rows(conn, sorted(set(ids)))
    for r in rows:
        _classify_one(conn, r)
    if group:
        assign_all(conn, [int(r["id"]) for r in rows])


def assign_all(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Put observations in their groups, oldest first (the order a rebuild takes them in)."""
    rows = _rows(conn, sorted(set(ids)))
    for r in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
        assign(conn, int(r["id"]))


def rows(conn: sqlite3.Connection, sql: str, args: Sequence[object] = ()) -> list[sqlite3.Row]:
    """Rows by column name whatever the connection's row factory."""
    cur = conn.cursor()
    cur.row_factory = sqlite3.Row
    return cur.execute(sql, tuple(args)).fetchall()


def _rows(conn: sqlite3.Connection, ids: Sequence[int]) -> list[sqlite3.Row]:
    out: list[sqlite3.Row] = []
    kind = "kind, why" if roles_column(conn) else "NULL AS kind, '' AS why"
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        out += rows(conn, f"SELECT id, project, type, title, subtitle, facts, concepts, created_at, {kind} "
                          f"FROM observations WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    return out


def roles_column(conn: sqlite3.Connection) -> bool:
    """Whether the schema has the observer's judged roles yet (migration 0025; 0012 runs before it)."""
    return has_columns(conn, "observations", "kind")


def _classify_one(conn: sqlite3.Connection, r: sqlite3.Row) -> None:
    _write_classified(conn, [_classified(r)], fresh=False)


def reclassify(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Derive layer, importance, signature and subjects again for rows whose text changed (an edit); a user's
    layer decision and hand-set importance stand over what is derived."""
    _write_classified(conn, [_classified(r) for r in _rows(conn, list(ids))], fresh=False)


def derived_layer(conn: sqlite3.Connection, oid: int) -> str | None:
    """The layer an observation has by what it says (before any user decision); None if it does not exist."""
    found = _rows(conn, [oid])
    return str(_classified(found[0])[0][0]) if found else None


def _classified(r: sqlite3.Row) -> tuple[tuple[object, ...], list[tuple[str, str, int]]]:
    """(the row's layer, importance, signature and id; its subject rows)."""
    facts = _list(r["facts"])
    layer, importance = classify(r["type"], r["title"] or "", facts=facts, concepts=_list(r["concepts"]),
                                 subtitle=r["subtitle"] or "", kind=r["kind"] or "")
    why = r["why"] or ""
    if layer == "key" and r["kind"] and '"by": "user"' in why:
        importance = 9  # what the user said outranks whatever the agent concluded
    elif layer == "key" and '"sure": ' in why:
        sure = _sure(why)  # how sure the observer was that it is worth keeping
        importance += 1 if sure >= 0.8 else -1 if sure < 0.6 else 0
    found = subjects(memory_text(r["title"], r["subtitle"], facts))
    return ((layer, importance, signature_of(r["type"], words_of(r["title"] or "")), r["id"]),
            [(r["project"], s[:300], r["id"]) for s in sorted(found)])


def _sure(why: str) -> float:
    try:
        return float(json.loads(why).get("sure") or 0.0)
    except (ValueError, TypeError, AttributeError):
        return 0.0


def decisions_column(conn: sqlite3.Connection) -> bool:
    """Whether the schema has the user's layer decisions yet (migration 0019; 0012 runs before it).
    Asked of every stored observation."""
    return has_columns(conn, "observations", "user_layer")


def _write_classified(conn: sqlite3.Connection, done: list[tuple[tuple[object, ...], list[tuple[str, str, int]]]],
                      *, fresh: bool) -> None:
    # A user's pin or demotion (user_layer) stands over the derived layer: a rebuild keeps it.
    layer = "COALESCE(user_layer, ?)" if decisions_column(conn) else "?"
    # ...and so does an importance set by hand (user_importance, migration 0035).
    importance = "COALESCE(user_importance, ?)" if has_columns(conn, "observations", "user_importance") else "?"
    conn.executemany(f"UPDATE observations SET layer = {layer}, importance = {importance}, signature = ? WHERE id = ?",
                     [d[0] for d in done])
    if not fresh:  # rows indexed before: their subjects go first
        conn.executemany("DELETE FROM observation_subjects WHERE observation_id = ?", [(d[0][3],) for d in done])
    conn.executemany("INSERT OR IGNORE INTO observation_subjects (project, subject, observation_id) VALUES (?, ?, ?)",
                     [s for d in done for s in d[1]])


# --------------------------------------------------------------------------- groups

@dataclass
class _Head:
    id: int
    created_at: float
    words: frozenset[str]
    ids: frozenset[str] = frozenset()
    rule: bool = False   # a standing rule (layer 'rule')
    users: bool = True   # rests on the user's words (kenning.memory.judged.said_by_user)


def _together(rule: bool, users: bool, head: _Head) -> bool:
    """Whether a row may join ``head``'s group: a standing rule and a memory on words other than the
    user's never stand for each other (the newer would head the group and hide the other: the agent's
    paraphrase of a file would take the user's rule out of every session)."""
    return users == head.users or not (rule or head.rule)


def _origin_cols(conn: sqlite3.Connection) -> str:
    return "layer, kind, why" if roles_column(conn) else "layer, NULL AS kind, '' AS why"


def assign(conn: sqlite3.Connection, oid: int) -> int:
    """Put one observation in its group (a new group when it duplicates nothing); returns its head."""
    found = rows(conn, "SELECT id, project, type, title, signature, status, created_at, duplicate_of, "
                       f"{_origin_cols(conn)} FROM observations WHERE id = ?", (oid,))
    r = found[0] if found else None
    if r is None or r["status"] != "active":
        return oid
    if r["duplicate_of"] is not None:
        return int(r["duplicate_of"])  # already grouped
    head = _matching_head(conn, r)
    if head is None:
        return oid
    members = 1 + int(conn.execute("SELECT occurrences FROM observations WHERE id = ?", (head.id,)).fetchone()[0])
    inherit(conn, oid, head.id)
    if precedes(head.created_at, head.id, float(r["created_at"]), oid):  # by arrival when a clock claims the future
        # The newer row says it last: it heads the group.
        conn.execute("UPDATE observations SET duplicate_of = ? WHERE duplicate_of = ? OR id = ?",
                     (oid, head.id, head.id))
        conn.execute("UPDATE observations SET occurrences = 1 WHERE id = ?", (head.id,))
        conn.execute("UPDATE observations SET occurrences = ? WHERE id = ?", (members, oid))
        return oid
    conn.execute("UPDATE observations SET duplicate_of = ? WHERE id = ?", (head.id, oid))
    conn.execute("UPDATE observations SET occurrences = ? WHERE id = ?", (members, head.id))
    return head.id


def inherit(conn: sqlite3.Connection, oid: int, head: int) -> None:
    """A row joining a group takes the user's decision the group carries (a restated pinned rule
    stays pinned), unless it carries one of its own."""
    if not decisions_column(conn):
        return
    conn.execute("UPDATE observations SET (user_layer, user_layer_at, layer) = "
                 "(SELECT h.user_layer, h.user_layer_at, h.user_layer FROM observations h WHERE h.id = ?) "
                 "WHERE id = ? AND user_layer IS NULL AND "
                 "(SELECT h.user_layer FROM observations h WHERE h.id = ?) IS NOT NULL", (head, oid, head))


def spread_decisions(conn: sqlite3.Connection) -> int:
    """After groups are rebuilt: each group carries its newest user decision on every member.
    Returns how many rows changed. Decisions are few (one per thing a user pinned), so this is cheap."""
    if not decisions_column(conn):
        return 0
    found = conn.execute("SELECT COALESCE(duplicate_of, id), user_layer, user_layer_at FROM observations "
                         "INDEXED BY observations_decided WHERE user_layer IS NOT NULL").fetchall()
    newest: dict[int, tuple[str, float]] = {}
    for g, layer, at in found:
        if int(g) not in newest or float(at or 0) > newest[int(g)][1]:
            newest[int(g)] = (str(layer), float(at or 0))
    changed = 0
    for g, (layer, at) in newest.items():
        changed += conn.execute(
            "UPDATE observations SET user_layer = ?, user_layer_at = ?, layer = ? WHERE (id = ? OR duplicate_of = ?) "
            "AND (user_layer IS NOT ? OR layer IS NOT ?)", (layer, at, layer, g, g, layer, layer)).rowcount
    return changed


def _head(h: sqlite3.Row, words: frozenset[str] = frozenset()) -> _Head:
    return _Head(int(h["id"]), float(h["created_at"]), words, rule=h["layer"] == "rule",
                 users=said_by_user(h["kind"], h["why"]))


def _matching_head(conn: sqlite3.Connection, r: sqlite3.Row) -> _Head | None:
    if r["signature"] is None:
        return None  # too short a title to be anyone's duplicate
    rule, users = r["layer"] == "rule", said_by_user(r["kind"], r["why"])
    cols = f"id, created_at, title, {_origin_cols(conn)}"
    found = rows(
        conn, f"SELECT {cols} FROM observations WHERE project = ? AND signature = ? AND duplicate_of IS NULL "
        "AND status = 'active' AND id != ? AND type = ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (r["project"], r["signature"], r["id"], r["type"]))
    if found and _together(rule, users, head := _head(found[0], words_of(found[0]["title"]))):
        return head
    mine = words_of(r["title"])
    ids = idents(mine)
    for h in rows(
            conn, f"SELECT {cols} FROM observations INDEXED BY observations_project_type_created "
            "WHERE project = ? AND type = ? AND duplicate_of IS NULL AND status = 'active' AND id != ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (r["project"], r["type"], r["id"], WINDOW)):
        theirs = words_of(h["title"])
        if idents(theirs) == ids and similar(mine, theirs) and _together(rule, users, head := _head(h)):
            return head
    return None


def rebuild_groups(conn: sqlite3.Connection, project: str | None = None) -> int:
    """Recompute every group from the rows (in time order); returns how many rows are duplicates."""
    where, args = ("WHERE project = ?", [project]) if project else ("", [])
    # Every row ends ungrouped (NULL, 1) unless grouped below; only rows whose pair changes are
    # written (each write touches the partial indexes on duplicate_of and fires the change triggers).
    before = {int(r[0]): (r[1], int(r[2])) for r in conn.execute(
        f"SELECT id, duplicate_of, occurrences FROM observations {where}", args)}
    after: dict[int, tuple[int | None, int]] = dict.fromkeys(before, (None, 1))
    heads: dict[tuple[str, str], int] = {}          # (project, signature) -> head id
    keys_of: dict[int, list[tuple[str, str]]] = {}  # head id -> its signatures
    recent: dict[tuple[str, str], deque[_Head]] = {}  # (project, type) -> recent heads, newest last
    head_of: dict[int, int] = {}
    size: dict[int, int] = {}
    origin: dict[int, _Head] = {}  # head id -> its head (rule, users)
    rows: Iterable[Any] = conn.execute(
        f"SELECT id, project, type, title, signature, created_at, {_origin_cols(conn)} FROM observations "
        f"{where + (' AND' if where else 'WHERE')} status = 'active' ORDER BY created_at, id", args)
    limit = cutoff()
    if conn.execute("SELECT 1 FROM observations WHERE created_at > ? LIMIT 1", (limit,)).fetchone():
        rows = _in_arrival_place(list(rows), limit)
    for r in rows:
        oid, project_, type_, created = int(r[0]), str(r[1]), str(r[2]), float(r[5])
        rule, users = r[6] == "rule", said_by_user(r[7], r[8])
        words = words_of(r[3])
        ids = idents(words)
        key = (project_, str(r[4]))
        found = heads.get(key) if r[4] is not None else None
        if found is not None and not _together(rule, users, origin[found]):
            found = None
        window = recent.setdefault((project_, type_), deque(maxlen=WINDOW))
        if found is None and r[4] is not None:
            for h in reversed(window):
                if h.ids == ids and similar(words, h.words) and _together(rule, users, h):
                    found = h.id
                    break
        if found is None:
            head_of[oid] = oid
            size[oid] = 1
        else:
            # the new row heads the group from now on: earlier members follow it
            size[oid] = size.pop(found) + 1
            head_of[found] = oid
            head_of[oid] = oid
            for i, h in enumerate(window):
                if h.id == found:
                    del window[i]
                    break
            for k in keys_of.pop(found, []):
                heads[k] = oid
                keys_of.setdefault(oid, []).append(k)
        if r[4] is not None:
            heads[key] = oid
            keys_of.setdefault(oid, []).append(key)
        origin[oid] = head = _Head(oid, created, words, ids, rule=rule, users=users)
        window.append(head)
    # Resolve chains (a -> b -> c) to the final head, compressing the paths walked.
    for oid in head_of:
        top, path = oid, []
        while head_of[top] != top:
            path.append(top)
            top = head_of[top]
        for p in path:
            head_of[p] = top
    dup = [(top, oid) for oid, top in head_of.items() if top != oid]
    for head_id, member in dup:
        after[member] = (head_id, 1)
    for head_id, members in size.items():
        if members > 1:
            after[head_id] = (after[head_id][0], members)
    conn.executemany("UPDATE observations SET duplicate_of = ?, occurrences = ? WHERE id = ?",
                     [(d, n, oid) for oid, (d, n) in after.items() if before[oid] != (d, n)])
    spread_decisions(conn)  # new groups, the user's decisions as they were
    return len(dup)


def _in_arrival_place(found: list[Any], limit: float) -> list[Any]:
    """Rows in time order, a row whose time is from the future (a worker's clock ran fast when it
    stored it) placed where it arrived: just after the believable rows stored before it."""
    latest = float("-inf")
    placed: list[tuple[float, int, Any]] = []
    for r in sorted(found, key=lambda r: int(r[0])):
        at = float(r[5])
        if at <= limit:
            latest = max(latest, at)
        placed.append((at if at <= limit else latest, int(r[0]), r))
    placed.sort(key=lambda t: (t[0], t[1]))
    return [r for _at, _id, r in placed]


def rebuild(conn: sqlite3.Connection, *, batch: int = 2000) -> dict[str, int]:
    """Recompute layers, subjects and groups of every observation. Inside a transaction."""
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM observations ORDER BY id")]
    conn.execute("DELETE FROM observation_subjects")
    for i in range(0, len(ids), batch):
        _write_classified(conn, [_classified(r) for r in _rows(conn, ids[i:i + batch])], fresh=True)
    duplicates = rebuild_groups(conn)
    return {"observations": len(ids), "duplicates": duplicates}
