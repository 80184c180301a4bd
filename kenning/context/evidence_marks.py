"""What the agent is told about a memory whose evidence is gone (the rule, docs/memory.md):

- a memory whose cited files, identifiers and commands hold (or cannot be checked) is listed as today;
- one whose evidence is gone carries a note: ``(possibly stale: `src/totals.py` no longer exists)``;
- in the session-start index's key layer it also goes after every key memory that verifies, so
  within the layer's budget one that verifies takes its place;
- a standing rule that names a vanished command keeps its place, with the note (it is still the
  user's rule; the agent must know that what it names is gone);
- with ``evidence_keep_days`` set, a memory (not a rule) whose evidence has been gone that long
  is left out of context (kept in memory: `kenning stale` lists it).

Standard library only: the SessionStart hook's fallback and the Read hook call this.
"""

from __future__ import annotations

import _thread
import weakref

from kenning.context.evidence_check import Checker, gone, note
from kenning.memory.citations import Citations, cite, text_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from typing import Any

    from kenning.context.index import Row, Selection
    from kenning.settings import Settings

MARK_ROOM = 60  # characters of a line's title kept free for other marks ("(tentative)", "(×3)")
_LIMITS = {"rule": 220, "key": 300, "todo": 200, "log": 160}  # kenning/context/layout.py's title limits

# The latest session-start checks per project (project -> (checked ids, gone notes)): the worker
# records them for review (kenning/service.py) after answering.
_last: dict[str, tuple[tuple[int, ...], dict[int, list[str]]]] = {}
_last_lock = _thread.allocate_lock()  # (the Read hook imports neither threading nor sqlite3)
_cited: weakref.WeakKeyDictionary[object, dict[int, Citations]] = weakref.WeakKeyDictionary()
_memo: dict[tuple[str, tuple[int, ...]], tuple[object, dict[int, list[str]]]] = {}  # -> (signature, answer)
_marks: weakref.WeakKeyDictionary[object, dict[tuple[int, str, str], Row]] = weakref.WeakKeyDictionary()
KEPT_ROWS = 20_000
_by_id: dict[int, tuple[tuple[object, ...], Citations]] = {}  # id -> (what its text was read at, its citations)


def citations(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, Citations]:
    """What each of ``ids`` cites. A row's text is read only when its title, content hash or file
    lists differ from what this process last read of it (the extraction is cached by text too)."""
    wanted = sorted(set(ids))
    out: dict[int, Citations] = {}
    stale: list[int] = []
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        for r in conn.execute("SELECT id, title, content_hash, files_modified, files_read FROM observations "
                              f"WHERE id IN ({','.join('?' * len(part))})", part):
            stamp = (r[1], r[2], r[3], r[4])
            known = _by_id.get(int(r[0]))
            if known is not None and known[0] == stamp:
                out[int(r[0])] = known[1]
            else:
                stale.append(int(r[0]))
    for start in range(0, len(stale), 500):
        part = stale[start:start + 500]
        for r in conn.execute("SELECT id, title, narrative, facts, files_modified, files_read, content_hash "
                              f"FROM observations WHERE id IN ({','.join('?' * len(part))})", part):
            cit = cite(text_of(str(r[1] or ""), str(r[2] or ""), str(r[3] or "[]")), str(r[4] or "[]"),
                       str(r[5] or "[]"))
            out[int(r[0])] = cit
            if len(_by_id) >= KEPT_ROWS:
                _by_id.pop(next(iter(_by_id)))
            _by_id[int(r[0])] = ((r[1], r[6], r[4], r[5]), cit)
    return out


def check(conn: sqlite3.Connection, root: str, ids: Iterable[int],
          kept: dict[int, Citations] | None = None, checker: Checker | None = None) -> dict[int, list[str]]:
    """id -> what it cites that is gone from the working tree at ``root`` (only those with something gone).
    ``kept``: the citations already read of some ids (those of the worker's kept selection)."""
    checker = checker or Checker(root)
    if not checker.usable():
        return {}
    out: dict[int, list[str]] = {}
    wanted = list(ids)
    try:
        cited = {i: kept[i] for i in wanted if i in kept} if kept else {}
        cited.update(citations(conn, [i for i in wanted if i not in cited]))
        if kept is not None:
            kept.update(cited)
    except Exception:  # sqlite3.Error (the module itself is not imported here)
        return {}
    for oid, cit in cited.items():
        if cit:
            notes = gone(checker, cit)
            if notes:
                out[oid] = notes
    return out


def _checked(conn: sqlite3.Connection, root: str, ids: list[int], kept: dict[int, Citations]) -> dict[int, list[str]]:
    """:func:`check`, or its last answer for the same rows while nothing they rest on changed (a
    stat per cited file: a warm session start)."""
    from kenning.context.evidence_check import signature

    checker = Checker(root)
    if not checker.usable():
        return {}
    if any(i not in kept for i in ids):
        kept.update(citations(conn, [i for i in ids if i not in kept]))
    cited = [kept[i] for i in ids if i in kept]
    sig = (tuple(cited), signature(checker, cited))
    with _last_lock:
        memo = _memo.get((root, tuple(ids)))
    if memo is not None and memo[0] == sig:
        return memo[1]
    found = check(conn, root, ids, kept, checker)
    with _last_lock:
        if len(_memo) >= 64:
            _memo.pop(next(iter(_memo)))
        _memo[(root, tuple(ids))] = (sig, found)
    return found


