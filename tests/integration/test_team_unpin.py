"""Unpinning a shared memory reaches every machine, and the later of two pin changes wins whatever order they
reach the hub in (a real PostgreSQL hub, two developer sandboxes with their own HOME and worker)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.integration.test_team_hub import Dev, _hub_ops, _hub_rows, teammates
from tests.support import postgres

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def hub() -> Iterator[postgres.Server]:
    with postgres.server() as srv:
        yield srv


@pytest.fixture(scope="module")
def pair(hub: postgres.Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dev, Dev]]:
    with teammates(hub, tmp_path_factory) as (a, b):
        yield a, b


def _shared(hub: postgres.Server, a: Dev, b: Dev, prompt: str, words: str) -> tuple[str, int, int]:
    """A key memory A said, approved by B and on both machines: (gid, its id on A, its id on B)."""
    a.say(prompt)
    a.flush()
    a.wait_pushed(words)
    gid, layer = _hub_rows(hub, "SELECT gid, layer FROM kenning.memories WHERE title LIKE %s", f"%{words}%")[0]
    assert layer == "key"
    b.team("review", "--approve", gid)
    b.wait("SELECT 1 FROM team_links WHERE gid = ?", gid)
    return gid, _oid(a, gid), _oid(b, gid)


def _oid(dev: Dev, gid: str) -> int:
    return int(dev.rows("SELECT observation_id FROM team_links WHERE gid = ?", gid)[0][0])


def _do(dev: Dev, verb: str, oid: int) -> None:
    r = dev.kenning(verb, str(oid))
    assert r.returncode == 0, r.stdout + r.stderr


def _rule(dev: Dev, gid: str, want: bool) -> None:
    """Until the machine's copy of ``gid`` is (or is not) a standing rule."""
    op = "=" if want else "!="
    dev.wait(f"SELECT 1 FROM observations o JOIN team_links l ON l.observation_id = o.id WHERE l.gid = ? "
             f"AND o.layer {op} 'rule'", gid)


def _told(dev: Dev, words: str) -> str:
    """The line of the session-start index's team section that names ``words``."""
    return next(line for line in dev.session_start().splitlines() if words in line and "from ana" in line)


def _hub_layer(hub: postgres.Server, gid: str) -> str:
    return str(_hub_rows(hub, "SELECT layer FROM kenning.memories WHERE gid = %s", gid)[0][0])


def test_pin_sync_unpin_sync_leaves_every_machine_unpinned_whoever_does_it(hub: postgres.Server,
                                                                           pair: tuple[Dev, Dev]) -> None:
    a, b = pair
    gid, on_a, on_b = _shared(hub, a, b, "We decided to cache exchange rates for an hour because the provider "
                                         "rate-limits every account", "exchange rates")
    _do(a, "pin", on_a)
    _rule(b, gid, True)
    assert _told(b, "exchange rates").startswith("- [rule]")
    _do(a, "unpin", on_a)
    _rule(b, gid, False)
    assert _hub_layer(hub, gid) == "key"
    assert _told(b, "exchange rates").startswith("- [note]")  # what B's next session is told
    # The teammate pins A's memory, then takes the pin back: A's own copy follows both.
    _do(b, "pin", on_b)
    _rule(a, gid, True)
    _do(b, "unpin", on_b)
    _rule(a, gid, False)
    assert _hub_layer(hub, gid) == "key"
    for dev in (a, b):  # what a machine applied is not sent back; its own change is sent once
        dev.wait("SELECT 1 FROM team_links WHERE pinned = 1 OR edited = 1", want=False)
    time.sleep(2.5)
    assert (_hub_ops(hub, gid, "pinned"), _hub_ops(hub, gid, "unpinned")) == (2, 2)
    assert [r[0] for r in _hub_rows(hub, "SELECT author FROM kenning.ops WHERE gid = %s AND kind IN ('pinned', "
                                         "'unpinned') ORDER BY hlc", gid)] == ["ana", "ana", "li", "li"]


def test_the_later_change_wins_whichever_reaches_the_hub_first(hub: postgres.Server, pair: tuple[Dev, Dev]) -> None:
    a, b = pair
    gid, on_a, on_b = _shared(hub, a, b, "We decided to sign webhooks with a per-tenant secret because one "
                                         "shared secret leaked once", "webhooks")
    # Offline, both: B pins; later, A pins and takes it back. A's unpin is the later change.
    a.stop_worker()
    b.stop_worker()
    try:
        _do(b, "pin", on_b)
        time.sleep(0.05)
        _do(a, "pin", on_a)
        _do(a, "unpin", on_a)
        b.team("push")  # B's earlier pin reaches the hub first
        assert _hub_layer(hub, gid) == "rule"
        # A pulls the hub's older pin before it sent its unpin: what A did is not overwritten.
        a.team("pull")
        assert a.rows("SELECT layer FROM observations WHERE id = ?", on_a)[0][0] != "rule"
    finally:
        a.start_worker()
        b.start_worker()
    _rule(b, gid, False)  # A's later unpin, sent last, wins on the hub and on B
    assert _hub_layer(hub, gid) == "key"
    _rule(a, gid, False)

    # And the other way round: A's unpin is the earlier change, B's pin the later, and A's arrives last.
    a.stop_worker()
    b.stop_worker()
    try:
        _do(a, "pin", on_a)
        _do(a, "unpin", on_a)
        time.sleep(0.05)
        _do(b, "pin", on_b)
        b.team("push")
        assert _hub_layer(hub, gid) == "rule"
        a.team("push")  # the earlier unpin arrives after the later pin: it loses
        assert _hub_layer(hub, gid) == "rule"
    finally:
        a.start_worker()
        b.start_worker()
    _rule(a, gid, True)  # A follows the winner
    _rule(b, gid, True)
    for dev in (a, b):
        dev.wait("SELECT 1 FROM team_links WHERE pinned = 1 OR edited = 1", want=False)
