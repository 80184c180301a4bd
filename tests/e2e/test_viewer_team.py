"""Team memory in the viewer, in a real Chromium, against two developers' real workers and a real PostgreSQL hub.

Ana teaches a team rule through the real hooks; her viewer shows it as a team memory waiting for review. Li
approves it from his viewer's Team tab (the path `kenning team review` takes); his machine pulls it and
shows who wrote it and who approved it; Ana's machine learns the review at its next pull. A preference of
Ana's stays personal, and the detail says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.test_team_hub import PREFERENCE, RULE, Dev, _hub_rows, teammates
from tests.support import browser as br
from tests.support import postgres
from tests.support.viewer import TIMEOUT_MS, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
pytest.importorskip("psycopg")
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[postgres.Server, Dev, Dev]]:
    with postgres.server() as hub, teammates(hub, tmp_path_factory, KENNING_PROVIDER="rules",
                                             KENNING_EMBEDDING_BACKEND="none") as (ana, li):
        yield hub, ana, li


def card(page: Any, oid: int) -> Any:
    return page.locator(f"#feed article.item[data-key='o:{oid}']")


def test_the_viewer_shows_scope_author_and_review_and_a_teammate_approves_from_it(
        team: tuple[postgres.Server, Dev, Dev], page: Any) -> None:
    hub, ana, li = team
    ana.say(RULE)
    ana.say(PREFERENCE)
    ana.flush()
    ana.wait("SELECT 1 FROM team_links WHERE origin = 'local' AND pushed = 1")
    rule_id = ana.rows("SELECT observation_id FROM team_links WHERE origin = 'local'")[0][0]
    pref_id = ana.rows("SELECT id FROM observations WHERE title LIKE '%Esperanto%'")[0][0]
    gid = _hub_rows(hub, "SELECT gid FROM kenning.memories WHERE title LIKE %s", "%CREATE TABLE migration%")[0][0]

    # Ana's machine: her rule is a team memory waiting for review; her preference is personal.
    open_viewer(page, ana)
    expect(card(page, rule_id).locator(".scope")).to_have_text("team · pending review")
    expect(card(page, pref_id).locator(".scope")).to_have_count(0)
    card(page, rule_id).click()
    expect(page.locator("#share-line")).to_contain_text("Team alpha: from ana,")
    expect(page.locator("#share-line")).to_contain_text("pending review")
    card(page, pref_id).click()
    expect(page.locator("#share-line")).to_have_text("Personal: on this machine only, never shared.")
    # Her own memory waits in her Team tab too, but she cannot approve it.
    page.click("#tab-team")
    mine = page.locator(f"#team-alpha li.review-item[data-gid='{gid}']")
    expect(mine.locator(".review-approve")).to_be_disabled()

    # Li's machine: the Team tab lists it with its author; he approves it.
    open_viewer(page, li, "?tab=team")
    row = page.locator(f"#team-alpha li.review-item[data-gid='{gid}']")
    expect(row.locator(".review-title")).to_contain_text("CREATE TABLE migration")
    expect(row.locator(".review-by")).to_contain_text("from ana")
    shot(page, "viewer-team-review")
    row.locator(".review-approve").click()
    expect(row).to_have_count(0)
    expect(page.locator("#team-alpha .review-empty")).to_be_visible()
    assert _hub_rows(hub, "SELECT review, reviewer FROM kenning.memories WHERE gid = %s", gid) == \
        [("approved", "li")]
    assert _hub_rows(hub, "SELECT actor, action FROM kenning.audit WHERE gid = %s AND action = 'approved'", gid) == \
        [("li", "approved")]

    # His worker pulls it: attributed, approved by him.
    li.wait("SELECT 1 FROM team_links WHERE gid = ? AND origin = 'hub'", gid)
    pulled = li.rows("SELECT observation_id FROM team_links WHERE gid = ?", gid)[0][0]
    page.click("#tab-feed")
    expect(card(page, pulled).locator(".scope")).to_have_text("team")
    card(page, pulled).click()
    today = time.strftime("%Y-%m-%d", time.gmtime())
    expect(page.locator("#share-line")).to_contain_text("Team alpha: from ana,")
    expect(page.locator("#share-line")).to_contain_text(f"approved by li on {today}")

    # Ana's machine learns the review at its next pull, and her open page follows.
    ana.wait("SELECT 1 FROM team_links WHERE gid = ? AND review = 'approved' AND reviewer = 'li'", gid)
    open_viewer(page, ana)
    expect(card(page, rule_id).locator(".scope")).to_have_text("team")
    card(page, rule_id).click()
    expect(page.locator("#share-line")).to_contain_text("approved by li")


def test_the_team_tab_shows_the_word_diff_and_a_reviewer_approves_with_an_edit(
        team: tuple[postgres.Server, Dev, Dev], page: Any) -> None:
    from tests.integration.test_team_review import EDITED_TEXT, EDITED_TITLE, NEW, OLD

    hub, ana, li = team
    ana.say(OLD)
    ana.flush()
    ana.wait_pushed("every night at two")
    old_gid = _hub_rows(hub, "SELECT gid FROM kenning.memories WHERE title LIKE %s", "%every night at two%")[0][0]
    li.team("review", "--approve", old_gid)
    ana.say(NEW)
    ana.flush()
    ana.wait("SELECT 1 FROM observations WHERE title LIKE '%six hours%'")
    old_on_ana = ana.rows("SELECT observation_id FROM team_links WHERE gid = ?", old_gid)[0][0]
    new_on_ana = ana.rows("SELECT id FROM observations WHERE title LIKE '%six hours%'")[0][0]
    if ana.rows("SELECT status FROM observations WHERE id = ?", old_on_ana) != [("superseded",)]:
        r = ana.kenning("supersede", str(old_on_ana), "--by", str(new_on_ana))
        assert r.returncode == 0, r.stdout + r.stderr
    ana.wait_pushed("six hours")
    gid = _hub_rows(hub, "SELECT gid FROM kenning.memories WHERE title LIKE %s", "%six hours%")[0][0]
    remote = _hub_rows(hub, "SELECT project FROM kenning.memories WHERE gid = %s", gid)[0][0]
    # A hostile pair written straight into the hub: markup in both texts must stay text.
    _hub_rows(hub, "INSERT INTO kenning.memories (gid, team, project, author, hlc, title, body, review, superseded_by) "
                   "VALUES ('0123456789abcdef:41', 'alpha', %s, 'ana', '0000000000001.00000.0123456789abcdef', "
                   "'Deploy on Fridays', 'Deploy on Fridays', 'approved', '0123456789abcdef:42'), "
                   "('0123456789abcdef:42', 'alpha', %s, 'ana', '0000000000001.00001.0123456789abcdef', "
                   "'Deploy on <img src=x onerror=alert(1)> Mondays', 'Deploy on Mondays', 'pending', NULL) "
                   "RETURNING gid", remote, remote)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _hub_rows(
            hub, "SELECT 1 FROM kenning.memories WHERE gid = %s AND superseded_by = %s", old_gid, gid):
        time.sleep(0.3)

    open_viewer(page, li, "?tab=team")
    row = page.locator(f"#team-alpha li.review-item[data-gid='{gid}']")
    replaced = row.locator(f".review-replaced[data-gid='{old_gid}']")
    expect(replaced.locator(".review-old-title")).to_have_text(OLD)
    expect(replaced.locator(".diff-title del")).to_have_text("night at two")
    expect(replaced.locator(".diff-title ins")).to_have_text("six hours by the cron job")
    expect(replaced.locator(".diff-title")).to_contain_text("[removed: ")  # words a screen reader hears
    hostile = page.locator("#team-alpha li.review-item[data-gid='0123456789abcdef:42']")
    expect(hostile.locator(".diff-title ins")).to_contain_text("<img src=x onerror=alert(1)>")
    assert page.locator("#team-review img").count() == 0
    shot(page, "viewer-team-review-diff")

    # Edit opens the fields, filled with the author's wording; Approve then approves the reviewer's.
    expect(row.locator(".review-editor")).to_be_hidden()
    row.locator(".review-edit").click()
    expect(row.locator(".review-edit")).to_have_attribute("aria-expanded", "true")
    expect(row.locator(".review-edit-title")).to_have_value(NEW)
    expect(row.locator(".review-edit-title")).to_be_focused()
    row.locator(".review-edit-title").fill(EDITED_TITLE)
    row.locator(".review-edit-text").fill(EDITED_TEXT)
    expect(row.locator(".review-approve")).to_have_text("Approve with edit")
    shot(page, "viewer-team-review-edit")
    row.locator(".review-approve").click()
    expect(row).to_have_count(0)
    expect(page.locator(".toast").last).to_contain_text("Approved with your edit")
    assert _hub_rows(hub, "SELECT title, body, review, reviewer FROM kenning.memories WHERE gid = %s", gid) == \
        [(EDITED_TITLE, EDITED_TEXT, "approved", "li")]
    assert _hub_rows(hub, "SELECT actor, action FROM kenning.audit WHERE gid = %s AND action IN "
                          "('write:edited', 'approved') ORDER BY id", gid) == \
        [("li", "write:edited"), ("li", "approved")]
    # Both machines follow.
    li.wait("SELECT 1 FROM team_links l JOIN observations o ON o.id = l.observation_id WHERE l.gid = ? "
            "AND o.title = ?", gid, EDITED_TITLE)
    ana.wait("SELECT 1 FROM observations WHERE id = ? AND title = ?", new_on_ana, EDITED_TITLE)


def test_the_team_tab_has_a_section_per_team_and_a_hub_down_leaves_the_other_teams_usable(
        team: tuple[postgres.Server, Dev, Dev], page: Any) -> None:
    from tests.integration.test_team_multi import REMOTE_Y, _in, _repo

    hub, ana, li = team
    with postgres.server() as other:
        li.team("init", "--dsn", other.dsn(), "--team", "beta", "--member", "li", password=other.admin_password)
        made = json.loads((li.data / "team-beta-members.json").read_text())
        with _in(li, _repo(li, "parser", REMOTE_Y)):
            li.team("join", "--dsn", other.dsn("li"), "--team", "beta", password=made["li"])
        ana.say(RULE)
        ana.flush()
        ana.wait_pushed("CREATE TABLE migration")
        gid = _hub_rows(hub, "SELECT gid FROM kenning.memories WHERE title LIKE %s", "%CREATE TABLE migration%")[0][0]

        open_viewer(page, li, "?tab=team")
        alpha, beta = page.locator("#team-alpha"), page.locator("#team-beta")
        expect(alpha.get_by_role("heading", name="Team alpha, as li")).to_be_visible()
        expect(beta.get_by_role("heading", name="Team beta, as li")).to_be_visible()
        expect(page.get_by_role("region", name="Team beta, as li").locator(".review-empty")).to_be_visible()
        expect(alpha.locator(f"li.review-item[data-gid='{gid}']")).to_be_visible()

        other.stop()  # beta's hub goes away: its section says so, alpha's works as before
        page.click("#tab-feed")
        page.click("#tab-team")
        expect(beta.get_by_role("alert")).to_contain_text("The hub of team beta could not be read")
        row = alpha.locator(f"li.review-item[data-gid='{gid}']")
        row.locator(".review-approve").click()
        expect(row).to_have_count(0)
        expect(alpha.locator(".review-empty")).to_be_visible()
        shot(page, "viewer-team-two-teams")
        assert _hub_rows(hub, "SELECT review, reviewer FROM kenning.memories WHERE gid = %s", gid) == \
            [("approved", "li")]
        other.start()
