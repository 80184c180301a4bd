"""axe-core (the pinned npm release, tests/support/axe.py) on the viewer's main views in both themes, in
headless Chromium against a worker from the installed wheel: no serious or critical violation (contrast,
landmarks, heading order, labels, names). Skips only when npm cannot fetch axe-core."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Home
from tests.support import axe
from tests.support import browser as br
from tests.support.viewer import FEATURE_TITLE, TIMEOUT_MS, capture_turn, obs_row, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="module")
def axe_source() -> str:
    source = axe.script()
    if source is None:
        pytest.skip(f"axe-core {axe.AXE_VERSION} could not be fetched with npm (no npm, or no registry)")
    return source


def settle(page: Any) -> None:
    """Loaded and still: no 'Loading…' left, animations done."""
    page.wait_for_function("() => !document.querySelector('#main [aria-busy=\"true\"]')"
                           " && ![...document.querySelectorAll('#main .muted, #detail .muted')]"
                           ".some((e) => e.offsetParent && e.textContent.trim() === 'Loading…')")
    page.wait_for_timeout(250)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_or_critical_violations_on_the_main_views(worker: Home, page: Any, theme: str,
                                                              axe_source: str) -> None:
    home = worker
    capture_turn(home, "axe-turn")
    home.flush()
    note = obs_row(home, FEATURE_TITLE)
    assert note is not None
    page.emulate_media(color_scheme=theme)
    views = {
        "feed": ("", "#feed article.item"),
        "memory detail": (f"?item=o{note['id']}", "#ledger-memory .ledger-counts"),
        "stats": ("?tab=stats", "#stats .cards"),
        "next session": ("?tab=preview", "#preview-text:not(:empty)"),
        "search results": ("?q=hello", "#feed article.item mark"),
        "check-up": ("?tab=review", "#review-rules"),
    }
    found: dict[str, str] = {}
    for name, (query, ready) in views.items():
        open_viewer(page, home, query)
        page.wait_for_selector(ready)
        settle(page)
        assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (theme == "dark")
        bad = axe.run(page, axe_source)
        if bad:
            found[name] = axe.describe(bad)
        if name in ("memory detail", "search results"):
            shot(page, f"axe-{name.replace(' ', '-')}-{theme}")
        if name == "memory detail":  # and its edit form, every field open
            page.click("#act-edit")
            page.wait_for_selector("#edit-form")
            bad = axe.run(page, axe_source)
            if bad:
                found["memory edit form"] = axe.describe(bad)
    assert not found, "\n".join(f"{theme} theme, {name}:\n{text}" for name, text in found.items())
    # The check itself can fail: an image without a text alternative is a critical finding.
    page.evaluate("() => document.querySelector('#main').append(Object.assign(document.createElement('img'), "
                  "{src: '/static/favicon.svg'}))")
    assert "image-alt" in {v["id"] for v in axe.run(page, axe_source)}
