"""Words inside Chinese, Japanese and Korean text are found (kenning/search/cjk.py).

The three full-text indexes (migration 0001) held a run of CJK letters as one token. From here
they index a text column holding CJK as :func:`kenning.search.cjk.sql` expands it: each run
becomes its overlapping character pairs and its last character; any other text is as before.

* The expansion is written once per row and column, when the row is written, into
  ``<table>_cjk`` (only for rows holding CJK; NULL where a column holds none): the one place the
  SQL expansion exists is the view ``search_cjk_output`` over the scratch table
  ``search_cjk_input`` (a per-column copy in every trigger made the schema ~240 KB, and SQLite
  parses the whole schema on every new connection: 10 ms instead of 1).
* Each index's content is the view ``<table>_fts_text`` (the row, its ``_cjk`` columns first),
  so FTS5's own 'rebuild' (``kenning reindex``) and checks see what the triggers wrote.
* The index and the term statistics of migration 0022 (which now count the tokens of the
  indexed text) read the row's text from that view: the old row BEFORE a delete or an update,
  the new one AFTER an insert or an update (its ``_cjk`` row derived first), one trigger per
  table and moment (separate ones would depend on SQLite's undocumented firing order). An update
  that changes no indexed column and no project touches none of them.
* The indexes are created anew with their content views and rebuilt; the term statistics are
  refilled when a stored row holds CJK (for any other row the indexed text is the text itself).
"""

from __future__ import annotations

import sqlite3

TOKENIZE = "porter unicode61"  # migration 0001's tokenizer, unchanged

KINDS = {  # kind: (table, index, indexed columns)
    "observation": ("observations", "observations_fts", ("title", "subtitle", "narrative", "facts", "concepts")),
    "summary": ("session_summaries", "session_summaries_fts",
                ("request", "investigated", "learned", "completed", "next_steps", "notes")),
    "prompt": ("user_prompts", "user_prompts_fts", ("prompt_text",)),
}
OLD_TRIGGERS = [f"{t}_{e}" for t, _i, _c in KINDS.values() for e in ("ai", "ad", "au")] + \
    [f"search_terms_{k}_{e}" for k in KINDS for e in ("ai", "ad", "au")] + \
    ["search_terms_session_bd", "search_terms_session_au"]
_EMPTY = "INSERT INTO search_terms_scratch (search_terms_scratch) VALUES ('delete-all');"


def _schema() -> list[str]:
    from kenning.search.cjk import sql

    width = max(len(cols) for _t, _i, cols in KINDS.values())
    pivot = ", ".join(f"max(iif(k={i + 1},nullif(e,x),NULL)) AS e{i + 1}" for i in range(width))
    out = ["CREATE TABLE search_cjk_input (k INTEGER PRIMARY KEY, x TEXT)",  # empty outside a statement
           f"CREATE VIEW search_cjk_output AS SELECT k, x, {sql('x')} AS e FROM search_cjk_input",
           # The expanded columns of the row in the input, as one row (NULL: a column it leaves as it
           # is); each row's expansion is computed once (a second use of e would compute it again).
           f"CREATE VIEW search_cjk_row AS SELECT {pivot} FROM search_cjk_output"]
    for table, fts, cols in KINDS.values():
        c = ", ".join(cols)
        out += [
            f"CREATE TABLE {table}_cjk (id INTEGER PRIMARY KEY, {', '.join(f'{x} TEXT' for x in cols)})",
            f"CREATE VIEW {table}_fts_text AS SELECT t.id AS id, "
            f"{', '.join(f'coalesce(c.{x}, t.{x}) AS {x}' for x in cols)} "
            f"FROM {table} t LEFT JOIN {table}_cjk c ON c.id = t.id",
            f"CREATE VIRTUAL TABLE {fts} USING fts5 ({c}, content = '{table}_fts_text', content_rowid = 'id', "
            f"tokenize = '{TOKENIZE}')",
        ]
    return out


def _derive(table: str, cols: tuple[str, ...]) -> str:
    """The ``_cjk`` row of ``new`` when it holds CJK: its columns that may hold some go through the
    expansion, the row is kept when one of them changed."""
    from kenning.search.cjk import has_sql

    rows = " UNION ALL ".join(f"SELECT {i + 1}{' AS k' if i == 0 else ''},new.{x}{' AS x' if i == 0 else ''}"
                              for i, x in enumerate(cols))  # (VALUES names no columns in a trigger)
    got = ",".join(f"e{i + 1}" for i in range(len(cols)))
    return (f"INSERT INTO search_cjk_input (k,x) SELECT k,x FROM ({rows}) WHERE {has_sql('x')};"
            f"INSERT INTO {table}_cjk (id,{','.join(cols)}) SELECT new.id,{got} FROM search_cjk_row "
            f"WHERE coalesce({got},NULL) NOTNULL;"
            "DELETE FROM search_cjk_input WHERE k>0;")  # a WHERE: no truncation of an empty table


def _index(fts: str, table: str, cols: tuple[str, ...], row: str) -> str:
    """``row`` into (new) or out of (old) the index, as the content view gives it now."""
    c = ", ".join(cols)
    what = "id" if row == "new" else "'delete', id"
    into = f"rowid, {c}" if row == "new" else f"{fts}, rowid, {c}"
    return f"INSERT INTO {fts} ({into}) SELECT {what}, {c} FROM {table}_fts_text WHERE id = {row}.id;"


