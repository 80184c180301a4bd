"""Exact term statistics of the keyword ranking, kept as rows are written.

``search_terms`` (migration 0022) holds, per kind of row, token and project, how many rows hold
the token: the ``n`` of the per-scope BM25 (:mod:`kenning.search.bm25`), over the whole index
(the sum over projects) and over one project. Gathering them at query time meant walking
doclists (~10 ms for a cold 12-20-word prompt at 100k observations); this is one lookup.

The tokens are FTS5's own, not a copy of its tokenizer: the triggers write a row's text, as the
indexes hold it (CJK runs as character pairs, migration 0026), into a contentless FTS5 table with
the same tokenizer (``search_terms_scratch``), read its distinct tokens back through ``fts5vocab``
and empty it again, all inside the writing statement. A query term is tokenized the same way, in
a per-connection temporary FTS5 table. Only terms that are one token, not a prefix and without
synonyms have statistics here (a prefix, a phrase of several tokens or a group of words is not a
sum of token counts); :mod:`kenning.search.bm25` counts those as before.

A prompt counts for its session's project while that session exists (as ``search_scope_rows``
counts it). ``refill`` rebuilds the table from the rows (migration, ``kenning reindex``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from kenning.search.query import Term

TOKENIZE = "porter unicode61"  # the FTS5 tables' tokenizer (migration 0001); a test holds them equal
SCRATCH = "search_terms_scratch"
VOCAB = "search_terms_scratch_vocab"
_QUERY = "kenning_query_terms"  # the per-connection temporary table query terms are tokenized in


@dataclass(frozen=True)
class Source:
    columns: tuple[str, ...]  # the FTS table's columns, in order
    rows: str                 # SELECT rowid, project, columns... of every row (``{where}`` filters the project)


# ``{t}``: the indexed text of the row (the indexes' content view from migration 0026 on).
SOURCES = {
    "observation": Source(("title", "subtitle", "narrative", "facts", "concepts"),
                          "SELECT o.id, o.project, t.title, t.subtitle, t.narrative, t.facts, t.concepts "
                          "FROM observations o JOIN {t} t ON t.id = o.id WHERE o.project = ?"),
    "summary": Source(("request", "investigated", "learned", "completed", "next_steps", "notes"),
                      "SELECT s.id, s.project, t.request, t.investigated, t.learned, t.completed, t.next_steps, "
                      "t.notes FROM session_summaries s JOIN {t} t ON t.id = s.id WHERE s.project = ?"),
    "prompt": Source(("prompt_text",),
                     "SELECT u.id, ses.project, t.prompt_text FROM user_prompts u JOIN {t} t ON t.id = u.id "
                     "JOIN sessions ses ON ses.id = u.session_id WHERE ses.project = ?"),
}
_TABLES = {"observation": "observations", "summary": "session_summaries", "prompt": "user_prompts"}


def _text_of(conn: sqlite3.Connection, kind: str) -> str:
    """Where the indexed text of ``kind`` is read: the content view, or (before migration 0026,
    when the text was indexed as it is) the table itself."""
    table = _TABLES[kind]
    view = f"{table}_fts_text"
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = ?", (view,)).fetchone()
    return view if found else table
_PROJECTS = {"observation": "SELECT DISTINCT project FROM observations",
             "summary": "SELECT DISTINCT project FROM session_summaries",
             "prompt": "SELECT DISTINCT s.project FROM sessions s WHERE EXISTS "
                       "(SELECT 1 FROM user_prompts u WHERE u.session_id = s.id)"}


REFILL_CHUNK = 2000  # rows in the scratch table at a time while refilling (its pages are freed again)


def refill(conn: sqlite3.Connection) -> int:
    """Recount ``search_terms`` from the rows (inside the caller's transaction); its row count.
    One project of one kind at a time, ``REFILL_CHUNK`` rows at a time: the scratch table's
    vocabulary counts their rows holding each token, added to the counts so far."""
    conn.execute("DELETE FROM search_terms")
    conn.execute(f"INSERT INTO {SCRATCH} ({SCRATCH}) VALUES ('delete-all')")
    for kind, src in SOURCES.items():
        cols = ", ".join(f"c{i + 1}" for i in range(len(src.columns)))
        insert = f"INSERT INTO {SCRATCH} (rowid, {cols}) VALUES (?, {', '.join('?' * len(src.columns))})"
        select = src.rows.format(t=_text_of(conn, kind))
        for (project,) in conn.execute(_PROJECTS[kind]).fetchall():
            rows = conn.execute(select, (project,)).fetchall()
            for i in range(0, len(rows), REFILL_CHUNK):
                conn.executemany(insert, ((r[0], *r[2:]) for r in rows[i:i + REFILL_CHUNK]))
                conn.execute(f"INSERT INTO search_terms (kind, term, project, n) SELECT ?, term, ?, doc FROM {VOCAB} "
                             "WHERE doc > 0 ON CONFLICT (kind, term, project) DO UPDATE SET n = n + excluded.n",
                             (kind, project))
                conn.execute(f"INSERT INTO {SCRATCH} ({SCRATCH}) VALUES ('delete-all')")
    return int(conn.execute("SELECT COUNT(*) FROM search_terms").fetchone()[0])


_lock = threading.Lock()  # a connection may be shared by threads: one tokenizing at a time
_tokens: dict[str, list[str]] = {}  # text -> its tokens (the same for every kind of one query)
TOKENS_MAX = 4096


def clear_cache() -> None:
    with _lock:
        _tokens.clear()


def _tokenize(conn: sqlite3.Connection, texts: Sequence[str]) -> list[list[str]]:
    """FTS5's tokens of each text (the tokenizer of the indexes), in order."""
    try:
        conn.execute(f"INSERT INTO temp.{_QUERY} ({_QUERY}) VALUES ('delete-all')")
    except sqlite3.OperationalError:  # first use on this connection
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_QUERY} USING fts5 (t, content = '', "
                     f"tokenize = '{TOKENIZE}')")
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_QUERY}_vocab USING fts5vocab "
                     f"(temp, {_QUERY}, 'instance')")
    conn.executemany(f"INSERT INTO temp.{_QUERY} (rowid, t) VALUES (?, ?)",
                     [(i + 1, text) for i, text in enumerate(texts)])
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in conn.execute(f"SELECT doc, term FROM temp.{_QUERY}_vocab ORDER BY doc, offset"):
        out[int(doc) - 1].append(str(term))
    conn.execute(f"INSERT INTO temp.{_QUERY} ({_QUERY}) VALUES ('delete-all')")
    return out


