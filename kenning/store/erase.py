"""What a forgotten memory left elsewhere: the copies of its text, found and rewritten away.

A memory (an observation) is copied as it is made and after: the prompt it was stated in, the raw
payloads of that turn (the prompt, tool output echoing it), the session summary (its request is
the gists of the prompts, its learned / completed / next steps lines are the notes of the turns),
and derived indexes (FTS, the CJK shadow tables, vectors, subjects, term counts: triggers keep
those in step with the rows changed here). Deleting the observation alone left the rest.

**The memory's text** is: its title; its subtitle when no other memory has the same one (a
generic "stated by the user" is not its text); each sentence of its narrative; each fact (without
its "User: " style prefix); the sentence it was judged from (``why.said``); and the text of every
prompt erased with it (so the prompt's gist in the summary goes too). Compared normalised: NFKC,
case-folded, whitespace collapsed, surrounding punctuation and quotes stripped.

**A copy** is a piece of another text (a summary field is cut at its line breaks, its "; " and
"; then: " joins and its sentence ends) that equals one of those strings, contains one of at least
``MIN_CHARS`` characters, or is itself a part of one that long (a gist cut short with "…"); a
prompt or a payload holds a copy when one of those strings is inside it (:meth:`Needles.within`).
Only the sessions the memory came from are searched: another session that says the same thing
holds its own memory, which is not the one forgotten.

What is done: summary fields are rewritten without the pieces that are copies (the row is deleted
when nothing is left); the prompt of the turn the memory was made in (its source: that turn's raw
payloads, the prompt's own among them, were already erased with it) and prompts holding a copy
become ``[forgotten]`` (keeping their number); raw payloads holding a copy are dropped too. Unrelated memories are
never deleted. Rows the memory had superseded are made current again (see :func:`successors`).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MAX_SCRUB_BYTES = 64 * 1024 * 1024  # a quarantined spool file is read up to this
MIN_CHARS = 12  # a shorter needle only matches a piece equal to it ("use uv" must not erase "use uvicorn …")
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")
# Where the offline observer joins a summary's parts (kenning/observer/summary.py), and sentence ends.
_JOINS = re.compile(r"(\n+|; then: |; |(?<=[.!?…])\s+)")
_EDGES = " \t\r\n\"'`“”‘’«»()[]{}<>.,;:!?…-–—*"
_PREFIX = re.compile(r"^(?:user|assistant|agent|plan|claude|the user stated|the user said)\s*:\s*", re.IGNORECASE)


def norm(text: str) -> str:
    """The form texts are compared in: NFKC, case-folded, one space between words, no edge punctuation."""
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = " ".join(t.split())
    return _PREFIX.sub("", t.strip(_EDGES)).strip(_EDGES)


@dataclass
class Needles:
    """The normalised strings that are a forgotten memory's text."""

    strings: set[str] = field(default_factory=set)

    def add(self, text: str, *, split: bool = True) -> None:
        whole = norm(text)
        if whole:
            self.strings.add(whole)
        if split:
            for piece in _JOINS.split(text or "")[::2]:
                n = norm(piece)
                if len(n) >= MIN_CHARS:
                    self.strings.add(n)

    def matches(self, piece: str) -> bool:
        p = norm(piece)
        if not p:
            return False
        return any(p == n or (len(n) >= MIN_CHARS and n in p) or (len(p) >= MIN_CHARS and p in n)
                   for n in self.strings)

    def within(self, text: str) -> bool:
        """Whether ``text`` (a prompt, a payload) holds a copy: one of the strings inside it, or a
        piece of it equal to a short one. Unlike :meth:`matches`, a piece that is only part of the
        memory's text does not count: a prompt "Run the tests." is not erased because a narrative
        says "run the tests" among other things (and a large payload is not cut into pieces to
        compare both ways)."""
        whole = norm(text)
        if not whole:
            return False
        if any(len(n) >= MIN_CHARS and n in whole for n in self.strings):
            return True
        short = {n for n in self.strings if len(n) < MIN_CHARS}
        return bool(short) and any(norm(piece) in short for piece in _JOINS.split(text)[::2])


