"""Reviewing team memories: the word diff a reviewer sees (kenning/team/diff.py), the bounds and secret scan
of an edit at approval (kenning/team/review.py), and which wording a machine keeps when a reviewer's edit
meets an edit of its own not sent yet (kenning/store/team.py apply_hub_change, on a real store)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store.db import open_db
from kenning.team import hub
from kenning.team.config import TeamError
from kenning.team.diff import changed, marked, tokens, word_diff
from kenning.team.review import check_edit


def _sides(diff: list[tuple[str, str]]) -> tuple[str, str]:
    return "".join(t for op, t in diff if op != "+"), "".join(t for op, t in diff if op != "-")


def test_an_english_edit_marks_the_words_that_changed_and_nothing_else() -> None:
    old = "From now on the orders database is backed up every night, at two."
    new = "From now on the orders database is backed up every four hours, at two."
    diff = word_diff(old, new)
    assert diff == [("=", "From now on the orders database is backed up every "), ("-", "night"),
                    ("+", "four hours"), ("=", ", at two.")]
    assert _sides(diff) == (old, new)
    assert marked(diff) == "From now on the orders database is backed up every [-night-]{+four hours+}, at two."
    # Whole words, never letters: "backup" → "backups" is one word replaced.
    assert word_diff("one backup", "one backups") == [("=", "one "), ("-", "backup"), ("+", "backups")]
    # In colour (on a terminal) the marks give way to red and green.
    assert "\x1b[" in marked(diff, colour=True) and "[-" not in marked(diff, colour=True)


def test_a_chinese_edit_is_diffed_per_character() -> None:
    old = "每个新的数据库实体都需要一个迁移文件"
    new = "每个新的数据库实体都需要两个迁移脚本"
    assert tokens("数据库 migration") == ["数", "据", "库", " ", "migration"]
    diff = word_diff(old, new)
    assert diff == [("=", "每个新的数据库实体都需要"), ("-", "一"), ("+", "两"), ("=", "个迁移"), ("-", "文件"),
                    ("+", "脚本")]
    assert _sides(diff) == (old, new)
    # Mixed with Latin words, each keeps its own unit.
    mixed = word_diff("部署用 blue 流水线", "部署用 green 流水线")
    assert mixed == [("=", "部署用 "), ("-", "blue"), ("+", "green"), ("=", " 流水线")]


def test_an_unchanged_text_has_no_change_and_an_all_new_one_is_one_addition() -> None:
    same = "Every entity gets a CREATE TABLE migration."
    assert word_diff(same, same) == [("=", same)] and not changed(word_diff(same, same))
    assert marked(word_diff(same, same)) == same
    assert word_diff("", "A brand new rule") == [("+", "A brand new rule")]
    assert word_diff("An old rule", "") == [("-", "An old rule")]
    assert word_diff("", "") == []
    # Nothing in common: one removal, one addition (spaces between changed words are not kept apart).
    assert word_diff("alpha beta gamma", "delta epsilon zeta") == [("-", "alpha beta gamma"),
                                                                     ("+", "delta epsilon zeta")]


def test_an_edit_at_review_is_bounded_and_scanned_for_secrets() -> None:
    assert check_edit("a:1", "  Deploys go out on Tuesdays ", " only then\n") == ("Deploys go out on Tuesdays",
                                                                                  "only then")
    with pytest.raises(TeamError, match="needs a title"):
        check_edit("a:1", "  ", "text")
    with pytest.raises(TeamError, match=f"at most {hub.MAX_TITLE}"):
        check_edit("a:1", "t" * (hub.MAX_TITLE + 1), "")
    with pytest.raises(TeamError, match=f"{hub.MAX_TEXT} of text"):
        check_edit("a:1", "t", "x" * (hub.MAX_TEXT + 1))
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(TeamError, match="holds a secret") as e:
        check_edit("a:1", "Deploy with the shared token", f"use {token}")
    assert token not in str(e.value)


GID = "0123456789abcdef:1"
CLOCK = "1700000000000.00000.0123456789abcdef"


def _shared(tmp_path: Path) -> tuple[MemoryService, int]:
    conn = open_db(str(tmp_path / "k.db"))
    door = MemoryService(conn, "cli")
    oid = door.save(ObservationDraft(type="decision", title="Backups run every night", narrative="Backups run "
                                     "every night at two", created_at=time.time(), kind="rule"), project="/src/shop").id
    team = MemoryService(conn, "team")
    team.team_links([(oid, GID, "alpha", CLOCK, "ana")])
    team.team_pushed([GID])
    return team, oid


def _row(team: MemoryService, oid: int) -> tuple[object, ...]:
    return tuple(team.conn.execute("SELECT o.title, l.edited, l.edit_hlc FROM observations o JOIN team_links l "
                                   "ON l.observation_id = o.id WHERE o.id = ?", (oid,)).fetchone())


def test_a_reviewers_edit_is_followed_here_and_not_sent_back(tmp_path: Path) -> None:
    team, oid = _shared(tmp_path)
    hub_clock = "1700000005000.00000.fedcba9876543210"  # the reviewer's device
    assert team.hub_changed(GID, "Backups run every four hours", "Backups run every four hours", "rule", hlc=hub_clock)
    assert _row(team, oid) == ("Backups run every four hours", 0, "")


def test_an_unsent_local_edit_wins_over_a_reviewers_edit_unless_its_clock_is_older(tmp_path: Path) -> None:
    team, oid = _shared(tmp_path)
    MemoryService(team.conn, "cli").edit(oid, {"title": "Backups run every night and are tested"})
    assert _row(team, oid) == ("Backups run every night and are tested", 1, "")
    hub_clock = "1700000005000.00000.fedcba9876543210"
    # Its clock is not fixed yet: it will be after the hub's change (the pull saw it), so it is kept, and sent.
    assert not team.hub_changed(GID, "Backups run every four hours", "", "rule", hlc=hub_clock)
    assert _row(team, oid) == ("Backups run every night and are tested", 1, "")
    # A clock fixed before the hub's change (a push that failed earlier): the hub will drop it; the copy follows
    # the hub and nothing is sent.
    team.team_edit_clocks([(GID, "1700000001000.00000.0123456789abcdef")])
    assert team.hub_changed(GID, "Backups run every four hours", "", "rule", hlc=hub_clock)
    assert _row(team, oid) == ("Backups run every four hours", 0, "")
    # A clock fixed after it: the local edit wins at the hub too, so it stays here.
    MemoryService(team.conn, "cli").edit(oid, {"title": "Backups run hourly"})
    team.team_edit_clocks([(GID, "1700000009000.00000.0123456789abcdef")])
    assert not team.hub_changed(GID, "Backups run every four hours", "", "rule", hlc=hub_clock)
    assert _row(team, oid) == ("Backups run hourly", 1, "1700000009000.00000.0123456789abcdef")