def lookup(conn: sqlite3.Connection, kind: str, terms: Sequence[Term], project: str | None,
           ) -> dict[Term, tuple[int, int]]:
    """``(rows of the index holding it, rows of the project holding it)`` for each of ``terms``
    that is one token, not a prefix and without synonyms (both the index's when ``project`` is
    None). Empty on a database without the table (a read-only look at an older file) or where the
    connection cannot tokenize (no temporary tables): the caller counts instead."""
    single = {t: t.indexed for t in terms if not t.prefix and not t.alts}  # term -> its text as indexed
    if not single:
        return {}
    try:
        with _lock:
            todo = list({text: 0 for text in single.values() if text not in _tokens})
            if todo:
                if len(_tokens) > TOKENS_MAX:
                    _tokens.clear()
                _tokens.update(zip(todo, _tokenize(conn, todo), strict=True))
            token = {t: _tokens[text][0] for t, text in single.items() if len(_tokens[text]) == 1}
        if not token:
            return {}
        wanted = sorted(set(token.values()))
        found = {str(r[0]): (int(r[1]), int(r[2] or 0)) for r in conn.execute(
            "SELECT term, SUM(n), SUM(CASE WHEN project = ? THEN n END) FROM search_terms "
            f"WHERE kind = ? AND term IN ({','.join('?' * len(wanted))}) GROUP BY term",
            [project or "", kind, *wanted])}
    except sqlite3.OperationalError:
        return {}
    out: dict[Term, tuple[int, int]] = {}
    for t, tk in token.items():
        n_all, n_scope = found.get(tk, (0, 0))
        out[t] = (n_all, n_scope if project else n_all)
    return out