def needles_of(conn: sqlite3.Connection, obs_ids: Sequence[int]) -> tuple[Needles, set[int]]:
    """The text of the given observations, and the sessions they came from."""
    out, sessions = Needles(), set()
    for chunk in _chunks(obs_ids):
        for r in conn.execute(
                "SELECT id, session_id, title, subtitle, narrative, facts, why FROM observations "
                f"WHERE id IN ({_marks(chunk)})", chunk):
            sessions.add(int(r[1]))
            out.add(r[2] or "")
            sub = r[3] or ""
            if sub and conn.execute("SELECT 1 FROM observations WHERE subtitle = ? AND id NOT IN "
                                    f"({_marks(chunk)}) LIMIT 1", [sub, *chunk]).fetchone() is None:
                out.add(sub)
            out.add(r[4] or "")
            for fact in _json_list(r[5]):
                out.add(fact)
            said = _json_obj(r[6]).get("said")
            if isinstance(said, str):
                out.add(said)
    return out, sessions


@dataclass
class Traces:
    """Where a forgotten memory's text was copied, and what each place becomes."""

    summaries: dict[int, dict[str, str] | None] = field(default_factory=dict)  # id -> new fields (None: delete)
    prompts: list[int] = field(default_factory=list)
    event_ids: list[int] = field(default_factory=list)
    needles: Needles = field(default_factory=Needles)  # what the rewrite removes (again, at apply time)

    @property
    def empty(self) -> bool:
        return not (self.summaries or self.prompts or self.event_ids)


def find(conn: sqlite3.Connection, obs_ids: Sequence[int], *, skip_summaries: Iterable[int] = (),
         skip_prompts: Iterable[int] = (), skip_events: Iterable[int] = ()) -> Traces:
    """The copies of the observations' text in the sessions they came from (nothing is changed)."""
    out = Traces()
    if not obs_ids:
        return out
    needles, sessions = needles_of(conn, obs_ids)
    out.needles = needles
    gone_prompts, gone_summaries, gone_events = set(skip_prompts), set(skip_summaries), set(skip_events)
    sids = sorted(sessions)
    # The turns the memories were made in: their prompts are where they came from (their raw
    # payloads, the prompt's among them, are erased already by forget.select).
    turns = {(int(s), int(n)) for chunk in _chunks(obs_ids) for s, n in conn.execute(
        f"SELECT session_id, prompt_number FROM observations WHERE id IN ({_marks(chunk)}) "
        "AND prompt_number IS NOT NULL", chunk)}
    # Prompts first: an erased prompt's text joins the needles, so its gist in the summary goes too.
    for chunk in _chunks(sids):
        for pid, sid, number, text in conn.execute(
                "SELECT id, session_id, prompt_number, prompt_text FROM user_prompts "
                f"WHERE session_id IN ({_marks(chunk)}) AND prompt_text NOT IN ('', '[forgotten]')", chunk):
            if int(pid) in gone_prompts:
                needles.add(text)
            elif (int(sid), int(number)) in turns or needles.within(text):
                out.prompts.append(int(pid))
                needles.add(text)
    for chunk in _chunks(sids):
        for eid, payload in conn.execute(
                f"SELECT id, payload FROM events WHERE session_id IN ({_marks(chunk)}) AND payload IS NOT NULL",
                chunk):
            if int(eid) not in gone_events and needles.within(_plain(payload)):
                out.event_ids.append(int(eid))
    for chunk in _chunks(sids):
        for row in conn.execute(
                f"SELECT id, {', '.join(SUMMARY_FIELDS)} FROM session_summaries WHERE session_id IN "
                f"({_marks(chunk)})", chunk):
            if int(row[0]) in gone_summaries:
                continue
            changed, new = rewrite(row[1:], needles)
            if changed:
                out.summaries[int(row[0])] = new
    return out


def rewrite(values: Sequence[object], needles: Needles) -> tuple[bool, dict[str, str] | None]:
    """A summary's fields (in SUMMARY_FIELDS order) without the copies: (whether any held one, the
    new fields, or None when nothing but its bookkeeping (state, files read) would be left)."""
    fields = dict(zip(SUMMARY_FIELDS, (str(v or "") for v in values), strict=True))
    new = {k: without(v, needles) for k, v in fields.items()}
    if new == fields:
        return False, None
    return True, (new if any(v.strip() for k, v in new.items() if k not in ("notes", "investigated")) else None)


def rewrite_summaries(conn: sqlite3.Connection, ids: Iterable[int], needles: Needles) -> tuple[int, int]:
    """Rewrite the summaries as they are now (inside the forget's transaction: another forget may have
    rewritten one since the dry run); returns (rewritten, deleted)."""
    rewritten = deleted = 0
    for sid in ids:
        row = conn.execute(f"SELECT {', '.join(SUMMARY_FIELDS)} FROM session_summaries WHERE id = ?",
                           (sid,)).fetchone()
        if row is None:
            continue
        changed, new = rewrite(tuple(row), needles)
        if changed and new is None:
            deleted += conn.execute("DELETE FROM session_summaries WHERE id = ?", (sid,)).rowcount
        elif new is not None:
            rewritten += conn.execute(
                f"UPDATE session_summaries SET {', '.join(f'{k} = ?' for k in SUMMARY_FIELDS)} WHERE id = ?",
                [*(new[k] for k in SUMMARY_FIELDS), sid]).rowcount
    return rewritten, deleted


