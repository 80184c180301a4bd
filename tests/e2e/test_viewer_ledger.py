"""The injection ledger in the viewer (issue 29), in headless Chromium against the installed wheel: a
session shows what it was told from memory and why; a memory shows how often it was given and used.
And the Next-session tab after a reload or from a ``?tab=preview`` link shows the preview at once."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conftest import Home, load_fixture
from tests.support import browser as br
from tests.support.viewer import DECISION_TITLE, TIMEOUT_MS, api, capture_turn, obs_row, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)


def told(home: Home, session: str) -> int:
    """A SessionStart through the real hook (the worker serves it and records it); the session's row id."""
    payload = load_fixture("print-mode/events/SessionStart.startup.json", cwd=str(home.project))
    payload["session_id"] = session
    r = home.hook("SessionStart", payload)
    assert r.returncode == 0 and DECISION_TITLE in r.stdout.decode(), r.stdout[-500:]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        home.flush()
        conn = home.db()
        try:
            row = conn.execute("SELECT s.id FROM sessions s WHERE s.agent_session_id = ? AND EXISTS (SELECT 1 "
                               "FROM injections i WHERE i.session = s.agent_session_id)", (session,)).fetchone()
        finally:
            conn.close()
        if row is not None:
            return int(row[0])
        time.sleep(0.2)
    raise AssertionError("the worker did not record the session start")


def test_a_session_shows_what_it_was_told_and_a_memory_how_often(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "ledger-past")
    home.flush()
    sid = told(home, "ledger-next")
    rule = obs_row(home, DECISION_TITLE)
    assert rule is not None and rule["layer"] == "rule"

    open_viewer(page, home, f"?item=s{sid}")
    told_here = page.locator("#ledger-session")
    expect(told_here).to_contain_text(DECISION_TITLE)
    expect(told_here).to_contain_text("session start")
    expect(told_here).to_contain_text("why: standing rule")
    expect(told_here).to_contain_text("Told ")
    shot(page, "ledger-session", full_page=True)

    told_here.locator(f"button[data-oid='{rule['id']}']").click()  # to the memory's own detail
    given = page.locator("#ledger-memory")
    expect(given).to_contain_text("Given 1 time, used 0 times")
    expect(given).to_contain_text("standing rule")
    expect(given).to_contain_text("session ledger-next")
    shot(page, "ledger-memory", full_page=True)

    # The Stats tab: the memory's health over a date range.
    page.click("#tab-stats")
    health = page.locator("#memory-health")
    expect(health).to_contain_text("1 time in 1 session")
    expect(health).to_contain_text("0.0% · a check-up is due")
    shot(page, "memory-health", full_page=True)
    page.fill("#health-from", time.strftime("%Y-%m-%d", time.localtime(time.time() + 2 * 86400)))
    page.click("#health-range button[type='submit']")
    expect(health).to_contain_text("nothing recorded")


def test_next_session_tab_after_a_reload_and_from_a_link(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "preview-reload")
    home.flush()
    expected = api(home, f"preview?project={home.key}")["context"]
    open_viewer(page, home, "?tab=preview")
    expect(page.locator("#preview-text")).to_have_text(expected)
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    expect(page.locator("#preview-text")).to_have_text(expected)
    assert "No project has memory yet" not in page.locator("#preview-size").inner_text()
    shot(page, "preview-after-reload")
