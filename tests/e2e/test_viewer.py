"""The web viewer in a real browser: Debian's headless Chromium driven by Playwright, a real
worker, and observations made by real hook processes from captured Claude Code payloads.

Every test fails on any console error or uncaught page error (``ConsoleErrors``); the few a
step provokes on purpose (a refused token, a 400 from the settings form, a refused connection
while the worker restarts) are allowed by pattern inside that step only. Screenshots of each
view go to $KENNING_TEST_ARTIFACTS or .artifacts/viewer/.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Home, load_fixture
from tests.support import browser as br

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
# Not page.wait_for_function: it evaluates a string, which the page's CSP (no 'unsafe-eval') refuses.
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect

PROMPT = "Please write hello.txt with a greeting. We always use pnpm, never npm."
FEATURE_TITLE = "Added hello.txt"
DECISION_TITLE = "We always use pnpm, never npm"
HOSTILE = '<b>bold</b><img src="x" onerror="window.__pwned = 1">'
TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)


# ------------------------------------------------------------------------------ helpers

@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with br.chromium() as b:
        yield b


@pytest.fixture
def worker(home: Home) -> Home:
    """A real worker with the offline rules observer and no embedding model."""
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    return home


@pytest.fixture
def page(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    p = context.new_page()
    p.set_default_timeout(TIMEOUT_MS)
    errors = br.ConsoleErrors(p)
    p.errors = errors  # type: ignore[attr-defined]
    try:
        yield p
        errors.check()
    finally:
        context.close()


def token(home: Home) -> str:
    from kenning.paths import read_token

    return read_token(home.paths)


def base(home: Home) -> str:
    return f"http://127.0.0.1:{home.port}/"


def sign_in_url(home: Home) -> str:
    """The address `kenning open --print` gives: a one-time code, never the token."""
    r = home.kenning("open", "--print")
    assert r.returncode == 0, r.stderr
    url = r.stdout.strip()
    assert url.startswith(f"{base(home)}#code=") and token(home) not in url, url
    return url


def open_viewer(page: Any, home: Home) -> None:
    page.goto(sign_in_url(home))
    page.wait_for_selector("#live[data-state='connected']")
    page.wait_for_selector("#feed[aria-busy='false']", state="attached")


def api(home: Home, path: str) -> Any:
    from kenning.hook.client import request

    res = request(home.port, "GET", f"/api/viewer/{path}", token=token(home), timeout=15)
    assert res is not None and res[0] == 200, res
    return json.loads(res[1])


def capture_turn(home: Home, session: str, prompt: str = PROMPT) -> None:
    """One prompt turn through real hook processes: prompt, a Write, Stop (the rules observer
    turns it into a `feature` note on hello.txt, plus a `decision` for the stated rule)."""
    for name in ("SessionStart.startup", "UserPromptSubmit", "PostToolUse.Write", "Stop"):
        payload = load_fixture(f"print-mode/events/{name}.json", cwd=str(home.project))
        payload["session_id"] = session
        if name == "UserPromptSubmit":
            payload["prompt"] = prompt
        r = home.hook(payload["hook_event_name"], payload)
        assert r.returncode == 0, r.stderr


def item(page: Any, text: str) -> Any:
    """The feed row of the observation whose title holds ``text`` (its summary may say it too)."""
    return page.locator("#feed article.item[data-kind='observation']", has_text=text)


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(br.artifacts_dir() / f"{name}.png"))


def obs_row(home: Home, like: str) -> Any:
    conn = home.db()
    try:
        return conn.execute("SELECT * FROM observations WHERE title LIKE ?", (f"%{like}%",)).fetchone()
    finally:
        conn.close()


# -------------------------------------------------------------------------------- tests

def test_token_flow_live_item_search_detail_edit_retract_delete(worker: Home, page: Any) -> None:
    home = worker
    open_viewer(page, home)
    # The code left the address bar; the page keeps a session, never the token itself.
    assert "code" not in page.url and page.url == base(home)
    session = page.evaluate("localStorage.getItem('kenning.session')")
    assert session.startswith("s1.") and token(home) not in session
    assert page.evaluate("localStorage.getItem('kenning.token')") is None
    assert page.locator("#token-view").is_hidden()
    page.wait_for_selector("#feed-end:not([hidden])")  # an empty memory says so
    shot(page, "feed-empty")

    # Real hook processes → worker → rules observer → SSE → a highlighted row at the top,
    # with no reload of the page (the marker set on this document survives).
    page.evaluate("document.body.dataset.testMarker = 'still-here'")
    capture_turn(home, "viewer-live-1")
    feature = item(page, FEATURE_TITLE)
    feature.wait_for()
    item(page, DECISION_TITLE).wait_for()
    assert feature.get_attribute("data-live") == "1"
    assert page.evaluate("document.body.dataset.testMarker") == "still-here"
    kinds = page.eval_on_selector_all("#feed article.item", "els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "summary" and "prompt" in kinds  # newest first: the turn reads backwards
    shot(page, "feed-live")

    # Search (debounced as you type; the results replace the feed).
    page.fill("#search", "hello")
    expect(page.locator("#feed-heading")).to_contain_text("hello")
    page.wait_for_selector("#feed article.item .score")
    assert item(page, FEATURE_TITLE).count() == 1
    shot(page, "search")

    # Detail: facts, narrative, files, concepts, session, prompt, tokens.
    item(page, FEATURE_TITLE).focus()
    page.keyboard.press("Enter")
    detail = page.locator("#detail")
    detail.wait_for()
    page.wait_for_selector("#detail-body .facts")
    body = page.locator("#detail-body").inner_text()
    assert "hello.txt" in body and "Created hello.txt" in body
    assert "what-changed" in body and "Session #" in body and PROMPT in body
    assert re.search(r"Record\s+~\d+", body)
    shot(page, "detail")

    # Session timeline (prompts → observations → summary), then back.
    page.click("#open-session")
    page.wait_for_selector("#detail-body .timeline")
    timeline = page.locator("#detail-body").text_content() or ""
    assert PROMPT in timeline and FEATURE_TITLE in timeline and "Summary" in timeline
    shot(page, "session")
    page.click("#detail-back")
    page.wait_for_selector("#act-edit")

    # Edit the title and type inline.
    oid = obs_row(home, FEATURE_TITLE)["id"]
    page.click("#act-edit")
    page.fill("#edit-title", "Greeting file hello.txt added (edited)")
    page.select_option("#edit-type", "change")
    page.click(".edit-form button[type=submit]")
    expect(page.locator("#detail-title")).to_contain_text("(edited)")
    row = home.db().execute("SELECT title, type, status FROM observations WHERE id = ?", (oid,)).fetchone()
    assert (row["title"], row["type"]) == ("Greeting file hello.txt added (edited)", "change")
    assert item(page, "(edited)").count() == 1  # the search result row follows

    # Mark it as no longer true: kept, flagged and struck through; then restore.
    page.click("#act-retract")
    page.wait_for_selector("#act-retract[aria-pressed='true']")
    assert home.db().execute("SELECT status FROM observations WHERE id = ?", (oid,)).fetchone()[0] == "retracted"
    edited = item(page, "(edited)")
    assert edited.get_attribute("data-status") == "retracted"
    assert "no longer true" in edited.inner_text()
    assert edited.locator(".item-title").evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    assert re.search(r"Record\s+~\d+", page.locator("#detail-body").inner_text())  # the detail stays whole
    shot(page, "retracted")
    page.click("#act-retract")
    page.wait_for_selector("#act-retract[aria-pressed='false']")
    assert home.db().execute("SELECT status FROM observations WHERE id = ?", (oid,)).fetchone()[0] == "active"

    # Escape closes the detail; Escape in the search box clears the search: the feed is back.
    page.keyboard.press("Escape")
    detail.wait_for(state="hidden")
    page.focus("#search")
    page.keyboard.press("Escape")
    expect(page.locator("#feed-heading")).to_have_text(re.compile(r"^Newest first"))
    item(page, DECISION_TITLE).wait_for()

    # Delete, with a real <dialog>: Cancel keeps it, Delete forgets it and the row goes.
    did = obs_row(home, DECISION_TITLE)["id"]
    item(page, DECISION_TITLE).click()
    page.wait_for_selector("#act-delete")
    page.click("#act-delete")
    dialog = page.locator("dialog#confirm-delete")
    dialog.wait_for()
    assert page.evaluate("document.querySelector('#confirm-delete').open") is True
    assert DECISION_TITLE in dialog.inner_text()
    shot(page, "delete-dialog")
    page.click("#confirm-cancel")
    dialog.wait_for(state="hidden")
    assert obs_row(home, DECISION_TITLE) is not None
    page.click("#act-delete")
    dialog.wait_for()
    page.click("#confirm-ok")
    item(page, DECISION_TITLE).wait_for(state="detached")
    detail.wait_for(state="hidden")
    assert obs_row(home, DECISION_TITLE) is None
    assert home.db().execute("SELECT COUNT(*) FROM observations WHERE id = ?", (did,)).fetchone()[0] == 0
    # Reloaded from the server, the feed agrees.
    page.reload()
    page.wait_for_selector("#feed[aria-busy='false']", state="attached")
    item(page, "(edited)").wait_for()
    assert item(page, DECISION_TITLE).count() == 0


def test_token_form_when_missing_or_refused(worker: Home, page: Any) -> None:
    home = worker
    page.goto(base(home))
    page.wait_for_selector("#token-view:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "token-input"
    shot(page, "token-form")
    # A wrong token: the worker answers 401 (Chromium logs the failed load), the form comes back.
    with page.errors.allow(r"status of 401"):
        page.fill("#token-input", "not-the-token")
        page.press("#token-input", "Enter")
        expect(page.locator("#token-why")).to_contain_text("refused")
    assert page.locator("#token-view").is_visible()
    assert page.evaluate("localStorage.getItem('kenning.token')") is None
    page.fill("#token-input", token(home))
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#live[data-state='connected']")
    assert page.locator("#token-view").is_hidden() and page.locator("#view-feed").is_visible()
    # Remembered: a reload needs no token in the URL.
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    assert page.locator("#token-view").is_hidden()


def test_a_sign_in_code_works_once(worker: Home, chromium: Any) -> None:
    """The address of `kenning open` signs in one browser once; the same address again is refused."""
    url = sign_in_url(worker)
    for attempt in ("first", "again"):
        context = chromium.new_context()
        try:
            p = context.new_page()
            p.goto(url)
            if attempt == "first":
                p.wait_for_selector("#live[data-state='connected']")
                assert p.evaluate("localStorage.getItem('kenning.session')").startswith("s1.")
            else:
                p.wait_for_selector("#token-view:not([hidden])")
                expect(p.locator("#token-why")).to_contain_text("already used")
                assert p.evaluate("localStorage.getItem('kenning.session')") is None
        finally:
            context.close()


def test_settings_saved_validated_and_reloaded(worker: Home, page: Any) -> None:
    home = worker
    open_viewer(page, home)
    page.click("#tab-settings")
    field = page.locator("#set-context_observations")
    field.wait_for()
    assert page.locator("label[for='set-context_observations']").is_visible()
    assert "observations listed at session start" in page.locator("#set-context_observations-help").inner_text()
    assert page.locator("#set-redact_custom").count() == 0  # not a common setting
    shot(page, "settings")

    # Out of range: caught in the page, nothing is sent nor saved.
    field.fill("9999")
    page.click("#settings-form button[type=submit]")
    expect(page.locator("#set-context_observations-error")).to_contain_text("500")
    assert field.get_attribute("aria-invalid") == "true"
    assert not home.paths.settings or "9999" not in _settings_text(home)

    # A valid value: saved to settings.json, "Saved", effective without a restart.
    field.fill("40")
    page.click("#settings-form button[type=submit]")
    expect(page.locator("#settings-status")).to_have_text(re.compile(r"^Saved"))
    assert "In effect now" in page.locator("#settings-status").inner_text()
    assert json.loads(_settings_text(home))["context_observations"] == 40
    # A setting the worker reads at start says so.
    page.select_option("#set-log_level", "DEBUG")
    page.click("#settings-form button[type=submit]")
    expect(page.locator("#settings-status")).to_contain_text("restart")
    assert "log_level" in page.locator("#settings-status").inner_text()
    assert json.loads(_settings_text(home))["log_level"] == "DEBUG"

    # Show all settings; a problem only the worker can find (a bad regex) comes back as a 400
    # with `problems`, shown at the field, and nothing is saved.
    page.check("#settings-all")
    page.locator("#set-redact_custom").wait_for()
    page.fill("#set-redact_custom", "broken=([")
    with page.errors.allow(r"status of 400"):
        page.click("#settings-form button[type=submit]")
        expect(page.locator("#set-redact_custom-error")).not_to_be_empty()
    assert page.locator("#settings-status").inner_text().startswith("Not saved")
    assert "broken" not in _settings_text(home)
    shot(page, "settings-problem")

    # Reloaded, the form shows the saved values.
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    page.click("#tab-settings")
    page.locator("#set-context_observations").wait_for()
    assert page.input_value("#set-context_observations") == "40"
    assert page.input_value("#set-log_level") == "DEBUG"


def _settings_text(home: Home) -> str:
    try:
        with open(home.paths.settings, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


def test_next_session_preview_and_stats(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "viewer-preview-1")
    home.flush()
    open_viewer(page, home)
    page.click("#tab-preview")
    expect(page.locator("#preview-text")).not_to_be_empty()
    assert page.input_value("#preview-project") == "project"
    expected = api(home, "preview?project=project")
    text = page.evaluate("document.querySelector('#preview-text').textContent")
    assert text == expected["context"]
    assert FEATURE_TITLE in text
    size = page.locator("#preview-size").inner_text()
    assert f"{expected['chars']:,} characters" in size and f"{expected['tokens']:,} tokens" in size
    assert page.locator("#preview-text").evaluate("e => e.tagName") == "PRE"
    shot(page, "preview")

    page.click("#tab-stats")
    page.wait_for_selector("#stats .cards")
    stats = page.locator("#stats").inner_text()
    n = api(home, "stats")["totals"]["observations"]
    assert n >= 2 and re.search(rf"\b{n}\s+Observations", stats)
    assert "Database" in stats and "Spool depth" in stats and "rules" in stats
    assert page.locator("#stats svg.chart rect").count() >= 1
    shot(page, "stats")


def test_theme_toggle_and_keyboard(worker: Home, page: Any) -> None:
    home = worker
    capture_turn(home, "viewer-keys-1")
    home.flush()
    open_viewer(page, home)
    item(page, FEATURE_TITLE).wait_for()

    # Theme: the light default (the context prefers light), toggled to dark and remembered.
    bg = "getComputedStyle(document.body).backgroundColor"
    light = page.evaluate(bg)
    assert page.get_attribute("#theme-toggle", "aria-pressed") == "false"
    page.click("#theme-toggle")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.get_attribute("#theme-toggle", "aria-pressed") == "true"
    assert page.evaluate(bg) != light
    shot(page, "feed-dark")
    page.reload()
    page.wait_for_selector("#feed article.item")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate("localStorage.getItem('kenning.theme')") == "dark"

    # Keyboard: / focuses search, j/k move through the feed, Enter opens, Escape closes and
    # gives the focus back to the row.
    page.locator("body").click(position={"x": 5, "y": 400})
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search"
    page.keyboard.press("Tab")  # out of the search box
    page.keyboard.press("j")
    first = page.evaluate("document.activeElement.dataset.key")
    assert first and first == page.locator("#feed article.item").first.get_attribute("data-key")
    page.keyboard.press("j")
    second = page.evaluate("document.activeElement.dataset.key")
    assert second and second != first
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.dataset.key") == first
    target = item(page, FEATURE_TITLE)
    target.focus()
    page.keyboard.press(" ")
    page.wait_for_selector("#detail-body .facts")
    assert page.evaluate("document.activeElement.id") == "detail-title"
    page.keyboard.press("Escape")
    page.locator("#detail").wait_for(state="hidden")
    assert page.evaluate("document.activeElement.dataset.key") == target.get_attribute("data-key")
    # The focus ring is visible on a keyboard-focused row.
    assert target.evaluate("e => getComputedStyle(e).outlineStyle") != "none"

    # Tabs: arrow keys move between them (roving tabindex), the panel follows.
    page.focus("#tab-feed")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-preview"
    assert page.locator("#view-preview").is_visible() and page.locator("#view-feed").is_hidden()
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.id") == "tab-settings"
    page.keyboard.press("Home")
    assert page.locator("#view-feed").is_visible()

    # Labels: every form control of the page has an accessible name.
    unnamed = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
        .filter(e => e.offsetParent !== null)
        .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map(e => e.id || e.outerHTML.slice(0, 80))""")
    assert unnamed == []


