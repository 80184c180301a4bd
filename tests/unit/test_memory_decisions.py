"""A user's layer decisions (kenning/store/decisions.py): pin, unpin, unarchive, on a real migrated
database, checked against what the session-start index injects, and kept over index rebuilds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kenning.context.session_start import build
from kenning.settings import Settings
from kenning.store import decisions, memory_index, repo, supersede
from kenning.store.repo import transaction
from kenning.viewer import detail, items
from tests.support.search_rows import Rows

NOW = time.time()
DAY = 86400.0
RULES = "## Standing rules and preferences"
SETTINGS = Settings(archive_after_days=30)


def rules_block(rows: Rows, project: str = "alpha") -> str:
    text = build(rows.conn, SETTINGS, project, now=NOW)
    if RULES not in text:
        return ""
    return text.split(RULES, 1)[1].split("\n## ", 1)[0]


def layer(rows: Rows, oid: int) -> str:
    return str(rows.conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0])


def rebuild(rows: Rows) -> None:
    with transaction(rows.conn):
        memory_index.rebuild(rows.conn)


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    r = Rows(str(tmp_path / "k.db"))
    r.conn.row_factory = None
    return r


def test_pin_makes_a_memory_a_standing_rule_the_index_injects_and_a_rebuild_keeps_it(rows: Rows) -> None:
    gotcha = rows.obs("The integration tests need the fake S3 endpoint on port 9000", type="discovery", at=NOW - DAY)
    assert layer(rows, gotcha) == "key"
    assert "fake S3 endpoint" not in rules_block(rows)
    out = decisions.pin(rows.conn, gotcha)
    assert out["layer"] == "rule" and out["previous"] == "key" and out["pinned"]
    assert layer(rows, gotcha) == "rule"
    assert "fake S3 endpoint" in rules_block(rows)
    # A rebuild derives every layer again (key for this one) and keeps the user's decision on top.
    rebuild(rows)
    assert layer(rows, gotcha) == "rule" and "fake S3 endpoint" in rules_block(rows)
    with pytest.raises(decisions.DecisionError, match="already a standing rule") as e:
        decisions.pin(rows.conn, gotcha)
    assert e.value.kind == "conflict"
    # Unpinning a memory that was a rule only by the pin: back to what it says.
    assert decisions.unpin(rows.conn, gotcha)["layer"] == "key"
    rebuild(rows)
    assert layer(rows, gotcha) == "key" and "fake S3 endpoint" not in rules_block(rows)
    assert rows.conn.execute("SELECT user_layer FROM observations WHERE id = ?", (gotcha,)).fetchone()[0] is None


def test_unpin_demotes_a_derived_rule_for_good(rows: Rows) -> None:
    rule = rows.obs("We always use pnpm, never npm", type="decision", at=NOW - DAY)
    assert layer(rows, rule) == "rule" and "pnpm" in rules_block(rows)
    with pytest.raises(decisions.DecisionError, match="not a standing rule"):
        decisions.unpin(rows.conn, rows.obs("Read the README", type="discovery", at=NOW - DAY))
    out = decisions.unpin(rows.conn, rule)
    assert out["layer"] == "key" and out["decided"] == "key"
    assert "pnpm" not in rules_block(rows)
    rebuild(rows)  # by what it says it is a rule: the demotion is what keeps it out
    assert layer(rows, rule) == "key" and "pnpm" not in rules_block(rows)
    assert "pnpm" in build(rows.conn, SETTINGS, "alpha", now=NOW)  # still a key memory, just not a rule


def test_a_restatement_of_a_pinned_memory_stays_pinned(rows: Rows) -> None:
    first = rows.obs("Staging deploys need the VPN profile kenning-stage", type="discovery", at=NOW - 2 * DAY)
    decisions.pin(rows.conn, first)
    again = rows.obs("Staging deploys need the VPN profile kenning-stage", type="discovery", session="s2",
                     at=NOW - DAY)
    r = rows.conn.execute("SELECT duplicate_of, layer, user_layer FROM observations WHERE id = ?", (first,)).fetchone()
    new = rows.conn.execute("SELECT duplicate_of, layer, user_layer, occurrences FROM observations WHERE id = ?",
                            (again,)).fetchone()
    assert r[0] == again and tuple(new) == (None, "rule", "rule", 2)  # the new head inherits the pin
    rebuild(rows)
    assert rows.conn.execute("SELECT layer FROM observations WHERE id = ?", (again,)).fetchone()[0] == "rule"
    assert rules_block(rows).count("kenning-stage") == 1


def test_pin_refuses_inactive_missing_and_foreign_memories(rows: Rows) -> None:
    gone = rows.obs("Use make lint", type="decision", status="superseded", at=NOW - DAY)
    with pytest.raises(decisions.DecisionError, match="is superseded: restore it first"):
        decisions.pin(rows.conn, gone)
    with pytest.raises(decisions.DecisionError) as e:
        decisions.pin(rows.conn, 424242)
    assert e.value.kind == "not_found"
    beta = rows.obs("Beta uses tabs", type="discovery", project="beta", at=NOW - DAY)
    with pytest.raises(decisions.DecisionError) as e:
        decisions.pin(rows.conn, beta, project="alpha")
    assert e.value.kind == "wrong_project" and layer(rows, beta) != "rule"
    assert decisions.pin(rows.conn, beta, project="beta")["layer"] == "rule"
    assert "Beta uses tabs" not in rules_block(rows, "alpha") and "Beta uses tabs" in rules_block(rows, "beta")


def test_unarchive_brings_aged_routine_work_back(rows: Rows) -> None:
    old = rows.obs("Explored src/ledger/ for the rounding helper", type="discovery", at=NOW - 40 * DAY)
    fresh = rows.obs("Explored src/api/ for the router", type="discovery", at=NOW - DAY)
    assert layer(rows, old) == "log"
    cutoff = decisions.archive_cutoff(30, NOW)
    feed = items.feed(rows.conn, items.FeedFilter(memory="archived", archive_before=cutoff))
    assert [it["id"] for it in feed.items] == [old] and feed.items[0]["archived"]
    assert [it["id"] for it in items.feed(rows.conn, items.FeedFilter(memory="log", archive_before=cutoff)).items] \
        == [fresh]
    assert "rounding helper" not in build(rows.conn, SETTINGS, "alpha", now=NOW)
    with pytest.raises(decisions.DecisionError, match="not in the archive yet"):
        decisions.unarchive(rows.conn, fresh, archive_after_days=30, now=NOW)
    with pytest.raises(decisions.DecisionError, match="archiving is off"):
        decisions.unarchive(rows.conn, old, archive_after_days=0, now=NOW)
    assert decisions.unarchive(rows.conn, old, archive_after_days=30, now=NOW)["layer"] == "key"
    assert "rounding helper" in build(rows.conn, SETTINGS, "alpha", now=NOW)
    rebuild(rows)
    assert layer(rows, old) == "key"
    assert items.feed(rows.conn, items.FeedFilter(memory="archived", archive_before=cutoff)).items == []
    with pytest.raises(decisions.DecisionError, match="not in the archive: a key memory never ages out"):
        decisions.unarchive(rows.conn, old, archive_after_days=30, now=NOW)


def test_feed_views_and_lineage_of_a_superseded_memory(rows: Rows) -> None:
    old = rows.obs("We use npm for package installs", type="decision", at=NOW - 3 * DAY)
    new = rows.obs("Use pnpm, not npm", type="decision", session="s2", at=NOW - DAY)
    with transaction(rows.conn):
        assert supersede.automatic(rows.conn, [new]) == [(old, new)]  # the offline rule, as the pipeline runs it
    status = rows.conn.execute("SELECT status, superseded_by FROM observations WHERE id = ?", (old,)).fetchone()
    assert tuple(status) == ("superseded", new)
    every = items.feed(rows.conn, items.FeedFilter())
    assert old not in [it["id"] for it in every.items]  # hidden by default
    assert items.count(rows.conn, items.FeedFilter(kinds=("observation",))) == 1
    gone = items.feed(rows.conn, items.FeedFilter(memory="superseded"))
    assert [it["id"] for it in gone.items] == [old] and gone.items[0]["superseded_by"] == new
    assert [it["id"] for it in items.feed(rows.conn, items.FeedFilter(memory="rule")).items] == [new]
    rows.conn.row_factory = __import__("sqlite3").Row
    o = detail.observation(rows.conn, old)["memory"]
    assert o["superseded_by"]["id"] == new and o["superseded_by"]["title"] == "Use pnpm, not npm"
    assert o["superseded_by"]["shared"] and all(":" in s for s in o["superseded_by"]["shared"])
    n = detail.observation(rows.conn, new)["memory"]
    assert [it["id"] for it in n["replaced"]] == [old] and n["layer"] == "rule"


def test_current_memories_shown_to_the_llm_observer_follow_the_pin(rows: Rows) -> None:
    gotcha = rows.obs("The ledger rounds half to even", type="discovery", at=NOW - DAY)
    decisions.pin(rows.conn, gotcha)
    rows.conn.row_factory = __import__("sqlite3").Row
    assert {m["id"]: m["layer"] for m in repo.current_memories(rows.conn, "alpha")}[gotcha] == "rule"


def test_a_pin_survives_export_and_import(rows: Rows, tmp_path: Path) -> None:
    from kenning.store import transfer

    gotcha = rows.obs("The ledger rounds half to even", type="discovery", at=NOW - DAY)
    decisions.pin(rows.conn, gotcha)
    rows.conn.row_factory = __import__("sqlite3").Row
    lines = list(transfer.export_lines(transfer.export(rows.conn)))
    other = Rows(str(tmp_path / "other.db"))
    transfer.import_records(other.conn, transfer.read_jsonl(lines))
    assert "rounds half to even" in rules_block(other)
    bad = [ln.replace('"user_layer": "rule"', '"user_layer": "sticky"') for ln in lines]
    with pytest.raises(transfer.BadRecord, match="user_layer must be one of rule, key"):
        transfer.import_records(Rows(str(tmp_path / "third.db")).conn, transfer.read_jsonl(bad))


def test_decisions_column_follows_the_schema(tmp_path: Path) -> None:
    """Migration 0012 indexes before 0019 adds user_layer: the check must say no, then yes, on one connection."""
    import sqlite3

    conn = sqlite3.connect(tmp_path / "x.db")
    assert not memory_index.decisions_column(conn)  # no table yet
    conn.execute("CREATE TABLE observations (id INTEGER PRIMARY KEY, layer TEXT)")
    assert not memory_index.decisions_column(conn)
    conn.execute("ALTER TABLE observations ADD COLUMN user_layer TEXT")
    assert memory_index.decisions_column(conn)
    conn.close()
