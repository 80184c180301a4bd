"""File history on Read, against a real database built by the migrations.

Rows go in through the repository functions the worker uses (so the ``observation_files``
triggers run as in production); files are real files whose mtime the tests set.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.context import file_history as fh
from kenning.observer.modes import load_mode, type_icons
from kenning.paths import Paths
from kenning.records import ObservationDraft
from kenning.settings import Settings
from kenning.store import repo
from kenning.store.db import migrate, open_db

PROJECT = "invoice-api"
T0 = time.mktime((2024, 3, 4, 9, 15, 0, 0, 0, -1))
DAY = 86_400
ROW = re.compile(r"^#(\d+) (\d{4}-\d\d-\d\d) (\S+) (.+?)( ✎)?$")


class World:
    """A data dir with a database, and a project directory holding real files."""

    def __init__(self, tmp: Path) -> None:
        self.paths = Paths(str(tmp / "data"))
        self.paths.ensure()
        self.conn = open_db(self.paths.db)
        self.root = os.path.realpath(tmp / PROJECT)
        os.makedirs(os.path.join(self.root, "src"), exist_ok=True)
        self.settings = Settings().replace(archive_after_days=0)  # the notes date from 2024
        self._sessions: dict[tuple[str, str], int] = {}

    def session(self, name: str, project: str = PROJECT, root: str | None = None) -> int:
        key = (name, project)
        if key not in self._sessions:
            with repo.transaction(self.conn):
                self._sessions[key] = repo.upsert_session(
                    self.conn, platform="claude-code", agent_session_id=name, project=project,
                    project_root=root or f"/work/{project}", cwd=root or f"/work/{project}", at=T0)
        return self._sessions[key]

    def observe(self, session: str, title: str, at: float, *, read: list[str] | None = None,
                modified: list[str] | None = None, kind: str = "change", project: str = PROJECT,
                root: str | None = None, status: str = "active") -> int:
        sid = self.session(session, project, root)
        with repo.transaction(self.conn):
            oid = repo.insert_observation(self.conn, sid, project, ObservationDraft(
                type=kind, title=title, created_at=at, narrative=title, files_read=read or [],
                files_modified=modified or []), "rules")
            assert oid is not None
            if status != "active":
                self.conn.execute("UPDATE observations SET status = ? WHERE id = ?", (status, oid))
        return oid

    def file(self, rel: str, size: int = 4000, mtime: float = T0) -> str:
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("x" * size)
        os.utime(path, (mtime, mtime))
        return path

    def read(self, path: str, session: str | None = "agent-session", cwd: str | None = None,
             project: str = PROJECT, **settings: object) -> str | None:
        s = self.settings.replace(**settings) if settings else self.settings
        return fh.for_read(self.paths, s, path, cwd or self.root, project, self.root, session)

    def history(self, path: str, project: str = PROJECT, **settings: object) -> fh.History:
        s = self.settings.replace(**settings) if settings else self.settings
        conn = fh.connect_readonly(self.paths.db, time.monotonic() + 5)
        try:
            return fh.lookup(conn, s, path, project, self.root)
        finally:
            conn.close()


@pytest.fixture
def w(tmp_path: Path) -> Iterator[World]:
    world = World(tmp_path)
    yield world
    world.conn.close()


def rows(text: str | None) -> list[tuple[int, str, str, str, bool]]:
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == fh.OPEN and lines[-1] == fh.CLOSE
    out = []
    for line in lines[1:-1]:
        m = ROW.match(line)
        if m:
            out.append((int(m[1]), m[2], m[3], m[4], bool(m[5])))
    return out


def ids(text: str | None) -> list[int]:
    return [r[0] for r in rows(text)]


# ------------------------------------------------------------------ the index table

def test_index_table_follows_inserts_updates_and_deletes(w: World) -> None:
    a = w.observe("s1", "A", T0, read=["src/a.py", "src/b.py", "src/a.py"], modified=["src/a.py"])
    got = sorted(tuple(r) for r in w.conn.execute("SELECT path, observation_id, modified, n_files "
                                                  "FROM observation_files"))
    assert got == [("src/a.py", a, 1, 2), ("src/b.py", a, 0, 2)]
    w.conn.execute("UPDATE observations SET files_read = ?, files_modified = '[]' WHERE id = ?",
                   (json.dumps(["src/c.py"]), a))
    assert [tuple(r) for r in w.conn.execute("SELECT path, modified, n_files FROM observation_files")] == \
        [("src/c.py", 0, 1)]
    w.conn.execute("DELETE FROM sessions")  # cascades to the observation, whose trigger cleans up
    assert w.conn.execute("SELECT COUNT(*) FROM observation_files").fetchone()[0] == 0


def test_malformed_json_never_blocks_the_observation_insert(w: World) -> None:
    sid = w.session("s1")
    w.conn.execute(
        "INSERT INTO observations (session_id, project, type, title, files_read, files_modified, created_at, "
        "recorded_at, content_hash) VALUES (?, ?, 'change', 't', 'not json', ?, 1, 1, 'h')",
        (sid, PROJECT, json.dumps(["/abs/x.py", 3, ""])))
    assert [tuple(r) for r in w.conn.execute("SELECT path, modified, n_files FROM observation_files")] == \
        [("/abs/x.py", 1, 1)]


def test_upgrade_backfills_existing_observations(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "old.db"), isolation_level=None)
    migrate(conn, target=3)
    conn.execute("INSERT INTO sessions (agent_session_id, project, started_at) VALUES ('s', 'p', 0)")
    for i, (fr, fm) in enumerate([(["a.py", "b.py"], ["a.py"]), (["a.py"], []), ([], [])]):
        conn.execute("INSERT INTO observations (session_id, project, type, title, files_read, files_modified, "
                     "created_at, recorded_at, content_hash) VALUES (1, 'p', 'change', 't', ?, ?, 1, 1, ?)",
                     (json.dumps(fr), json.dumps(fm), str(i)))
    migrate(conn)
    got = sorted(tuple(r) for r in conn.execute("SELECT path, observation_id, modified, n_files "
                                                "FROM observation_files"))
    assert got == [("a.py", 1, 1, 2), ("a.py", 2, 0, 1), ("b.py", 1, 0, 2)]


# ------------------------------------------------------------------------- ranking

def touch(oid: int, sid: int, *, modified: bool = False, n: int = 1, at: float = T0) -> fh.Touch:
    return fh.Touch(oid, sid, PROJECT, "change", f"t{oid}", at, modified, n)


def test_score_rules() -> None:
    assert touch(1, 1, modified=True, n=1).score == 4
    assert touch(1, 1, modified=True, n=3).score == 4
    assert touch(1, 1, modified=True, n=4).score == 3
    assert touch(1, 1, modified=True, n=8).score == 3
    assert touch(1, 1, modified=True, n=9).score == 2
    assert touch(1, 1, n=2).score == 2
    assert touch(1, 1, n=6).score == 1
    assert touch(1, 1, n=40).score == 0


def test_pick_keeps_one_per_session_ranked_then_newest() -> None:
    found = [
        touch(1, 10, n=20, at=T0 + 50),            # session 10: score 0 but newest of its session
        touch(2, 10, modified=True, n=2, at=T0),   # session 10: score 4 → kept for session 10
        touch(3, 20, n=5, at=T0 + 100),            # session 20: score 1
        touch(4, 30, n=5, at=T0 + 200),            # session 30: score 1, newer than 3
        touch(5, 40, modified=True, n=7, at=T0 + 10),  # session 40: score 3
    ]
    assert [t.id for t in fh.pick(found, 15)] == [2, 5, 4, 3]
    assert [t.id for t in fh.pick(found, 2)] == [2, 5]


def test_top_limit_and_the_count_of_sessions(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    for i in range(20):
        w.observe(f"s{i}", f"Note {i}", T0 + i, read=["src/totals.py"])
    text = w.read(path)
    assert len(ids(text)) == 15
    assert ids(text) == sorted(ids(text))  # oldest first on screen
    assert "15 most specific of 20 sessions" in (text or "")
    assert len(ids(w.read(path, session="other", file_context_limit=3))) == 3


def test_rows_are_compact_and_marked(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0 - DAY)
    w.observe("s1", "Fixed   rounding\nof VAT", T0 - DAY, read=["src/totals.py"], modified=["src/totals.py"],
              kind="bugfix")
    w.observe("s2", "x" * 400, T0 - 10, read=["src/totals.py"], kind="discovery")
    text = w.read(path)
    got = rows(text)
    assert [(r[2], r[4]) for r in got] == [("🔴", True), ("🔵", False)]
    assert got[0][1] == time.strftime("%Y-%m-%d", time.localtime(T0 - DAY))
    assert got[0][3] == "Fixed rounding of VAT"
    assert len(got[1][3]) == fh.TITLE_CHARS and got[1][3].endswith("…")
    assert "src/totals.py" in (text or "").splitlines()[1]
    assert "kenning show <ID>" in (text or "")


def test_code_icons_match_the_code_mode() -> None:
    assert type_icons(load_mode("code")) == fh.CODE_ICONS


# ----------------------------------------------------------------- paths, projects

def test_relative_and_absolute_forms_both_match(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    rel = w.observe("s1", "relative", T0, read=["src/totals.py"])
    ab = w.observe("s2", "absolute", T0, read=[path])
    other = w.observe("s3", "another file", T0, read=["src/other.py", "totals.py"])
    assert other not in ids(w.read(path))
    assert sorted(ids(w.read(path, session="b"))) == [rel, ab]
    # A relative path in the Read, resolved against the cwd (a subdirectory of the project).
    assert sorted(ids(w.read("totals.py", session="c", cwd=os.path.join(w.root, "src")))) == [rel, ab]


def test_symlinked_path_matches_the_real_file(w: World, tmp_path: Path) -> None:
    w.file("src/totals.py", mtime=T0)
    link = tmp_path / "link-to-project"
    link.symlink_to(w.root)
    oid = w.observe("s1", "relative", T0, read=["src/totals.py"])
    assert ids(w.read(str(link / "src" / "totals.py"))) == [oid]


def test_other_projects_never_match_not_even_by_absolute_path(w: World) -> None:
    """Another repository's notes (same relative path, or this very file read from there) stay its own."""
    path = w.file("src/totals.py", mtime=T0)
    mine = w.observe("s1", "mine", T0, read=["src/totals.py"])
    w.observe("o1", "their relative path is another file", T0, read=["src/totals.py"], project="other")
    w.observe("o2", "they read it by absolute path", T0, read=[path], project="other")
    w.observe("o3", "secret", T0, read=[path], project="other", kind="sensitive")
    own_secret = w.observe("s2", "my own sensitive note", T0, read=["src/totals.py"], kind="sensitive")
    by_path = w.observe("s3", "mine, by absolute path", T0 + 1, read=[path])
    assert sorted(ids(w.read(path))) == sorted([mine, own_secret, by_path])


