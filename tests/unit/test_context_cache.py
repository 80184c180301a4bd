"""The worker's kept selections (kenning/context/cache.py) never show what a fresh build would not.

Writes go through the writer connection, as the worker's pipeline, the CLI and MCP make them;
the index is read through a second, read-only connection, as the worker's pool reads it. After
every write the kept answer must equal a build from scratch at the same moment, and a kept
selection must really be reused when nothing it reads was written.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.context.cache import SelectionCache
from kenning.context.index import Selection
from kenning.context.session_start import build
from kenning.settings import Settings
from kenning.store.db import connect, open_db
from tests.unit.test_context import BASE, DAY, NOW, PROJECT, observe, session, summarize

OTHER = "billing-web"


class Worker:
    """A writer and a reader on one file, and the reader's cache."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.writer = open_db(path)
        self.reader = connect(path, readonly=True)
        self.cache = SelectionCache(path)
        self.settings = Settings()

    def context(self, now: float = NOW, project: str = PROJECT) -> str:
        kept = build(self.reader, self.settings, project, now=now, cache=self.cache)
        fresh = build(self.reader, self.settings, project, now=now)
        assert kept == fresh
        return kept

    def hit(self, now: float = NOW, project: str = PROJECT) -> str:
        hits = self.cache.hits
        text = self.context(now, project)
        assert self.cache.hits == hits + 1, "a selection nothing was written to was read again"
        return text

    def miss(self, now: float = NOW, project: str = PROJECT) -> str:
        misses = self.cache.misses
        text = self.context(now, project)
        assert self.cache.misses == misses + 1, "a write the index can see left the kept selection in use"
        return text

    def write(self, sql: str, args: tuple[object, ...] = ()) -> None:
        with self.writer:
            self.writer.execute(sql, args)

    def close(self) -> None:
        self.writer.close()
        self.reader.close()


@pytest.fixture
def w(tmp_path: Path) -> Iterator[Worker]:
    worker = Worker(str(tmp_path / "kenning.db"))
    yield worker
    worker.close()


def seeded(w: Worker) -> tuple[int, int]:
    """A summarized session (its line lists it), and a session with a rule and routine work not summarized
    yet (its routine rows are listed themselves)."""
    sid = session(w.writer, "s1", BASE)
    summarize(w.writer, sid, BASE + 180, request="Reorder the export", files_modified=["export.py"])
    open_ = session(w.writer, "s2", BASE + 200)
    rule = observe(w.writer, open_, "Always run the linter before committing", BASE + 260, "decision")
    observe(w.writer, open_, "Changed the export column order", BASE + 320)
    return open_, rule


def test_a_selection_is_reused_until_a_write_it_can_see(w: Worker) -> None:
    sid, _rule = seeded(w)
    first = w.miss()
    assert w.hit() == first
    oid = observe(w.writer, sid, "Fixed the rounding of totals", BASE + 240)
    assert f"#{oid} " in w.miss()
    assert f"#{oid} " in w.hit()


def test_a_superseded_rule_leaves_the_kept_context_at_once(w: Worker) -> None:
    s1 = session(w.writer, "s1", BASE)
    old = observe(w.writer, s1, "We use npm for package installs", BASE, "decision")
    assert f"#{old} " in w.miss()
    w.hit()
    s2 = session(w.writer, "s2", BASE + DAY)
    new = observe(w.writer, s2, "From now on use pnpm instead of npm for installs", BASE + DAY, "decision")
    text = w.miss()
    assert f"#{new} " in text and f"#{old} " not in text and "We use npm" not in text


@pytest.mark.parametrize("sql", [
    "UPDATE observations SET status = 'retracted' WHERE id = ?",
    "UPDATE observations SET status = 'superseded', superseded_at = 1 WHERE id = ?",
    "DELETE FROM observations WHERE id = ?",
    f"UPDATE observations SET project = '{OTHER}' WHERE id = ?",
    "UPDATE observations SET title = 'Always run the formatter before committing' WHERE id = ?",
    "UPDATE observations SET duplicate_of = -1 WHERE id = ?",
])
def test_every_change_to_a_listed_memory_is_seen(w: Worker, sql: str) -> None:
    _sid, rule = seeded(w)
    assert "Always run the linter" in w.miss()
    w.hit()
    w.write(sql, (rule,))
    assert "Always run the linter" not in w.miss()


def test_an_observation_moved_into_the_project_is_seen(w: Worker) -> None:
    seeded(w)
    other = session(w.writer, "o1", BASE, project=OTHER)
    moved = observe(w.writer, other, "Pinned the date library to 2.x", BASE + 300, "decision", project=OTHER)
    assert f"#{moved} " not in w.miss()
    w.write("UPDATE observations SET project = ? WHERE id = ?", (PROJECT, moved))
    assert f"#{moved} " in w.miss()


