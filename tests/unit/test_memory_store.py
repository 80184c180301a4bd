"""The memory index in the store: supersession (offline, named by an observer, by hand), groups of
near-duplicates (incremental = rebuilt, idempotent, surviving deletes), and the backfill migration."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from kenning.records import ObservationDraft, Outcome
from kenning.store import memory_index, repo, supersede
from kenning.store.db import connect, migrate, open_db

T = 1_709_542_800.0


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "m.db"))
    yield c
    c.close()


class Project:
    def __init__(self, conn: sqlite3.Connection, key: str = "/work/api") -> None:
        self.conn, self.key, self.n = conn, key, 0

    def store(self, title: str, type_: str = "decision", *, supersedes: list[int] | None = None,
              at: float | None = None) -> int:
        self.n += 1
        with repo.transaction(self.conn):
            sid = repo.upsert_session(self.conn, platform="claude-code", agent_session_id=f"{self.key}-{self.n}",
                                      project=self.key, project_root=self.key, cwd=self.key, at=T)
            ids = repo.store_outcome(self.conn, sid, self.key, Outcome(observations=[ObservationDraft(
                type=type_, title=title, created_at=at if at is not None else T + self.n * 60,
                supersedes=supersedes or [])]), "rules")
        return ids[0]


def status(conn: sqlite3.Connection, oid: int) -> tuple[str, int | None]:
    r = conn.execute("SELECT status, superseded_by FROM observations WHERE id = ?", (oid,)).fetchone()
    return r[0], r[1]


def groups(conn: sqlite3.Connection) -> list[tuple[int, int | None, int]]:
    return [tuple(r) for r in conn.execute("SELECT id, duplicate_of, occurrences FROM observations ORDER BY id")]


# ---------------------------------------------------------------------------- supersession


def test_offline_supersession_on_store(conn: sqlite3.Connection) -> None:
    p = Project(conn)
    npm = p.store("We use npm for package installs")
    ruff = p.store("Always run ruff before committing")
    pnpm = p.store("Use pnpm, not npm")
    assert status(conn, npm) == ("superseded", pnpm)
    assert status(conn, ruff) == ("active", None)
    at = conn.execute("SELECT superseded_at FROM observations WHERE id = ?", (npm,)).fetchone()[0]
    assert at is not None


def test_another_projects_rule_is_never_superseded(conn: sqlite3.Connection) -> None:
    a, b = Project(conn, "/work/a"), Project(conn, "/work/b")
    npm = a.store("We use npm for package installs")
    b.store("Use pnpm, not npm")
    assert status(conn, npm) == ("active", None)


def test_named_supersession_is_checked_against_project_and_status(conn: sqlite3.Connection) -> None:
    a, b = Project(conn, "/work/a"), Project(conn, "/work/b")
    old = a.store("Deploys go through the staging cluster", "discovery")
    foreign = b.store("Deploys go through the blue cluster", "discovery")
    retracted = a.store("The API is versioned in the URL", "discovery")
    conn.execute("UPDATE observations SET status = 'retracted' WHERE id = ?", (retracted,))
    new = a.store("Deploys now go straight to production behind a flag", "discovery",
                  supersedes=[old, foreign, retracted, 99999])
    assert status(conn, old) == ("superseded", new)
    assert status(conn, foreign) == ("active", None)
    assert status(conn, retracted) == ("retracted", None)


def test_by_hand_validates_and_restore_undoes(conn: sqlite3.Connection) -> None:
    a, b = Project(conn, "/work/a"), Project(conn, "/work/b")
    old = a.store("Releases are cut on Fridays", "discovery")
    new = a.store("Releases are cut on Tuesdays", "discovery")
    other = b.store("Releases are cut monthly", "discovery")
    res = supersede.by_hand(conn, [old, other, 424242], new)
    assert res.superseded == [old]
    assert res.skipped == {other: "belongs to another project", 424242: "no such observation"}
    assert status(conn, old) == ("superseded", new)
    with pytest.raises(supersede.SupersedeError, match="cannot supersede itself"):
        supersede.by_hand(conn, [new], new)
    with pytest.raises(supersede.SupersedeError, match="no observation #777"):
        supersede.by_hand(conn, [old], 777)
    assert supersede.restore(conn, [old]) == [old]
    assert status(conn, old) == ("active", None)


def test_superseding_a_group_head_supersedes_its_duplicates(conn: sqlite3.Connection) -> None:
    p = Project(conn)
    first = p.store("We deploy with capistrano to the app servers", "discovery")
    second = p.store("We deploy with capistrano to the app servers", "discovery")
    assert groups(conn)[:2] == [(first, second, 1), (second, None, 2)]
    new = p.store("Deploys no longer use capistrano: we ship containers", "discovery")
    assert status(conn, first) == ("superseded", new) and status(conn, second) == ("superseded", new)


SUPERSESSION_TITLES = [
    ("We use npm for package installs", "decision"), ("Use pnpm, not npm", "decision"),
    ("Always run `pytest -q` before committing", "decision"), ("From now on run `pytest -x` before committing",
                                                               "decision"),
    ("MAX_WORKERS is 4 in config/app.yaml", "discovery"), ("MAX_WORKERS is now 8 in config/app.yaml", "discovery"),
    ("Paused the billing migration", "change"), ("Resumed the billing migration", "change"),
    ("Fixed `pytest -q` failure: npm lockfile out of date", "bugfix"),
    ("Fixed `pytest -q` failure: MAX_WORKERS read as a string", "bugfix"),
    ("Never commit .env files: use pnpm secrets instead of npm config", "security_note"),
    ("The staging DB moved to db-9", "discovery"), ("The staging DB is db-4", "discovery"),
]


def _store_mixed(conn: sqlite3.Connection, seed: int) -> list[tuple[str, int | None]]:
    rng = random.Random(seed)
    p = Project(conn)
    for i in range(80):
        title, type_ = rng.choice(SUPERSESSION_TITLES)
        p.store(f"{title} ({i % 7})" if rng.random() < 0.3 else title, type_,
                at=T + rng.random() * 5_000 + i * 10)  # out of time order now and then
    return [tuple(r) for r in conn.execute("SELECT status, superseded_by FROM observations ORDER BY id")]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_offline_rule_decides_as_if_it_read_every_candidate(tmp_path: Path, seed: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """SQL leaves out the rows could_replace says no to: the same rows are superseded as when every
    row sharing a subject is built and asked (as before)."""
    fast = open_db(str(tmp_path / "fast.db"))
    got = _store_mixed(fast, seed)
    fast.close()
    monkeypatch.setattr(supersede, "_could_replace_sql", lambda new: ("", ()))
    monkeypatch.setattr(supersede, "could_replace", lambda *a: True)
    every = open_db(str(tmp_path / "every.db"))
    want = _store_mixed(every, seed)
    every.close()
    assert got == want
    assert sum(1 for st, _by in got if st == "superseded") >= 5


def test_a_fix_reads_no_row_that_shares_its_subjects(conn: sqlite3.Connection,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixes never replace a fix, and nothing replaces a fix: storing one must not read every earlier
    row that names `pytest` (each new memory did: quadratic over an imported history)."""
    built: list[int] = []
    memory = supersede._memory
    monkeypatch.setattr(supersede, "_memory", lambda r: built.append(int(r["id"])) or memory(r))
    p = Project(conn)
    rule = p.store("Always run `pytest -q` in src/billing before committing")
    fixes = [p.store(f"Fixed `pytest -q` failure in src/billing/totals.py: case {i}", "bugfix") for i in range(40)]
    new_rows = [rule, *fixes]
    assert set(built) - set(new_rows) <= {rule}  # a standing rule is all a fix may replace
    assert len(built) <= 2 * len(new_rows)  # was ~20x: every earlier fix, for each new one
    assert status(conn, rule) == ("active", None)


