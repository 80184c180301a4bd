"""Memories saved on purpose (the MCP ``save_memory`` tool): validate, clean, store.

A saved memory is an ordinary observation, so FTS (triggers), search, the session-start
index and forgetting treat it like any other. It belongs to a synthetic session per
project and day on platform ``mcp`` (the observations table needs a session, and one per
day keeps them grouped in time without inventing an agent session). The same content
saved twice in a project returns the first row instead of a duplicate.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from kenning.records import ObservationDraft, tokens_of
from kenning.store import memory_index, repo, supersede

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PLATFORM = "mcp"
OBSERVER = "manual"
PROPOSED = "proposed"  # the kind of a rule the agent saved: its proposal, a standing rule only once the user pins it
AGENT = {"by": "agent", "origin": "mcp", "how": "saved by the agent with the save_memory tool"}
DEFAULT_TYPE = "discovery"
MAX_TEXT_CHARS = 20_000
MAX_TITLE_CHARS = 200
MAX_LIST_ITEMS = 50
TITLE_FROM_TEXT_CHARS = 100


class InvalidMemory(ValueError):
    """The memory cannot be saved as given; the message says why and what to do."""


@dataclass
class Saved:
    id: int
    created: bool  # False: the same content was already stored (id is that row)
    project: str
    type: str
    title: str


def derive_title(text: str) -> str:
    """A title from the first line or sentence of the text, clipped."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    for stop in (". ", "? ", "! "):
        cut = first.find(stop)
        if 0 < cut < TITLE_FROM_TEXT_CHARS:
            first = first[: cut + 1]
            break
    first = " ".join(first.split())
    return first if len(first) <= TITLE_FROM_TEXT_CHARS else first[: TITLE_FROM_TEXT_CHARS - 1].rstrip() + "…"


def _items(values: list[str] | None, what: str) -> list[str]:
    if not values:
        return []
    if len(values) > MAX_LIST_ITEMS:
        raise InvalidMemory(f"too many {what} ({len(values)}; at most {MAX_LIST_ITEMS})")
    return [v.strip() for v in values if isinstance(v, str) and v.strip()]


def prepare(text: str, *, title: str | None, type: str | None, valid_types: list[str], clean: Callable[[str], str],
            concepts: list[str] | None = None, files: list[str] | None = None,
            now: float | None = None) -> ObservationDraft:
    """Validate and clean one memory into an observation draft (no database needed).

    ``clean`` is the caller's cleaning with the user's settings (``privacy.ingress.cleaner``):
    private blocks stripped and secrets redacted exactly as the hooks do for captured text.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidMemory("text is empty: give the fact, decision or gotcha to remember")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidMemory(f"text is too long ({len(text):,} characters; at most {MAX_TEXT_CHARS:,}): "
                            "save the essential part")
    if title is not None and len(title) > MAX_TITLE_CHARS:
        raise InvalidMemory(f"title is too long ({len(title)} characters; at most {MAX_TITLE_CHARS})")
    kind = (type or DEFAULT_TYPE).strip().lower()
    if valid_types and kind not in valid_types:
        raise InvalidMemory(f"unknown type {type!r}; use one of: {', '.join(valid_types)}")
    body = clean(text).strip()
    if not body:
        raise InvalidMemory("nothing is left to save once <private> content is removed")
    head = clean(title).strip() if title else ""
    head = " ".join(head.split()) or derive_title(body)
    return ObservationDraft(type=kind, title=head, narrative=body, created_at=time.time() if now is None else now,
                            concepts=[clean(c) for c in _items(concepts, "concepts")],
                            files_read=_items(files, "files"), source_tokens=tokens_of(len(body)))


def by_the_agent(draft: ObservationDraft) -> bool:
    """Mark ``draft`` as the agent's own words (DESIGN.md §9: only the user makes or replaces a standing
    rule). What reads as a standing rule becomes the agent's *proposal*: a key memory shown as proposed
    and not confirmed, never listed with the rules, until the user pins it (``kenning pin``, the viewer).
    True when it is a proposal."""
    from kenning.memory.layers import RULE, classify

    layer, _importance = classify(draft.type, draft.title, facts=draft.facts, concepts=draft.concepts,
                                  subtitle=draft.subtitle, kind=draft.kind)
    draft.why = {**draft.why, **AGENT}
    if layer != RULE:
        return False
    draft.kind = PROPOSED
    draft.why["how"] = "a rule the agent proposed with the save_memory tool; not confirmed by the user"
    return True


def session_key(project: str, at: float) -> str:
    """The synthetic agent session id: one per project and local day."""
    return f"{time.strftime('%Y-%m-%d', time.localtime(at))}:{project}"


def existing(conn: sqlite3.Connection, project: str, content_hash: str) -> int | None:
    row = conn.execute("SELECT id FROM observations WHERE project = ? AND content_hash = ? AND status = 'active' "
                       "ORDER BY id LIMIT 1", (project, content_hash)).fetchone()
    return int(row[0]) if row else None


def save(conn: sqlite3.Connection, draft: ObservationDraft, *, project: str, project_root: str = "",
         cwd: str = "", name: str = "") -> Saved:
    """Store ``draft`` in the project keyed ``project`` (one transaction); an identical active memory is
    reused. ``name`` is the project's display name (what ``Saved.project`` says)."""
    if not project.strip():
        raise InvalidMemory("project is empty")
    digest = draft.content_hash()
    with repo.transaction(conn):
        shown = name or project
        found = existing(conn, project, digest)
        if found is not None:
            return Saved(found, False, shown, draft.type, draft.title)
        sid = repo.upsert_session(conn, platform=PLATFORM, agent_session_id=session_key(project, draft.created_at),
                                  project=project, project_root=project_root, cwd=cwd, at=draft.created_at,
                                  name=name)
        project = str(conn.execute("SELECT project FROM sessions WHERE id = ?", (sid,)).fetchone()[0])
        # Nothing will ever end this session: mark it completed so nothing waits for it.
        conn.execute("UPDATE sessions SET status = 'completed', ended_at = ? WHERE id = ?", (draft.created_at, sid))
        oid = repo.insert_observation(conn, sid, project, draft, OBSERVER, group=False)
        if oid is None:  # same content in the same session, but retracted/superseded: reuse that row
            row = conn.execute("SELECT id FROM observations WHERE session_id = ? AND content_hash = ?",
                               (sid, digest)).fetchone()
            conn.execute("UPDATE observations SET status = 'active', superseded_by = NULL WHERE id = ?", (row[0],))
            return Saved(int(row[0]), False, shown, draft.type, draft.title)
        supersede.automatic(conn, [oid])  # "from now on …" saved by hand replaces the old rule too
        memory_index.assign_all(conn, [oid])
    return Saved(oid, True, shown, draft.type, draft.title)
