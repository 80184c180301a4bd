"""Filters that name nothing: an unknown project, observation type or agent, and a query without words.

A filter naming nothing would match no row, and "No memory matches" would then be a false answer
to a typo. Every surface (CLI, HTTP API, MCP tools) asks here first and reports the error with the
nearest known names.
"""

from __future__ import annotations

import difflib
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

EXTRA_TYPES = ("summary", "prompt")  # search can also be narrowed to session summaries or prompts


class UnknownName(ValueError):
    """A filter names no project, type or agent; the message names it and the nearest matches."""


def suggestion(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the nearest known names, or nothing when none is near."""
    close = difflib.get_close_matches(word, sorted(set(known)), n=3, cutoff=0.5)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _nearest(word: str, known: Iterable[str]) -> str:
    pool = sorted(set(known))
    close = suggestion(word, pool)
    if close:
        return close
    return f"; known: {', '.join(pool[:12])}{', …' if len(pool) > 12 else ''}" if pool else ""


def observation_types(settings: Any, paths: Any) -> list[str]:
    """The mode's observation types, and the two other kinds a search can be narrowed to."""
    from kenning.observer.modes import load_mode, type_ids

    return [*type_ids(load_mode(getattr(settings, "mode", "code"), getattr(paths, "modes", None))), *EXTRA_TYPES]


def check_types(types: Sequence[str] | None, valid: Sequence[str]) -> None:
    for t in types or ():
        if t not in valid:
            raise UnknownName(f"no such type {t!r}{_nearest(t, valid)}")


def check_agent(agent: str | None) -> None:
    from kenning.integrations import AGENTS

    if agent and agent not in AGENTS:
        raise UnknownName(f"no such agent {agent!r}{_nearest(agent, AGENTS)}")


def check_project(conn: sqlite3.Connection, text: str | None) -> None:
    """An error when ``text`` (a name or key, as the user gave it) names no known project. A path
    is never unknown: a folder without memory yet is a real project with nothing to show."""
    from kenning.store import projects

    t = (text or "").strip()
    if not t or t == "*" or t.startswith(("/", "~", ".")) or projects.find(conn, t):
        return
    try:
        if conn.execute("SELECT 1 FROM sessions WHERE project = ? LIMIT 1", (t,)).fetchone():
            return
        shown = projects.names(conn)
    except sqlite3.OperationalError:  # a database without these tables: nothing to compare with
        return
    raise UnknownName(f"no such project {t!r}{_nearest(t, [*shown.values(), *shown])}")


def check(conn: sqlite3.Connection | None, *, project: str | None = None, types: Sequence[str] | None = None,
          valid_types: Sequence[str] | None = None, agent: str | None = None) -> None:
    """Raise UnknownName for the first filter that names nothing known."""
    if conn is not None:
        check_project(conn, project)
    if valid_types is not None:
        check_types(types, valid_types)
    check_agent(agent)


def has_words(query: str) -> bool:
    """Whether a query holds anything to search for: a letter or digit (any script)."""
    return any(ch.isalnum() for ch in query)


def no_words(query: str) -> str:
    return f"the query {query.strip()[:40]!r} has no words to search for (letters or digits)"