def without(text: str, needles: Needles) -> str:
    """``text`` without its pieces that are copies, the joins between the rest kept as they were."""
    parts = _JOINS.split(text)
    pieces, joins = parts[::2], parts[1::2]
    keep = [not needles.matches(p) for p in pieces]
    if all(keep):
        return text
    out = ""
    for i, piece in enumerate(pieces):
        if not keep[i]:
            continue
        if out:
            out += joins[i - 1]
        out += piece
    return out.strip()


def successors(conn: sqlite3.Connection, gone: Sequence[int]) -> dict[int, int | None]:
    """For the rows superseded by a forgotten one: what supersedes them now.

    A was superseded by B and B is forgotten: if B was itself superseded by C (still kept), C is
    newer than both and A stays superseded, by C; otherwise nothing replaces A any more and A is
    current again (None). A row the user retracted stays retracted: only 'superseded' rows move.
    """
    gone_set = set(gone)
    nxt = {int(i): (int(b) if b is not None else None) for chunk in _chunks(list(gone_set)) for i, b in
           conn.execute(f"SELECT id, superseded_by FROM observations WHERE id IN ({_marks(chunk)})", chunk)}
    out: dict[int, int | None] = {}
    for chunk in _chunks(list(gone_set)):
        for oid, by in conn.execute(
                f"SELECT id, superseded_by FROM observations WHERE superseded_by IN ({_marks(chunk)}) "
                "AND status = 'superseded'", chunk):
            if int(oid) in gone_set:
                continue
            cur: int | None = int(by)
            seen: set[int] = set()
            while cur is not None and cur in gone_set and cur not in seen:
                seen.add(cur)
                cur = nxt.get(cur)
            out[int(oid)] = cur
    return out


def apply_successors(conn: sqlite3.Connection, moves: dict[int, int | None]) -> int:
    """Write what :func:`successors` decided (inside the forget's transaction); returns rows made current."""
    current = 0
    for oid, by in moves.items():
        if by is None:
            current += conn.execute("UPDATE observations SET status = 'active', superseded_by = NULL, "
                                    "superseded_at = NULL WHERE id = ? AND status = 'superseded'", (oid,)).rowcount
        else:
            conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (by, oid))
    return current


def scrub_files(conn: sqlite3.Connection, needles: Needles) -> dict[str, list[str]]:
    """Files of the data dir that may hold a copy, outside the database: quarantined spool files
    (``spool/corrupt``: they could not be parsed, so they are never ingested) holding a copy are
    deleted; damaged databases ``kenning repair`` set aside (``kenning.db.damaged-*``) cannot be
    rewritten safely and are named, so the user can delete them."""
    out: dict[str, list[str]] = {"deleted": [], "damaged_copies": []}
    row = conn.execute("SELECT file FROM pragma_database_list WHERE name = 'main'").fetchone()
    if not row or not row[0] or not needles.strings:
        return out
    db = str(row[0])
    root = os.path.dirname(db)
    corrupt = os.path.join(root, "spool", "corrupt")
    try:
        names = sorted(os.listdir(corrupt))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(corrupt, name)
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_SCRUB_BYTES).decode("utf-8", "replace")
            if needles.within(_plain(text)):
                os.unlink(path)
                out["deleted"].append(path)
        except OSError:
            continue
    try:
        out["damaged_copies"] = sorted(os.path.join(root, n) for n in os.listdir(root)
                                       if n.startswith(os.path.basename(db) + ".damaged-") and "-wal" not in n
                                       and not n.endswith("-shm"))
    except OSError:
        pass
    return out


def _plain(payload: str) -> str:
    """A JSON payload's strings as text (escapes decoded: a quote or an accent is not ``\\u00e9``)."""
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return payload
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return "\n".join(out)


def _json_list(raw: object) -> list[str]:
    try:
        v = json.loads(str(raw or "[]"))
    except ValueError:
        return [str(raw)]
    return [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _json_obj(raw: object) -> dict[str, object]:
    try:
        v = json.loads(str(raw or "{}"))
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    for i in range(0, len(ids), 500):
        yield list(ids[i:i + 500])


def _marks(chunk: Sequence[object]) -> str:
    return ",".join("?" * len(chunk))
