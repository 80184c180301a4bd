"""The viewer says when captured events wait for an observer that cannot work, and why, and stops
saying it once the observer works again. A real Chromium, a worker from the installed wheel whose
anthropic observer meets a fake Messages API that answers 429 (retry after a few seconds), then notes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kenning.observer import trouble
from tests.conftest import Home
from tests.support import browser as br
from tests.support import fake_anthropic
from tests.support.llm_harness import Session
from tests.support.viewer import TIMEOUT_MS, open_viewer, shot

pytestmark = [pytest.mark.slow, pytest.mark.skipif(br.missing() is not None, reason=str(br.missing()))]
pytest.importorskip("anthropic")
expect = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed").expect
expect.set_options(timeout=TIMEOUT_MS)
RETRY_S = 12  # what the fake API's 429 says: long enough to read the banner, short enough to see it go


@pytest.fixture
def limited() -> Iterator[fake_anthropic.FakeAnthropic]:
    fake = fake_anthropic.FakeAnthropic(script=fake_anthropic.in_order(
        fake_anthropic.error(429, message="rate limited", retry_after=RETRY_S), [fake_anthropic.text("")]))
    fake.start()
    yield fake
    fake.stop()


def test_the_viewer_says_events_wait_and_why_until_the_observer_works(installed: Home, page: Any,
                                                                       limited: fake_anthropic.FakeAnthropic) -> None:
    home = installed
    home.env.update(KENNING_PROVIDER="anthropic", KENNING_BASE_URL=limited.base_url, ANTHROPIC_API_KEY="sk-test",
                    KENNING_EMBEDDING_BACKEND="none")
    home.start_worker()
    s = Session(home.project)
    for p in (s.start(), s.prompt("Keep totals in cents"), s.edit("src/totals.py"), s.stop("Done.")):
        assert home.hook(p["hook_event_name"], p).returncode == 0
    deadline = time.monotonic() + 30
    while (trouble.read(home.paths) or {}).get("kind") != "quota":
        assert time.monotonic() < deadline, "the worker recorded no rate limit"
        time.sleep(0.1)

    open_viewer(page, home)
    banner = page.locator("#waiting")
    expect(banner).to_be_visible()
    text = banner.inner_text()
    assert "wait for the observer" in text and "rate limit or quota (HTTP 429)" in text, text
    expect(banner.locator("code")).to_have_text("kenning doctor")  # the command to run, as code (as text)
    shot(page, "observer-waiting")
    # The retry after the limit succeeds: the live stream takes the banner away, no reload.
    expect(banner).to_be_hidden(timeout=(RETRY_S + 30) * 1000)
    assert trouble.read(home.paths) is None
