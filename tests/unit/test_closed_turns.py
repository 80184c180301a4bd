"""Which sessions the pipeline hands the rules observer, decided in SQL: exactly those where it
would act, so an open turn's events are never decoded only to be left pending again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.observer.providers.rules import RulesObserver
from kenning.paths import Paths
from kenning.store import repo
from kenning.store.db import open_db
from kenning.worker.pipeline import Pipeline

KINDS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd")
IDLE = 600.0
NOW = 10_000.0

# One session: (kind, seconds before NOW, whether it is already done), and whether it has ended.
event = st.tuples(st.sampled_from(KINDS), st.sampled_from([5.0, 5.0, 30.0, 700.0, 2000.0]), st.booleans())
session = st.tuples(st.lists(event, min_size=0, max_size=7), st.booleans())


def fill(conn: sqlite3.Connection, sessions: list[tuple[list[tuple[str, float, bool]], bool]]) -> None:
    for n, (events, ended) in enumerate(sessions):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id=f"s{n}", project="p",
                                  project_root="/p", cwd="/p", at=0.0)
        for i, (kind, ago, done) in enumerate(events):
            payload = '{"prompt": "fix the parser"}' if kind == "UserPromptSubmit" else "{}"
            repo.insert_event(conn, session_id=sid, event_key=f"k{i}", kind=kind, tool_name=None, prompt_number=1,
                              agent_id=None, agent_type=None, occurred_at=NOW - ago, payload=payload,
                              status="done" if done else "pending")
        if ended:
            repo.end_session(conn, sid, NOW - 1, "other")
    conn.commit()


def acts_on(conn: sqlite3.Connection, observer: RulesObserver) -> set[int]:
    out = set()
    for sid in repo.sessions_with_pending(conn):
        outcome = observer.observe(repo.session_info(conn, sid), repo.pending_events(conn, sid), now=NOW)
        if outcome.done or outcome.observations or outcome.summary is not None:
            out.add(sid)
    return out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    return open_db(str(tmp_path_factory.mktemp("turns") / "k.db"))


@settings(max_examples=300, deadline=None)
@given(st.lists(session, min_size=1, max_size=4))
def test_sql_picks_exactly_the_sessions_the_rules_observer_acts_on(
        scratch: sqlite3.Connection, sessions: list[tuple[list[tuple[str, float, bool]], bool]]) -> None:
    scratch.execute("DELETE FROM events")
    scratch.execute("DELETE FROM sessions")
    fill(scratch, sessions)
    observer = RulesObserver(turn_idle_seconds=IDLE)
    assert set(repo.sessions_with_closed_turns(scratch, NOW - IDLE)) == acts_on(scratch, observer)


def test_an_open_turn_is_not_decoded_every_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    # A long turn still running: its prompt, then 500 tool calls, no Stop yet.
    fill(conn, [([("UserPromptSubmit", 60.0, False)] + [("PostToolUse", 30.0, False)] * 500, False)])
    pipeline = Pipeline(Paths(str(tmp_path)), conn, RulesObserver(turn_idle_seconds=IDLE))
    decoded: list[int] = []
    real = repo.pending_events

    def counting(c: sqlite3.Connection, sid: int, limit: int = 2000) -> list[object]:
        decoded.append(sid)
        return real(c, sid, limit)  # type: ignore[return-value]

    monkeypatch.setattr(repo, "pending_events", counting)
    assert pipeline.observe(now=NOW) == 0
    assert decoded == []
    # Its Stop arrives: now the turn is read, observed and done.
    sid = repo.sessions_with_pending(conn)[0]
    repo.insert_event(conn, session_id=sid, event_key="stop", kind="Stop", tool_name=None, prompt_number=1,
                      agent_id=None, agent_type=None, occurred_at=NOW - 1, payload="{}")
    conn.commit()
    pipeline.observe(now=NOW)
    assert decoded == [sid]
    assert repo.pending_count(conn) == 0
