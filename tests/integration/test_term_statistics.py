"""The keyword ranking's term statistics (migration 0022) stay exact through the real write
paths: memory made by hook processes and the worker in two projects, `kenning forget`, a
database from before the migration (and before migration 0026, which rewrote its triggers)
opened by a new worker, and `kenning reindex`."""

from __future__ import annotations

import sqlite3

import pytest

from kenning.store.db import _statements, migration_files
from tests.conftest import Home
from tests.integration.test_memory_commands import call_json, other_project, session
from tests.support.erasure import assert_erased
from tests.unit.test_search_terms import kept, truth

pytestmark = pytest.mark.slow

WORD = "quarkbasket"  # in one session's prompts only


def before_search_upgrades(conn: sqlite3.Connection) -> None:
    """Take out what migrations 0022 (term statistics) and 0026 (CJK words) added and put back the
    full-text indexes of migration 0001 as they were: the rows stay, as in a database written before."""
    tables = ("observations", "session_summaries", "user_prompts")
    for name in [f"{t}_{e}" for t in tables for e in ("ai", "bd", "bu", "au")] + \
            ["search_terms_change_ai", "search_terms_session_bd", "search_terms_session_au"]:
        conn.execute(f"DROP TRIGGER {name}")
    for name in ("search_cjk_row", "search_cjk_output", *(f"{t}_fts_text" for t in tables)):
        conn.execute(f"DROP VIEW {name}")
    for table in ("search_terms_change", "search_cjk_input", "observations_cjk", "session_summaries_cjk",
                  "user_prompts_cjk", "search_terms_scratch_vocab", "search_terms_scratch", "search_terms",
                  "observations_fts", "session_summaries_fts", "user_prompts_fts"):
        conn.execute(f"DROP TABLE {table}")
    initial = next(sql for version, _name, sql in migration_files() if version == 1)
    for statement in _statements(initial):
        if "_fts" in statement:  # the three indexes and their triggers
            conn.execute(statement)
    for table in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    conn.execute("DELETE FROM schema_migrations WHERE version IN (22, 26)")


def exact(home: Home) -> bool:
    conn = home.db()
    try:
        have, want = kept(conn), truth(conn)
        return bool(want) and have == want
    finally:
        conn.close()


def test_statistics_stay_exact_through_forget_an_old_database_and_reindex(home: Home) -> None:
    home.start_worker()
    session(home, "s-one", [f"Always run the {WORD} migration before deploying.", "We use uv, not pip."])
    session(home, "s-two", ["Never touch the public API in api.py.", "Running tests twice is slow."])
    session(home, "s-b", ["Always write the changelog by hand."], cwd=other_project(home))
    home.flush()
    assert exact(home)

    r = home.kenning("forget", "--query", WORD, "--yes")
    assert r.returncode == 0, r.stderr
    home.flush()
    assert exact(home)
    assert_erased(home.data, WORD)
    conn = home.db()
    assert not conn.execute("SELECT 1 FROM search_terms WHERE term = ?", (WORD,)).fetchone()
    conn.close()

    home.stop_worker()
    conn = home.db()  # back to a database from before migrations 0022 and 0026
    before_search_upgrades(conn)
    conn.commit()
    conn.close()

    home.start_worker()  # migrates: the statistics of every stored row are counted
    session(home, "s-three", ["Always pin the deploy script's python version."])
    home.flush()
    assert exact(home)
    status, body = call_json(home, "GET", "/api/search?query=deploy+python+version")
    assert status == 200 and body["results"], body

    conn = home.db()
    conn.execute("UPDATE search_terms SET n = n + 3")  # drifted
    conn.commit()
    conn.close()
    r = home.kenning("reindex", "--no-vectors")
    assert r.returncode == 0, r.stderr
    assert exact(home)
