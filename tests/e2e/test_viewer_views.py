"""The viewer as a tool a person reads and links: what the wheel ships, the address, search
edge cases, delete with background compaction, the Stats page against the API, the layout from
390 to 1440 px, and times that stay true. A real Chromium, a worker from the installed wheel.
"""

from __future__ import annotations

import mimetypes
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import Home
from tests.support import browser as br
from tests.support import wheel
from tests.support.viewer import (
    DESKTOP,
    PHONE,
    TIMEOUT_MS,
    ProjectRows,
    api,
    base,
    fill_rows,
    item,
    keys,
    open_viewer,
    shot,
    sign_in_url,
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)
STATIC = Path(__file__).resolve().parents[2] / "kenning" / "viewer" / "static"


def started(home: Home) -> Home:
    home.env["KENNING_PROVIDER"] = "rules"
    home.env["KENNING_EMBEDDING_BACKEND"] = "none"
    home.start_worker()
    return home


def view_of(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


# ------------------------------------------------------------------------------ the wheel

def test_the_wheel_carries_and_serves_every_static_asset(worker: Home, page: Any, kenning_wheel: Path) -> None:
    installed = wheel.package_dir(kenning_wheel) / "viewer" / "static"
    for f in STATIC.iterdir():
        assert (installed / f.name).read_bytes() == f.read_bytes(), f"{f.name} is not in the wheel as it is here"
    failed: list[str] = []
    loaded: list[str] = []
    page.on("response", lambda r: (failed if r.status >= 400 else loaded).append(f"{r.status} {r.url}"))
    open_viewer(page, worker)
    page.wait_for_timeout(500)  # not "networkidle": the live stream stays open
    # Every asset the page references came from the installed copy with a 200, the favicon too.
    assert not failed, failed
    for f in STATIC.iterdir():
        if f.name == "index.html":
            continue
        res = page.request.get(f"{base(worker)}static/{f.name}")
        assert res.status == 200 and res.body() == f.read_bytes(), f.name
        want = mimetypes.guess_type(f.name)[0] or ""
        assert res.headers["content-type"].split(";")[0] in (want, "text/javascript"), (f.name, res.headers)
    referenced = page.evaluate("""() => [...document.querySelectorAll('link[href], script[src]')]
        .map(e => new URL(e.getAttribute('href') || e.getAttribute('src'), location.href).pathname)""")
    assert "/static/favicon.svg" in referenced and all(p.startswith("/static/") for p in referenced)
    for path in referenced:
        assert (installed / path.rsplit("/", 1)[1]).is_file(), path


# ---------------------------------------------------------------------------- the address

def test_tab_filters_query_and_open_item_live_in_the_address(installed: Home, page: Any, chromium: Any) -> None:
    home = installed
    fill_rows(home, 60, projects=("alpha", "beta"))
    started(home)
    # A pasted link: the filters, the tab and the open item as it names them.
    oid = home.db().execute("SELECT id FROM observations WHERE title LIKE 'Note 004%'").fetchone()[0]
    open_viewer(page, home, f"?project=alpha&type=bugfix&item=o{oid}")
    assert page.input_value("#project") == "alpha" and page.input_value("#f-type") == "bugfix"
    expect(page.locator("#feed-heading")).to_contain_text("project alpha, type Bug fix")
    expect(page.locator("#detail-title")).to_have_text("Note 004 about the ledger")
    assert {it.split(":")[0] for it in keys(page)} == {"o"}
    shot(page, "linked-view")

    # Searching and opening are steps of the address; reload lands on the same view.
    page.keyboard.press("Escape")
    expect(page.locator("#detail")).to_be_hidden()
    assert "item" not in view_of(page)
    page.fill("#search", "012")
    expect(page.locator("#feed-heading")).to_contain_text("for “012”")
    item(page, "012").click()
    expect(page.locator("#detail-title")).to_have_text("Note 012 about the ledger")
    v = view_of(page)
    assert v["q"] == "012" and v["project"] == "alpha" and v["item"].startswith("o")
    page.reload()
    page.wait_for_selector("#live[data-state='connected']")
    expect(page.locator("#detail-title")).to_have_text("Note 012 about the ledger")
    assert page.input_value("#search") == "012" and page.input_value("#project") == "alpha"
    expect(page.locator("#feed-heading")).to_contain_text("1 result for “012”")

    # Back closes the item, then undoes the search, then the first detail comes back: never
    # out of the app.
    page.go_back()
    expect(page.locator("#detail")).to_be_hidden()
    assert page.input_value("#search") == "012"
    page.go_back()
    expect(page.locator("#detail")).to_be_hidden()
    expect(page.locator("#feed-heading")).to_contain_text("Newest first")
    assert page.input_value("#search") == ""
    page.go_back()
    expect(page.locator("#detail-title")).to_have_text("Note 004 about the ledger")
    assert page.url.startswith(base(home))
    page.go_forward()
    expect(page.locator("#detail")).to_be_hidden()

    # The tab too: Stats for beta, from a link opened in another browser.
    context = chromium.new_context(viewport=DESKTOP)
    try:
        other = context.new_page()
        other.goto(sign_in_url(home, "?tab=stats&project=beta"))
        other.wait_for_selector("#stats .cards")
        assert other.get_attribute("#tab-stats", "aria-selected") == "true"
        expect(other.locator("#stats-scope")).to_contain_text("Memory in beta")
        expect(other.locator("#stats .cards")).to_contain_text("30")
        # A session's timeline from its link.
        sid = home.db().execute("SELECT session_id FROM observations LIMIT 1").fetchone()[0]
        other.goto(f"{base(home)}?item=s{sid}")
        other.wait_for_selector("#detail-body .timeline")
        expect(other.locator("#detail-title")).to_contain_text(f"Session #{sid}")
    finally:
        context.close()


# --------------------------------------------------------------------------------- search

def test_search_edge_cases_say_what_is_true(installed: Home, page: Any) -> None:
    home = installed
    fill_rows(home, 40, projects=("webshop",))
    rows = ProjectRows(home.paths.db)
    rows.obs("Use `pnpm install --frozen-lockfile` in CI", project="webshop", session="ci", type="decision",
             narrative="The lockfile must not drift: `pnpm install --frozen-lockfile` fails when it would.")
    rows.obs("我们把数据库迁移到了新的集群，旧的先保留一周", project="webshop", session="zh", type="decision")
    rows.conn.close()
    started(home)
    open_viewer(page, home)
    # No searchable word: said so, not the newest items as "results".
    for q in ("🙂", "*", "-"):
        page.fill("#search", q)
        expect(page.locator("#feed-end")).to_contain_text("has no words to search for")
        expect(page.locator("#feed-heading")).to_contain_text("Nothing to search for")
        assert page.locator("#feed article.item").count() == 0
    shot(page, "search-no-words")
    # A 10 KB query: searched by its head, shown shortened (the whole of it in the tooltip).
    long_q = "ledger " + "x" * 10_000
    page.fill("#search", long_q)
    # "Searching for …" says the same words before the answer: wait for the count.
    expect(page.locator("#feed-heading")).to_contain_text(re.compile(r"results? for “ledger"))
    heading = page.locator("#feed-heading").inner_text()
    assert len(heading) < 160 and "…”" in heading
    # Matched words marked (a stemmed form too), inline code as code, in the card and the detail.
    page.fill("#search", "ledgers")
    expect(page.locator("#feed-heading")).to_contain_text(re.compile(r"results? for “ledgers”"))
    # textContent: rows off screen skip rendering (content-visibility), so their innerText is ''.
    marks = page.eval_on_selector_all("#feed .item-title mark", "els => els.map(e => e.textContent)")
    assert marks and {m.lower() for m in marks} == {"ledger"}
    page.fill("#search", "frozen lockfile")
    card = item(page, "pnpm install")
    expect(card.locator("code.code-span")).to_have_text("pnpm install --frozen-lockfile")
    assert "`" not in card.inner_text()
    card.click()
    expect(page.locator("#detail-body .narrative code.code-span")).to_have_text("pnpm install --frozen-lockfile")
    assert page.locator("#detail-body .narrative mark").count() >= 1
    shot(page, "search-highlight")
    page.keyboard.press("Escape")
    # A Chinese word inside a longer run of Chinese: found, and only the word is marked, not the run.
    page.fill("#search", "数据库")
    expect(page.locator("#feed-heading")).to_contain_text("数据库")
    card = item(page, "集群")
    expect(card).to_be_visible()
    marks = page.eval_on_selector_all("#feed .item-title mark", "els => els.map(e => e.textContent)")
    assert marks == ["数据库"], marks
    # A result-less search says what was looked for, and where.
    page.fill("#search", "kubernetes")
    expect(page.locator("#feed-end")).to_have_text("Nothing matches “kubernetes”.")
    # A reversed range in a pasted link is refused by the worker, with its message.
    with page.errors.allow(r"status of 400"):
        page.goto(f"{base(home)}?from=2026-03-10&to=2026-03-01")
        expect(page.locator("#feed-end")).to_contain_text("the From date is after the To date")
    expect(page.locator("#filters-error")).to_contain_text("From date is after the To date")


# --------------------------------------------------------------------------------- delete

def test_delete_answers_at_once_and_compacts_in_the_background(installed: Home, page: Any) -> None:
    home = installed
    fill_rows(home, 30, projects=("alpha",))
    secret = "zebra-quokka-marker-1337"
    rows = ProjectRows(home.paths.db)
    oid = rows.obs(f"Forget me {secret}", project="alpha", session="z", narrative=f"the text {secret} " * 50)
    other = rows.obs("Forget me too", project="alpha", session="z")
    rows.conn.close()
    started(home)
    open_viewer(page, home)
    for target in (oid, other):
        row = page.locator(f"#feed article.item[data-key='o:{target}']")
        row.click()
        page.click("#act-delete")
        page.click("#confirm-ok")
        row.wait_for(state="detached")
        expect(page.locator("#detail")).to_be_hidden()
        # The focus is on the next row, never the page body.
        assert page.evaluate("document.activeElement.closest('article.item') !== null")
    took = page.evaluate("""() => performance.getEntriesByType('resource')
        .filter(e => e.name.includes('/api/viewer/observations/') && e.initiatorType === 'fetch')
        .map(e => e.responseEnd - e.startTime)""")
    # Two deletes answered at once (the slow part is not in the request any more).
    assert len(took) >= 2 and max(took) < 1000, took
    # Progress while the compaction runs in the background, then the result.
    expect(page.locator("#compaction")).to_be_visible()
    shot(page, "compaction")
    expect(page.locator("#toast")).to_contain_text("Compacted", timeout=30_000)
    expect(page.locator("#compaction")).to_be_hidden()
    status = api(home, "compaction")
    assert status["state"] == "done" and status["runs"] == 1 and status["deleted"] == 2  # coalesced: one run
    assert not (Path(home.paths.root) / "compaction.pending").exists()
    for path in (home.paths.db, home.paths.db + "-wal"):
        if Path(path).exists():
            assert secret.encode() not in Path(path).read_bytes(), f"the deleted text is still in {path}"


# ---------------------------------------------------------------------------------- stats

def test_stats_read_only_fields_the_api_sends_and_follow_the_project(installed: Home, page: Any) -> None:
    home = installed
    fill_rows(home, 50, projects=("alpha", "alpha", "beta"))
    started(home)
    open_viewer(page, home)
    page.click("#tab-stats")
    page.wait_for_selector("#stats .cards")

    def check(project: str) -> None:
        body = api(home, f"stats?days=30&project={project}" if project else "stats?days=30")
        read = page.evaluate("() => import('/static/views.js').then(m => [...m.STATS_READ])")
        assert {"totals.observations", "savings.work_tokens", "savings.index_tokens", "savings.full_tokens",
                "savings.saved_pct", "embedding"} <= set(read)
        for path in read:  # the contract: every field the page reads is in the response
            v: Any = body
            for part in path.split("."):
                assert isinstance(v, dict) and part in v, f"the page reads {path}, the API does not send it"
                v = v[part]
        cards = page.locator("#stats .cards").inner_text()
        assert re.search(rf"\b{body['totals']['observations']}\s+Observations", cards), cards
        savings = page.locator("#savings").inner_text()
        assert f"{body['savings']['index_tokens']:,}" in savings and "–" not in savings.split("Saved")[0]

    check("")
    page.select_option("#project", "beta")
    expect(page.locator("#stats-scope")).to_contain_text("Memory in beta")
    expect(page.locator("#stats .cards")).to_contain_text(re.compile(r"(?<!\d)16\s*Observations"))
    check("beta")
    assert "project=beta" in page.url
    shot(page, "stats-project", full_page=True)


# --------------------------------------------------------------------------------- layout

def test_layout_from_390_to_1440_px(installed: Home, page: Any) -> None:
    home = installed
    long_name = "customer-billing-and-invoicing-platform-backend-service"
    fill_rows(home, 40, projects=("alpha", long_name))
    started(home)
    open_viewer(page, home)
    page.select_option("#project", long_name)
    expect(page.locator("#feed-heading")).to_contain_text(long_name)
    # A machine that joined no team has no Team tab: the five others fit a phone's row.
    expect(page.locator("#tab-team")).to_be_hidden()
    for vp in (DESKTOP, PHONE):
        page.set_viewport_size(vp)
        page.wait_for_timeout(200)
        # Nothing wider than the screen; a long project name does not squeeze the search box.
        assert page.evaluate("document.documentElement.scrollWidth") <= vp["width"]
        assert page.locator("#search").bounding_box()["width"] >= min(300, vp["width"] - 40)
        first = page.locator("#feed article.item").first
        left = first.bounding_box()["x"]
        first.click()
        page.wait_for_selector("#detail-body .detail-section")
        # The panel starts below the header (live status, theme toggle and search stay visible)...
        chrome = page.locator("#chrome").bounding_box()
        panel = page.locator("#detail").bounding_box()
        assert panel["y"] >= chrome["y"] + chrome["height"] - 1
        for sel in ("#theme-toggle", "#search", "#live"):
            assert page.locator(sel).is_visible()
        # ...and the feed keeps its place (it may narrow beside the panel, never jump sideways).
        assert abs(first.bounding_box()["x"] - left) < 1
        if vp is DESKTOP:
            assert first.bounding_box()["x"] + first.bounding_box()["width"] <= panel["x"] + 1
        shot_name = "detail-layout"
        page.screenshot(path=str(br.artifacts_dir() / f"{shot_name}-{vp['width']}.png"))
        page.keyboard.press("Escape")
        expect(page.locator("#detail")).to_be_hidden()
    # Charts are drawn at their real width: labels are not stretched, at either size.
    page.click("#tab-stats")
    page.wait_for_selector("#stats svg.chart")
    for vp in (PHONE, DESKTOP):
        page.set_viewport_size(vp)
        page.wait_for_timeout(400)  # redrawn by the ResizeObserver
        dims = page.evaluate("""() => [...document.querySelectorAll('#stats svg.chart')].map(s => {
            const t = s.querySelector('text.tick');
            return [s.viewBox.baseVal.width, s.getBoundingClientRect().width, t.getBoundingClientRect().height];
        })""")
        for view_w, shown_w, tick_h in dims:
            assert abs(view_w - shown_w) < 2 and tick_h >= 9, (vp, dims)
        assert page.evaluate("document.documentElement.scrollWidth") <= vp["width"]


# ---------------------------------------------------------------------------------- times

def test_relative_times_stay_true(installed: Home, page: Any) -> None:
    home = installed
    now = time.time()
    fill_rows(home, 3, projects=("alpha",), start=now)
    started(home)
    page.clock.install()  # the page's clock starts at now and runs; fast_forward jumps it
    open_viewer(page, home)
    first = page.locator("#feed article.item time").first
    expect(first).to_have_text("1 minute ago")
    page.clock.fast_forward("10:00")
    expect(first).to_have_text("11 minutes ago")
    page.clock.fast_forward("02:00:00")
    expect(first).to_have_text("2 hours ago")
