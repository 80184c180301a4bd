"""The hub killed while a batch push is in flight (a real PostgreSQL server, killed with ``pg_ctl -m immediate``).

A trigger installed by the test (not part of the schema) makes every insert into ``kenning.ops`` count itself
in a sequence (sequences are not transactional: the count is visible from outside the open transaction) and
sleep a little, so the kill lands inside the push's transaction with part of the batch already inserted.
Then: nothing of the batch is on the hub, nothing is marked sent on the machine; after the restart one
round sends each op exactly once, and a teammate's machine converges on the same set, each memory once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.test_team_hub import Dev, _hub_rows
from tests.support import postgres
from tests.support.team_rules import rules

psycopg = pytest.importorskip("psycopg")

N = 40  # memories in the one batch the kill interrupts
SLOW = """
CREATE SEQUENCE IF NOT EXISTS public.push_probe;
CREATE OR REPLACE FUNCTION public.slow_push() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('public.push_probe');
    PERFORM pg_sleep(0.1);
    RETURN NEW;
END $$;
GRANT USAGE ON SEQUENCE public.push_probe TO kenning_member;
CREATE TRIGGER slow_push BEFORE INSERT ON kenning.ops FOR EACH ROW EXECUTE FUNCTION public.slow_push();
"""


@pytest.fixture(scope="module")
def hub() -> Iterator[postgres.Server]:
    with postgres.server() as srv:
        yield srv


@pytest.fixture()
def pair(hub: postgres.Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dev, Dev, dict[str, str]]]:
    a, b = Dev(tmp_path_factory.mktemp("ana")), Dev(tmp_path_factory.mktemp("li"))
    a.team("init", "--dsn", hub.dsn(), "--team", "alpha", "--member", "ana", "--member", "li",
           password=hub.admin_password)
    made = json.loads((a.data / "team-alpha-members.json").read_text())
    b.start_worker()  # the teammate syncs in the background; A's rounds run here, one by one
    for dev, user in ((a, "ana"), (b, "li")):
        dev.team("join", "--dsn", hub.dsn(user), "--team", "alpha", password=made[user])
    yield a, b, made
    b.stop_worker()


def _save_rules(dev: Dev, n: int, who: str = "q") -> list[int]:
    from kenning.memory_service import MemoryService
    from kenning.observer.base import ObservationDraft
    from kenning.store.db import open_db

    key = dev.rows("SELECT key FROM projects WHERE remote != '' LIMIT 1")[0][0]
    conn = open_db(str(dev.paths.db))
    try:
        door = MemoryService(conn, "cli")
        return [door.save(ObservationDraft(type="decision", title=title, narrative=text, created_at=time.time(),
                                           kind="rule"), project=key).id for title, text in rules(n, who=who)]
    finally:
        conn.close()


def test_the_hub_killed_inside_a_push_transaction_loses_nothing_and_doubles_nothing(
        hub: postgres.Server, pair: tuple[Dev, Dev, dict[str, str]]) -> None:
    from kenning.store.db import open_db
    from kenning.team import sync
    from kenning.team.config import TeamError

    a, b, made = pair
    ids = _save_rules(a, N)
    with hub.connect() as conn:
        conn.execute(SLOW)
    outcome: dict[str, Any] = {}

    def push_round() -> None:
        conn = open_db(str(a.paths.db))
        try:
            outcome["report"] = sync.once(a.paths, conn, do_pull=False)
        except Exception as e:  # what the worker's round catches and logs
            outcome["error"] = e
        finally:
            conn.close()

    pusher = threading.Thread(target=push_round)
    pusher.start()
    deadline = time.monotonic() + 30
    inserted = 0
    while time.monotonic() < deadline:  # until a third of the batch is inside the open transaction
        inserted = _hub_rows(hub, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.push_probe")[0][0]
        if inserted >= N // 3:
            break
        time.sleep(0.05)
    assert N // 3 <= inserted < N, (inserted, outcome)
    hub.stop("immediate")
    pusher.join(30)
    assert not pusher.is_alive()
    assert isinstance(outcome.get("error"), (TeamError, psycopg.OperationalError)), outcome
    # Nothing was acknowledged, so nothing is marked sent; every memory keeps its global id and clock.
    links = a.rows("SELECT observation_id, gid, hlc, pushed FROM team_links WHERE origin = 'local' ORDER BY 1")
    assert [r[0] for r in links] == ids and all(r[3] == 0 for r in links)
    hub.start()
    # The transaction died with the server: none of the batch is on the hub (no half batch).
    assert _hub_rows(hub, "SELECT count(*) FROM kenning.ops") == [(0,)]
    assert _hub_rows(hub, "SELECT count(*) FROM kenning.memories") == [(0,)]
    with hub.connect() as conn:
        conn.execute("DROP TRIGGER slow_push ON kenning.ops; DROP FUNCTION public.slow_push(); "
                     "DROP SEQUENCE public.push_probe")
    conn = open_db(str(a.paths.db))
    try:
        report = sync.once(a.paths, conn, do_pull=False)
        assert report.pushed == N
        assert sync.once(a.paths, conn, do_pull=False).pushed == 0  # the next round has nothing more to send
    finally:
        conn.close()
    # The same ops as before the kill (ids and clocks fixed before the first try), each exactly once.
    assert a.rows("SELECT observation_id, gid, hlc, 1 FROM team_links WHERE origin = 'local' ORDER BY 1") == \
        [(oid, gid, hlc, 1) for oid, gid, hlc, _ in links]
    on_hub = _hub_rows(hub, "SELECT gid, hlc, count(*) FROM kenning.ops GROUP BY gid, hlc ORDER BY gid")
    assert sorted((gid, hlc, 1) for _, gid, hlc, _ in links) == sorted(on_hub)
    # The teammate approves them all and converges on the same set, each once.
    with hub.connect("li", made["li"]) as conn:
        for _, gid, _, _ in links:
            conn.execute("SELECT kenning.review(%s, 'approved')", (gid,))
    b.wait("SELECT 1 WHERE (SELECT count(*) FROM team_links WHERE origin = 'hub') = ?", N, timeout=60)
    assert sorted(r[0] for r in b.rows("SELECT gid FROM team_links WHERE origin = 'hub'")) == \
        sorted(gid for _, gid, _, _ in links)
    assert b.rows("SELECT count(*) FROM observations WHERE project LIKE 'team:%' AND title LIKE 'Rule q%'") == \
        [(N,)]
    titles = b.rows("SELECT title FROM observations WHERE project LIKE 'team:%' ORDER BY title")
    assert len({t for (t,) in titles}) == N


def test_a_pull_between_two_overlapping_pushes_misses_nothing(hub: postgres.Server,
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    """A long push is in flight when a short one arrives and a teammate pulls: the pull must not move its
    cursor past memories the long push has not committed yet (found by bench/team_scale.py)."""
    from kenning.store.db import open_db
    from kenning.team import sync

    ana, bo, li = (Dev(tmp_path_factory.mktemp(n)) for n in ("ana2", "bo2", "li2"))
    ana.team("init", "--dsn", hub.dsn(), "--team", "beta", "--auto-approve", "--member", "ana", "--member", "li",
             "--member", "bo", password=hub.admin_password)
    made = json.loads((ana.data / "team-beta-members.json").read_text())
    for dev, user in ((ana, "ana"), (bo, "bo"), (li, "li")):
        dev.team("join", "--dsn", hub.dsn(user), "--team", "beta", password=made.get(user) or _password(hub, user))
    long_ids, short_ids = _save_rules(ana, 20), _save_rules(bo, 1, who="s")

    def push_round(dev: Dev) -> None:
        conn = open_db(str(dev.paths.db))
        try:
            sync.once(dev.paths, conn, do_pull=False)
        finally:
            conn.close()

    def pull_round() -> int:
        conn = open_db(str(li.paths.db))
        try:
            sync.once(li.paths, conn, do_push=False)
            return int(conn.execute("SELECT count(*) FROM team_links WHERE origin = 'hub'").fetchone()[0])
        finally:
            conn.close()

    with hub.connect() as conn:
        conn.execute(SLOW)
    try:
        long_push = threading.Thread(target=push_round, args=(ana,))
        long_push.start()
        while _hub_rows(hub, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.push_probe")[0][0] < 5:
            time.sleep(0.02)
        short_push = threading.Thread(target=push_round, args=(bo,))
        short_push.start()
        short_push.join(0.8)  # done by now unless it waits for the long one to commit
        pull_round()  # the long push is still in flight
        long_push.join(30)
        short_push.join(30)
    finally:
        with hub.connect() as conn:
            conn.execute("DROP TRIGGER slow_push ON kenning.ops; DROP FUNCTION public.slow_push(); "
                         "DROP SEQUENCE public.push_probe")
    assert _hub_rows(hub, "SELECT count(*) FROM kenning.memories WHERE team = 'beta'") == \
        [(len(long_ids) + len(short_ids),)]
    assert pull_round() == len(long_ids) + len(short_ids)


def _password(hub: postgres.Server, user: str) -> str:
    """A member made by an earlier init of this server: a new password, set by the admin."""
    import secrets

    from psycopg import sql

    pw = secrets.token_hex(12)
    with hub.connect() as conn:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(user), sql.Literal(pw)))
    return pw