def test_summaries_and_sessions_are_seen(w: Worker) -> None:
    sid, _rule = seeded(w)
    summarized = int(w.writer.execute("SELECT session_id FROM session_summaries").fetchone()[0])
    assert "Reorder the export" in w.miss()
    w.write("UPDATE session_summaries SET request = 'Reorder the CSV export' WHERE session_id = ?", (summarized,))
    assert "Reorder the CSV export" in w.miss()
    w.write("UPDATE sessions SET platform = 'codex' WHERE id = ?", (sid,))  # its rows now name the agent
    assert " · in Codex CLI" in w.miss()
    w.write("DELETE FROM session_summaries WHERE session_id = ?", (summarized,))
    assert "Reorder the CSV export" not in w.miss()
    w.write("DELETE FROM sessions WHERE id = ?", (sid,))  # its observations go with it
    assert "Always run the linter" not in w.miss()


def test_writes_the_index_cannot_see_keep_the_selection(w: Worker) -> None:
    sid, _rule = seeded(w)
    text = w.miss()
    session(w.writer, "s2", BASE + 400)  # a new session: SessionStart's own ingest
    w.write("UPDATE sessions SET prompt_count = prompt_count + 1, ended_at = ? WHERE id = ?", (BASE + 500, sid))
    other = session(w.writer, "o1", BASE, project=OTHER)
    observe(w.writer, other, "Another project's memory", BASE + 300, project=OTHER)
    assert w.hit() == text
    assert "Another project's memory" in w.miss(project=OTHER)


def test_re_timing_is_exact_ages_archive_and_ranking(w: Worker) -> None:
    w.settings = Settings().replace(archive_after_days=30)
    sid, _rule = seeded(w)
    for i in range(12):
        observe(w.writer, sid, f"Key finding number {i} about invoices", BASE - i * 20 * DAY, "bugfix")
    # The archive counts back from the project's latest work: a row from a clock ahead of ours puts
    # that 30 days ahead, so until then the cut moves with the asking moment.
    observe(w.writer, sid, "Entry from a machine whose clock runs ahead", NOW + 30 * DAY)
    first = w.miss()
    later = [w.hit(NOW + dt) for dt in (120, 3600, 26 * DAY, 28 * DAY, 400 * DAY)]
    assert len({first, *later}) == 6  # every answer is of its own moment
    assert "Changed the export column order" in later[2] and "Changed the export column order" not in later[3]
    assert "Changed the export column order" not in later[4]
    w.miss(NOW - 3600)  # never re-timed backwards: read again


def test_another_settings_object_is_read_again(w: Worker) -> None:
    seeded(w)
    w.miss()
    w.settings = Settings().replace(context_rules=1)
    w.miss()


def test_a_file_replaced_under_the_worker_is_read_again(w: Worker, tmp_path: Path) -> None:
    seeded(w)
    w.miss()
    copy = tmp_path / "copy.db"
    other = open_db(str(copy))
    with other:
        sid = session(other, "elsewhere", BASE)
        observe(other, sid, "Only in the replacing file", BASE + 10, "decision")
    other.close()
    w.close()
    for suffix in ("-wal", "-shm"):  # the old file's: SQLite's own files go with it
        if os.path.exists(w.path + suffix):
            os.unlink(w.path + suffix)
    os.replace(copy, w.path)
    w.writer, w.reader = open_db(w.path), connect(w.path, readonly=True)
    assert "Only in the replacing file" in w.miss()


def test_a_restored_copy_of_an_older_state_is_not_taken_for_the_newer(w: Worker, tmp_path: Path) -> None:
    _sid, rule = seeded(w)
    w.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backup = tmp_path / "backup.db"
    shutil.copy(w.path, backup)
    w.write("UPDATE observations SET status = 'retracted' WHERE id = ?", (rule,))
    assert "Always run the linter" not in w.miss()
    w.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(w.path + suffix):
            os.unlink(w.path + suffix)
    shutil.copy(backup, w.path)  # in place: the same inode, an older state
    w.writer, w.reader = open_db(w.path), connect(w.path, readonly=True)
    assert "Always run the linter" in w.miss()


def test_a_database_before_migration_0021_is_never_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "old.db")
    conn = open_db(path)
    sid = session(conn, "s1", BASE)
    observe(conn, sid, "Always run the linter before committing", BASE + 60, "decision")
    conn.execute("DROP TABLE context_changes")
    cache = SelectionCache(path)
    for _ in range(2):
        assert "Always run the linter" in build(conn, Settings(), PROJECT, now=NOW, cache=cache)
    assert (cache.hits, cache.misses) == (0, 2)
    conn.close()


def test_selection_at_refuses_the_past(w: Worker) -> None:
    seeded(w)
    sel = Selection(w.reader, w.settings, PROJECT, NOW)
    assert sel.at(NOW + 1).now == NOW + 1
    with pytest.raises(ValueError):
        sel.at(NOW - 1)


