"""The optional trigram index: substrings of words, parts of camelCase identifiers.

``porter unicode61`` cannot find ``UserById`` inside ``getUserById``. A ``trigram`` FTS5 table
can, at ~2.8× the index size and a slower insert (see BENCHMARKS.md), so it is optional
(``search_trigram``): its tables and triggers are created by :func:`enable` and dropped by
:func:`disable`, never by a migration. Like every FTS index it is derived from the canonical rows
and rebuildable. Words inside CJK text need no trigram: the default indexes hold CJK runs as
character pairs (kenning/search/cjk.py), which also finds two-character words.
"""

from __future__ import annotations

import sqlite3

from kenning.search.query import FtsQuery

MIN_CHARS = 3  # a trigram needs three characters

TABLES = {
    # kind: (trigram table, content table, columns)
    "observation": ("observations_trigram", "observations", ("title", "subtitle", "narrative", "facts", "concepts")),
    "summary": ("session_summaries_trigram", "session_summaries",
                ("request", "investigated", "learned", "completed", "next_steps", "notes")),
    "prompt": ("user_prompts_trigram", "user_prompts", ("prompt_text",)),
}


def table_for(conn: sqlite3.Connection, kind: str) -> str | None:
    """The trigram table of ``kind`` when it exists."""
    name = TABLES[kind][0]
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return name if row else None


def is_enabled(conn: sqlite3.Connection) -> bool:
    return all(table_for(conn, k) for k in TABLES)


def match_expression(q: FtsQuery) -> str | None:
    """Every term of at least three characters as a quoted substring (AND); None if none is."""
    parts = ['"' + t.text.replace('"', '""') + '"' for t in q.terms if len(t.text) >= MIN_CHARS]
    return " AND ".join(parts) if parts else None


def _ddl(kind: str) -> list[str]:
    table, content, cols = TABLES[kind]
    c = ", ".join(cols)
    new = ", ".join(f"new.{x}" for x in cols)
    old = ", ".join(f"old.{x}" for x in cols)
    delete = f"INSERT INTO {table} ({table}, rowid, {c}) VALUES ('delete', old.id, {old});"
    insert = f"INSERT INTO {table} (rowid, {c}) VALUES (new.id, {new});"
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5 ({c}, content = '{content}', "
        f"content_rowid = 'id', tokenize = 'trigram')",
        f"CREATE TRIGGER IF NOT EXISTS {table}_ai AFTER INSERT ON {content} BEGIN {insert} END",
        f"CREATE TRIGGER IF NOT EXISTS {table}_ad AFTER DELETE ON {content} BEGIN {delete} END",
        f"CREATE TRIGGER IF NOT EXISTS {table}_au AFTER UPDATE ON {content} BEGIN {delete} {insert} END",
    ]


def enable(conn: sqlite3.Connection) -> bool:
    """Create the trigram tables and triggers and fill them; False when they already existed."""
    if is_enabled(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        for kind in TABLES:
            for stmt in _ddl(kind):
                conn.execute(stmt)
            conn.execute(f"INSERT INTO {TABLES[kind][0]} ({TABLES[kind][0]}) VALUES ('rebuild')")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def disable(conn: sqlite3.Connection) -> bool:
    """Drop the trigram tables and triggers; False when there were none."""
    existed = any(table_for(conn, k) for k in TABLES)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table, _content, _cols in TABLES.values():
            for suffix in ("ai", "ad", "au"):
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_{suffix}")
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return existed


def rebuild(conn: sqlite3.Connection) -> None:
    """Refill existing trigram tables from the canonical rows."""
    for kind in TABLES:
        table = table_for(conn, kind)
        if table:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
