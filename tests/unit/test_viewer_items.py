"""The viewer's service side on a real database: feed paging, filters, the live mark, details, edits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kenning.settings import Settings
from kenning.store.db import connect
from kenning.viewer import detail, items, settings_form, stats
from tests.support.search_rows import NOW, Rows


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    return Rows(str(tmp_path / "kenning.db"))


def walk(rows: Rows, f: items.FeedFilter, limit: int) -> list[str]:
    """Every page of the feed, following the cursor: the keys in order."""
    keys: list[str] = []
    before = None
    for _ in range(10_000):
        page = items.feed(rows.conn, f, before=before, limit=limit)
        keys += [it["key"] for it in page.items]
        if page.next is None:
            return keys
        before = page.next
    raise AssertionError("the cursor never ended")


def test_feed_pages_cover_every_row_once_in_order_even_with_equal_times(rows: Rows) -> None:
    rng = random.Random(7)
    expected: list[tuple[float, int, int, str]] = []
    for i in range(120):
        at = NOW + rng.choice([0, 1, 2, 3]) * 10  # many rows share an instant, across kinds
        kind = rng.choice(items.KINDS)
        session = f"s{i}"  # one summary per session
        if kind == "observation":
            rid = rows.obs(f"note {i}", session=session, at=at)
        elif kind == "prompt":
            rid = rows.prompt(f"prompt {i}", session=session, at=at)
        else:
            rid = rows.summary(f"summary {i}", session=session, at=at)
        expected.append((at, items.RANK[kind], rid, f"{items.LETTER[kind]}:{rid}"))
    want = [k for *_, k in sorted(expected, reverse=True)]
    for limit in (1, 7, 50, 200):
        assert walk(rows, items.FeedFilter(), limit) == want


def test_feed_filters(rows: Rows) -> None:
    a = rows.obs("alpha bug", type="bugfix", concepts=["gotcha"], at=NOW)
    rows.obs("alpha decision", type="decision", concepts=["gotchas-not"], at=NOW + 1)
    old = rows.obs("alpha retracted", type="bugfix", status="retracted", at=NOW + 2)
    b = rows.obs("beta bug", project="beta", session="b", type="bugfix", at=NOW + 3)
    p = rows.prompt("fix it please", at=NOW + 4)
    rows.prompt("", at=NOW + 5)  # a private prompt is stored empty: never shown
    s = rows.summary("the request", project="beta", session="b", at=NOW + 6)

    def keys(**kw: object) -> list[str]:
        return [it["key"] for it in items.feed(rows.conn, items.FeedFilter(**kw)).items]  # type: ignore[arg-type]

    assert keys() == [f"s:{s}", f"p:{p}", f"o:{b}", f"o:{old}", f"o:{a + 1}", f"o:{a}"]
    assert keys(project="beta") == [f"s:{s}", f"o:{b}"]
    assert keys(types=("bugfix",)) == [f"o:{b}", f"o:{old}", f"o:{a}"]  # a type means observations only
    assert keys(types=("bugfix",), include_inactive=False) == [f"o:{b}", f"o:{a}"]
    assert keys(concept="gotcha") == [f"o:{a}"]  # exact concept, not a substring of another
    assert keys(since=NOW + 3, until=NOW + 6) == [f"p:{p}", f"o:{b}"]
    assert keys(kinds=("summary", "prompt")) == [f"s:{s}", f"p:{p}"]
    item = items.feed(rows.conn, items.FeedFilter(types=("bugfix",), project="alpha")).items[-1]
    assert item["title"] == "alpha bug" and item["concepts"] == ["gotcha"] and item["tokens"] > 0


@pytest.mark.parametrize("cursor", ["", "x", "1:o", "nan:o:1", "inf:o:1", "1:z:1", "1:o:-1", "1:o:1:2",
                                    "1:o:" + "9" * 30])
def test_bad_cursor_is_a_value_error(rows: Rows, cursor: str) -> None:
    with pytest.raises(ValueError):
        items.feed(rows.conn, items.FeedFilter(), before=cursor or "::")


def test_live_mark_returns_only_what_is_new(rows: Rows) -> None:
    rows.obs("before", at=NOW)
    mark = items.high_water(rows.conn)
    assert items.since_mark(rows.conn, mark)[0] == []
    o = rows.obs("after", at=NOW + 1)
    p = rows.prompt("a new prompt", at=NOW + 2)
    rows.prompt("", at=NOW + 3)  # private: moves the mark, shows nothing
    new, mark2 = items.since_mark(rows.conn, mark)
    assert [it["key"] for it in new] == [f"o:{o}", f"p:{p}"]
    assert items.since_mark(rows.conn, mark2)[0] == []
    assert items.Mark.decode(mark2.encode()) == mark2
    assert items.Mark.decode("garbage") is None and items.Mark.decode("o1.p2") is None


def test_detail_related_session_and_edit(rows: Rows) -> None:
    first = rows.obs("changed the parser", files_modified=["src/parse.py"], at=NOW)
    second = rows.obs("parser bug found", files_read=["src/parse.py", "src/other.py"], at=NOW + 5)
    rows.obs("elsewhere", files_read=["src/parse.py"], project="beta", session="b", at=NOW + 6)
    rows.prompt("look at the parser", at=NOW - 1)
    rows.summary("parser work", completed="fixed", at=NOW + 10)
    d = detail.observation(rows.conn, second)
    assert d["session"]["project"] == "alpha"
    assert [r["id"] for r in d["related"]] == [first]  # same file, same project only
    assert d["related"][0]["via"] == "src/parse.py"
    s = detail.session(rows.conn, d["session"]["id"])
    assert [t["prompt"] for t in s["turns"] if t["number"] == 1] == ["look at the parser"]
    assert s["summary"]["request"] == "parser work"
    assert sorted(o["id"] for t in s["turns"] for o in t["observations"]) == [first, second]
    with pytest.raises(detail.NotFound):
        detail.observation(rows.conn, 999)

    types = ["bugfix", "discovery"]
    obs = detail.edit(rows.conn, second, detail.check_edit({"title": "  parser  bug\nfixed ", "type": "bugfix"}, types))
    assert obs["title"] == "parser bug fixed" and obs["type"] == "bugfix"
    hit = rows.conn.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'fixed'").fetchall()
    assert [r[0] for r in hit] == [second]  # the search index follows the edit
    assert detail.edit(rows.conn, second, {"status": "retracted"})["status"] == "retracted"
    assert rows.conn.execute("SELECT status FROM observation_files WHERE observation_id = ?",
                             (second,)).fetchone()[0] == "retracted"


def test_every_field_of_a_memory_can_be_edited(rows: Rows) -> None:
    oid = rows.obs("Parser drops tabs", type="discovery", files_modified=["src/parse.py"])
    types = ["bugfix", "discovery"]
    changes = detail.check_edit({"title": "Parser keeps tabs", "subtitle": "since the fix", "type": "bugfix",
                                 "narrative": "The tokenizer\nnow keeps them.",
                                 "facts": ["tabs kept", " ", "tabs kept"],
                                 "concepts": ["gotcha"], "files_read": ["src/lex.py"],
                                 "files_modified": ["src/parse.py", "src/lex.py"], "importance": 8}, types)
    assert changes["facts"] == ["tabs kept"]  # blanks and repeats dropped
    obs = detail.edit(rows.conn, oid, changes)
    assert (obs["title"], obs["subtitle"], obs["type"]) == ("Parser keeps tabs", "since the fix", "bugfix")
    assert obs["narrative"] == "The tokenizer\nnow keeps them." and obs["facts"] == ["tabs kept"]
    assert obs["files_modified"] == ["src/parse.py", "src/lex.py"] and obs["concepts"] == ["gotcha"]
    c = rows.conn
    imp = c.execute("SELECT importance, user_importance FROM observations WHERE id = ?", (oid,)).fetchone()
    assert tuple(imp) == (8, 8)
    # The indexes follow: full text, the file index and the concept index.
    assert [r[0] for r in c.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'tokenizer'")] \
        == [oid]
    assert {r[0] for r in c.execute("SELECT path FROM observation_files WHERE observation_id = ?", (oid,))} \
        >= {"src/parse.py", "src/lex.py"}
    # A rebuild of the memory index keeps the importance set by hand; null gives it back to the index.
    from kenning.store import memory_index

    memory_index.reclassify(c, [oid])
    assert c.execute("SELECT importance FROM observations WHERE id = ?", (oid,)).fetchone()[0] == 8
    detail.edit(c, oid, {"importance": None})
    assert c.execute("SELECT user_importance FROM observations WHERE id = ?", (oid,)).fetchone()[0] is None
    assert c.execute("SELECT op FROM memory_log ORDER BY id DESC LIMIT 1").fetchone()[0] == "edited"


@pytest.mark.parametrize("body", [None, {}, [], {"title": ""}, {"title": 3}, {"title": "x" * 301},
                                  {"type": "nope"}, {"status": "superseded"}, {"narrative": 3}, {"title": "a\x00"},
                                  {"facts": "one fact"}, {"files_read": [1]}, {"importance": 11},
                                  {"importance": True}, {"layer": "rule"}, {"concepts": ["x"] * 201}])
def test_bad_edits_are_refused(body: object) -> None:
    with pytest.raises(ValueError):
        detail.check_edit(body, ["bugfix"])


def test_settings_form_and_problems() -> None:
    form = {d["name"]: d for d in settings_form.describe(Settings(), environ={"KENNING_LOG_LEVEL": "DEBUG"})}
    assert form["file_context"]["kind"] == "bool" and form["file_context"]["live"]
    assert form["provider"]["kind"] == "choice" and not form["provider"]["live"]
    assert form["context_observations"]["min"] == 0 and form["context_observations"]["common"]
    assert form["excluded_projects"]["kind"] == "list"
    assert form["log_level"]["env"] == "KENNING_LOG_LEVEL"
    assert set(settings_form.COMMON) <= set(form)
    assert settings_form.problems_by_name(["context_observations: must be at most 500", "unknown setting 'zz'"]) == {
        "context_observations": "must be at most 500", "zz": "unknown setting"}


def test_stats_days_include_empty_days(tmp_path: Path, rows: Rows) -> None:
    rows.obs("today", type="bugfix", at=NOW)
    rows.obs("today too", type="bugfix", at=NOW + 1)
    rows.obs("two days ago", type="change", at=NOW - 2 * 86400)
    rows.conn.commit()
    conn = connect(str(tmp_path / "kenning.db"), readonly=True)
    days = stats.days(conn, 3, now=NOW + 2)
    assert [d["total"] for d in days] == [1, 0, 2]
    assert days[-1]["observations"] == {"bugfix": 2}
    assert stats.totals(conn)["observations"] == 3


def test_concept_index_follows_inserts_updates_and_deletes(rows: Rows) -> None:
    a = rows.obs("a", concepts=["gotcha", "pattern"], at=NOW)
    b = rows.obs("b", concepts=["pattern"], at=NOW + 1)
    rows.conn.execute("UPDATE observations SET concepts = '\"not a list\"' WHERE id = ?", (b,))  # malformed: none

    def with_concept(c: str) -> list[int]:
        return [it["id"] for it in items.feed(rows.conn, items.FeedFilter(concept=c)).items]

    assert with_concept("pattern") == [a] and with_concept("gotcha") == [a]
    rows.conn.execute("UPDATE observations SET concepts = '[\"pattern\"]', created_at = ? WHERE id = ?", (NOW + 9, b))
    assert with_concept("pattern") == [b, a]
    rows.conn.execute("DELETE FROM observations WHERE id = ?", (a,))
    assert with_concept("pattern") == [b] and with_concept("gotcha") == []


def test_migration_backfills_the_concept_index(tmp_path: Path) -> None:
    import sqlite3

    from kenning.store.db import migrate

    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    conn.row_factory = sqlite3.Row
    migrate(conn, target=5)  # a database from before the viewer (0006)
    conn.execute("INSERT INTO sessions (agent_session_id, project, started_at) VALUES ('s', 'p', 1)")
    conn.execute("INSERT INTO observations (session_id, project, type, title, concepts, created_at, recorded_at, "
                 "content_hash) VALUES (1, 'p', 'bugfix', 't', '[\"gotcha\"]', 5, 5, 'h')")
    migrate(conn)
    assert [it["title"] for it in items.feed(conn, items.FeedFilter(concept="gotcha")).items] == ["t"]


def test_group_counts_match_the_rows_under_the_same_filters(rows: Rows) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    tz = ZoneInfo("Europe/Paris")
    rng = random.Random(3)
    made: list[tuple[float, str, str, str]] = []
    for i in range(150):
        at = NOW - rng.randrange(0, 6 * 86400)
        project = rng.choice(["alpha", "beta"])
        session = f"s{i % 7}"
        typ = rng.choice(["bugfix", "feature"])
        rows.obs(f"n{i}", project=project, session=session, type=typ, at=at, concepts=["gotcha"] if i % 3 else [])
        made.append((at, project, session, typ))
    rows.prompt("a real prompt", project="alpha", session="s1", at=NOW - 100)
    rows.conn.commit()
    for f in (items.FeedFilter(), items.FeedFilter(project="beta"), items.FeedFilter(types=("bugfix",)),
              items.FeedFilter(concept="gotcha", since=NOW - 3 * 86400)):
        page = items.feed(rows.conn, f, limit=200, tz=tz)
        assert page.counts is not None
        for day, n in page.counts["days"].items():
            assert n == sum(1 for it in page.items if datetime.fromtimestamp(it["at"], tz).strftime("%Y-%m-%d") == day)
        for sid, n in page.counts["sessions"].items():
            assert n == sum(1 for it in page.items if str(it["session_id"]) == sid)
        assert items.count(rows.conn, f) == len(page.items)
    # A page shorter than its days still counts the whole day.
    small = items.feed(rows.conn, items.FeedFilter(), limit=3, tz=tz)
    assert small.counts is not None and sum(small.counts["days"].values()) > 3


def test_filler_subtitles_are_not_shown_and_titles_cut_at_words(rows: Rows) -> None:
    rows.obs("Changed app.py", subtitle="0 created, 1 modified")
    rows.obs("We use pnpm", subtitle="stated by the user")
    rows.obs("Fixed the ledger", subtitle="rounding was half-even")
    rows.obs("word " * 60)
    got = {it["title"]: it["subtitle"] for it in items.feed(rows.conn, items.FeedFilter()).items}
    assert got["Changed app.py"] == "" and got["We use pnpm"] == ""
    assert got["Fixed the ledger"] == "rounding was half-even"
    long_title = next(t for t in got if t.startswith("word"))
    assert long_title.endswith("word…") and len(long_title) <= 160


def test_settings_form_sections_labels_and_modes() -> None:
    described = settings_form.describe(Settings(), environ={}, modes=["code", "code-chill", "mine"])
    by_name = {d["name"]: d for d in described}
    assert all(d["label"] and d["section"] in {s["id"] for s in settings_form.sections()} for d in described)
    assert by_name["mode"]["kind"] == "choice" and by_name["mode"]["choices"] == ["code", "code-chill", "mine"]
    assert settings_form.check_mode({"mode": "mine"}, ["code", "mine"]) == []
    assert "no mode 'nope'" in settings_form.check_mode({"mode": "nope"}, ["code"])[0]


def test_search_results_each_memory_once_counted_and_sorted() -> None:
    from types import SimpleNamespace

    from kenning.viewer import found

    def obs(i: int, at: float, head: int | None = None) -> dict[str, object]:
        return {"kind": "observation", "id": i, "at": at, "duplicate_of": head, "project": "p", "title": f"t{i}"}

    rows = [obs(1, 10), obs(2, 30, head=1), obs(3, 20), obs(4, 5),
            {"kind": "prompt", "id": 7, "at": 1, "project": "p", "title": "Why  does it retry?"},
            {"kind": "prompt", "id": 8, "at": 2, "project": "p", "title": "why does it retry?"}]
    hits = [SimpleNamespace(kind=r["kind"], id=r["id"], score=1.0 - n / 10) for n, r in enumerate(rows)]
    got = found.collect(hits, rows, lambda it: it["id"] != 4)
    assert [(it["kind"], it["id"]) for it in got.items] == [("observation", 1), ("observation", 3), ("prompt", 7)]
    assert got.merged == 2 and not got.more and got.items[0]["score"] == 1.0
    assert [it["id"] for it in found.collect(hits, rows, lambda it: True, "oldest").items] == [7, 4, 1, 3]
    assert [it["id"] for it in found.collect(hits, rows, lambda it: True, "newest").items] == [3, 1, 4, 7]
    with pytest.raises(ValueError):
        found.collect(hits, rows, lambda it: True, "best")