def test_an_alias_key_reads_the_project_it_maps_to(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    mine = w.observe("s1", "mine", T0, read=["src/totals.py"])
    with repo.transaction(w.conn):
        w.conn.execute("INSERT INTO project_aliases (alias, key) VALUES ('/tmp/second-clone', ?)", (PROJECT,))
    assert ids(w.read(path, project="/tmp/second-clone")) == [mine]


def test_inactive_rows_are_left_out(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    mine = w.observe("s1", "mine", T0, read=["src/totals.py"])
    w.observe("s2", "superseded", T0, read=["src/totals.py"], status="superseded")
    w.observe("s3", "retracted", T0, read=["src/totals.py"], status="retracted")
    assert ids(w.read(path)) == [mine]


# ------------------------------------------------------------------ when to say it

def test_small_missing_and_directory_reads_say_nothing(w: World) -> None:
    small = w.file("src/small.py", size=1499, mtime=T0)
    big = w.file("src/big.py", size=1500, mtime=T0)
    w.observe("s1", "n", T0, read=["src/small.py", "src/big.py", "src"])
    assert w.read(small) is None
    assert w.read(big) is not None
    assert w.read(os.path.join(w.root, "src", "gone.py")) is None
    assert w.read(os.path.join(w.root, "src")) is None
    assert w.read(small, session="x", file_context_min_bytes=100) is not None


def test_no_database_or_no_history_says_nothing(w: World, tmp_path: Path) -> None:
    path = w.file("src/totals.py", mtime=T0)
    assert w.read(path) is None  # database, no rows
    empty = Paths(str(tmp_path / "fresh"))
    assert fh.for_read(empty, w.settings, path, w.root, PROJECT, w.root, "k") is None


def test_file_changed_after_the_newest_note_is_skipped(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0 + 60)
    w.observe("s1", "old", T0 - DAY, read=["src/totals.py"])
    w.observe("s2", "newest", T0, read=["src/totals.py"])
    assert w.read(path) is None  # changed a minute after the newest note
    os.utime(path, (T0 + fh.MTIME_SLACK_S, T0 + fh.MTIME_SLACK_S))
    assert w.read(path) is not None  # within the slack: same moment
    w.observe("s3", "edited it", T0 + 120, read=["src/totals.py"], modified=["src/totals.py"])
    os.utime(path, (T0 + 60, T0 + 60))
    assert w.read(path, session="again") is not None  # the edit is remembered now


def test_not_repeated_in_a_session_unless_something_newer(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    first = w.observe("s1", "first", T0, read=["src/totals.py"])
    assert ids(w.read(path)) == [first]
    assert w.read(path) is None
    assert w.read(path.replace("/src/", "/src/./")) is None  # same file, other spelling
    assert ids(w.read(path, session="other-session")) == [first]
    later = w.observe("s2", "later", T0 + 1, read=["src/totals.py"])
    assert ids(w.read(path)) == [first, later]
    assert w.read(path) is None
    assert w.read(path, session=None) is not None  # no session key: no memory of what was said


def test_seen_files_are_pruned_after_a_week(w: World) -> None:
    old = fh.Seen(w.paths.root, "old-session")
    old.record("/p/a.py", 3)
    week_ago = time.time() - fh.SEEN_TTL_S - 60
    os.utime(old.path, (week_ago, week_ago))
    keep = fh.Seen(w.paths.root, "recent")
    keep.record("/p/a.py", 1)
    fh.Seen(w.paths.root, "new-session").record("/p/b.py", 2)  # a new session's first record prunes
    assert not os.path.exists(old.path)
    assert os.path.exists(keep.path)
    assert keep.mark("/p/a.py") == 1 and keep.mark("/p/b.py") == 0
    assert oct(os.stat(keep.path).st_mode & 0o777) == "0o600"


def test_the_deadline_interrupts_the_query(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    w.observe("s1", "n", T0, read=["src/totals.py"])
    conn = fh.connect_readonly(w.paths.db, time.monotonic() - 1)
    try:
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                         "SELECT COUNT(*) FROM (SELECT x FROM c LIMIT 10000000)").fetchone()
    finally:
        conn.close()
    assert w.read(path) is not None  # within its budget the same lookup answers


def test_history_object(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    a = w.observe("s1", "a", T0, read=["src/totals.py"])
    b = w.observe("s1", "b", T0 + 5, read=["src/totals.py"], modified=["src/totals.py"])
    h = w.history(path)
    assert h.sessions == 1 and [t.id for t in h.picked] == [b] and h.mark == max(a, b)
    assert h.newest == T0 + 5 and h.shown_path == "src/totals.py"
    assert not h.stale(T0 + 5) and h.stale(T0 + 5 + fh.MTIME_SLACK_S + 1)


def test_a_database_without_the_index_table_says_nothing(w: World) -> None:
    path = w.file("src/totals.py", mtime=T0)
    w.observe("s1", "n", T0, read=["src/totals.py"])
    w.conn.execute("DROP TABLE observation_files")  # as before migration 0004
    assert w.read(path) is None


# ------------------------------------------------------------------ rules about the file

def test_a_rule_that_names_the_file_is_given_on_every_read(w: World) -> None:
    gen = w.file("src/gen/api.pb.go", size=200, mtime=time.time())  # small, and newer than any note
    other = w.file("src/app.go", size=4000, mtime=T0)
    rule = w.observe("s1", "Never edit src/gen/*.pb.go by hand, run make proto", T0, kind="decision")
    w.observe("s2", "Always run gofmt before committing", T0 + 1, kind="decision")
    text = w.read(gen)
    assert text is not None and f"#{rule} " in text and "run make proto" in text
    assert "standing rules of this project about src/gen/api.pb.go" in text
    assert w.read(other) is None  # the rule names another file; the other rule names none
    assert w.read(gen) is None  # told once per session
    assert f"#{rule} " in str(w.read(gen, session="another-session"))


@pytest.mark.parametrize(("named", "path", "match"), [
    ("src/gen/", "src/gen/x/api.go", True), ("gen/", "src/gen/api.go", True), ("*.pb.go", "src/api.pb.go", True),
    ("api.pb.go", "src/gen/api.pb.go", True), ("src/gen", "src/gen/api.go", True),
    ("src/gen/", "src/general.go", False), ("*.pb.go", "src/api.go", False), ("api.go", "src/xapi.go", False),
])
def test_which_paths_a_rule_names(named: str, path: str, match: bool) -> None:
    assert fh.names_file(named, path) is match


PATHS = ("src/gen/api.pb.go", "api.go", "a/b/c/d.py", "src/a.b/x_y.py", "a//b.py", "dir/", "x/y/z/")


@pytest.mark.parametrize("path", PATHS)
def test_exact_names_are_every_plain_name_that_names_the_path(path: str) -> None:
    """rules_for lets SQL drop a plain file subject that is not one of exact_names(path): no other names the path."""
    names = fh.exact_names(path)
    plain = re.compile(r"[A-Za-z0-9_](.*[A-Za-z0-9_/])?\Z", re.S)
    pieces = {path[i:j] for i in range(len(path)) for j in range(i + 1, len(path) + 1)}
    pieces |= {q + "/" for q in pieces} | {"src", "gen/", "b", "c/d", "api.pb", "z/", "y/z"}
    tried = 0
    for named in pieces:
        if plain.match(named) and not any(c in named for c in "*?["):
            tried += 1
            assert fh.names_file(named, path) is (named in names), named
    assert tried > len(names) > 0


def rules_for_every_subject(conn: object, project: str, rel: str) -> list[int]:
    """The rules naming ``rel`` by asking names_file about every file subject of the 300 newest rules."""
    ids = [r[0] for r in conn.execute(  # type: ignore[attr-defined]
        "SELECT id FROM observations WHERE project = ? AND layer = 'rule' AND status = 'active' "
        "AND duplicate_of IS NULL ORDER BY created_at DESC LIMIT 300", (project,))]
    subjects = conn.execute(  # type: ignore[attr-defined]
        f"SELECT observation_id, subject FROM observation_subjects WHERE observation_id IN "
        f"({','.join('?' * len(ids))}) AND subject >= 'file:' AND subject < 'file;'", ids).fetchall()
    return sorted({oid for oid, subject in subjects if fh.names_file(subject[5:], rel)})


def many_rules(w: World, n: int) -> list[int]:
    """``n`` rules, each naming files the way subjects get stored: plain names, globs, and loose spellings."""
    spellings = ("src/gen/", "gen/", "*.pb.go", "src/*/api.pb.go", "api.pb.go", "./src/gen/api.pb.go",
                 " src/gen ", "src/gen/api.pb.go\n", "src/general.go", "api.go", "src/gen/api.pb.go.bak",
                 "a/b/", "b/c", "c/d.py", "a//b.py", "d.py", "x/y/", "[ab]pi.go", "src/gen/api.pb.g?", "-x/",
                 "x_y.py", "dir/")
    ids = []
    for i in range(n):
        oid = w.observe("rules", f"Always mind file {i}", T0 + i, kind="decision")
        for named in (spellings[i % len(spellings)], spellings[(i * 7 + 3) % len(spellings)], f"src/other_{i}.py"):
            w.conn.execute("INSERT OR IGNORE INTO observation_subjects (project, subject, observation_id) "
                           "VALUES (?, ?, ?)", (PROJECT, "file:" + named, oid))
        ids.append(oid)
    standing(w, ids)
    return ids


def standing(w: World, ids: list[int]) -> None:
    """Make every one of ``ids`` an active standing rule (the memory index grouped the similar ones)."""
    w.conn.execute(f"UPDATE observations SET layer = 'rule', status = 'active', duplicate_of = NULL "
                   f"WHERE id IN ({','.join('?' * len(ids))})", ids)


@pytest.mark.parametrize("indexed", [True, False], ids=["migrated", "before-0023"])
@pytest.mark.parametrize("path", [*PATHS, "src/gen/x/api.go", "b/c/d.py", "nowhere.txt"])
def test_the_rules_naming_a_file_are_those_any_of_their_subjects_names(w: World, path: str, indexed: bool) -> None:
    many_rules(w, 60)
    if not indexed:  # a file the worker has not migrated yet, read by a hook
        w.conn.execute(f"DROP INDEX {fh.LOOSE_INDEX}")
    conn = fh.connect_readonly(w.paths.db, time.monotonic() + 5)
    try:
        got = fh.rules_for(conn, PROJECT, path)
        assert [r.id for r in got] == rules_for_every_subject(conn, PROJECT, path)
        assert path == "nowhere.txt" or got  # every path here is named by some spelling
        assert all(r.type == "decision" and r.title.startswith("Always mind file") for r in got)
    finally:
        conn.close()


def test_a_read_asks_about_the_subjects_that_can_name_the_file_not_every_rules(
        w: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """300 rules naming other files: a Read costs SQL lookups, not a Python check per rule subject."""
    ids = []
    for i in range(300):
        oid = w.observe("rules", f"Never hand-edit generated module {i}", T0 + i, kind="decision")
        ids.append(oid)
        for named in (f"src/gen/mod_{i}.py", f"docs/{i}/", f"*.gen{i}"):
            w.conn.execute("INSERT OR IGNORE INTO observation_subjects (project, subject, observation_id) "
                           "VALUES (?, ?, ?)", (PROJECT, "file:" + named, oid))
    standing(w, ids)
    asked: list[str] = []
    names_file = fh.names_file
    monkeypatch.setattr(fh, "names_file", lambda named, rel: asked.append(named) or names_file(named, rel))
    conn = fh.connect_readonly(w.paths.db, time.monotonic() + 5)
    try:
        assert [r.title for r in fh.rules_for(conn, PROJECT, "src/gen/mod_7.py")] == [
            "Never hand-edit generated module 7"]
        assert len(asked) == 300 + 1  # the globs (names_file must judge them) and the one exact name
        asked.clear()
        deep = "/".join(f"d{i}" for i in range(40)) + "/mod.py"  # more exact names than the cap: every row
        assert len(fh.exact_names(deep)) > fh.EXACT_NAMES_CAP
        assert fh.rules_for(conn, PROJECT, deep) == [] and len(asked) == 900
    finally:
        conn.close()


def test_a_superseded_rule_is_not_given(w: World) -> None:
    gen = w.file("src/gen/api.pb.go", size=200, mtime=T0)
    w.observe("s1", "Never edit src/gen/*.pb.go by hand, run make proto", T0, kind="decision", status="superseded")
    assert w.read(gen) is None


def test_a_read_seeks_its_exact_names_and_the_loose_subjects_index(w: World) -> None:
    """The rule lookup reads by the primary key and migration 0023's partial index, whose condition
    is rules_for's own (the planner takes a partial index only for a query repeating it)."""
    many_rules(w, 30)
    (index_sql,) = w.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (fh.LOOSE_INDEX,)).fetchone()
    assert fh._LOOSE_SUBJECT in index_sql
    loose = w.conn.execute(f"SELECT COUNT(*) FROM observation_subjects INDEXED BY {fh.LOOSE_INDEX} "
                           f"WHERE subject >= 'file:' AND subject < 'file;' AND ({fh._LOOSE_SUBJECT})").fetchone()[0]
    assert 0 < loose < w.conn.execute("SELECT COUNT(*) FROM observation_subjects").fetchone()[0]
    statements: list[str] = []
    w.conn.set_trace_callback(statements.append)  # the statement with its values bound
    try:
        assert fh.rules_for(w.conn, PROJECT, "src/gen/api.pb.go")
    finally:
        w.conn.set_trace_callback(None)
    (lookup,) = [q for q in statements if "FROM observation_subjects" in q]
    plan = " | ".join(str(r[3]) for r in w.conn.execute("EXPLAIN QUERY PLAN " + lookup))
    assert "observation_subjects USING PRIMARY KEY (project=? AND subject=?)" in plan, plan
    assert f"USING COVERING INDEX {fh.LOOSE_INDEX} (project=?)" in plan, plan
    assert "observation_subjects_observation" not in plan, plan  # no walk over every subject of the rules
