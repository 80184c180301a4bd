"""What the worker puts in the injection ledger (kenning/store/injections.py), off every answer path.

The context routes note what they served in a :class:`Handed` queue (memory, no I/O) and answer; the
pipeline thread, the one writer, records the notes in its next cycle (:func:`record_pending`), reads
back what the Read hook told (the "already told" lines it writes anyway, kenning/context/file_history.py)
(the signs that a given memory was used are found by kenning/worker/uses.py).

The reason of each row comes from the text the agent read: the section of the session-start index a
row sits in (standing rule, key rank 3, open to-do, recent work), the prompt's terms a recalled memory
shares, the file a history was about. A hook that builds the context from the database itself (worker
down) records nothing: those handings are not in the ledger.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.store import injections
from kenning.store.injections import Given

MAX_PENDING = 2000   # notes kept while the writer is busy; beyond, the oldest are dropped (counted)
_ROW = re.compile(r"^#(\d+) ")
_SECTIONS = (("## Your preferences", "your standing preference"), ("## Standing rules", "standing rule"),
             ("## Key decisions", "key rank"), ("## Open to-dos", "open to-do"), ("## Recent", "recent work"),
             ("## Where we left off", "where we left off"))


@dataclass
class Note:
    """One handing the worker served: what the route knew when it answered."""

    via: str
    session: str
    agent: str
    project: str
    items: list[Given]
    at: float = field(default_factory=time.time)
    prompt: str = ""  # prompt recall: the reasons name the prompt's terms each memory shares
    fetched: bool = False  # an MCP get_observations: first a use ("fetched") of what was handed before


class Handed:
    """Handings served and not yet recorded (thread-safe; bounded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: list[Note] = []
        self.dropped = 0

    def put(self, note: Note) -> None:
        if not note.items:
            return
        with self._lock:
            self._notes.append(note)
            if len(self._notes) > MAX_PENDING:
                del self._notes[0]
                self.dropped += 1

    def put_back(self, notes: list[Note]) -> None:
        """Notes a busy database could not take: first in line again (still bounded)."""
        with self._lock:
            self._notes = (notes + self._notes)[-MAX_PENDING:]

    def take(self) -> list[Note]:
        with self._lock:
            out, self._notes = self._notes, []
        return out


# ------------------------------------------------------------------------------ what a text showed

def from_index(text: str) -> list[Given]:
    """The memories a session-start index lists, each with the section that listed it (and a key
    memory's rank among the key memories shown) and its line's length."""
    out: list[Given] = []
    reason = "listed"
    rank = 0
    seen: set[int] = set()
    for line in text.splitlines():
        if line.startswith("## "):
            reason = next((r for head, r in _SECTIONS if line.startswith(head)), "listed")
            continue
        m = _ROW.match(line)
        if m is None:
            continue
        oid = int(m.group(1))
        if oid in seen:
            continue
        seen.add(oid)
        why = reason
        if reason == "key rank":
            rank += 1
            why = f"key rank {rank}"
        out.append(Given(oid, why, len(line)))
    return out


def from_rows(text: str, reasons: dict[int, str]) -> list[Given]:
    """The ``#id`` rows of a recall or file-history text, each with its reason from ``reasons``."""
    out: list[Given] = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if m is not None and int(m.group(1)) in reasons:
            out.append(Given(int(m.group(1)), reasons[int(m.group(1))], len(line)))
    return out


def prompt_reasons(picks: list[dict[str, Any]]) -> dict[int, str]:
    out = {}
    for p in picks:
        parts = []
        if p.get("coverage"):
            parts.append(f"shares {round(float(p['coverage']) * 100)}% of the prompt's rarer terms")
        if p.get("similarity") is not None:
            parts.append(f"similar in meaning ({float(p['similarity']):.2f})")
        out[int(p["id"])] = "; ".join(parts) or "recalled"
    return out


def _matched(conn: sqlite3.Connection, prompt: str, items: list[Given]) -> list[Given]:
    """Each recalled memory's reason with the prompt's terms it contains (its words, never the prompt's)."""
    try:
        from kenning.search.query import recall_terms

        terms = [t.text.lower() for t in recall_terms(prompt)]
    except Exception:  # the reason stays without terms; the row is recorded anyway
        return items
    out = []
    for g in items:
        row = conn.execute("SELECT title, narrative FROM observations WHERE id = ?", (g.observation_id,)).fetchone()
        body = f"{row[0]} {row[1]}".lower() if row else ""
        hit = [t for t in dict.fromkeys(terms) if t and t in body][:6]
        out.append(Given(g.observation_id, f"{g.reason}: {', '.join(hit)}" if hit else g.reason, g.chars))
    return out


# ------------------------------------------------------------------------------ recording

def record_pending(conn: sqlite3.Connection, handed: Handed, data_root: str) -> int:
    """Record the handings served since the last cycle and those the Read hook told; returns rows added."""

    notes = handed.take()
    told = _file_context_lines(data_root)
    if not notes and not told:
        return 0
    try:
        return _record(conn, notes, told)
    except BaseException:
        handed.put_back(notes)
        _offsets.at.clear()  # the "already told" files are read again from the start (``ref`` dedupes)
        raise


def _record(conn: sqlite3.Connection, notes: list[Note], told: list[tuple[str, dict[str, Any]]]) -> int:
    from kenning.project import resolve_key
    from kenning.store import repo

    added = 0
    with repo.transaction(conn):
        for n in notes:
            items = _matched(conn, n.prompt, n.items) if n.prompt else n.items
            if n.fetched:  # a use of the earlier handings; the fetch's own handing comes just after it
                injections.use(conn, observation_ids=[g.observation_id for g in items], kind="fetched",
                               session=n.session, detail="get_observations", at=n.at)
            added += injections.record(conn, via=n.via, items=items, session=n.session, agent=n.agent,
                                       project=n.project, at=n.at + (0.001 if n.fetched else 0.0))
        for ref, d in told:
            rules, notes_ids, modified = set(d.get("r") or ()), set(d.get("n") or ()), set(d.get("m") or ())
            path = str(d.get("f") or "")
            reasons = {i: f"standing rule about {path}" for i in rules}
            reasons.update({i: f"file read: {path}" + (" (changed it)" if i in modified else "") for i in notes_ids})
            items = [Given(int(i), reasons.get(int(i), f"file read: {path}"), int(c)) for i, c in d.get("c") or ()
                     if int(i) in reasons]
            added += injections.record(conn, via="file", items=items, session=str(d.get("s") or ""),
                                       agent=str(d.get("a") or ""), project=resolve_key(conn, str(d.get("k") or "")),
                                       at=float(d.get("at") or time.time()), ref=ref)
    return added


class _Offsets:
    """How far each "already told" file has been read (per worker run; the ledger's ``ref`` makes a
    second read after a restart add nothing)."""

    def __init__(self) -> None:
        self.at: dict[str, tuple[int, int]] = {}  # path -> (inode, bytes read)


_offsets = _Offsets()


def _file_context_lines(data_root: str) -> list[tuple[str, dict[str, Any]]]:
    """(ref, what was told) of every line the Read hook appended since the last look."""
    from kenning.context.file_history import SEEN_DIR

    folder = os.path.join(data_root, SEEN_DIR)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out: list[tuple[str, dict[str, Any]]] = []
    here = {os.path.join(folder, n) for n in names}
    for gone in [p for p in _offsets.at if p.startswith(folder + os.sep) and p not in here]:
        del _offsets.at[gone]  # pruned by the hook after a week
    for name in names:
        p = os.path.join(folder, name)
        try:
            st = os.stat(p)
            ino, done = _offsets.at.get(p, (st.st_ino, 0))
            if ino != st.st_ino:
                done = 0
            if st.st_size <= done:
                continue
            with open(p, "rb") as fh:
                fh.seek(done)
                data = fh.read(st.st_size - done)
        except OSError:
            continue
        end = data.rfind(b"\n") + 1  # a line being appended right now is read next time
        _offsets.at[p] = (st.st_ino, done + end)
        for raw in data[:end].split(b"\n"):
            head = raw.partition(b"\t")[0]
            mark, _, told = head.partition(b" ")
            if not told:
                continue  # a line of a hook from before the ledger, or of a session with no id
            try:
                d = json.loads(told.decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(d, dict) and d.get("s"):
                out.append((f"file:{name}:{d.get('at')}:{mark.decode('ascii', 'replace')}", d))
    return out
