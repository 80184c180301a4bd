"""Only a memory resting on the user's words replaces a standing rule, however it is named (a real
SQLite file through the store's one door for an observer's outcome)."""

from __future__ import annotations

import time
from pathlib import Path

from kenning.memory.judged import said_by_user
from kenning.records import ObservationDraft, Outcome
from kenning.store import repo
from kenning.store.db import open_db

RULE_TEXT = "Always run the database migrations with alembic, never by hand"


def draft(title: str, by: str, at: float, supersedes: list[int] | None = None) -> ObservationDraft:
    return ObservationDraft(type="decision", title=title, narrative=title, facts=[title], created_at=at,
                            kind="rule" if by == "user" else "decision", supersedes=supersedes or [],
                            why={"said": title, "by": by, "origin": "typed" if by == "user" else "final"})


def store(conn: object, sid: int, d: ObservationDraft) -> int:
    with repo.transaction(conn):  # type: ignore[arg-type]
        return repo.store_outcome(conn, sid, "proj", Outcome(observations=[d]), "rules")[0]  # type: ignore[arg-type]


def test_an_observer_naming_the_users_rule_replaces_it_only_with_the_users_words(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "kenning.db"))
    now = time.time()
    sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="s1", project="proj", project_root="",
                              cwd="", at=now - 100)
    rule = store(conn, sid, draft(RULE_TEXT, "user", now - 90))
    assert conn.execute("SELECT layer FROM observations WHERE id = ?", (rule,)).fetchone()[0] == "rule"
    for by in ("agent", "plan", "commands"):
        store(conn, sid, draft(f"Run the migrations by hand from now on ({by})", by, now - 50, [rule]))
        assert conn.execute("SELECT status FROM observations WHERE id = ?", (rule,)).fetchone()[0] == "active", by
    fixed = store(conn, sid, draft("Run the migrations with `make migrate` from now on", "user", now - 10, [rule]))
    row = conn.execute("SELECT status, superseded_by FROM observations WHERE id = ?", (rule,)).fetchone()
    assert tuple(row) == ("superseded", fixed)
    conn.close()


def test_whose_words_a_memory_rests_on() -> None:
    assert said_by_user("rule", '{"said": "x", "by": "user"}')
    assert not said_by_user("decision", '{"said": "x", "by": "agent"}')
    assert not said_by_user("", '{"by": "agent", "origin": "mcp"}')  # a save through the MCP tool
    assert not said_by_user("proposed", '{"by": "agent"}')
    assert said_by_user(None, "")  # a memory from before roles were judged
