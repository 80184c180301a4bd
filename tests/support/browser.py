"""Headless Chromium through Playwright's sync API: Debian's /usr/bin/chromium, never a downloaded browser.

    with chromium() as browser:
        page = browser.new_page()
        errors = ConsoleErrors(page)
        ...
        errors.check()

``missing()`` says why a browser cannot run here (None when it can): tests skip with that
reason. ``ConsoleErrors`` collects console messages of type error and uncaught page errors;
``allow(pattern)`` is a context manager for the few a step provokes on purpose (Chromium
logs a failed fetch, e.g. a refused connection while the worker restarts, as a console error).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("KENNING_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
REPO = Path(__file__).resolve().parents[2]


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (bash scripts/test.sh installs it)"
    return None


@contextmanager
def chromium(**launch: Any) -> Iterator[Any]:
    """A headless Chromium browser with a fresh temporary profile, closed on exit."""
    from playwright.sync_api import sync_playwright

    # Playwright's launch() gives every browser a fresh temporary profile (and removes it).
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, **launch)
        try:
            yield browser
        finally:
            browser.close()


def artifacts_dir(sub: str = "viewer") -> Path:
    """Where screenshots go: $KENNING_TEST_ARTIFACTS, else .artifacts/<sub>/ in the repository."""
    base = os.environ.get("KENNING_TEST_ARTIFACTS")
    out = Path(base) if base else REPO / ".artifacts" / sub
    out.mkdir(parents=True, exist_ok=True)
    return out


class ConsoleErrors:
    """Every console error and uncaught exception of a page, for an assert at the end of a test."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        self._allowed: list[re.Pattern[str]] = []
        page.on("console", self._console)
        page.on("pageerror", self._pageerror)

    def _console(self, msg: Any) -> None:
        if msg.type != "error":
            return
        loc = msg.location or {}
        text = f"console.error: {msg.text} ({loc.get('url', '')}:{loc.get('lineNumber', '')})"
        if not any(p.search(text) for p in self._allowed):
            self.errors.append(text)

    def _pageerror(self, exc: Any) -> None:
        self.errors.append(f"pageerror: {exc}")

    @contextmanager
    def allow(self, pattern: str) -> Iterator[None]:
        """Console errors matching ``pattern`` are expected inside this block (page errors never are)."""
        rx = re.compile(pattern)
        self._allowed.append(rx)
        try:
            yield
        finally:
            self._allowed.remove(rx)

    def check(self) -> None:
        assert not self.errors, "browser errors:\n" + "\n".join(self.errors)
