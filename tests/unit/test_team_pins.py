"""Pins and unpins of a shared memory on their way to the team hub (migration 0038, kenning/team/sync.py): which
op tells the hub, under which clock, and when a value pulled from the hub may replace what is here.

A real store: the flags are raised by the database's triggers, whatever surface pinned or unpinned.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import team as tm
from kenning.store.db import open_db
from kenning.team import clock, hub, sync
from kenning.team.config import TeamConfig

ME, MATE = "0123456789abcdef", "fedcba9876543210"
GID = f"{ME}:1"
PROJECT, REMOTE = "/src/shop", "example.com/acme/shop"


def test_the_op_tells_the_pin_state_as_it_is_when_sent() -> None:
    assert sync.pin_op(False, "rule") is None  # nothing changed here: nothing to say
    assert sync.pin_op(True, "rule") == "pinned"
    assert sync.pin_op(True, "key") == "unpinned"
    assert sync.pin_op(True, "log") == "unpinned"  # the hub knows rules and key memories: not a rule is unpinned


def test_a_change_is_clocked_when_it_was_made_past_every_clock_seen_then() -> None:
    seen = f"{2_000_000_000_000:013d}.00003.{MATE}"  # a teammate whose wall clock runs ahead of ours
    mine = sync.change_clock(seen, ME, 1_999_999_999.0, last="")
    assert mine > seen and clock.parse(mine) == (2_000_000_000_000, 4)  # made after seeing theirs: sorts after
    # Made earlier than a teammate's change it had not seen: sorts before it, whenever either is sent.
    early = sync.change_clock("", ME, 1_700_000_000.0, last=seen)
    later = sync.change_clock("", MATE, 1_700_000_001.0, last="")
    assert early < later
    # A change flagged before migration 0038 kept no time: clocked now, past this device's last clock.
    assert sync.change_clock("", ME, None, last=seen) > seen


@pytest.fixture()
def shared(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A key memory of this machine, known to the hub (pushed), with a cursor that has seen a teammate's clock."""
    conn = open_db(str(tmp_path / "k.db"))
    door = MemoryService(conn, "cli")
    oid = door.save(ObservationDraft(type="bugfix", title="Invoice export timed out: the PDF renderer leaked handles",
                                     narrative="The invoice export timed out because the PDF renderer leaked file "
                                               "handles; closing them fixed it.", created_at=time.time()),
                    project=PROJECT).id
    assert conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0] != "rule"
    team = MemoryService(conn, "team")
    team.team_links([(oid, GID, "alpha", f"{1_700_000_000_000:013d}.00000.{ME}", "ana")])
    team.team_pushed([GID])
    team.team_cursor("alpha", hlc=f"{1_700_000_000_500:013d}.00000.{MATE}")
    yield conn, door, oid
    conn.close()


def _flags(conn, gid: str = GID) -> tuple[int, int, str]:  # type: ignore[no-untyped-def]
    row = conn.execute("SELECT pinned, edited, edit_hlc FROM team_links WHERE gid = ?", (gid,)).fetchone()
    return int(row[0]), int(row[1]), str(row[2])


def _round(conn) -> tuple[list[hub.Op], list[tuple[str, str]]]:  # type: ignore[no-untyped-def]
    """The changes a push would send now (what sync.push appends for them), without a hub."""
    cfg = TeamConfig(dsn="", team="alpha", user="ana", device=ME, projects={REMOTE: PROJECT})
    ops: list[hub.Op] = []
    changes, _last = sync._changes(conn, cfg, sync.Space("alpha"), {PROJECT: REMOTE}, sync.Report(), ops,
                                   tm.cursor(conn, "alpha")[1])
    return ops, changes