def _marked(r: Row, text: str, layer: str) -> Row:
    from kenning.context.index import Row as RowType

    limit = _LIMITS.get(layer, 160) - len(text) - MARK_ROOM
    title = " ".join(r.title.split())
    if len(title) > max(20, limit):
        title = title[: max(20, limit) - 1] + "…"
    copy = object.__new__(RowType)
    for slot in RowType.__slots__:
        setattr(copy, slot, getattr(r, slot))
    copy.title = title + text
    return copy


def vet(conn: sqlite3.Connection, sel: Selection, root: str, settings: Settings,
        project: str = "") -> tuple[Selection, tuple[object, ...]]:
    """``sel`` with its rows checked against the working tree at ``root``: marked, the key layer
    reordered, the long-gone left out. Returns (the selection to lay out, what the check decided:
    part of the worker's text cache key)."""
    if not getattr(settings, "evidence_check", True) or not root or sel.empty:
        return sel, ()
    try:
        return _vet(conn, sel, root, settings, project)
    except Exception:  # never into the hook: a check that fails says nothing
        return sel, ()


def _vet(conn: sqlite3.Connection, sel: Selection, root: str, settings: Settings,
         project: str) -> tuple[Selection, tuple[object, ...]]:
    layers = {"rule": sel.rules, "key": list(sel.keys), "todo": sel.todos, "log": sel.log}
    ids = [r.id for rows in layers.values() for r in rows]
    # What the rows cite is read once per selection read (the worker keeps one while nothing changes).
    kept = _cited.get(sel.base)
    marks = _marks.get(sel.base)
    if kept is None or marks is None:
        kept, marks = {}, {}
        try:
            _cited[sel.base], _marks[sel.base] = kept, marks
        except TypeError:
            pass
    found = _checked(conn, root, ids, kept)
    key = (root, tuple(sorted((i, tuple(n)) for i, n in found.items())))
    if project:
        with _last_lock:
            _last[project] = (tuple(ids), found)
    if not found:
        return sel, key
    expired: set[int] = set()
    days = int(getattr(settings, "evidence_keep_days", 0) or 0)
    if days:
        from kenning.store.evidence import since

        cut = sel.now - days * 86400
        expired = {i for i, at in since(conn, found).items() if at <= cut}
    other = object.__new__(type(sel))  # a shallow copy: the rows as ranked, re-listed below
    other.__dict__.update(sel.__dict__)

    def redo(rows: list[Row], layer: str) -> list[Row]:
        out = []
        for r in rows:
            if layer != "rule" and r.id in expired:
                continue
            if r.id in found:
                text = note(found[r.id])
                copy = marks.get((r.id, layer, text))  # the rows of one selection read: marked once
                if copy is None:
                    copy = marks[(r.id, layer, text)] = _marked(r, text, layer)
                r = copy
            out.append(r)
        return out

    other.rules = redo(sel.rules, "rule")
    keys = redo(sel.keys, "key")
    other.keys = [r for r in keys if r.id not in found] + [r for r in keys if r.id in found]
    other.todos = redo(sel.todos, "todo")
    other.log = redo(sel.log, "log")
    return other, key


def last_checked(project: str) -> tuple[tuple[int, ...], dict[int, list[str]]] | None:
    """The latest session start's check of ``project`` (and forget it: recorded once)."""
    with _last_lock:
        return _last.pop(project, None)


def marked_title(title: str, mark: str, limit: int) -> str:
    """``title`` on one line, clipped so that it and ``mark`` fit in ``limit`` characters."""
    s = " ".join(str(title or "").split())
    room = max(20, limit - len(mark))
    if len(s) > room:
        s = s[:room - 1] + "…"
    return s + mark


def mark_titles(conn: sqlite3.Connection, root: str, items: Sequence[Any], settings: Settings | None,
                limit: int) -> None:
    """Append the note to the ``title`` of each of ``items`` (objects with ``id`` and ``title``: file
    history and prompt recall rows) whose evidence is gone from the working tree at ``root``."""
    if not items or not root or (settings is not None and not getattr(settings, "evidence_check", True)):
        return
    try:
        found = check(conn, root, [int(x.id) for x in items])
        for x in items:
            if x.id in found:
                x.title = marked_title(x.title, note(found[x.id]), limit)
    except Exception:  # never into the hook: a check that fails says nothing
        return


def mark_dicts(conn: sqlite3.Connection, root: str, rows: Sequence[dict[str, Any]], limit: int = 200, *,
               records: bool = False) -> None:
    """The same for search hits (observations among them: ``kind``) or observation ``records`` as dicts."""
    obs = [r for r in rows if (records or str(r.get("kind") or "observation") == "observation")
           and isinstance(r.get("id"), int)]
    if not obs or not root:
        return
    try:
        found = check(conn, root, [int(r["id"]) for r in obs])
        for r in obs:
            if r["id"] in found:
                r["title"] = marked_title(str(r.get("title") or ""), note(found[r["id"]]), limit)
                r["evidence_gone"] = found[r["id"]]
    except Exception:
        return


def forget_caches() -> None:
    """Drop everything kept between checks (a bench's cold run; tests)."""
    from kenning.context.evidence_check import forget_cache

    forget_cache()
    cite.cache_clear()
    with _last_lock:
        _memo.clear()
        _by_id.clear()
        _last.clear()