def test_infinite_scroll_and_filters(home: Home, page: Any) -> None:
    import datetime

    from tests.support.search_rows import Rows

    # 180 observations over ~7 days in two projects, written before the worker starts.
    now = time.time()
    home.paths.ensure()
    rows = Rows(home.paths.db)
    types = ("bugfix", "feature", "change", "discovery")
    for i in range(180):
        project = "beta" if i % 6 == 0 else "alpha"
        rows.obs(f"Note {i:03d} about the ledger", project=project, session=f"s{i // 20}", type=types[i % 4],
                 concepts=["gotcha"] if i % 5 == 0 else ["pattern"], at=now - 3600 * i - 60)
    # Memory text is data, never markup: the oldest row's title is HTML.
    rows.obs(HOSTILE, project="gamma", session="x", type="discovery", narrative=HOSTILE, at=now - 3600 * 200)
    rows.conn.close()
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    open_viewer(page, home)
    feed = page.locator("#feed article.item")
    assert feed.count() == 50
    first = feed.first
    first.evaluate("e => { e.dataset.mark = 'first-node'; }")
    # Scrolling loads the next pages (appended: the first row is still the same node).
    while page.locator("#feed-end").is_hidden():
        page.locator("#feed-sentinel").scroll_into_view_if_needed()
        page.wait_for_timeout(100)
    assert page.locator("#feed-end").inner_text() == "The beginning of memory."
    keys = page.eval_on_selector_all("#feed article.item", "els => els.map(e => e.dataset.key)")
    assert len(keys) == len(set(keys)) == 181
    assert feed.first.get_attribute("data-mark") == "first-node"
    titles = page.eval_on_selector_all("#feed article.item .item-title", "els => els.map(e => e.textContent)")
    assert titles == [f"Note {i:03d} about the ledger" for i in range(180)] + [HOSTILE]  # newest first
    assert page.locator("#feed img, #feed b").count() == 0
    feed.last.click()
    expect(page.locator("#detail-body .narrative")).to_have_text(HOSTILE)
    assert page.locator("#detail img, #detail b").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.keyboard.press("Escape")

    def shown(attr: str) -> set[str]:
        return set(page.eval_on_selector_all("#feed article.item", f"els => els.map(e => e.{attr})"))

    page.select_option("#project", "beta")
    expect(page.locator("#feed-heading")).to_contain_text("project beta")
    expect(page.locator("#feed-end")).to_be_visible()
    assert feed.count() == 30
    assert shown("querySelector('.project').textContent") == {"beta"}
    page.select_option("#project", "")
    page.select_option("#f-type", "bugfix")
    expect(page.locator("#feed-heading")).to_contain_text("type Bug fix")
    expect(feed.first).to_be_visible()
    assert shown("className.split(' ').find(c => c.startsWith('type-'))") == {"type-bugfix"}
    page.select_option("#f-concept", "gotcha")
    expect(page.locator("#feed-heading")).to_contain_text("concept gotcha")
    expect(page.locator("#feed-end")).to_be_visible()
    assert feed.count() == len([i for i in range(180) if i % 4 == 0 and i % 5 == 0])
    page.click("#f-clear")
    # One day: the rows of that local day only.
    day = datetime.datetime.fromtimestamp(now - 3 * 86400).date()
    page.fill("#f-from", day.isoformat())
    page.fill("#f-to", day.isoformat())
    expect(page.locator("#feed-heading")).to_contain_text(f"to {day.isoformat()}")
    expect(page.locator("#feed-end")).to_be_visible()
    want = [i for i in range(180) if datetime.datetime.fromtimestamp(now - 3600 * i - 60).date() == day]
    assert feed.count() == len(want) > 0

    # A live item outside the filters stays out; the default feed shows it.
    page.click("#f-clear")
    page.select_option("#project", "beta")
    expect(page.locator("#feed-heading")).to_contain_text("project beta")
    capture_turn(home, "viewer-filtered")
    home.flush()
    page.wait_for_timeout(1500)  # the stream polls each second
    assert item(page, FEATURE_TITLE).count() == 0
    page.select_option("#project", "")
    item(page, FEATURE_TITLE).wait_for()
    shot(page, "feed-filtered")


def test_live_stream_reconnects_after_worker_restart(worker: Home, page: Any) -> None:
    home = worker
    open_viewer(page, home)
    # While the worker is down Chromium logs each refused reconnect as a failed load.
    with page.errors.allow(r"ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_CONNECTION_RESET|Failed to load resource"):
        home.stop_worker()
        page.wait_for_selector("#live[data-state='reconnecting']")
        shot(page, "reconnecting")
        home.start_worker()
        page.wait_for_selector("#live[data-state='connected']", timeout=30_000)
    capture_turn(home, "viewer-after-restart")
    item(page, FEATURE_TITLE).wait_for()
    assert page.locator("#live-queue").inner_text().startswith("queue ")
