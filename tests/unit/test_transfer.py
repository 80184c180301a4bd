"""JSONL export and import on real SQLite files: round trip, idempotence, filters, the sensitive type, bad lines."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from kenning.records import ObservationDraft, SummaryDraft
from kenning.store import repo, transfer
from kenning.store.db import open_db
from kenning.store.repo import transaction

T0 = time.mktime((2024, 3, 4, 9, 0, 0, 0, 0, -1))
DAY = 86_400.0


def build(conn: sqlite3.Connection) -> None:
    """Two projects; shop has a sensitive observation, a superseded one and a summary."""
    with transaction(conn):
        for agent, project, at in (("a1", "shop", T0), ("a2", "shop", T0 + DAY), ("b1", "blog", T0 + 2 * DAY)):
            sid = repo.upsert_session(conn, platform="claude-code", agent_session_id=agent, project=project,
                                      project_root=f"/src/{project}", cwd=f"/src/{project}", at=at)
            n = repo.next_prompt_number(conn, sid)
            repo.add_prompt(conn, sid, n, f"prompt of {agent} — ünïcode ✓", at)
            repo.insert_observation(conn, sid, project, ObservationDraft(
                type="feature", title=f"Feature of {agent}", created_at=at + 1, prompt_number=n,
                facts=["one", "two"], concepts=["pattern"], files_modified=["a.py"], files_read=["b.py"],
                narrative="did it", tokens_spent=3, source_tokens=400, agent_id="sub-1", agent_type="Explore"), "rules")
            repo.upsert_summary(conn, sid, project, SummaryDraft(created_at=at + 2, request=f"req {agent}",
                                                                 learned="x", files_read=["b.py"]), "rules", at + 2)
            repo.end_session(conn, sid, at + 3, "exit")
        shop = conn.execute("SELECT id FROM sessions WHERE agent_session_id = 'a1'").fetchone()[0]
        repo.insert_observation(conn, shop, "shop", ObservationDraft(
            type="sensitive", title="Client Acme's VPN layout", created_at=T0 + 5), "rules")
        old = repo.insert_observation(conn, shop, "shop", ObservationDraft(
            type="decision", title="Use pip", created_at=T0 + 6), "rules")
        repo.insert_observation(conn, shop, "shop", ObservationDraft(  # what the observer judged it to be, and why
            type="decision", title="Answer me in French in every project", created_at=T0 + 7, kind="rule",
            scope="user", tentative=True, why={"said": "In every project, answer me in French.", "by": "user",
                                               "origin": "typed", "where": "prompt 1", "how": "judged rule",
                                               "sure": 0.93}), "rules")
        conn.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (old,))


@pytest.fixture
def src(tmp_path: Path) -> sqlite3.Connection:
    conn = open_db(str(tmp_path / "src.db"))
    build(conn)
    return conn


@pytest.fixture
def dst(tmp_path: Path) -> sqlite3.Connection:
    return open_db(str(tmp_path / "dst.db"))


def export_text(conn: sqlite3.Connection, **kw: Any) -> str:
    return "".join(transfer.export_lines(transfer.export(conn, **kw)))


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def import_text(conn: sqlite3.Connection, text: str) -> dict[str, int]:
    return transfer.import_records(conn, transfer.read_jsonl(text.splitlines(keepends=True)))


def table(conn: sqlite3.Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.execute(sql)]


OBS = ("SELECT s.agent_session_id, o.project, o.type, o.title, o.subtitle, o.facts, o.narrative, o.concepts, "
       "o.files_read, o.files_modified, o.prompt_number, o.tokens_spent, o.source_tokens, o.created_at, "
       "o.content_hash, o.agent_id, o.agent_type, o.observer, o.status, o.kind, o.scope, o.tentative, o.why, o.layer "
       "FROM observations o JOIN sessions s ON s.id = o.session_id ORDER BY o.created_at, o.title")
SESSIONS = ("SELECT platform, agent_session_id, project, project_root, cwd, started_at, ended_at, end_reason, status, "
            "prompt_count FROM sessions ORDER BY agent_session_id")
PROMPTS = ("SELECT s.agent_session_id, u.prompt_number, u.prompt_text, u.created_at FROM user_prompts u "
           "JOIN sessions s ON s.id = u.session_id ORDER BY 1, 2")
SUMMARIES = ("SELECT s.agent_session_id, m.project, m.request, m.learned, m.files_read, m.created_at, m.observer "
             "FROM session_summaries m JOIN sessions s ON s.id = m.session_id ORDER BY 1")


# ---------------------------------------------------------------------------------- export

def test_export_starts_with_a_header_and_groups_records_under_their_session(src: sqlite3.Connection) -> None:
    recs = records(export_text(src))
    assert recs[0]["kind"] == "header" and recs[0]["format"] == transfer.FORMAT_VERSION
    seen: set[str] = set()
    for r in recs[1:]:
        if r["kind"] == "session":
            seen.add(r["agent_session_id"])
        else:
            assert r["session"]["agent_session_id"] in seen  # a session always precedes its records
    assert [r["kind"] for r in recs].count("session") == 3


def test_sensitive_observations_are_left_out_unless_asked_for(src: sqlite3.Connection) -> None:
    plain = export_text(src)
    assert "Acme" not in plain and '"sensitive"' not in plain
    full = export_text(src, include_sensitive=True)
    assert [r["title"] for r in records(full) if r.get("type") == "sensitive"] == ["Client Acme's VPN layout"]


def test_export_filters_by_project_and_by_each_records_own_time(src: sqlite3.Connection) -> None:
    blog = records(export_text(src, project="blog"))
    assert {r.get("project") for r in blog if r["kind"] == "session"} == {"blog"}
    assert len(blog) == 5  # header, session, prompt, observation, summary
    day2 = records(export_text(src, since=T0 + DAY, until=T0 + 2 * DAY))
    assert [r["agent_session_id"] for r in day2 if r["kind"] == "session"] == ["a2"]
    only_obs = records(export_text(src, since=T0 + 4, until=T0 + 7, include_sensitive=True))
    assert sorted(r["title"] for r in only_obs if r["kind"] == "observation") == ["Client Acme's VPN layout",
                                                                                  "Use pip"]
    assert [r["kind"] for r in only_obs].count("prompt") == 0  # prompt of a1 is at T0, outside


def test_export_of_an_empty_database_is_just_a_header(dst: sqlite3.Connection) -> None:
    assert [r["kind"] for r in records(export_text(dst))] == ["header"]


# ---------------------------------------------------------------------------------- import

def test_round_trip_reproduces_every_field(src: sqlite3.Connection, dst: sqlite3.Connection) -> None:
    added = import_text(dst, export_text(src, include_sensitive=True))
    assert added == {"sessions": 3, "prompts": 3, "observations": 6, "summaries": 3, "skipped": 0}
    for sql in (SESSIONS, PROMPTS, OBS, SUMMARIES):
        assert table(dst, sql) == table(src, sql), sql
    # FTS was filled by the triggers: imported memory is searchable.
    assert dst.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH '\"feature\"'"
                       ).fetchone()[0] == 3


def test_importing_twice_adds_nothing(src: sqlite3.Connection, dst: sqlite3.Connection) -> None:
    text = export_text(src)
    import_text(dst, text)
    before = [table(dst, sql) for sql in (SESSIONS, PROMPTS, OBS, SUMMARIES)]
    again = import_text(dst, text)
    assert again["sessions"] == again["prompts"] == again["observations"] == again["summaries"] == 0
    assert again["skipped"] == 3 + 3 + 5 + 3
    assert [table(dst, sql) for sql in (SESSIONS, PROMPTS, OBS, SUMMARIES)] == before


def test_importing_an_export_into_its_own_database_adds_nothing(src: sqlite3.Connection) -> None:
    added = import_text(src, export_text(src, include_sensitive=True))
    assert added["observations"] == added["sessions"] == added["prompts"] == added["summaries"] == 0


def test_imported_prompts_raise_the_sessions_prompt_count(src: sqlite3.Connection, dst: sqlite3.Connection) -> None:
    text = export_text(src).replace('"prompt_count": 1', '"prompt_count": 0')
    import_text(dst, text)
    sid = dst.execute("SELECT id FROM sessions WHERE agent_session_id = 'a1'").fetchone()[0]
    assert repo.next_prompt_number(dst, sid) == 2  # a captured prompt never collides with an imported one


def test_blank_lines_are_ignored(src: sqlite3.Connection, dst: sqlite3.Connection) -> None:
    text = "\n\n".join(export_text(src).splitlines()) + "\n\n"
    assert import_text(dst, text)["observations"] == 5


# ------------------------------------------------------------------------------- bad input

def lines_of(src: sqlite3.Connection) -> list[str]:
    return export_text(src).splitlines()


BAD_LINES = [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"kind": "gossip"}', "unknown kind"),
    ('{"kind": "header", "format": 99}', "unsupported export format"),
    ('{"kind": "session", "agent_session_id": "", "project": "x", "started_at": 1}', "agent_session_id"),
    ('{"kind": "session", "agent_session_id": "z", "project": 5, "started_at": 1}', "project must be a string"),
    ('{"kind": "session", "agent_session_id": "z", "project": "p", "started_at": "yesterday"}', "started_at"),
    ('{"kind": "session", "agent_session_id": "z", "project": "p", "started_at": 1, "status": "x"}', "status"),
    ('{"kind": "prompt", "session": {"agent_session_id": "nope"}, "prompt_number": 1, "prompt_text": "x", '
     '"created_at": 1}', "neither in the database nor earlier"),
    ('{"kind": "prompt", "session": {"agent_session_id": "a1"}, "prompt_number": "1", "prompt_text": "x", '
     '"created_at": 1}', "prompt_number must be an integer"),
    ('{"kind": "prompt", "session": "a1", "prompt_number": 1, "prompt_text": "x", "created_at": 1}', "session key"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "bugfix", "title": "", '
     '"created_at": 1}', "title must not be empty"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "bugfix", "title": "t", '
     '"created_at": 1, "facts": [1, {"a": 2}]}', "facts must be a list of strings"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "bugfix", "title": "t", '
     '"created_at": 1, "prompt_number": {"x": 1}}', "prompt_number"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "bugfix", "title": "t", '
     '"created_at": NaN}', "created_at"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "bugfix", "title": "\\ud800", '
     '"created_at": 1}', "line 4"),  # a lone surrogate: valid JSON, not storable
    ('{"kind": "summary", "session": {"agent_session_id": "a1"}, "created_at": 1, "learned": ["x"]}',
     "learned must be a string"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "decision", "title": "t", '
     '"created_at": 1, "role": "commandment"}', "role must be one of"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "decision", "title": "t", '
     '"created_at": 1, "scope": "everyone"}', "scope must be project or user"),
    ('{"kind": "observation", "session": {"agent_session_id": "a1"}, "type": "decision", "title": "t", '
     '"created_at": 1, "why": ["said"]}', "why must be an object"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_LINES, ids=[m for _b, m in BAD_LINES])
def test_a_bad_line_in_the_middle_imports_nothing_and_is_named(src: sqlite3.Connection, dst: sqlite3.Connection,
                                                               bad: str, message: str) -> None:
    good = lines_of(src)
    text = "\n".join([*good[:3], bad, *good[3:]])  # header, session a1, its prompt, then the bad line (line 4)
    with pytest.raises(transfer.BadRecord) as e:
        import_text(dst, text)
    assert str(e.value).startswith("line 4: "), str(e.value)
    assert message in str(e.value), str(e.value)
    for t in ("sessions", "user_prompts", "observations", "session_summaries"):
        assert dst.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0, t


def test_invalid_utf8_is_named_by_its_line(dst: sqlite3.Connection) -> None:
    with pytest.raises(transfer.BadRecord, match="line 2: not UTF-8"):
        transfer.import_records(dst, transfer.read_jsonl([b'{"kind": "header", "format": 1}\n', b'{"a": "\xff"}\n']))


def test_line_numbers_count_blank_lines(dst: sqlite3.Connection) -> None:
    with pytest.raises(transfer.BadRecord, match=r"^line 3: "):
        import_text(dst, '{"kind": "header", "format": 1}\n\n{"kind": "?"}\n')
