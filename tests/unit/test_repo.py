"""Repository functions on a real SQLite file: idempotent ingest, dedup, atomic outcomes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kenning.records import ObservationDraft, Outcome, SummaryDraft
from kenning.store import repo
from kenning.store.db import open_db
from kenning.store.repo import transaction


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    return open_db(str(tmp_path / "e.db"))


def new_session(conn: sqlite3.Connection, agent_id: str = "agent-1", project: str = "shop") -> int:
    return repo.upsert_session(conn, platform="claude-code", agent_session_id=agent_id, project=project,
                               project_root=f"/src/{project}", cwd=f"/src/{project}", at=100.0)


def add_event(conn: sqlite3.Connection, session_id: int, key: str, payload: str = '{"n": 1}') -> bool:
    return repo.insert_event(conn, session_id=session_id, event_key=key, kind="tool", tool_name="Bash",
                             prompt_number=1, agent_id=None, agent_type=None, occurred_at=101.0, payload=payload)


def draft(title: str = "Invoice rounding fixed", created_at: float = 102.0) -> ObservationDraft:
    return ObservationDraft(type="bugfix", title=title, created_at=created_at, narrative="use Decimal.quantize",
                            facts=["totals were off by a cent"], files_modified=["billing/invoice.py"])


def count(conn: sqlite3.Connection, table: str, where: str = "1") -> int:
    return int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0])


# ------------------------------------------------------------------------------ sessions


def test_upsert_session_returns_the_same_id_for_the_same_agent_session(conn: sqlite3.Connection) -> None:
    a = new_session(conn, "agent-1")
    assert new_session(conn, "agent-1") == a
    b = new_session(conn, "agent-2")
    assert b != a
    assert count(conn, "sessions") == 2


# -------------------------------------------------------------------------------- events


def test_insert_event_is_idempotent_per_session_and_key(conn: sqlite3.Connection) -> None:
    s1 = new_session(conn, "agent-1")
    s2 = new_session(conn, "agent-2")
    assert add_event(conn, s1, "tool_use:toolu_1", '{"first": true}') is True
    assert add_event(conn, s1, "tool_use:toolu_1", '{"second": true}') is False  # replayed spool file
    assert add_event(conn, s2, "tool_use:toolu_1") is True  # same key, other session
    assert add_event(conn, s1, "tool_use:toolu_2") is True
    assert count(conn, "events", f"session_id = {s1}") == 2
    assert conn.execute("SELECT payload FROM events WHERE session_id = ? AND event_key = 'tool_use:toolu_1'",
                        (s1,)).fetchone()[0] == '{"first": true}'
    assert repo.event_exists(conn, s1, "tool_use:toolu_1")
    assert not repo.event_exists(conn, s1, "tool_use:toolu_3")


def test_pending_events_come_back_in_order_with_payload(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    repo.insert_event(conn, session_id=s, event_key="b", kind="tool", tool_name="Read", prompt_number=1,
                      agent_id=None, agent_type=None, occurred_at=5.0, payload='{"x": 2}')
    repo.insert_event(conn, session_id=s, event_key="a", kind="prompt", tool_name=None, prompt_number=1,
                      agent_id=None, agent_type=None, occurred_at=3.0, payload='{"x": 1}')
    repo.insert_event(conn, session_id=s, event_key="c", kind="tool", tool_name="Bash", prompt_number=1,
                      agent_id=None, agent_type=None, occurred_at=4.0, payload="{}", status="skipped")
    events = repo.pending_events(conn, s)
    assert [e.payload for e in events] == [{"x": 1}, {"x": 2}]
    assert [e.kind for e in events] == ["prompt", "tool"]
    assert repo.pending_count(conn) == 2
    assert repo.sessions_with_pending(conn) == [s]


# -------------------------------------------------------------------------- observations


def test_same_observation_twice_is_stored_once(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    first = repo.insert_observation(conn, s, "shop", draft(), "rules")
    assert isinstance(first, int)
    assert repo.insert_observation(conn, s, "shop", draft(), "rules") is None
    # Same content observed later is still the same memory.
    assert repo.insert_observation(conn, s, "shop", draft(created_at=999.0), "rules") is None
    assert count(conn, "observations") == 1
    stored = repo.get_observation(conn, first)
    assert stored is not None
    assert stored["title"] == "Invoice rounding fixed"
    assert stored["facts"] == ["totals were off by a cent"]
    assert stored["files_modified"] == ["billing/invoice.py"]
    assert stored["agent_session_id"] == "agent-1"


def test_observation_dedup_is_per_session_and_per_content(conn: sqlite3.Connection) -> None:
    s1 = new_session(conn, "agent-1")
    s2 = new_session(conn, "agent-2")
    a = repo.insert_observation(conn, s1, "shop", draft(), "rules")
    b = repo.insert_observation(conn, s2, "shop", draft(), "rules")  # other session: kept
    c = repo.insert_observation(conn, s1, "shop", draft("Invoice rounding reverted"), "rules")
    assert None not in (a, b, c)
    assert len({a, b, c}) == 3
    assert count(conn, "observations") == 3


def test_store_outcome_returns_only_new_observation_ids(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    with transaction(conn):
        ids1 = repo.store_outcome(conn, s, "shop", Outcome(observations=[draft(), draft("Second")]), "rules")
    with transaction(conn):
        ids2 = repo.store_outcome(conn, s, "shop", Outcome(observations=[draft(), draft("Third")]), "rules")
    assert len(ids1) == 2
    assert len(ids2) == 1 and ids2[0] not in ids1
    assert count(conn, "observations") == 3


# ----------------------------------------------------------------------------- summaries


def test_upsert_summary_replaces_the_session_summary(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    other = new_session(conn, "agent-2")
    repo.upsert_summary(conn, s, "shop", SummaryDraft(created_at=1.0, request="fix rounding", learned="floats",
                                                      tokens_spent=10, files_read=["a.py"]), "rules", 1.0)
    repo.upsert_summary(conn, other, "shop", SummaryDraft(created_at=1.0, request="other work"), "rules", 1.0)
    repo.upsert_summary(conn, s, "shop", SummaryDraft(created_at=2.0, request="fix rounding and tax",
                                                      learned="decimals", tokens_spent=5, files_read=["b.py"]),
                        "anthropic", 2.0)
    assert count(conn, "session_summaries") == 2
    row = conn.execute("SELECT * FROM session_summaries WHERE session_id = ?", (s,)).fetchone()
    assert row["request"] == "fix rounding and tax"
    assert row["learned"] == "decimals"
    assert json.loads(row["files_read"]) == ["b.py"]
    assert row["observer"] == "anthropic"
    assert row["created_at"] == 2.0
    assert row["tokens_spent"] == 15  # what the observer spent accumulates across rewrites
    # The search index follows the replacement.
    assert conn.execute("SELECT COUNT(*) FROM session_summaries_fts WHERE session_summaries_fts MATCH 'floats'"
                        ).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM session_summaries_fts WHERE session_summaries_fts MATCH 'decimals'"
                        ).fetchone()[0] == 1
    assert repo.session_info(conn, s).prior_summary["request"] == "fix rounding and tax"  # type: ignore[index]


# ---------------------------------------------------------------- store_outcome atomicity


def pending_session(conn: sqlite3.Connection) -> tuple[int, list[int]]:
    s = new_session(conn)
    for key in ("e1", "e2", "e3"):
        add_event(conn, s, key)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM events WHERE session_id = ? ORDER BY id", (s,))]
    return s, ids


def full_outcome(event_ids: list[int]) -> Outcome:
    return Outcome(observations=[draft()], summary=SummaryDraft(created_at=3.0, request="fix rounding"),
                   done=event_ids[:2], tokens_in=120, tokens_out=30, model="m")


def test_store_outcome_commits_rows_and_marks_events(conn: sqlite3.Connection) -> None:
    s, ev = pending_session(conn)
    with transaction(conn):
        ids = repo.store_outcome(conn, s, "shop", full_outcome(ev), "anthropic", skipped=[ev[2]])
    assert len(ids) == 1
    assert count(conn, "observations") == 1
    assert count(conn, "session_summaries") == 1
    statuses = dict(conn.execute("SELECT id, status FROM events").fetchall())
    assert statuses == {ev[0]: "done", ev[1]: "done", ev[2]: "skipped"}
    assert count(conn, "events", "processed_at IS NULL") == 0
    assert repo.pending_count(conn) == 0
    usage = conn.execute("SELECT provider, model, calls, tokens_in, tokens_out FROM observer_usage").fetchall()
    assert [tuple(r) for r in usage] == [("anthropic", "m", 1, 120, 30)]


def test_store_outcome_leaves_events_pending_when_only_some_are_done(conn: sqlite3.Connection) -> None:
    s, ev = pending_session(conn)
    with transaction(conn):
        repo.store_outcome(conn, s, "shop", Outcome(done=[ev[0]]), "rules")
    assert [e.id for e in repo.pending_events(conn, s)] == ev[1:]


def test_store_outcome_is_all_or_nothing_when_the_transaction_fails(conn: sqlite3.Connection) -> None:
    s, ev = pending_session(conn)
    with pytest.raises(RuntimeError, match="crash after store"), transaction(conn):
        repo.store_outcome(conn, s, "shop", full_outcome(ev), "anthropic", skipped=[ev[2]])
        assert count(conn, "observations") == 1  # written inside the transaction...
        raise RuntimeError("crash after store")
    assert not conn.in_transaction
    assert count(conn, "observations") == 0  # ...and rolled back with it
    assert count(conn, "session_summaries") == 0
    assert count(conn, "observer_usage") == 0
    assert count(conn, "events", "status = 'pending' AND processed_at IS NULL") == 3
    assert conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'rounding'"
                        ).fetchone()[0] == 0
    # Retrying the same outcome afterwards stores it exactly once.
    with transaction(conn):
        assert len(repo.store_outcome(conn, s, "shop", full_outcome(ev), "anthropic")) == 1
    assert count(conn, "observations") == 1
    assert repo.pending_count(conn) == 1


def test_transaction_rolls_back_for_another_connection_too(tmp_path: Path) -> None:
    path = str(tmp_path / "e.db")
    writer = open_db(path)
    reader = open_db(path)
    s, ev = pending_session(writer)
    with pytest.raises(KeyboardInterrupt), transaction(writer):
        repo.store_outcome(writer, s, "shop", full_outcome(ev), "rules")
        raise KeyboardInterrupt  # BaseException: rolled back as well
    assert count(reader, "observations") == 0
    assert count(reader, "events", "status = 'pending'") == 3


# ------------------------------------------------------------------------------- prompts


def test_next_prompt_number_counts_per_session(conn: sqlite3.Connection) -> None:
    s1 = new_session(conn, "agent-1")
    s2 = new_session(conn, "agent-2")
    assert repo.current_prompt_number(conn, s1) == 0
    assert [repo.next_prompt_number(conn, s1) for _ in range(3)] == [1, 2, 3]
    assert repo.next_prompt_number(conn, s2) == 1
    assert repo.current_prompt_number(conn, s1) == 3
    assert repo.current_prompt_number(conn, 9999) == 0


def test_next_prompt_number_reopens_an_ended_session(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    repo.next_prompt_number(conn, s)
    repo.end_session(conn, s, 200.0, "clear")
    assert conn.execute("SELECT status FROM sessions WHERE id = ?", (s,)).fetchone()[0] == "completed"
    assert repo.next_prompt_number(conn, s) == 2
    row = conn.execute("SELECT status, ended_at FROM sessions WHERE id = ?", (s,)).fetchone()
    assert (row["status"], row["ended_at"]) == ("active", None)


def test_add_prompt_keeps_the_first_text_for_a_number(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    repo.add_prompt(conn, s, 1, "fix the rounding", 1.0)
    repo.add_prompt(conn, s, 1, "replayed", 2.0)
    assert [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts")] == ["fix the rounding"]


def test_prompt_is_private_only_for_a_stored_empty_prompt(conn: sqlite3.Connection) -> None:
    s = new_session(conn)
    repo.add_prompt(conn, s, 1, "fix the rounding", 1.0)
    repo.add_prompt(conn, s, 2, "", 2.0)  # the whole prompt was inside <private>
    assert repo.prompt_is_private(conn, s, 1) is False
    assert repo.prompt_is_private(conn, s, 2) is True
    assert repo.prompt_is_private(conn, s, 3) is False  # never seen
    assert repo.prompt_is_private(conn, s, 0) is False  # events before any prompt
    assert repo.prompt_is_private(conn, new_session(conn, "agent-2"), 2) is False


def test_old_processed_event_rows_are_pruned_but_pending_and_recent_ones_stay(conn: sqlite3.Connection) -> None:
    sid = new_session(conn)
    with transaction(conn):
        for key in ("old-done", "old-pending", "recent-done", "old-with-payload"):
            add_event(conn, sid, key)
        conn.execute("UPDATE events SET status = 'done', processed_at = 100, payload = NULL "
                     "WHERE event_key IN ('old-done')")
        conn.execute("UPDATE events SET status = 'done', processed_at = 5000, payload = NULL "
                     "WHERE event_key = 'recent-done'")
        conn.execute("UPDATE events SET status = 'done', processed_at = 100 WHERE event_key = 'old-with-payload'")
        assert repo.prune_events(conn, older_than=1000) == 1
    left = {r[0] for r in conn.execute("SELECT event_key FROM events")}
    assert left == {"old-pending", "recent-done", "old-with-payload"}  # a payload goes first (prune_payloads)
