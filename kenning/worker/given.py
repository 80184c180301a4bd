"""What the worker puts in the injection ledger (kenning/store/injections.py), off every answer path.

The context routes note what they served in a :class:`Handed` queue (memory, no I/O) and answer; the
pipeline thread, the one writer, records the notes in its next cycle (:func:`record_pending`), reads
back what the Read hook told (the "already told" lines it writes anyway, kenning/context/file_history.py)
and looks through newly captured events for signs that a given memory was used (:func:`find_uses`).

The reason of each row comes from the text the agent read: the section of the session-start index a
row sits in (standing rule, key rank 3, open to-do, recent work), the prompt's terms a recalled memory
shares, the file a history was about. A hook that builds the context from the database itself (worker
down) records nothing: those handings are not in the ledger.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.store import injections
from kenning.store.injections import Given

log = logging.getLogger("kenning.worker")

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


# ------------------------------------------------------------------------------ did it help

_FILE_KEYS = ("file_path", "path", "notebook_path")
_EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit", "write", "replace")
_CITE = re.compile(r"#(\d{1,12})\b")
SCAN_BATCH = 2000


def find_uses(conn: sqlite3.Connection, limit: int = SCAN_BATCH) -> int:
    """Look through the events captured since the last look for signs that a memory given to their
    session was used: its id cited, a file it names edited, a command it names run, an identifier it
    names written. Returns the uses recorded."""
    from kenning.store import repo

    start = injections.scanned(conn)
    if not start and conn.execute("SELECT 1 FROM injections LIMIT 1").fetchone() is None:
        # Nothing handed yet: the events captured before the ledger existed cannot show a use.
        top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])
        if top:
            with repo.transaction(conn):
                injections.set_scanned(conn, top)
        return 0
    rows = conn.execute(
        "SELECT e.id, e.kind, e.tool_name, e.payload, e.occurred_at, s.agent_session_id, s.project_root "
        "FROM events e JOIN sessions s ON s.id = e.session_id WHERE e.id > ? ORDER BY e.id LIMIT ?",
        (start, limit)).fetchall()
    if not rows:
        return 0
    found = 0
    memo: dict[int, _Evidence] = {}
    with repo.transaction(conn):
        for _eid, kind, tool, payload, at, session, root in rows:
            if kind not in ("PostToolUse", "Stop") or not payload or payload == "{}":
                continue
            given = injections.given_in(conn, str(session), float(at))
            if not given:
                continue
            try:
                p = json.loads(payload)
            except ValueError:
                continue
            for oid, how, detail in _uses(conn, p, str(tool or ""), given, str(root or ""), memo):
                found += injections.use(conn, observation_ids=[oid], kind=how, session=str(session), detail=detail,
                                        at=float(at))
        injections.set_scanned(conn, int(rows[-1][0]))
    return found


class _Evidence:
    """What a memory names: its files (as stored), commands and identifiers."""

    def __init__(self, conn: sqlite3.Connection, oid: int) -> None:
        self.files = {str(r[0]) for r in conn.execute(
            "SELECT path FROM observation_files WHERE observation_id = ?", (oid,))}
        self.commands: set[str] = set()
        self.names: set[str] = set()
        for (subject,) in conn.execute("SELECT subject FROM observation_subjects WHERE observation_id = ?", (oid,)):
            kind, _, name = str(subject).partition(":")
            if kind == "file" and name and not any(c in name for c in "*?["):
                self.files.add(name)
            elif kind == "cmd" and len(name) >= 3:
                self.commands.add(name)
            elif kind in ("id", "set") and len(name) >= 4:
                self.names.add(name)


def _uses(conn: sqlite3.Connection, p: dict[str, Any], tool: str, given: set[int], root: str,
          memo: dict[int, _Evidence]) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    text = _said(p)
    for m in _CITE.finditer(text):
        if int(m.group(1)) in given:
            out.append((int(m.group(1)), "cited", f"#{m.group(1)}"))
    cited = {o for o, _k, _d in out}
    raw_input = p.get("tool_input")
    inp: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    edited = ""
    if tool in _EDIT_TOOLS:
        raw = next((inp.get(k) for k in _FILE_KEYS if isinstance(inp.get(k), str) and inp.get(k)), "")
        edited = _relative(str(raw), root)
    command = str(inp.get("command") or "") if tool in ("Bash", "shell", "run_shell_command") else ""
    written = " ".join(str(inp.get(k) or "") for k in ("new_string", "content", "command", "pattern"))
    for oid in sorted(given - cited):
        ev = memo.get(oid)
        if ev is None:
            ev = memo[oid] = _Evidence(conn, oid)
        if edited and _names_file(ev.files, edited):
            out.append((oid, "edited", edited))
            continue
        cmd = max((c for c in ev.commands if command and _said_word(c, command)), key=len, default="")  # most precise
        if cmd:
            out.append((oid, "ran", cmd))
            continue
        name = max((n for n in ev.names if written and _said_word(n, written)), key=len, default="")
        if name:
            out.append((oid, "named", name))
    return out


def _said_word(name: str, text: str) -> bool:
    """``name`` in ``text`` as a whole word or command (``make`` is not in ``cmake``)."""
    return name in text and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w])", text) is not None


def _said(p: dict[str, Any]) -> str:
    """What the agent wrote itself: its tool inputs and its last answer (not tool output: a file it
    read may hold any ``#12``)."""
    parts = [json.dumps(p.get("tool_input"), ensure_ascii=False)] if p.get("tool_input") is not None else []
    msg = p.get("last_assistant_message")
    if isinstance(msg, str):
        parts.append(msg)
    return " ".join(parts)


def _relative(path: str, root: str) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def _names_file(files: set[str], rel: str) -> bool:
    return any(f == rel or rel.endswith("/" + f) or ("/" in rel and f.endswith("/" + rel)) for f in files if f)