def test_random_writes_never_leave_a_stale_answer(w: Worker) -> None:
    """Property: whatever is written in whatever order, the kept answer is the fresh one."""
    rng = random.Random(14)
    sids = [session(w.writer, f"s{i}", BASE + i * DAY, project=PROJECT if i % 3 else OTHER) for i in range(6)]
    titles = ["Always use Decimal for money", "Never call the payments API in tests", "Use pnpm for installs",
              "Changed the export column order", "Fixed the rounding of totals", "Root cause: a stale cache key",
              "Decided to keep SQLite", "Renamed the invoice module"]
    kinds = ["decision", "change", "bugfix", "discovery"]

    def ids() -> list[int]:
        return [r[0] for r in w.writer.execute("SELECT id FROM observations")]

    ops = [
        lambda: observe(w.writer, sid := rng.choice(sids), f"{rng.choice(titles)} {rng.randrange(5)}",
                        BASE + rng.randrange(10) * DAY, rng.choice(kinds),
                        project=str(w.writer.execute("SELECT project FROM sessions WHERE id = ?",
                                                     (sid,)).fetchone()[0])),
        lambda: ids() and w.write("UPDATE observations SET status = ? WHERE id = ?",
                                  (rng.choice(["active", "retracted", "superseded"]), rng.choice(ids()))),
        lambda: ids() and w.write("DELETE FROM observations WHERE id = ?", (rng.choice(ids()),)),
        lambda: ids() and w.write("UPDATE observations SET project = ? WHERE id = ?",
                                  (rng.choice([PROJECT, OTHER]), rng.choice(ids()))),
        lambda: ids() and w.write("UPDATE observations SET importance = ? WHERE id = ?",
                                  (rng.randrange(10), rng.choice(ids()))),
        lambda: summarize(w.writer, rng.choice(sids), BASE + rng.randrange(10) * DAY,
                          request=rng.choice(titles), files_modified=["a.py"]),
        lambda: w.write("UPDATE sessions SET platform = ? WHERE id = ?",
                        (rng.choice(["claude-code", "codex", "gemini"]), rng.choice(sids))),
        lambda: session(w.writer, f"new{rng.randrange(10**6)}", BASE),
        lambda: None,  # nothing written: the kept selection must be used
    ]
    now = NOW
    for _ in range(150):
        rng.choice(ops)()
        now += rng.choice([0, 0.5, 1, 30, 59, 61, 3599, 3600, 86_399, 5 * DAY])
        for project in (PROJECT, OTHER):
            w.context(now, project)  # equal to a fresh build, asserted inside
    assert w.cache.hits > 30 and w.cache.misses > 30 and w.cache.texts_reused > 10


def test_the_counters_move_in_the_writing_transaction(w: Worker) -> None:
    seeded(w)

    def counters() -> tuple[object, ...]:
        return tuple(w.reader.execute("SELECT project, n FROM context_changes ORDER BY project"))

    before = counters()
    w.writer.execute("BEGIN")
    w.writer.execute("UPDATE observations SET status = 'retracted'")
    assert counters() == before  # not yet committed: the reader sees neither the change nor a move
    w.writer.execute("ROLLBACK")
    assert counters() == before
    with pytest.raises(sqlite3.IntegrityError), w.writer:
        w.writer.execute("UPDATE observations SET status = 'bogus'")
    assert counters() == before


def test_a_text_is_reused_only_while_every_age_and_the_minute_stand_still(w: Worker) -> None:
    sid = session(w.writer, "s1", BASE)
    observe(w.writer, sid, "Changed the export column order", NOW - 59 * 60 - 30)  # 59m old, 1h in 30 s
    first = w.miss()
    reused = w.cache.texts_reused
    assert w.hit(NOW + 10) == first and w.cache.texts_reused == reused + 1  # 10 s later: the same minute, ages
    later = w.hit(NOW + 31)
    assert " 1h " in later and " 59m " in first and w.cache.texts_reused == reused + 1
    assert w.hit(NOW + 61) != later  # the header's minute


def test_refresh_reads_again_only_what_writes_changed_and_the_next_answer_is_ready(w: Worker) -> None:
    _sid, rule = seeded(w)
    w.miss()
    w.miss(project=OTHER)
    assert w.cache.refresh(w.reader, NOW) == 0  # nothing written
    w.write("UPDATE observations SET status = 'retracted' WHERE id = ?", (rule,))
    assert w.cache.refresh(w.reader, NOW) == 1  # only the project written to
    assert "Always run the linter" not in w.hit()  # read in the background: the answer is a hit, and true


def test_the_warmer_coalesces_pokes_and_runs_off_the_caller(w: Worker) -> None:
    import threading
    import time

    from kenning.context.cache import Warmer

    calls: list[str] = []
    done = threading.Event()

    def fn() -> None:
        calls.append(threading.current_thread().name)
        done.set()

    warmer = Warmer(fn, delay=0.05)
    for _ in range(20):
        warmer.poke()
    assert done.wait(5)
    time.sleep(0.2)
    warmer.stop()
    assert calls == ["kenning-context-warmer"]
