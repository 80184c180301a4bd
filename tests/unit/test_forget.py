"""Forgetting on a real SQLite file: selection (the dry run), deletion of everything derived, reclaim.

The database is built with the repository functions the worker uses: sessions, prompts,
events with payloads, observations and summaries (FTS kept by the migration's triggers).
"""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pytest

from kenning.records import ObservationDraft, SummaryDraft
from kenning.store import forget as fg
from kenning.store import repo
from kenning.store.db import open_db
from kenning.store.repo import transaction
from tests.support.erasure import assert_erased, assert_present

T0 = time.mktime((2024, 3, 4, 9, 0, 0, 0, 0, -1))  # local time, like the dates users type
DAY = 86_400.0


class Mem:
    """A small memory: two projects, a few turns, each with events, observations, a summary."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.conn = open_db(path)
        self.sessions: dict[str, int] = {}

    def turn(self, session: str, project: str, at: float, prompt: str, obs: list[tuple[str, str, str]],
             tool_output: str = "ok") -> list[int]:
        c = self.conn
        with transaction(c):
            if session not in self.sessions:
                self.sessions[session] = repo.upsert_session(
                    c, platform="claude-code", agent_session_id=session, project=project,
                    project_root=f"/src/{project}", cwd=f"/src/{project}", at=at)
            sid = self.sessions[session]
            n = repo.next_prompt_number(c, sid)
            repo.add_prompt(c, sid, n, prompt, at)
            for kind, payload in (("UserPromptSubmit", f'{{"prompt": "{prompt}"}}'),
                                  ("PostToolUse", f'{{"tool_response": "{tool_output}"}}')):
                repo.insert_event(c, session_id=sid, event_key=f"{session}:{n}:{kind}", kind=kind, tool_name=None,
                                  prompt_number=n, agent_id=None, agent_type=None, occurred_at=at, payload=payload,
                                  status="done")
            ids = []
            for typ, title, narrative in obs:
                d = ObservationDraft(type=typ, title=title, narrative=narrative, created_at=at, prompt_number=n,
                                     facts=[f"fact about {title}"])
                oid = repo.insert_observation(c, sid, project, d, "rules")
                assert oid
                ids.append(oid)
            repo.upsert_summary(c, sid, project, SummaryDraft(created_at=at, request=prompt, learned=narrative_of(obs),
                                                              prompt_number=n), "rules", at)
        return ids

    def count(self, table: str, where: str = "1", params: tuple[object, ...] = ()) -> int:
        return int(self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", params).fetchone()[0])

    def fts_hits(self, word: str) -> int:
        q = f'"{word}"'
        return sum(self.count(f"{t}_fts", f"{t}_fts MATCH ?", (q,))
                   for t in ("observations", "session_summaries", "user_prompts"))


def narrative_of(obs: list[tuple[str, str, str]]) -> str:
    return "; ".join(o[2] for o in obs)


@pytest.fixture
def mem(tmp_path: Path) -> Mem:
    m = Mem(str(tmp_path / "kenning.db"))
    m.turn("s1", "shop", T0, "fix the rounding in invoices", [("bugfix", "Invoice rounding fixed", "use Decimal")])
    m.turn("s1", "shop", T0 + 60, "we use uv not pip", [("decision", "We use uv, not pip", "stated by the user")])
    m.turn("s2", "shop", T0 + DAY, "add zebracorn export", [("feature", "Zebracorn CSV export", "new zebracorn file")],
           tool_output="wrote zebracorn.csv")
    m.turn("s3", "blog", T0 + 2 * DAY, "write the zebracorn post",
           [("change", "Blog post drafted", "about the zebracorn launch")])
    return m


def titles(sel: fg.Selection) -> list[str]:
    return [i.title for i in sel.observations]


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("filters", [
    fg.Filters(),
    fg.Filters(ids=(0,)),
    fg.Filters(ids=(-3,)),
    fg.Filters(ids=(2**64,)),
    fg.Filters(ids=(True,)),  # type: ignore[arg-type]
    fg.Filters(query="* -- ( )"),
    fg.Filters(query="x" * 1001),
    fg.Filters(since=T0 + 10, until=T0),
    fg.Filters(ids=tuple(range(1, fg.MAX_IDS + 2))),
])
def test_bad_requests_are_refused_with_a_message(mem: Mem, filters: fg.Filters) -> None:
    with pytest.raises(ValueError) as e:
        fg.select(mem.conn, filters)
    assert str(e.value)


@pytest.mark.parametrize(("text", "end", "expected"), [
    ("2024-03-04", False, datetime(2024, 3, 4)),
    ("2024-03-04", True, datetime(2024, 3, 5)),  # --until a date includes that whole day
    ("2024-03-04T09:15", False, datetime(2024, 3, 4, 9, 15)),
    ("2024-03-04 09:15:30", True, datetime(2024, 3, 4, 9, 15, 30)),
])
def test_dates_are_iso_in_local_time(text: str, end: bool, expected: datetime) -> None:
    assert fg.parse_date(text, end=end) == expected.timestamp()


def test_a_date_with_an_offset_keeps_it() -> None:
    assert fg.parse_date("2024-03-04T00:00:00+00:00") == 1709510400.0
    assert fg.parse_date("2024-03-04T00:00:00Z") == 1709510400.0


@pytest.mark.parametrize("text", ["yesterday", "2024-13-01", "2024-02-30", "04/03/2024", "", "2024-03-04T25:00",
                                  "0000-01-01", "9999-99-99", "2024-03-04' OR 1=1 --"])
def test_invalid_dates_raise_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="not an ISO date"):
        fg.parse_date(text)


# ------------------------------------------------------------------------------ selection

def test_select_by_id_lists_the_observation_and_reports_missing_ids(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(ids=(2, 999, 2)))
    assert [(i.id, i.type, i.title) for i in sel.observations] == [(2, "decision", "We use uv, not pip")]
    assert sel.missing_ids == [999]
    assert not sel.summaries and not sel.sessions
    # The raw payloads of the same turn go with it (and only those), and the prompt it was made in.
    assert len(sel.event_ids) == 2
    assert [i.title for i in sel.prompts] == ["we use uv not pip"]
    # The session's summary (as this fixture writes it: the last prompt, the last narrative) holds
    # nothing but this memory's text: it goes (None) rather than stay as an empty shell.
    assert sel.summary_rewrites == {1: None}


def test_only_missing_ids_select_nothing(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(ids=(4242,)))
    assert sel.empty and sel.missing_ids == [4242]


def test_select_by_query_finds_observations_summaries_prompts_and_raw_payloads(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(query="zebracorn"))
    assert titles(sel) == ["Zebracorn CSV export", "Blog post drafted"]  # the second by its narrative
    assert [i.title for i in sel.prompts] == ["add zebracorn export", "write the zebracorn post"]
    assert len(sel.summaries) == 2
    assert len(sel.event_ids) == 4


def test_query_words_are_anded_and_stemmed(mem: Mem) -> None:
    assert titles(fg.select(mem.conn, fg.Filters(query="zebracorn blog"))) == ["Blog post drafted"]
    assert titles(fg.select(mem.conn, fg.Filters(query="rounding FIXES"))) == ["Invoice rounding fixed"]


@pytest.mark.parametrize("query", ['"a" OR 1=1 --', "NEAR(", "zebracorn*", '"unbalanced', "a' OR '1'='1",
                                   "title:zebracorn", "-zebracorn", "zebracorn NOT blog", "^zebracorn",
                                   "'; DROP TABLE observations; --", "\x00zebracorn"])
def test_search_syntax_in_a_query_is_only_words(mem: Mem, query: str) -> None:
    try:
        sel = fg.select(mem.conn, fg.Filters(query=query))
    except ValueError as e:
        assert "no words" in str(e)
        return
    # Never more than plain words would match; never an SQL or FTS5 error; never everything.
    assert len(sel.observations) < mem.count("observations")
    assert mem.count("observations") == 4 and mem.count("sessions") == 3


def test_short_words_do_not_scan_every_raw_payload(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(query='"a" OR 1=1 --'))
    assert sel.event_ids == []


def test_select_by_project_takes_whole_sessions_and_lists_their_content(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(project="shop"))
    assert [i.title for i in sel.sessions] == ["s1", "s2"]
    assert titles(sel) == ["Invoice rounding fixed", "We use uv, not pip", "Zebracorn CSV export"]
    assert len(sel.prompts) == 3 and len(sel.summaries) == 2 and len(sel.event_ids) == 6


def test_select_by_date_range_is_local_and_until_includes_the_day(mem: Mem) -> None:
    day2 = time.strftime("%Y-%m-%d", time.localtime(T0 + DAY))
    sel = fg.select(mem.conn, fg.Filters(since=fg.parse_date(day2), until=fg.parse_date(day2, end=True)))
    assert titles(sel) == ["Zebracorn CSV export"]
    assert [i.title for i in sel.prompts] == ["add zebracorn export"]
    assert len(sel.summaries) == 1 and not sel.sessions
    assert len(sel.event_ids) == 2


def test_filters_combine(mem: Mem) -> None:
    assert titles(fg.select(mem.conn, fg.Filters(query="zebracorn", project="blog"))) == ["Blog post drafted"]
    assert titles(fg.select(mem.conn, fg.Filters(ids=(1, 3), query="zebracorn"))) == ["Zebracorn CSV export"]
    assert titles(fg.select(mem.conn, fg.Filters(ids=(1, 3), since=T0 + 1))) == ["Zebracorn CSV export"]
    assert titles(fg.select(mem.conn, fg.Filters(project="blog", until=T0 + DAY))) == []


# ------------------------------------------------------------------------------- deletion

def test_apply_deletes_rows_fts_entries_and_turn_payloads(mem: Mem) -> None:
    assert mem.fts_hits("zebracorn") > 0
    sel = fg.select(mem.conn, fg.Filters(query="zebracorn"))
    out = fg.apply(mem.conn, sel)
    assert out == {"observations": 2, "summaries": 2, "prompts": 2, "sessions": 0, "event_payloads": 4,
                   "summaries_rewritten": 0, "made_current": 0,
                   "quarantined_files": 0}
    assert mem.fts_hits("zebracorn") == 0
    assert mem.count("observations") == 2
    assert mem.count("user_prompts", "prompt_text = ?", (fg.FORGOTTEN_PROMPT,)) == 2
    assert mem.count("events", "payload LIKE '%zebracorn%'") == 0
    # Prompt numbering survives (later prompts of the session keep their numbers).
    assert mem.count("user_prompts") == 4
    # FTS stays consistent with its content table.
    for t in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        mem.conn.execute(f"INSERT INTO {t} ({t}) VALUES ('integrity-check')")
    # Forgetting again finds nothing left (the placeholder text is not "memory").
    assert fg.select(mem.conn, fg.Filters(query="zebracorn")).empty
    assert fg.select(mem.conn, fg.Filters(query="forgotten")).prompts == []


def test_forgetting_a_project_cascades_and_leaves_other_projects(mem: Mem) -> None:
    out = fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(project="shop")))
    assert out["sessions"] == 2 and out["observations"] == 3
    for table in ("observations", "session_summaries", "user_prompts", "events"):
        rows = mem.conn.execute(
            f"SELECT DISTINCT s.project FROM {table} t JOIN sessions s ON s.id = t.session_id").fetchall()
        assert [r[0] for r in rows] == ["blog"], table
    assert mem.count("sessions") == 1
    assert mem.fts_hits("rounding") == 0 and mem.fts_hits("blog") > 0
    for t in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        mem.conn.execute(f"INSERT INTO {t} ({t}) VALUES ('integrity-check')")


def test_apply_deletes_only_what_the_dry_run_listed(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(query="zebracorn"))
    # Something matching arrives between the dry run and the confirmation: it is not deleted.
    later = mem.turn("s4", "shop", T0 + 3 * DAY, "more zebracorn", [("feature", "Zebracorn v2", "again")])
    fg.apply(mem.conn, sel)
    assert mem.count("observations", f"id = {later[0]}") == 1


def test_apply_on_rows_already_gone_is_harmless(mem: Mem) -> None:
    sel = fg.select(mem.conn, fg.Filters(ids=(1,)))
    assert fg.apply(mem.conn, sel)["observations"] == 1
    assert fg.apply(mem.conn, sel) == {"observations": 0, "summaries": 0, "prompts": 0, "sessions": 0,
                                       "event_payloads": 0, "summaries_rewritten": 0, "made_current": 0,
                   "quarantined_files": 0}


def test_pending_events_of_a_forgotten_turn_are_skipped_not_reobserved(mem: Mem) -> None:
    sid = mem.sessions["s1"]
    with transaction(mem.conn):
        repo.insert_event(mem.conn, session_id=sid, event_key="late", kind="PostToolUse", tool_name="Bash",
                          prompt_number=1, agent_id=None, agent_type=None, occurred_at=T0 + 5,
                          payload='{"tool_response": "late output"}')
    fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(1,))))
    row = mem.conn.execute("SELECT status, payload FROM events WHERE event_key = 'late'").fetchone()
    assert tuple(row) == ("skipped", None)
    assert repo.pending_count(mem.conn) == 0


def test_what_a_forgotten_observation_superseded_is_current_again(mem: Mem) -> None:
    mem.conn.execute("UPDATE observations SET status = 'superseded', superseded_by = 2 WHERE id = 1")
    out = fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(2,))))
    assert out["made_current"] == 1
    assert tuple(mem.conn.execute("SELECT status, superseded_by, superseded_at FROM observations WHERE id = 1")
                 .fetchone()) == ("active", None, None)


def test_a_chain_of_supersession_skips_the_forgotten_link(mem: Mem) -> None:
    # 1 was replaced by 2, and 2 by 3: forgetting 2 leaves 1 replaced, by 3 (newer than both).
    mem.conn.execute("UPDATE observations SET status = 'superseded', superseded_by = 2 WHERE id = 1")
    mem.conn.execute("UPDATE observations SET status = 'superseded', superseded_by = 3 WHERE id = 2")
    out = fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(2,))))
    assert out["made_current"] == 0
    assert tuple(mem.conn.execute("SELECT status, superseded_by FROM observations WHERE id = 1").fetchone()) == \
        ("superseded", 3)


def test_a_retracted_row_stays_retracted(mem: Mem) -> None:
    mem.conn.execute("UPDATE observations SET status = 'retracted', superseded_by = 2 WHERE id = 1")
    fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(2,))))
    assert mem.conn.execute("SELECT status FROM observations WHERE id = 1").fetchone()[0] == "retracted"


def test_forget_by_id_erases_its_copies_and_nothing_else(mem: Mem, tmp_path: Path) -> None:
    # Observation 3 ("Zebracorn CSV export") was made in the turn "add zebracorn export" of s2; the
    # blog post (s3) says "zebracorn" too but is another memory: it stays.
    result = fg.forget(mem.conn, mem.path, fg.Filters(ids=(3,)), dry_run=False)
    assert result["deleted"]["observations"] == 1 and result["reclaimed"] is True
    assert_erased(tmp_path, "Zebracorn CSV export", "new zebracorn file", "add zebracorn export",
                  "wrote zebracorn.csv")
    assert_present(tmp_path, "write the zebracorn post", "about the zebracorn launch", "Invoice rounding fixed")


def test_ids_of_forgotten_rows_are_never_given_again(mem: Mem) -> None:
    newest = max(r[0] for r in mem.conn.execute("SELECT id FROM observations"))
    fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(newest,))))
    [fresh] = mem.turn("s9", "shop", T0 + 9 * DAY, "later work", [("change", "Later change", "x")])
    assert fresh == newest + 1
    # Every insert into a table whose ids users see goes through repo.next_id.
    src = Path(repo.__file__).parent.parent
    for path in src.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for m in re.finditer(r"INTO (observations|session_summaries|user_prompts) \((\w+)", path.read_text()):
            assert m.group(2) == "id", f"{path}: an INSERT INTO {m.group(1)} without next_id"


def test_a_repaired_database_keeps_the_high_water_mark(mem: Mem, tmp_path: Path) -> None:
    from kenning.store.repair import recover

    newest = max(r[0] for r in mem.conn.execute("SELECT id FROM observations"))
    fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(ids=(newest,))))
    mem.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    repaired = str(tmp_path / "repaired.db")
    recover(mem.path, repaired, use_cli=False)
    conn = open_db(repaired)
    try:
        assert conn.execute("SELECT n FROM id_high_water WHERE name = 'observations'").fetchone()[0] == newest
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="after", project="shop",
                                  project_root="/src/shop", cwd="/src/shop", at=T0)
        fresh = repo.insert_observation(conn, sid, "shop", ObservationDraft(type="change", title="After repair",
                                                                            created_at=T0), "rules")
        assert fresh == newest + 1
    finally:
        conn.close()


# -------------------------------------------------------------------------------- reclaim

def raw_bytes(path: str) -> bytes:
    out = b""
    for p in (path, path + "-wal"):
        try:
            out += Path(p).read_bytes()
        except FileNotFoundError:
            pass
    return out


def test_forgotten_text_is_gone_from_the_file_and_the_wal(mem: Mem) -> None:
    reader = sqlite3.connect(mem.path)  # another connection, like the worker's, stays open throughout
    reader.execute("SELECT COUNT(*) FROM observations").fetchone()
    data = Path(mem.path).parent
    assert_present(data, "ebracorn")
    result = fg.forget(mem.conn, mem.path, fg.Filters(query="zebracorn"), dry_run=False)
    assert result["reclaimed"] is True, result
    assert result["deleted"]["observations"] == 2
    assert_erased(data, "ebracorn")  # not in rows, FTS segments, free pages or WAL frames (nor -shm)
    assert_present(data, "Invoice rounding fixed")  # the rest is intact
    assert reader.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 2
    reader.close()


def test_optional_fts_tables_are_merged_too(mem: Mem) -> None:
    from kenning.search import trigram

    assert trigram.enable(mem.conn)
    assert "observations_trigram" in fg.fts_tables(mem.conn)
    hits = "SELECT COUNT(*) FROM observations_trigram WHERE observations_trigram MATCH '\"bracor\"'"
    assert mem.conn.execute(hits).fetchone()[0] == 2
    result = fg.forget(mem.conn, mem.path, fg.Filters(query="zebracorn"), dry_run=False)
    assert result["reclaimed"] is True
    assert mem.conn.execute(hits).fetchone()[0] == 0
    assert_erased(Path(mem.path).parent, "ebracorn", "bracor")


def test_vectors_go_with_their_rows(mem: Mem) -> None:
    if not mem.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'").fetchone():
        pytest.skip("no embeddings table in this schema yet")
    rows = [("observation", 3), ("observation", 1), ("summary", 2), ("prompt", 3)]
    with transaction(mem.conn):
        for kind, row_id in rows:
            mem.conn.execute("INSERT INTO embeddings (kind, row_id, model, content_hash, dim, vector, created_at) "
                             "VALUES (?, ?, 'm', 'h', 1, x'00000000', 0)", (kind, row_id))
    fg.apply(mem.conn, fg.select(mem.conn, fg.Filters(query="zebracorn")))
    left = [tuple(r) for r in mem.conn.execute("SELECT kind, row_id FROM embeddings ORDER BY id")]
    assert left == [("observation", 1)]


def test_dry_run_changes_nothing(mem: Mem) -> None:
    before = raw_bytes(mem.path)
    result = fg.forget(mem.conn, mem.path, fg.Filters(project="shop"), dry_run=True)
    assert result["deleted"] is None and result["selection"]["counts"]["sessions"] == 2
    assert mem.count("sessions") == 3
    assert raw_bytes(mem.path) == before


def test_reclaim_reports_a_busy_database_as_a_warning(mem: Mem) -> None:
    blocker = sqlite3.connect(mem.path, timeout=0)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock past the busy timeout
    mem.conn.execute("PRAGMA busy_timeout = 100")
    try:
        report = fg.reclaim_report(mem.conn, mem.path)
    finally:
        blocker.rollback()
        blocker.close()
    assert report["reclaimed"] is False and "forget again" in report["warning"]
