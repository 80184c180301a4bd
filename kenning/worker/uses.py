"""Did it help: signs, in the events the pipeline stores, that a memory given to a session was used.

The agent cited its id (``#12`` in a tool call or its last answer, never in a tool's output), edited a
file it names, ran a command it names, or wrote an identifier it names, after it was given. Each
captured event is looked at once (``injection_scan``), by the pipeline thread after it recorded the
handings (kenning/worker/given.py); the uses go to the injection ledger (kenning/store/injections.py).
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from kenning.store import injections

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
