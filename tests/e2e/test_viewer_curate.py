"""Curating memory in the viewer (issue 29), in headless Chromium against a worker from the installed wheel:
every field of a memory edited (and the change live on another open page), the Check-up tab (the walk
`kenning review` takes, as buttons), search with a total, a sort and each memory once, and Stats over a
chosen date range back to imported history."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from kenning.store import injections
from kenning.store.repo import transaction
from tests.conftest import Home
from tests.support import browser as br
from tests.support.viewer import TIMEOUT_MS, ProjectRows, api, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)

DAY = 86400.0


def start(home: Home) -> Home:
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    return home


def review_list(home: Home) -> Any:
    import json

    from kenning.hook.client import request
    from tests.support.viewer import token

    res = request(home.port, "GET", "/api/ledger/review", token=token(home), timeout=15)
    assert res is not None and res[0] == 200, res
    return json.loads(res[1])


def row(home: Home, oid: int) -> Any:
    conn = home.db()
    try:
        return conn.execute("SELECT * FROM observations WHERE id = ?", (oid,)).fetchone()
    finally:
        conn.close()


def test_every_field_edited_and_live_on_another_page(installed: Home, page: Any, chromium: Any) -> None:
    home = installed
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    oid = rows.obs("Parser drops tab characters", type="discovery", narrative="Seen in the lexer.",
                   facts=["tabs vanish"], concepts=["gotcha"], files_read=["src/lex.py"], at=time.time() - 600)
    rows.conn.close()
    start(home)
    other_ctx = chromium.new_context(viewport={"width": 1440, "height": 900})
    other = other_ctx.new_page()
    other_errors = br.ConsoleErrors(other)
    try:
        open_viewer(other, home, f"?item=o{oid}")  # a second page, open on the same memory
        expect(other.locator("#detail-title")).to_contain_text("Parser drops tab characters")

        open_viewer(page, home, f"?item=o{oid}")
        page.click("#act-edit")
        form = page.locator("#edit-form")
        expect(form).to_be_visible()
        assert page.input_value("#edit-facts") == "tabs vanish"
        page.fill("#edit-title", "Parser keeps tab characters")
        page.fill("#edit-subtitle", "fixed in the lexer")
        page.select_option("#edit-type", "bugfix")
        page.fill("#edit-narrative", "The lexer now keeps tabs.\nIndentation survives.")
        page.fill("#edit-facts", "tabs are kept\nindentation survives")
        page.fill("#edit-concepts", "gotcha, problem-solution")
        page.fill("#edit-files-modified", "src/lex.py\nsrc/parse.py")
        page.fill("#edit-files-read", "")
        page.fill("#edit-importance", "11")  # refused before any request
        page.click("#edit-form button[type='submit']")
        expect(page.locator("#edit-error")).to_contain_text("0 to 10")
        page.fill("#edit-importance", "8")
        shot(page, "edit-every-field", full_page=True)
        page.click("#edit-form button[type='submit']")
        expect(page.locator("#edit-form")).to_have_count(0)
        expect(page.locator("#detail-title")).to_contain_text("Parser keeps tab characters")
        body = page.locator("#detail-body")
        expect(body.locator(".facts")).to_contain_text("indentation survives")
        expect(body.locator(".narrative")).to_contain_text("Indentation survives.")
        expect(body).to_contain_text("src/parse.py")

        r = row(home, oid)  # stored as typed, through the one door
        assert (r["title"], r["subtitle"], r["type"]) == ("Parser keeps tab characters", "fixed in the lexer", "bugfix")
        assert r["narrative"] == "The lexer now keeps tabs.\nIndentation survives."
        assert r["facts"] == '["tabs are kept", "indentation survives"]'
        assert r["concepts"] == '["gotcha", "problem-solution"]'
        assert r["files_modified"] == '["src/lex.py", "src/parse.py"]' and r["files_read"] == "[]"
        assert (r["importance"], r["user_importance"]) == (8, 8)
        conn = home.db()
        try:
            assert tuple(conn.execute("SELECT surface, op FROM memory_log ORDER BY id DESC LIMIT 1").fetchone()) == (
                "viewer", "edited")
        finally:
            conn.close()

        # The other page shows the edit by itself (the `changed` event of the live stream): detail and feed.
        expect(other.locator("#detail-title")).to_contain_text("Parser keeps tab characters", timeout=5000)
        expect(other.locator(f"#feed article.item[data-key='o:{oid}']")).to_contain_text("Parser keeps tab characters")
        expect(other.locator("#detail-body .facts")).to_contain_text("tabs are kept")

        # Searching finds the new words (the full-text index followed the edit).
        page.fill("#search", "indentation")
        page.press("#search", "Enter")
        expect(page.locator(f"#feed article.item[data-key='o:{oid}']")).to_be_visible()
        other_errors.check()
    finally:
        other_ctx.close()


def test_checkup_tab_confirms_demotes_and_forgets(installed: Home, page: Any) -> None:
    home = installed
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    now = time.time()
    keep = rows.obs("We always use pnpm, never npm", type="decision", at=now - 3 * DAY)
    demote = rows.obs("We always run the linter before a commit", type="decision", at=now - 2 * DAY)
    wrong = rows.obs("We never write tests for the CLI", type="decision", at=now - DAY)
    stale = rows.obs("Explored the billing folder for the rounding helper", type="discovery", at=now - 400 * DAY)
    c = rows.conn
    with transaction(c):
        for oid in (keep, demote, wrong):  # the rules observer's judgement: standing rules
            c.execute("UPDATE observations SET layer = 'rule' WHERE id = ?", (oid,))
        injections.record(c, via="session_start", items=[injections.Given(keep, "standing rule", 40)],
                          session="checkup-s1", agent="claude-code", project="alpha")
    c.close()
    start(home)
    open_viewer(page, home, "?tab=review")
    rules = page.locator("#review-rules")
    expect(rules.locator(".review-item")).to_have_count(3)
    expect(page.locator(f"#review-rule-{keep}")).to_contain_text("given 1 time, used 0 times")
    expect(page.locator(f"#review-never-{stale}")).to_contain_text("never used")
    shot(page, "checkup", full_page=True)

    page.locator(f"#review-rule-{keep} .review-confirm").click()
    expect(page.locator(f"#review-rule-{keep} .review-status")).to_contain_text("Confirmed")
    page.locator(f"#review-rule-{demote} .review-demote").click()
    expect(page.locator(f"#review-rule-{demote} .review-status")).to_contain_text("Demoted")
    page.locator(f"#review-rule-{wrong} .review-forget").click()
    page.locator(f"#review-rule-{wrong} .review-forget-no").click()  # changed one's mind: nothing happens
    assert row(home, wrong) is not None
    page.locator(f"#review-rule-{wrong} .review-forget").click()
    page.locator(f"#review-rule-{wrong} .review-forget-yes").click()
    expect(page.locator(f"#review-rule-{wrong} .review-status")).to_contain_text("Forgotten")
    page.locator(f"#review-never-{stale} .review-keep").click()
    expect(page.locator(f"#review-never-{stale} .review-status")).to_contain_text("Kept")
    shot(page, "checkup-answered", full_page=True)

    assert (row(home, keep)["layer"], row(home, keep)["user_layer"]) == ("rule", "rule")
    assert row(home, demote)["layer"] != "rule" and row(home, demote)["user_layer"] == "key"
    assert row(home, wrong) is None and row(home, stale) is not None
    conn = home.db()
    try:
        ops = [tuple(r) for r in conn.execute("SELECT surface, op FROM memory_log ORDER BY id")]
    finally:
        conn.close()
    assert [op for s, op in ops if s in ("http", "viewer")] == ["confirmed", "unpinned", "forgotten"], ops

    # Reloaded: the answers stand (a confirmed rule says so; the demoted and the forgotten are gone).
    page.reload()
    expect(page.locator(f"#review-rule-{keep}")).to_contain_text("confirmed by you")
    expect(page.locator("#review-rules .review-item")).to_have_count(1)


def test_checkup_lets_the_newer_memory_replace_the_older(installed: Home, page: Any) -> None:
    home = installed
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    now = time.time()
    older = rows.obs("Build machine keeps MAX_WORKERS at 4 because of its memory limit", type="decision",
                     at=now - 2 * DAY)
    newer = rows.obs("Raised MAX_WORKERS to 8 after the RAM upgrade", type="decision", at=now - DAY)
    rows.conn.close()
    start(home)
    pairs = review_list(home)["contradictions"]
    if not any(p["older"]["id"] == older and p["newer"]["id"] == newer for p in pairs):
        pytest.skip(f"the memory index did not pair these two by subject: {pairs}")
    open_viewer(page, home, "?tab=review")
    item = page.locator(f"#review-pair-{older}-{newer}")
    expect(item).to_contain_text("Both name")
    item.locator(".review-supersede").click()
    expect(item.locator(".review-status")).to_contain_text(f"#{newer} replaces #{older}")
    r = row(home, older)
    assert r["status"] == "superseded" and r["superseded_by"] == newer


def test_search_counts_sorts_and_lists_each_memory_once(installed: Home, page: Any) -> None:
    home = installed
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    now = time.time()
    # 45 distinct memories (each names its own identifier: near-duplicates would be one memory, one result).
    words = [f"{a}{b}" for a in ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo")
             for b in ("", "_kelp", "_onyx", "_pine", "_sage")]
    ids = [rows.obs(f"Uploader retry budget read by {words[i]}_queue, case {i:02d}", type="discovery",
                    session=f"s{i % 4}", at=now - (i + 1) * 3600) for i in range(45)]
    # One prompt typed in three imported sessions: one result, not three.
    c = rows.conn
    with transaction(c):
        for k in range(3):
            sid = rows.session("alpha", f"imp{k}")
            c.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                      "VALUES (?, 1, 'Why does the uploader retry budget reset?', ?)", (sid, now - 50 * 3600 - k))
    c.close()
    start(home)
    body = api(home, "search?q=uploader+retry+budget&limit=30")
    assert body["total"] == 46 and not body["more"] and body["merged"] == 2, {k: body[k] for k in
                                                                             ("total", "more", "merged")}
    open_viewer(page, home)
    page.fill("#search", "uploader retry budget")
    page.press("#search", "Enter")
    heading = page.locator("#feed-heading")
    expect(heading).to_contain_text("46 results for “uploader retry budget” (keywords)")
    expect(page.locator("#search-tools")).to_be_visible()
    # The API's note on search by meaning, in words.
    expect(page.locator("#search-note")).to_contain_text(
        "Search by meaning is off: embeddings are off (embedding_backend none)")
    expect(page.locator("#feed article.item[data-kind='prompt']")).to_have_count(1)
    shot(page, "search-total")

    page.select_option("#search-sort", "oldest")
    expect(heading).to_contain_text("46 results for “uploader retry budget” (keywords), oldest first")
    assert "sort=oldest" in page.url
    page.wait_for_selector("#feed[aria-busy='false']", state="attached")
    listed = page.locator("#feed article.item")
    expect(listed.first).to_have_attribute("data-kind", "prompt")  # typed 50 hours ago: the oldest
    expect(listed.nth(1)).to_contain_text("case 44")
    page.select_option("#search-sort", "newest")
    expect(page.locator("#feed article.item").first).to_contain_text("case 00")
    shot(page, "search-sorted")

    # Every result, scrolled to the end: each memory once.
    from tests.support.viewer import keys, scroll_to_end

    scroll_to_end(page)
    shown = keys(page)
    assert len(shown) == len(set(shown)) == 46, len(shown)
    assert {f"o:{i}" for i in ids} <= set(shown)
    page.reload()  # the sort is in the address
    expect(page.locator("#search-sort")).to_have_value("newest")
    expect(heading).to_contain_text("newest first")


def test_stats_over_a_chosen_range_back_to_imported_history(installed: Home, page: Any) -> None:
    home = installed
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    now = time.time()
    old_at = now - 200 * DAY  # imported history, far outside the last 30 days
    for i in range(3):
        rows.obs(f"Imported decision {i} about the queue", type="decision", at=old_at + i * 60, session="old")
    rows.obs("Recent change to the queue", type="change", at=now - 600)
    c = rows.conn
    with transaction(c):  # what the work cost against what reading its index costs: 99.65 % saved
        c.execute("UPDATE observations SET source_tokens = 0")
        c.execute("UPDATE observations SET source_tokens = 2000000 WHERE title LIKE 'Recent%'")
    c.close()
    start(home)
    open_viewer(page, home, "?tab=stats")
    panel = page.locator("#stats")
    expect(panel).to_contain_text("Observations per day and type")
    expect(panel).to_contain_text("(30 days)")
    body = api(home, "stats")
    old_day = time.strftime("%Y-%m-%d", time.gmtime(old_at))
    assert body["first_day"] == old_day and sum(d["total"] for d in body["days"]) == 1

    page.click("#stats-all")
    expect(page.locator("#stats-from")).to_have_value(old_day)
    expect(panel).to_contain_text(re.compile(r"\((20[01]|19\d) days\)"))
    ranged = api(home, f"stats?from={old_day}")
    assert sum(d["total"] for d in ranged["days"]) == 4
    cells = page.eval_on_selector_all("#stats .chart .bar title", "els => els.map(e => e.textContent)")
    assert any(c.startswith(f"{old_day}: 3 observations") for c in cells), cells[:3]
    shot(page, "stats-all-history", full_page=True)

    # Only the imported days.
    page.fill("#stats-to", time.strftime("%Y-%m-%d", time.gmtime(old_at + DAY)))
    page.click("#stats-range button[type='submit']")
    expect(panel).to_contain_text("(2 days)")
    page.fill("#stats-from", time.strftime("%Y-%m-%d", time.gmtime(now)))
    page.click("#stats-range button[type='submit']")
    expect(page.locator("#stats-range-error")).to_contain_text("after the To date")

    # "Saved" is floored to a tenth: 99.65 % reads 99.6 %, never 100.0 %.
    saved = api(home, "stats")["savings"]
    pct = page.evaluate("(v) => import('/static/views.js').then(m => [m.pct(v), m.pct(99.65), m.pct(99.99)])",
                        saved["saved_pct"])
    assert pct[1:] == ["99.6%", "99.9%"], pct
    expect(page.locator("#stats .cards")).to_contain_text(pct[0])
    assert saved["saved_pct"] is None or saved["saved_pct"] < 100.0
