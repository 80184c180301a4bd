"""The memory layers in the viewer, in a real Chromium against a worker from the installed wheel:
the Rules view, pin and unpin (and the next session's context following), what superseded what,
the archive and restoring from it, and two repositories of one folder name told apart.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kenning.store import supersede
from kenning.store.repo import transaction
from tests.conftest import Home
from tests.support import browser as br
from tests.support.viewer import OUTAGE, TIMEOUT_MS, RepoRows, api, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)

DAY = 86400.0
A, B = "/src/client-a/api", "/src/client-b/api"
RULES = "## Standing rules and preferences"


@pytest.fixture
def memory(installed: Home) -> tuple[Home, dict[str, int]]:
    home = installed
    home.paths.ensure()
    now = time.time()
    rows = RepoRows(home.paths.db)
    ids = {
        "gotcha": rows.obs("The integration tests need the fake S3 endpoint on port 9000", project=A, at=now - DAY),
        "rule": rows.obs("We always use pnpm, never npm", type="decision", project=A, at=now - 2 * DAY),
        "old_log": rows.obs("Explored src/ledger/ for the rounding helper", project=A, at=now - 40 * DAY),
        "other": rows.obs("Client B deploys on Fridays only", project=B, at=now - DAY),
        "npm": rows.obs("We use npm for package installs", type="decision", project=A, at=now - 5 * DAY),
    }
    ids["pnpm"] = rows.obs("Use pnpm, not npm", type="decision", project=A, session="s2", at=now - 4 * DAY)
    with transaction(rows.conn):
        assert supersede.automatic(rows.conn, [ids["pnpm"]]) == [(ids["npm"], ids["pnpm"])]
        # What the observer judged the rule to be, and on whose words (migration 0025's columns).
        rows.conn.execute("UPDATE observations SET kind = 'rule', why = ? WHERE id = ?", (json.dumps(
            {"said": "We always use pnpm, never npm.", "by": "user", "origin": "typed",
             "where": "prompt 2 of session 5f1c2a9e", "how": "judged rule (role model: 0.97)"}), ids["rule"]))
    rows.conn.close()
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    return home, ids


def view_of(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def rules_given(home: Home) -> str:
    """The standing rules the next session of client A is told (the session-start context)."""
    text = str(api(home, f"preview?project={A}")["context"])
    return text.split(RULES, 1)[1].split("\n## ", 1)[0] if RULES in text else ""


def card(page: Any, oid: int) -> Any:
    return page.locator(f"#feed article.item[data-key='o:{oid}']")


def test_rules_view_pin_and_unpin_change_what_the_next_session_is_told(memory: tuple[Home, dict[str, int]],
                                                                       page: Any) -> None:
    home, ids = memory
    open_viewer(page, home, f"?project={A}")
    # Two repositories called "api": the picker tells them apart; the value is the key.
    options = page.eval_on_selector_all("#project option", "os => os.map(o => [o.value, o.textContent])")
    assert [A, "api (/src/client-a/api)"] in options and [B, "api (/src/client-b/api)"] in options
    assert page.input_value("#project") == A

    # The Rules view: the project's standing rules as the session-start index gives them (newest only).
    page.select_option("#f-memory", "rule")
    expect(page.locator("#feed-heading")).to_contain_text("Standing rules")
    expect(card(page, ids["rule"])).to_be_visible()
    assert view_of(page)["memory"] == "rule"
    shown = page.eval_on_selector_all("#feed article.item", "els => els.map(e => e.dataset.key)")
    assert shown == [f"o:{ids['rule']}", f"o:{ids['pnpm']}"]  # npm was superseded: not a rule any more
    expect(card(page, ids["rule"]).locator(".layer-rule")).to_have_text("Rule")
    assert "fake S3 endpoint" not in rules_given(home)

    # Key memories: pin the gotcha from its detail, by keyboard.
    page.select_option("#f-memory", "key")
    gotcha = card(page, ids["gotcha"])
    expect(gotcha.locator(".layer-key")).to_have_text("Key")
    gotcha.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#detail-body .layer-line")).to_contain_text("Key memory")
    page.locator("#act-pin").focus()
    expect(page.locator("#act-pin")).to_have_text("Pin as a standing rule")
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Pinned")
    expect(page.locator("#act-pin")).to_have_text("Unpin (ordinary memory)")
    expect(page.locator("#act-pin")).to_be_focused()
    expect(page.locator("#act-pin")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#detail-body .layer-line")).to_contain_text("Pinned by you")
    expect(gotcha).to_have_count(0)  # no longer a key memory: it left this view
    assert "fake S3 endpoint" in rules_given(home)
    conn = home.db()
    assert tuple(conn.execute("SELECT layer, user_layer FROM observations WHERE id = ?",
                              (ids["gotcha"],)).fetchone()) == ("rule", "rule")
    conn.close()
    shot(page, "memory-pinned")

    # Back in the Rules view it leads, tagged as pinned; the address holds the view and the item.
    page.keyboard.press("Escape")
    page.select_option("#f-memory", "rule")
    expect(card(page, ids["gotcha"]).locator(".layer-rule")).to_have_text("Rule · pinned")
    # Unpin the pnpm rule: it leaves the rules the next session is told first.
    card(page, ids["rule"]).click()
    expect(page.locator("#act-pin")).to_have_text("Unpin (ordinary memory)")
    judged = page.locator("#detail-body .judged-line")  # why it is a rule, and on whose words
    expect(judged).to_contain_text("Judged a rule because you said (prompt 2 of session 5f1c2a9e)")
    expect(judged.locator("q.judged-said")).to_have_text("We always use pnpm, never npm.")
    assert view_of(page)["item"] == f"o{ids['rule']}" and view_of(page)["memory"] == "rule"
    page.click("#act-pin")
    expect(page.locator("#toast")).to_contain_text("Unpinned")
    expect(card(page, ids["rule"])).to_have_count(0)
    expect(page.locator("#detail-body .layer-line")).to_contain_text("Kept as a key memory by you")
    given = rules_given(home)
    assert "pnpm, never npm" not in given and "fake S3 endpoint" in given
    # The Next session tab shows the same text.
    page.keyboard.press("Escape")
    page.click("#tab-preview")
    expect(page.locator("#preview-text")).to_contain_text("fake S3 endpoint")
    assert "pnpm, never npm" not in page.locator("#preview-text").inner_text().split(RULES, 1)[1].split("\n## ")[0]
    page.click("#tab-feed")

    # A change behind the page's back: the worker refuses, and the page says why where the user looks.
    card(page, ids["gotcha"]).click()
    expect(page.locator("#act-pin")).to_have_text("Unpin (ordinary memory)")
    # The live stream would redraw the detail within a second (a `changed` event): its re-read is held back
    # here, so the click is the stale page's, as when the event is still on its way.
    def hold(route: Any) -> None:
        if route.request.method == "GET":
            route.abort()
        else:
            route.fallback()

    page.route("**/api/viewer/observations/*", hold)
    r = home.kenning("unpin", str(ids["gotcha"]))
    assert r.returncode == 0, r.stderr
    with page.errors.allow("409|ERR_FAILED|Failed to load resource"):
        page.click("#act-pin")
        expect(page.locator("#act-error")).to_contain_text("Not unpinned: #")
        expect(page.locator("#act-error")).to_contain_text("is not a standing rule")
        page.wait_for_timeout(300)
        # Lifted inside the block: a re-read the live stream starts late (a loaded machine) is still
        # aborted by the hold until then, and the console reports that a moment after.
        page.unroute("**/api/viewer/observations/*", hold)
        page.wait_for_timeout(300)
    expect(page.locator("#act-pin")).to_be_enabled()


def test_superseded_link_archive_filter_and_restore(memory: tuple[Home, dict[str, int]], page: Any) -> None:
    home, ids = memory
    open_viewer(page, home, f"?project={A}")
    # Hidden by default; the Superseded view lists it, clearly marked.
    expect(card(page, ids["pnpm"])).to_be_visible()
    expect(card(page, ids["npm"])).to_have_count(0)
    page.select_option("#f-memory", "superseded")
    old = card(page, ids["npm"])
    expect(old.locator(".flag-superseded")).to_have_text("superseded")
    old.click()
    expect(page.locator("#superseded-by")).to_have_text(f"#{ids['pnpm']} “Use pnpm, not npm”")
    expect(page.locator("#detail-body .superseded-line")).to_contain_text("Same subject: the command")
    expect(page.locator("#act-pin")).to_have_count(0)  # not current: restore first
    shot(page, "memory-superseded")
    # The link opens what replaced it, which lists what it replaced; Back returns.
    page.locator("#superseded-by").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#detail-title")).to_have_text("Use pnpm, not npm")
    expect(page.locator("#replaced")).to_contain_text(f"#{ids['npm']} “We use npm for package installs”")
    assert view_of(page)["item"] == f"o{ids['pnpm']}"
    page.go_back()
    expect(page.locator("#detail-title")).to_have_text("We use npm for package installs")
    # Restore it: current again, out of the Superseded view, given to sessions.
    page.click("#act-restore")
    expect(page.locator("#toast")).to_contain_text("Restored")
    expect(card(page, ids["npm"])).to_have_count(0)
    expect(page.locator("#act-pin")).to_be_visible()
    assert "npm for package installs" in str(api(home, f"preview?project={A}")["context"])
    page.keyboard.press("Escape")

    # The archive: aged-out routine work, findable and marked, restored into what sessions get.
    assert "rounding helper" not in str(api(home, f"preview?project={A}")["context"])
    page.select_option("#f-memory", "archived")
    expect(page.locator("#feed-heading")).to_contain_text("Archive")
    archived = card(page, ids["old_log"])
    expect(archived.locator(".flag-archived")).to_have_text("archived")
    assert view_of(page)["memory"] == "archived"
    archived.click()
    expect(page.locator("#detail-body .layer-line")).to_contain_text("Archived")
    shot(page, "memory-archive")
    page.locator("#act-unarchive").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Restored from the archive")
    expect(archived).to_have_count(0)
    expect(page.locator("#detail-body .layer-line")).to_contain_text("Key memory")
    expect(page.locator("#act-pin")).to_be_focused()
    assert "rounding helper" in str(api(home, f"preview?project={A}")["context"])
    expect(page.locator("#feed-end")).to_contain_text("No archived memories in api (/src/client-a/api)")

    # A reload lands on the same view; with the worker gone the action says so and nothing is lost.
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    assert page.input_value("#f-memory") == "archived"
    expect(page.locator("#detail-title")).to_have_text("Explored src/ledger/ for the rounding helper")
    assert home.kenning("worker", "stop").returncode == 0
    with page.errors.allow(OUTAGE):
        page.click("#act-pin")
        expect(page.locator("#act-error")).to_contain_text("Not pinned: the worker is not answering")
    expect(page.locator("#act-pin")).to_be_enabled()
