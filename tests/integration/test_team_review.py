"""Reviewing with a diff and an edit, on a real PostgreSQL hub between two developer sandboxes (own HOME, data
dir and worker): A proposes a rule that replaces one the team approved; B sees the word diff in
`kenning team review`, edits it and approves it; both machines hold B's wording after their next pull,
A's own wording is told nowhere, and the hub's audit log says who edited. An edit holding a secret is
refused. When A has an edit of its own not sent yet, A's edit wins (docs/team.md) and goes back to review.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.integration.test_team_hub import Dev, _hub_rows, _hub_text, teammates
from tests.support import postgres

pytest.importorskip("psycopg")

OLD = "From now on the orders database is backed up every night at two"
NEW = "From now on the orders database is backed up every six hours by the cron job"
EDITED_TITLE = "From now on the orders database is backed up every four hours by the cron job"
EDITED_TEXT = "Back up the orders database every four hours; the cron job on the ops host runs it."


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[postgres.Server, Dev, Dev]]:
    with postgres.server() as hub, teammates(hub, tmp_path_factory) as (a, b):
        yield hub, a, b


def _title_of(dev: Dev, gid: str) -> str:
    rows = dev.rows("SELECT o.title FROM observations o JOIN team_links l ON l.observation_id = o.id "
                    "WHERE l.gid = ?", gid)
    return str(rows[0][0]) if rows else ""


def _gid(hub: postgres.Server, words: str) -> str:
    return str(_hub_rows(hub, "SELECT gid FROM kenning.memories WHERE title LIKE %s", f"%{words}%")[0][0])


def test_a_reviewer_sees_the_diff_edits_and_approves_and_every_machine_holds_the_edit(
        pair: tuple[postgres.Server, Dev, Dev]) -> None:
    hub, a, b = pair
    a.say(OLD)
    a.flush()
    a.wait_pushed("every night at two")
    old_gid = _gid(hub, "every night at two")
    b.team("review", "--approve", old_gid)
    b.wait("SELECT 1 FROM team_links WHERE gid = ?", old_gid)
    # A's new wording replaces the approved rule (by hand, as `kenning supersede` does).
    a.say(NEW)
    a.flush()
    a.wait("SELECT 1 FROM observations WHERE title LIKE '%six hours%'")
    old_on_a = a.rows("SELECT observation_id FROM team_links WHERE gid = ?", old_gid)[0][0]
    new_on_a = a.rows("SELECT id FROM observations WHERE title LIKE '%six hours%'")[0][0]
    if a.rows("SELECT status FROM observations WHERE id = ?", old_on_a) != [("superseded",)]:
        r = a.kenning("supersede", str(old_on_a), "--by", str(new_on_a))
        assert r.returncode == 0, r.stdout + r.stderr
    a.wait_pushed("six hours")
    new_gid = _gid(hub, "six hours")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _hub_rows(
            hub, "SELECT superseded_by FROM kenning.memories WHERE gid = %s", old_gid) != [(new_gid,)]:
        time.sleep(0.3)

    # B sees what the new rule changes in the old one, word by word.
    listed = b.team("review").stdout
    assert f"replaces: {OLD}" in listed, listed
    assert "title: From now on the orders database is backed up every [-night at two-]{+six hours by the cron job+}" \
        in listed, listed
    shown = {m["gid"]: m for m in json.loads(b.team("review", "--json").stdout)}[new_gid]
    assert shown["replaces"][0]["gid"] == old_gid
    assert ["-", "night at two"] in shown["replaces"][0]["title_diff"]
    assert ["+", "six hours by the cron job"] in shown["replaces"][0]["title_diff"]

    # An edit holding a secret is refused, with why, and nothing changes on the hub.
    token = "ghp_" + "K9j8H7g6F5d4S3a2P1o0I9u8Y7t6R5e4W3q2"
    leaky = b.root / "leaky.txt"
    leaky.write_text(f"Back up with the token {token}\n")
    r = b.team("review", "--approve", new_gid, "--title", EDITED_TITLE, "--text-file", str(leaky), check=False)
    assert r.returncode == 2 and f"the edit of memory {new_gid} holds a secret" in r.stderr, r.stdout + r.stderr
    assert token not in r.stderr and token not in _hub_text(hub)
    assert _hub_rows(hub, "SELECT review, title FROM kenning.memories WHERE gid = %s", new_gid) == [("pending", NEW)]
    # The author cannot edit-approve their own either.
    r = a.team("review", "--approve", new_gid, "--title", EDITED_TITLE, check=False)
    assert r.returncode == 2 and "teammate" in r.stderr

    # B edits through the interactive review (answers on stdin) and approves.
    r = b.kenning("team", "review", "--interactive", cwd=str(b.project),
                  input=f"e\n{EDITED_TITLE}\n{EDITED_TEXT}\n.\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "approved with your edit" in r.stdout
    assert _hub_rows(hub, "SELECT title, body, review, reviewer, author FROM kenning.memories WHERE gid = %s",
                     new_gid) == [(EDITED_TITLE, EDITED_TEXT, "approved", "li", "ana")]
    audit = _hub_rows(hub, "SELECT actor, action FROM kenning.audit WHERE gid = %s ORDER BY id", new_gid)
    assert audit[-2:] == [("li", "write:edited"), ("li", "approved")], audit
    assert _hub_rows(hub, "SELECT author, payload->>'title' FROM kenning.ops WHERE gid = %s AND kind = 'edited'",
                     new_gid) == [("li", EDITED_TITLE)]

    # Both machines hold the edited text after their next pull; A learns who approved it.
    a.wait("SELECT 1 FROM observations WHERE id = ? AND title = ?", new_on_a, EDITED_TITLE)
    assert a.rows("SELECT narrative FROM observations WHERE id = ?", new_on_a) == [(EDITED_TEXT,)]
    a.wait("SELECT 1 FROM team_links WHERE gid = ? AND review = 'approved' AND reviewer = 'li'", new_gid)
    b.wait("SELECT 1 FROM team_links l JOIN observations o ON o.id = l.observation_id WHERE l.gid = ? "
           "AND o.title = ?", new_gid, EDITED_TITLE)
    assert b.rows("SELECT o.narrative FROM observations o JOIN team_links l ON l.observation_id = o.id "
                  "WHERE l.gid = ?", new_gid) == [(EDITED_TEXT,)]
    for dev in (a, b):
        text = dev.session_start()
        assert "every four hours by the cron job" in text, text
        # No memory row tells A's wording or the replaced rule (A's own session summary still quotes what A said).
        memories = [line for line in text.splitlines() if line.startswith("#") and line[1:2].isdigit()]
        assert not [m for m in memories if "six hours" in m or "every night at two" in m], text
    assert "six hours" not in b.session_start()
    # What A applied is not sent back as an edit of its own.
    time.sleep(2.5)
    assert _hub_rows(hub, "SELECT count(*) FROM kenning.ops WHERE gid = %s AND kind = 'edited'", new_gid) == [(1,)]
    assert not a.rows("SELECT 1 FROM team_links WHERE edited = 1 OR pinned = 1")


def test_an_edit_not_yet_sent_by_the_author_wins_over_the_reviewers_and_goes_back_to_review(
        pair: tuple[postgres.Server, Dev, Dev]) -> None:
    from kenning.memory_service import MemoryService
    from kenning.store.db import open_db

    hub, a, b = pair
    rule = "From now on every API error response carries a request id"
    reviewer = "From now on every API error response carries a request id and a help link"
    author = "From now on every API error response carries a request id and a trace id"
    a.say(rule)
    a.flush()
    a.wait_pushed("carries a request id")
    gid = _gid(hub, "carries a request id")
    oid = a.rows("SELECT observation_id FROM team_links WHERE gid = ?", gid)[0][0]
    a.stop_worker()
    try:
        b.team("review", "--approve", gid, "--title", reviewer)
        b.wait("SELECT 1 FROM team_links l JOIN observations o ON o.id = l.observation_id WHERE l.gid = ? "
               "AND o.title = ?", gid, reviewer)
        conn = open_db(str(a.paths.db))
        try:  # A edits it meanwhile (the viewer's Edit), with no round run since
            MemoryService(conn, "cli").edit(oid, {"title": author})
        finally:
            conn.close()
        a.team("pull")
        # A's unsent edit is kept; A learns the review.
        assert a.rows("SELECT title FROM observations WHERE id = ?", oid) == [(author,)]
        assert a.rows("SELECT review, reviewer, edited FROM team_links WHERE gid = ?", gid) == [("approved", "li", 1)]
        a.team("push")
        # Its clock is after the reviewer's (A saw it): the hub takes it, and it waits for review again.
        assert _hub_rows(hub, "SELECT title, review FROM kenning.memories WHERE gid = %s", gid) == [(author,
                                                                                                    "pending")]
    finally:
        a.start_worker()
    # B keeps the approved (reviewer's) wording until someone approves A's.
    time.sleep(2.5)
    assert _title_of(b, gid) == reviewer
    listed = b.team("review").stdout
    assert gid in listed and "trace id" in listed
    b.team("review", "--approve", gid)
    b.wait("SELECT 1 FROM team_links l JOIN observations o ON o.id = l.observation_id WHERE l.gid = ? "
           "AND o.title = ?", gid, author)
    a.wait("SELECT 1 FROM team_links WHERE gid = ? AND review = 'approved' AND edited = 0", gid)
    assert _title_of(a, gid) == author


def test_an_older_hub_schema_is_upgraded_in_place_by_init(pair: tuple[postgres.Server, Dev, Dev]) -> None:
    hub, a, _b = pair
    with hub.connect() as conn:  # as a hub made by the Kenning before review with an edit
        conn.execute("DROP FUNCTION kenning.review_edited(text, text, text, text, text, text)")
        conn.execute("UPDATE kenning.meta SET value = '2' WHERE key = 'schema_version'")
    doctor = a.kenning("doctor").stdout
    assert any(line.startswith("! team hub") or ("schema 2" in line and "kenning team init" in line)
               for line in doctor.splitlines()), doctor
    a.team("init", "--dsn", hub.dsn(), "--team", "alpha", password=hub.admin_password)
    assert _hub_rows(hub, "SELECT value FROM kenning.meta WHERE key = 'schema_version'") == [("3",)]
    assert _hub_rows(hub, "SELECT count(*) FROM pg_proc WHERE proname = 'review_edited'") == [(1,)]
    assert "reachable, schema 3" in a.kenning("doctor").stdout


def test_the_hub_bounds_an_edit_at_review_whatever_the_client_sends(pair: tuple[postgres.Server, Dev, Dev]) -> None:
    import psycopg

    hub, a, b = pair
    a.say("From now on every queue consumer acknowledges a message only after its work is committed")
    a.flush()
    a.wait_pushed("acknowledges a message")
    gid = _gid(hub, "acknowledges a message")
    (hlc,) = _hub_rows(hub, "SELECT hlc FROM kenning.memories WHERE gid = %s", gid)[0]
    device = json.loads((b.data / "team.json").read_text())["device"]
    later = f"{int(hlc.split('.')[0]) + 1000:013d}.00000.{device}"
    li = json.loads((a.data / "team-alpha-members.json").read_text())["li"]
    call = "SELECT kenning.review_edited(%s, %s, %s, %s, %s, '')"
    for args, why in (((gid, "t" * 201, "x", later, device), "1 to 200 characters"),
                      ((gid, "   ", "x", later, device), "1 to 200 characters"),
                      ((gid, "Title", "x" * 4001, later, device), "at most 4000 characters"),
                      ((gid, "Title", "x", hlc, device), "changed since it was read")):
        with hub.connect("li", li) as conn, pytest.raises(psycopg.errors.RaiseException, match=why):
            conn.execute(call, args)
    assert _hub_rows(hub, "SELECT review FROM kenning.memories WHERE gid = %s", gid) == [("pending",)]
    assert _hub_rows(hub, "SELECT count(*) FROM kenning.ops WHERE gid = %s AND kind = 'edited'", gid) == [(0,)]
