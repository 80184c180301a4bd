"""Words inside Chinese, Japanese and Korean text are found (kenning/search/cjk.py).

The three full-text indexes (migration 0001) held a run of CJK letters as one token. From here
they index each text column through :func:`kenning.search.cjk.sql`: a CJK run becomes its
overlapping character pairs and its last character; any other text is indexed as before.

* Each index's content is a view (``<table>_fts_text``) giving the expanded columns, so FTS5's
  own 'rebuild' (``kenning reindex``) and its checks see what the triggers wrote.
* The indexes are created anew with that content and rebuilt; their triggers write the expanded
  text (and an update that changes no indexed column no longer touches them).
* The term statistics (migration 0022) count the tokens of the expanded text: their triggers
  are created again the same way, and the counts are refilled when a stored row holds CJK
  (for any other row the expanded text is the text itself).
"""

from __future__ import annotations

import sqlite3

TOKENIZE = "porter unicode61"  # migration 0001's tokenizer, unchanged

# table: (its index, the indexed columns, the name prefix of migration 0001's triggers)
INDEXES = {
    "observations": ("observations_fts", ("title", "subtitle", "narrative", "facts", "concepts"), "observations"),
    "session_summaries": ("session_summaries_fts",
                          ("request", "investigated", "learned", "completed", "next_steps", "notes"),
                          "session_summaries"),
    "user_prompts": ("user_prompts_fts", ("prompt_text",), "user_prompts"),
}


def _e(expr: str) -> str:
    from kenning.search.cjk import sql

    return sql(expr)


def _changed(cols: tuple[str, ...]) -> str:
    return " OR ".join(f"old.{c} IS NOT new.{c}" for c in cols)


def _index(table: str) -> list[str]:
    fts, cols, prefix = INDEXES[table]
    c = ", ".join(cols)
    view = f"{table}_fts_text"
    new = ", ".join(_e(f"new.{x}") for x in cols)
    old = ", ".join(_e(f"old.{x}") for x in cols)
    delete = f"INSERT INTO {fts} ({fts}, rowid, {c}) VALUES ('delete', old.id, {old});"
    insert = f"INSERT INTO {fts} (rowid, {c}) VALUES (new.id, {new});"
    return [
        *(f"DROP TRIGGER IF EXISTS {prefix}_{s}" for s in ("ai", "ad", "au")),
        f"DROP TABLE IF EXISTS {fts}",
        f"CREATE VIEW {view} AS SELECT id, {', '.join(f'{_e(x)} AS {x}' for x in cols)} FROM {table}",
        f"CREATE VIRTUAL TABLE {fts} USING fts5 ({c}, content = '{view}', content_rowid = 'id', "
        f"tokenize = '{TOKENIZE}')",
        f"CREATE TRIGGER {prefix}_ai AFTER INSERT ON {table} BEGIN {insert} END",
        f"CREATE TRIGGER {prefix}_ad AFTER DELETE ON {table} BEGIN {delete} END",
        f"CREATE TRIGGER {prefix}_au AFTER UPDATE OF {c} ON {table} WHEN {_changed(cols)} BEGIN {delete} {insert} END",
        f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')",
    ]


# ------------------------------------------------------------------ term statistics (0022)

_EMPTY = "INSERT INTO search_terms_scratch (search_terms_scratch) VALUES ('delete-all');"


def _write(row: str, columns: tuple[str, ...]) -> str:
    cols = ", ".join(f"c{i + 1}" for i in range(len(columns)))
    vals = ", ".join(_e(f"{row}.{c}") for c in columns)
    return f"INSERT INTO search_terms_scratch (rowid, {cols}) VALUES (1, {vals});"


def _add(kind: str, project: str) -> str:
    return (f"INSERT INTO search_terms (kind, term, project, n) SELECT '{kind}', term, p, 1 FROM "
            f"search_terms_scratch_vocab, (SELECT {project} AS p) WHERE p IS NOT NULL "
            "ON CONFLICT (kind, term, project) DO UPDATE SET n = n + 1;")


def _sub(kind: str, project: str, by: str = "1") -> str:
    return (f"UPDATE search_terms SET n = n - {by} WHERE kind = '{kind}' AND project = {project} "
            "AND term IN (SELECT term FROM search_terms_scratch_vocab);"
            f"DELETE FROM search_terms WHERE kind = '{kind}' AND project = {project} AND n <= 0 "
            "AND term IN (SELECT term FROM search_terms_scratch_vocab);")


def _statistics() -> list[str]:
    """Migration 0022's triggers, writing the expanded text into the scratch table."""
    out: list[str] = []
    kinds = {"observation": ("observations", INDEXES["observations"][1]),
             "summary": ("session_summaries", INDEXES["session_summaries"][1])}
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
    all_prompts = (f"INSERT INTO search_terms_scratch (rowid, c1) SELECT u.id, {_e('u.prompt_text')} "
                   "FROM user_prompts u WHERE u.session_id = old.id;")
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


STATISTICS_TRIGGERS = ("search_terms_observation_ai", "search_terms_observation_ad", "search_terms_observation_au",
                       "search_terms_summary_ai", "search_terms_summary_ad", "search_terms_summary_au",
                       "search_terms_prompt_ai", "search_terms_prompt_ad", "search_terms_prompt_au",
                       "search_terms_session_bd", "search_terms_session_au")


def _holds_cjk(conn: sqlite3.Connection) -> bool:
    from kenning.search.cjk import has_sql

    for table, (_fts, cols, _p) in INDEXES.items():
        cond = " OR ".join(f"CASE WHEN {has_sql(c)} THEN 1 ELSE 0 END" for c in cols)
        if conn.execute(f"SELECT 1 FROM {table} WHERE {cond} LIMIT 1").fetchone():
            return True
    return False


def upgrade(conn: sqlite3.Connection) -> None:
    for table in INDEXES:
        for statement in _index(table):
            conn.execute(statement)
    for name in STATISTICS_TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    for trigger in _statistics():
        conn.execute(trigger)
    if _holds_cjk(conn):
        from kenning.search.terms import refill

        refill(conn)
