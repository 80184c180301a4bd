"""The keyword ranking's term statistics (migration 0022) stay exact through the real write
paths: memory made by hook processes and the worker in two projects, `kenning forget`, a
database from before the migration opened by a new worker, and `kenning reindex`."""

from __future__ import annotations

import pytest

from tests.conftest import Home
from tests.integration.test_memory_commands import call_json, other_project, session
from tests.unit.test_search_terms import kept, truth

pytestmark = pytest.mark.slow

WORD = "quarkbasket"  # in one session's prompts only


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
    conn = home.db()
    assert not conn.execute("SELECT 1 FROM search_terms WHERE term = ?", (WORD,)).fetchone()
    conn.close()

    home.stop_worker()
    conn = home.db()  # back to a database from before migration 0022 (it only adds these)
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master WHERE name LIKE 'search_terms%' "
                                   "AND type IN ('trigger', 'table') AND sql IS NOT NULL").fetchall():
        if kind == "trigger":
            conn.execute(f"DROP TRIGGER {name}")
    for table in ("search_terms_scratch_vocab", "search_terms_scratch", "search_terms"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DELETE FROM schema_migrations WHERE version = 22")
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
