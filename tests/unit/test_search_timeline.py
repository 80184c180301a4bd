"""timeline() and get_observations()."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.search.service import get_observations, timeline
from tests.support.search_rows import NOW, Rows


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    return Rows(str(tmp_path / "kenning.db"))


def test_timeline_around_an_id_is_chronological_and_in_the_project(rows: Rows) -> None:
    made = [rows.obs(f"step {i} of the migration", at=NOW + i * 60) for i in range(8)]
    rows.obs("other project step", project="beta", session="b1", at=NOW + 200)
    s = rows.summary("migrate the schema", at=NOW + 1000)
    t = timeline(rows.conn, anchor=made[4], before=2, after=3)
    assert t["anchor"]["id"] == made[4]
    assert [h["id"] for h in t["before"]] == made[2:4]
    assert [(h["kind"], h["id"]) for h in t["after"]] == [("observation", made[5]), ("observation", made[6]),
                                                          ("observation", made[7])]
    t = timeline(rows.conn, anchor=made[7], before=0, after=5)
    assert t["before"] == [] and [(h["kind"], h["id"]) for h in t["after"]] == [("summary", s)]
    assert all(h["project"] == "alpha" for h in t["after"])


def test_timeline_equal_timestamps_do_not_repeat(rows: Rows) -> None:
    made = [rows.obs(f"same second {i}", at=NOW) for i in range(5)]
    t = timeline(rows.conn, anchor=made[2], before=5, after=5)
    assert [h["id"] for h in t["before"]] == made[:2]
    assert [h["id"] for h in t["after"]] == made[3:]


def test_timeline_by_query(rows: Rows) -> None:
    rows.obs("setup", at=NOW)
    target = rows.obs("the flaky websocket test", at=NOW + 60)
    rows.obs("cleanup", at=NOW + 120)
    t = timeline(rows.conn, query="websocket flaky", before=1, after=1)
    assert t["anchor"]["id"] == target
    assert [h["title"] for h in t["before"] + t["after"]] == ["setup", "cleanup"]


def test_timeline_errors(rows: Rows) -> None:
    a = rows.obs("alpha thing")
    with pytest.raises(ValueError):
        timeline(rows.conn, anchor=999)
    with pytest.raises(ValueError):
        timeline(rows.conn, query="nothing matches this")
    with pytest.raises(ValueError):
        timeline(rows.conn)
    with pytest.raises(ValueError):
        timeline(rows.conn, anchor=a, project="beta")


def test_timeline_hides_sensitive_unless_scoped(rows: Rows) -> None:
    a = rows.obs("before it", at=NOW)
    s = rows.obs("the staging password lives in vault", type="sensitive", at=NOW + 60)
    with pytest.raises(ValueError):
        timeline(rows.conn, anchor=s)
    assert timeline(rows.conn, anchor=s, project="alpha")["anchor"]["id"] == s
    assert timeline(rows.conn, anchor=a)["after"] == []
    assert [h["id"] for h in timeline(rows.conn, anchor=a, project="alpha")["after"]] == [s]


def test_get_observations_full_records_in_order(rows: Rows) -> None:
    a = rows.obs("first", facts=["f1", "f2"], concepts=["gotcha"], files_modified=["a.py"], narrative="long story")
    b = rows.obs("second")
    got = get_observations(rows.conn, [b, 12345, a, b, "x", -1])  # type: ignore[list-item]
    assert [g["id"] for g in got] == [b, a]
    full = got[1]
    assert full["facts"] == ["f1", "f2"] and full["concepts"] == ["gotcha"] and full["files_modified"] == ["a.py"]
    assert full["narrative"] == "long story" and full["tokens"] > 0 and full["project"] == "alpha"
    assert get_observations(rows.conn, []) == []


def test_get_observations_sensitive_needs_its_project(rows: Rows) -> None:
    s = rows.obs("secret-ish", type="sensitive")
    assert get_observations(rows.conn, [s]) == []
    assert get_observations(rows.conn, [s], project="beta") == []
    assert [g["id"] for g in get_observations(rows.conn, [s], project="alpha")] == [s]
