"""The injection ledger's store (kenning/store/injections.py) and what the worker reads into it
(kenning/worker/given.py), on real SQLite files."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import forget as fg
from kenning.store import injections
from kenning.store.db import open_db
from kenning.store.injections import Given
from kenning.worker import given, uses


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "k.db"))
    yield c
    c.close()


def _save(conn: sqlite3.Connection, title: str, at: float | None = None) -> int:
    return MemoryService(conn, "cli").save(ObservationDraft(type="decision", title=title, narrative=title,
                                                            created_at=at or time.time()), project="shop").id


def test_a_use_counts_only_for_what_was_given_before(conn: sqlite3.Connection) -> None:
    a, b = _save(conn, "Round VAT per line"), _save(conn, "Ship on Tuesdays")
    t = time.time() - 100
    injections.record(conn, via="session_start", items=[Given(a, "key rank 1", 40)], session="s1", project="shop",
                      at=t)
    assert injections.use(conn, observation_ids=[a, b], kind="edited", session="s1", at=t + 10) == 1  # b never given
    assert injections.use(conn, observation_ids=[a], kind="cited", session="s2", at=t + 10) == 0  # another session
    assert injections.use(conn, observation_ids=[a], kind="cited", session="s1", at=t - 10) == 0  # before it was given
    # An MCP fetch (no session) counts for a handing of the last day, in any session.
    assert injections.use(conn, observation_ids=[a], kind="fetched", at=t + 20) == 1
    rep = injections.for_memory(conn, a)
    assert (rep["given"], rep["used"]) == (1, 1) and [u["kind"] for u in rep["uses"]] == ["fetched", "edited"]
    told = injections.for_session(conn, "s1")
    assert [(x["id"], x["reason"], x["used"], x["contradicted"]) for x in told] == [(a, "key rank 1", True, False)]
    with pytest.raises(ValueError):
        injections.record(conn, via="somewhere", items=[Given(a)])


def test_superseded_after_it_was_given_is_contradicted(conn: sqlite3.Connection) -> None:
    old = _save(conn, "Deploy with the old script")
    injections.record(conn, via="prompt", items=[Given(old, "shares 60% of the prompt's rarer terms", 30)],
                      session="s1", project="shop", at=time.time() - 50)
    new = _save(conn, "Deploy with make release")
    MemoryService(conn, "cli").supersede([old], new)
    assert injections.for_session(conn, "s1")[0]["contradicted"]
    assert injections.health(conn)["contradicted"] == 1


def test_forgetting_a_memory_leaves_nothing_of_it_in_the_ledger(conn: sqlite3.Connection, tmp_path: Path) -> None:
    a, b = _save(conn, "Secret plan"), _save(conn, "Kept")
    injections.record(conn, via="file", items=[Given(a, "file read: plan.md"), Given(b, "file read: plan.md")],
                      session="s1", at=time.time() - 5)
    injections.use(conn, observation_ids=[a, b], kind="edited", session="s1", detail="plan.md")
    MemoryService(conn, "cli").forget(str(tmp_path / "k.db"), fg.Filters(ids=(a,)), dry_run=False)
    assert {int(r[0]) for r in conn.execute("SELECT observation_id FROM injections")} == {b}
    assert {int(r[0]) for r in conn.execute("SELECT observation_id FROM injection_uses")} == {b}


def test_the_ledger_is_bounded_by_age_and_by_count(conn: sqlite3.Connection) -> None:
    now = time.time()
    injections.record(conn, via="mcp", items=[Given(1)], at=now - injections.RETENTION_S - 10)
    for i in range(30):
        injections.record(conn, via="session_start", items=[Given(2), Given(3)], session=f"s{i}", at=now - 100 + i)
    MemoryService(conn, "observer").prune(now, payloads_before=0, events_before=0)
    assert int(conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0]) == 60  # the old one went
    injections.prune(conn, now - injections.RETENTION_S, max_rows=20)
    rows = conn.execute("SELECT session FROM injections ORDER BY at").fetchall()
    assert len(rows) == 20 and rows[0][0] == "s20"  # the newest kept, whole handings


def test_health_gives_the_hit_rate_and_the_share_of_tokens_used(conn: sqlite3.Connection) -> None:
    a, b = _save(conn, "A"), _save(conn, "B")
    t = time.time() - 100
    injections.record(conn, via="session_start", items=[Given(a, "standing rule", 300), Given(b, "recent work", 100)],
                      session="s1", project="shop", at=t)
    injections.use(conn, observation_ids=[a], kind="cited", session="s1", at=t + 1)
    h = injections.health(conn, project="shop")
    assert (h["given"], h["used"], h["hit_rate"], h["used_token_share"]) == (2, 1, 0.5, 0.75)
    assert injections.health(conn, since=t + 50)["given"] == 0
    assert injections.health(conn, project="other")["hit_rate"] is None
    old = time.time() + 10  # everything is "older than" this: b was never used
    assert [m["id"] for m in injections.never_used(conn, older_than=old)] == [b]
    assert injections.never_used_count(conn, older_than=old) == 1


INDEX = """<kenning-context>
# Memory of shop
## Your preferences (every project; follow them)
#7 2d ⚖️ Answer in English
## Standing rules and preferences (follow them; newest version only)
#3 5d ⚖️ Never edit gen/ by hand
## Key decisions, gotchas and root causes
#9 1d 🔴 Totals round per line
#4 3d ⚖️ Money is Decimal
## Open to-dos (until done)
#11 1h 🔵 Finish the CSV export
## Recent work (oldest first)
### 2026-12-05 (Sat)
#12 1h ✅ Moved the build step
S4 2h 📋 Export work → done
Details: `kenning show <ID>` prints a full record; #99 is not a row.
</kenning-context>"""


def test_the_index_text_says_why_each_row_was_shown() -> None:
    rows = given.from_index(INDEX)
    assert [(g.observation_id, g.reason) for g in rows] == [
        (7, "your standing preference"), (3, "standing rule"), (9, "key rank 1"), (4, "key rank 2"),
        (11, "open to-do"), (12, "recent work")]
    assert all(g.chars == len(next(ln for ln in INDEX.splitlines() if ln.startswith(f"#{g.observation_id} ")))
               for g in rows)


def test_the_worker_reads_back_what_the_read_hook_told_once(conn: sqlite3.Connection, tmp_path: Path) -> None:
    from kenning.context.file_history import Seen

    a = _save(conn, "Totals round per line")
    seen = Seen(str(tmp_path), "sess-1")
    told = ('{"at": 1733370000.5, "s": "sess-1", "a": "claude-code", "k": "shop", "f": "src/t.py", "r": [], '
            f'"n": [{a}], "m": [{a}], "c": [[{a}, 44]]}}')
    seen.record("/p/src/t.py", a, told)
    seen.record("/p/src/other.py", 3)  # a line without what was told: as before the ledger
    assert seen.mark("/p/src/t.py") == a  # the hook still reads its own mark
    handed = given.Handed()
    assert given.record_pending(conn, handed, str(tmp_path)) == 1
    assert given.record_pending(conn, handed, str(tmp_path)) == 0  # read once
    given._offsets.at.clear()  # a new worker reads the files from the start: the ref keeps it once
    assert given.record_pending(conn, handed, str(tmp_path)) == 0
    told_rows = injections.for_session(conn, "sess-1")
    assert [(r["via"], r["id"], r["reason"], r["chars"]) for r in told_rows] == [
        ("file", a, "file read: src/t.py (changed it)", 44)]


def _event(conn: sqlite3.Connection, n: int, event: str, payload: dict, at: float) -> None:
    """One captured event of session ``sess-use`` (project root /p), as the pipeline stores it."""
    door = MemoryService(conn, "observer")
    with conn:
        door.capture({"id": f"spool-{n}", "event": event, "at": at, "agent": "claude-code", "project": "p",
                      "project_key": "shop", "project_root": "/p",
                      "payload": {"session_id": "sess-use", "cwd": "/p", **payload}})


def test_the_worker_finds_each_kind_of_use_in_the_events_after_a_handing(conn: sqlite3.Connection) -> None:
    from kenning.store import repo

    now = time.time()
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="past", project="shop",
                                  project_root="/p", cwd="/p", at=now - 900)
        ids = {k: repo.insert_observation(conn, sid, "shop", ObservationDraft(
            type="decision", title=t, narrative=t, created_at=now - 800, files_modified=files), "rules")
               for k, t, files in (
                   ("file", "Totals round VAT per line in src/totals.py", ["src/totals.py"]),
                   ("cmd", "Regenerate the stubs with `make proto` after editing api.proto", []),
                   ("ident", "The cache key is built by tenant_cache_key in the cache module", []),
                   ("cited", "Releases are tagged by hand", []),
                   ("idle", "Docs live in docs/ and are built with mkdocs", []),
                   ("late", "The parser lives in src/parse.py", ["src/parse.py"]))}
    assert uses.find_uses(conn) == 0  # nothing handed yet: the events so far are skipped for good
    _event(conn, 0, "UserPromptSubmit", {"prompt": "go"}, now - 300)
    injections.record(conn, via="session_start", session="sess-use", project="shop", at=now - 200,
                      items=[Given(ids[k]) for k in ("file", "cmd", "ident", "cited", "idle")])
    edit = {"tool_name": "Edit", "tool_use_id": "t1", "tool_input": {"file_path": "/p/src/totals.py",
                                                                     "old_string": "a", "new_string": "b"}}
    bash = {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "make proto && git status"}}
    write = {"tool_name": "Write", "tool_use_id": "t3",
             "tool_input": {"file_path": "/p/src/cache.py", "content": "def tenant_cache_key(t):\n    return t\n"}}
    read = {"tool_name": "Read", "tool_use_id": "t4", "tool_input": {"file_path": "/p/src/parse.py"},
            "tool_response": {"file": {"content": f"see #{ids['idle']} and mkdocs"}}}
    for i, p in enumerate((edit, bash, write, read), start=1):
        _event(conn, i, "PostToolUse", p, now - 100 + i)
    _event(conn, 9, "Stop", {"last_assistant_message": f"Done; I kept to #{ids['cited']}."}, now - 50)
    found = uses.find_uses(conn)
    got = {(r[0], r[1], r[2]) for r in conn.execute("SELECT observation_id, kind, detail FROM injection_uses")}
    # The most precise command it names; never a use: "late" (read, but never given), "idle" (its id and a
    # word of it only in a tool's output, which the agent did not write).
    assert got == {(ids["file"], "edited", "src/totals.py"), (ids["cmd"], "ran", "make proto"),
                   (ids["ident"], "named", "tenant_cache_key"), (ids["cited"], "cited", f"#{ids['cited']}")}
    assert found == 4
    assert uses.find_uses(conn) == 0  # each event is looked at once