def test_pin_then_unpin_sent_in_order_each_as_an_op_and_acknowledged(shared) -> None:  # type: ignore[no-untyped-def]
    conn, door, oid = shared
    door.pin(oid)
    assert _flags(conn)[0] == 1
    seen_then = conn.execute("SELECT seen_hlc FROM team_links WHERE gid = ?", (GID,)).fetchone()[0]
    assert seen_then.endswith("." + MATE)
    ops, changes = _round(conn)
    assert [(o.kind, o.project) for o in ops] == [("pinned", REMOTE)]
    pin_clock = ops[0].hlc
    assert pin_clock > seen_then  # after what this machine had seen when the pin was made
    assert _round(conn)[0][0].hlc == pin_clock  # a retry before the answer is the very same op
    MemoryService(conn, "team").team_pushed(changes=changes)
    assert _flags(conn) == (0, 0, "")
    assert _round(conn) == ([], [])
    # Taken back after the hub had it: an `unpinned` op, clocked after the pin.
    door.unpin(oid)
    ops, changes = _round(conn)
    assert [o.kind for o in ops] == ["unpinned"] and ops[0].hlc > pin_clock
    MemoryService(conn, "team").team_pushed(changes=changes)
    assert _flags(conn) == (0, 0, "")


def test_a_pin_taken_back_before_it_was_sent_is_sent_as_an_unpin(shared) -> None:  # type: ignore[no-untyped-def]
    conn, door, oid = shared
    door.pin(oid)
    door.unpin(oid)
    # Never a `pinned`: the last thing done here is the unpin, which must win over a teammate's pin made
    # meanwhile (the hub orders the two by their clocks).
    assert [o.kind for o in _round(conn)[0]] == ["unpinned"]


def test_a_change_made_while_an_earlier_one_was_on_its_way_gets_a_new_clock(shared) -> None:  # type: ignore[no-untyped-def]
    conn, door, oid = shared
    door.pin(oid)
    first = _round(conn)[0][0].hlc  # sent, no answer yet
    door.unpin(oid)
    assert _flags(conn)[2] == ""  # the clock of the pin no longer names what is here
    ops, _ = _round(conn)
    assert [o.kind for o in ops] == ["unpinned"] and ops[0].hlc > first
    MemoryService(conn, "team").team_pushed(changes=[(GID, first)])  # the late answer to the pin
    assert _flags(conn)[0] == 1  # the unpin still waits


def test_a_value_from_the_hub_never_overwrites_a_pin_or_unpin_not_yet_sent(shared) -> None:  # type: ignore[no-untyped-def]
    conn, door, oid = shared
    team = MemoryService(conn, "team")
    door.pin(oid)
    # The hub's older state (key) arrives before this machine sent its pin: the pin stays, and is sent.
    assert not team.hub_layer(GID, "key")
    assert conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0] == "rule"
    ops, changes = _round(conn)
    assert [o.kind for o in ops] == ["pinned"]
    team.team_pushed(changes=changes)
    # Then a teammate unpins it (later clock, resolved on the hub): this machine follows, and sends nothing back.
    assert team.hub_layer(GID, "key")
    assert tuple(conn.execute("SELECT layer, user_layer FROM observations WHERE id = ?", (oid,)).fetchone()) == \
        ("key", "key")
    assert _flags(conn) == (0, 0, "") and _round(conn) == ([], [])
    assert team.hub_layer(GID, "rule") and not team.hub_layer(GID, "rule")  # pinned again: followed once
    assert conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0] == "rule"


def test_a_teammates_unpin_of_a_pulled_rule_is_followed_and_not_sent_back(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    team = MemoryService(conn, "team")
    gid = f"{MATE}:7"
    oid = team.from_hub(tm.Pulled(gid=gid, team="alpha", remote=REMOTE, layer="rule", type="decision",
                                  title="Every entity gets a migration", text="Every entity gets a CREATE TABLE "
                                  "migration.", author="bo", reviewer="li", reviewed_at=1.0, created_at=1.0))
    assert oid is not None and _flags(conn, gid) == (0, 0, "")
    assert team.hub_changed(gid, "Every entity gets a migration", "Every entity gets a CREATE TABLE migration.",
                            "key")
    assert conn.execute("SELECT layer FROM observations WHERE id = ?", (oid,)).fetchone()[0] == "key"
    assert _flags(conn, gid) == (0, 0, "")
    conn.close()