# ---------------------------------------------------------------------------------- groups


TITLES = ["Fixed `pytest` failure: AssertionError in test_cache_key", "Explored cache.py: how the cache key works",
          "Changed totals.py: round VAT per line", "Fixed `pytest` failure: AssertionError in test_totals",
          "Explored cache.py: How does the cache key work?", "Changed totals.py: round the VAT per line"]


def _fill(conn: sqlite3.Connection, n: int, seed: int) -> None:
    rng = random.Random(seed)
    p = Project(conn)
    for i in range(n):
        t = rng.choice(TITLES)
        type_ = {"F": "bugfix", "E": "discovery", "C": "change"}[t[0]]
        p.store(t, type_, at=T + rng.random() * 10_000 + i)  # stored out of time order now and then


def test_incremental_groups_equal_a_rebuild_and_a_rebuild_is_idempotent(conn: sqlite3.Connection) -> None:
    _fill(conn, 60, seed=3)
    incremental = groups(conn)
    heads = [g for g in incremental if g[1] is None]
    assert 0 < len(heads) < 60 and sum(g[2] for g in heads) == 60
    with repo.transaction(conn):
        memory_index.rebuild(conn)
    assert groups(conn) == incremental
    with repo.transaction(conn):
        memory_index.rebuild(conn)
    assert groups(conn) == incremental