# Migration 0022's upkeep of ``search_terms``, written once: inserting (kind, project, sign) into
# ``search_terms_change`` adds (sign 1) or takes (-1) one per token in the scratch table to or from
# the project's counts and empties the scratch table; sign 2 and -2 add or take each token's rows
# in the scratch table (a session's prompts at once) and leave it for the caller to empty.
CHANGE = [
    "CREATE TABLE search_terms_change (kind TEXT, project TEXT, sign INTEGER)",  # empty outside a statement
    "CREATE TRIGGER search_terms_change_ai AFTER INSERT ON search_terms_change BEGIN "
    "INSERT INTO search_terms (kind, term, project, n) SELECT new.kind, term, new.project, iif(new.sign=1,1,doc) "
    "FROM search_terms_scratch_vocab WHERE new.sign > 0 AND new.project IS NOT NULL AND doc > 0 "
    "ON CONFLICT (kind, term, project) DO UPDATE SET n = n + excluded.n; "
    "UPDATE search_terms SET n = n - iif(new.sign=-1,1,(SELECT v.doc FROM search_terms_scratch_vocab v "
    "WHERE v.term = search_terms.term)) WHERE new.sign < 0 AND kind = new.kind AND project = new.project "
    "AND term IN (SELECT term FROM search_terms_scratch_vocab); "
    "DELETE FROM search_terms WHERE new.sign < 0 AND kind = new.kind AND project = new.project AND n <= 0 "
    "AND term IN (SELECT term FROM search_terms_scratch_vocab); "
    "INSERT INTO search_terms_scratch (search_terms_scratch) SELECT 'delete-all' WHERE abs(new.sign) = 1; "
    "DELETE FROM search_terms_change WHERE sign != 0; END",
]


def _count(kind: str, table: str, cols: tuple[str, ...], row: str, project: str, add: bool) -> str:
    """``row``'s tokens, as the content view gives its text, added to or taken from ``project``."""
    scratch = ",".join(f"c{i + 1}" for i in range(len(cols)))
    return (f"INSERT INTO search_terms_scratch (rowid,{scratch}) SELECT 1,{','.join(cols)} "
            f"FROM {table}_fts_text WHERE id={row}.id;"
            f"INSERT INTO search_terms_change VALUES ('{kind}',{project},{1 if add else -1});")


def _changed(cols: tuple[str, ...]) -> str:
    return " OR ".join(f"old.{c} IS NOT new.{c}" for c in cols)


def _triggers() -> list[str]:
    """Per table: the old row leaves the index and the statistics BEFORE a delete or an update (the
    content view still gives its text then), the new row enters them AFTER an insert or an update,
    its ``_cjk`` row derived first. One trigger per table and moment: no firing order to rely on."""
    out: list[str] = []
    for kind, (table, fts, cols) in KINDS.items():
        if kind == "prompt":
            moved, scope = ("session_id",), "(SELECT s.project FROM sessions s WHERE s.id = {}.session_id)"
        else:
            moved, scope = ("project",), "{}.project"
        old, new = scope.format("old"), scope.format("new")
        # A row moved to another project (or session) leaves and enters the index as one whose
        # text changed: rare, and the conditions are not repeated in every statement.
        update = f"UPDATE OF {', '.join((*cols, *moved))} ON {table} WHEN {_changed((*cols, *moved))}"
        leave = (f"{_index(fts, table, cols, 'old')} {_count(kind, table, cols, 'old', old, False)} "
                 f"DELETE FROM {table}_cjk WHERE id = old.id;")
        enter = (f"{_derive(table, cols)} {_index(fts, table, cols, 'new')} "
                 f"{_count(kind, table, cols, 'new', new, True)}")
        out += [f"CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN {enter} END",
                f"CREATE TRIGGER {table}_bd BEFORE DELETE ON {table} BEGIN {leave} END",
                f"CREATE TRIGGER {table}_bu BEFORE {update} BEGIN {leave} END",
                f"CREATE TRIGGER {table}_au AFTER {update} BEGIN {enter} END"]
    # A session's prompts, all at once (migration 0022): the scratch table's 'doc' is how many hold a token.
    all_prompts = ("INSERT INTO search_terms_scratch (rowid,c1) SELECT u.id,t.prompt_text FROM user_prompts u "
                   "JOIN user_prompts_fts_text t ON t.id=u.id WHERE u.session_id=old.id;")
    out += [
        "CREATE TRIGGER search_terms_session_bd BEFORE DELETE ON sessions BEGIN "
        f"{all_prompts} INSERT INTO search_terms_change VALUES ('prompt',old.project,-2); {_EMPTY} END",
        "CREATE TRIGGER search_terms_session_au AFTER UPDATE OF project ON sessions "
        f"WHEN old.project IS NOT new.project BEGIN {all_prompts} "
        "INSERT INTO search_terms_change VALUES ('prompt',old.project,-2),('prompt',new.project,2); "
        f"{_EMPTY} END",
    ]
    return out


def upgrade(conn: sqlite3.Connection) -> None:
    from kenning.search import cjk, terms

    for name in OLD_TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    for _table, fts, _cols in KINDS.values():
        conn.execute(f"DROP TABLE IF EXISTS {fts}")
    for statement in [*_schema(), *CHANGE]:
        conn.execute(statement)
    held = cjk.refill(conn)  # the _cjk rows of the rows stored before
    for statement in _triggers():
        conn.execute(statement)
    for _table, fts, _cols in KINDS.values():
        conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
    if held:
        terms.refill(conn)
