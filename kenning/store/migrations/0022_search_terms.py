"""Per kind, token and project, the rows holding the token: the document frequencies of the
per-scope BM25 (kenning/search/terms.py), kept exactly by triggers and filled here for the rows
stored before. Gathering them per query walked doclists (~10 ms for a cold prompt at 100k rows).

A row's tokens are FTS5's own: each trigger writes the row's text into a contentless FTS5 table
with the indexes' tokenizer, reads the distinct tokens back through fts5vocab and empties it
again ('delete-all'), inside the writing statement. Insert adds 1 to each token of the new row in
its project, delete subtracts, an update of the text or the project does both (rows reaching 0
are deleted). A prompt counts for its session's project while that session exists: a session
deleted takes its prompts' counts with it before the cascade removes them, and a session moved
to another project moves them.
"""

from __future__ import annotations

import sqlite3

TOKENIZE = "porter unicode61"  # migration 0001's FTS5 tokenizer

SCHEMA = f"""
CREATE TABLE search_terms (
    kind TEXT NOT NULL,     -- observation | summary | prompt
    term TEXT NOT NULL,     -- an FTS5 token
    project TEXT NOT NULL,
    n INTEGER NOT NULL,     -- rows of that kind and project holding it
    PRIMARY KEY (kind, term, project)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE search_terms_scratch USING fts5 (
    c1, c2, c3, c4, c5, c6, content = '', detail = none, columnsize = 0, tokenize = '{TOKENIZE}'
);
CREATE VIRTUAL TABLE search_terms_scratch_vocab USING fts5vocab (search_terms_scratch, 'row');
"""

_EMPTY = "INSERT INTO search_terms_scratch (search_terms_scratch) VALUES ('delete-all');"


def _write(row: str, columns: tuple[str, ...]) -> str:
    cols = ", ".join(f"c{i + 1}" for i in range(len(columns)))
    vals = ", ".join(f"{row}.{c}" for c in columns)
    return f"INSERT INTO search_terms_scratch (rowid, {cols}) VALUES (1, {vals});"


def _add(kind: str, project: str) -> str:
    """Add 1 for every token in the scratch table (one row) to ``project`` (an expression)."""
    return (f"INSERT INTO search_terms (kind, term, project, n) SELECT '{kind}', term, p, 1 FROM "
            f"search_terms_scratch_vocab, (SELECT {project} AS p) WHERE p IS NOT NULL "
            "ON CONFLICT (kind, term, project) DO UPDATE SET n = n + 1;")


def _sub(kind: str, project: str, by: str = "1") -> str:
    """Subtract ``by`` (1, or the token's rows in the scratch table) from ``project``'s counts."""
    return (f"UPDATE search_terms SET n = n - {by} WHERE kind = '{kind}' AND project = {project} "
            "AND term IN (SELECT term FROM search_terms_scratch_vocab);"
            f"DELETE FROM search_terms WHERE kind = '{kind}' AND project = {project} AND n <= 0 "
            "AND term IN (SELECT term FROM search_terms_scratch_vocab);")


def _changed(columns: tuple[str, ...]) -> str:
    return " OR ".join(f"old.{c} IS NOT new.{c}" for c in columns)


def _triggers() -> list[str]:
    out: list[str] = []
    kinds = {"observation": ("observations", ("title", "subtitle", "narrative", "facts", "concepts")),
             "summary": ("session_summaries", ("request", "investigated", "learned", "completed", "next_steps",
                                               "notes"))}
    for kind, (table, cols) in kinds.items():
        out += [
            f"CREATE TRIGGER search_terms_{kind}_ai AFTER INSERT ON {table} BEGIN "
            f"{_write('new', cols)} {_add(kind, 'new.project')} {_EMPTY} END",
            f"CREATE TRIGGER search_terms_{kind}_ad AFTER DELETE ON {table} BEGIN "
            f"{_write('old', cols)} {_sub(kind, 'old.project')} {_EMPTY} END",
            f"CREATE TRIGGER search_terms_{kind}_au AFTER UPDATE OF {', '.join(cols)}, project ON {table} "
            f"WHEN {_changed((*cols, 'project'))} BEGIN "
            f"{_write('old', cols)} {_sub(kind, 'old.project')} {_EMPTY} "
            f"{_write('new', cols)} {_add(kind, 'new.project')} {_EMPTY} END",
        ]
    session = "(SELECT s.project FROM sessions s WHERE s.id = {}.session_id)"
    prompt = ("prompt_text",)
    out += [
        "CREATE TRIGGER search_terms_prompt_ai AFTER INSERT ON user_prompts BEGIN "
        f"{_write('new', prompt)} {_add('prompt', session.format('new'))} {_EMPTY} END",
        "CREATE TRIGGER search_terms_prompt_ad AFTER DELETE ON user_prompts BEGIN "
        f"{_write('old', prompt)} {_sub('prompt', session.format('old'))} {_EMPTY} END",
        "CREATE TRIGGER search_terms_prompt_au AFTER UPDATE OF prompt_text, session_id ON user_prompts "
        f"WHEN {_changed(('prompt_text', 'session_id'))} BEGIN "
        f"{_write('old', prompt)} {_sub('prompt', session.format('old'))} {_EMPTY} "
        f"{_write('new', prompt)} {_add('prompt', session.format('new'))} {_EMPTY} END",
    ]
    # A session's prompts, all at once: the scratch table's 'doc' is how many of them hold a token.
    all_prompts = ("INSERT INTO search_terms_scratch (rowid, c1) SELECT u.id, u.prompt_text FROM user_prompts u "
                   "WHERE u.session_id = old.id;")
    by = "(SELECT v.doc FROM search_terms_scratch_vocab v WHERE v.term = search_terms.term)"
    add_all = ("INSERT INTO search_terms (kind, term, project, n) SELECT 'prompt', term, new.project, doc "
               "FROM search_terms_scratch_vocab WHERE doc > 0 "
               "ON CONFLICT (kind, term, project) DO UPDATE SET n = n + excluded.n;")
    out += [
        "CREATE TRIGGER search_terms_session_bd BEFORE DELETE ON sessions BEGIN "
        f"{all_prompts} {_sub('prompt', 'old.project', by)} {_EMPTY} END",
        "CREATE TRIGGER search_terms_session_au AFTER UPDATE OF project ON sessions "
        "WHEN old.project IS NOT new.project BEGIN "
        f"{all_prompts} {_sub('prompt', 'old.project', by)} {add_all} {_EMPTY} END",
    ]
    return out


def upgrade(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    for trigger in _triggers():
        conn.execute(trigger)
    from kenning.search.terms import refill

    refill(conn)