def test_a_rebuild_from_scrambled_groups_writes_what_a_rebuild_from_scratch_does(conn: sqlite3.Connection) -> None:
    """rebuild_groups writes only the rows whose group changes: whatever the columns held before
    (wrong heads, counts, grouped inactive rows), the result is the rebuilt one."""
    _fill(conn, 80, seed=5)
    with repo.transaction(conn):
        conn.execute("UPDATE observations SET status = 'superseded' WHERE id % 7 = 0")
        memory_index.rebuild_groups(conn)
    rebuilt = groups(conn)
    assert any(g[1] is not None for g in rebuilt) and any(g[2] > 1 for g in rebuilt)
    rng = random.Random(9)
    ids = [g[0] for g in rebuilt]
    with repo.transaction(conn):
        for oid in rng.sample(ids, 40):
            conn.execute("UPDATE observations SET duplicate_of = ?, occurrences = ? WHERE id = ?",
                         (rng.choice([None, *ids]), rng.randint(1, 5), oid))
    assert groups(conn) != rebuilt
    with repo.transaction(conn):
        memory_index.rebuild_groups(conn)
    assert groups(conn) == rebuilt


def test_groups_survive_deleting_their_head_or_a_member(conn: sqlite3.Connection) -> None:
    p = Project(conn)
    ids = [p.store("Explored cache.py: how the cache key works", "discovery") for _ in range(4)]
    assert groups(conn)[-1] == (ids[-1], None, 4)
    with repo.transaction(conn):
        conn.execute("DELETE FROM observations WHERE id = ?", (ids[-1],))  # the head
    assert groups(conn) == [(ids[0], ids[2], 1), (ids[1], ids[2], 1), (ids[2], None, 3)]
    with repo.transaction(conn):
        conn.execute("DELETE FROM observations WHERE id = ?", (ids[0],))  # a member
    assert groups(conn) == [(ids[1], ids[2], 1), (ids[2], None, 2)]


# ------------------------------------------------------------------------------- migration


def test_migration_0012_indexes_rows_stored_before_the_index_existed(tmp_path: Path) -> None:
    path = str(tmp_path / "old.db")
    old = connect(path)
    migrate(old, target=9)
    old.execute("INSERT INTO sessions (id, agent_session_id, project, project_root, started_at) "
                "VALUES (1, 's', '/w/api', '/w/api', 1.0)")
    for i, (t, title) in enumerate([("decision", "We use pnpm, never npm"), ("change", "Changed a.py: tidy"),
                                    ("change", "Changed a.py: tidy"), ("bugfix", "Fixed the crash")]):
        old.execute("INSERT INTO observations (session_id, project, type, title, created_at, recorded_at, "
                    "content_hash) VALUES (1, '/w/api', ?, ?, ?, ?, ?)", (t, title, 10.0 + i, 10.0 + i, f"h{i}"))
    assert old.execute("SELECT COUNT(*) FROM observations WHERE layer IS NULL").fetchone()[0] == 4
    old.close()
    conn = open_db(path)
    assert [tuple(r) for r in conn.execute("SELECT layer, duplicate_of, occurrences FROM observations "
                                           "ORDER BY id")] == [("rule", None, 1), ("log", 3, 1), ("log", None, 2),
                                                               ("key", None, 1)]
    assert conn.execute("SELECT subject FROM observation_subjects WHERE observation_id = 1").fetchall()
    conn.close()
