"""Helpers of the viewer's browser tests (tests/e2e/test_viewer*.py; fixtures in tests/e2e/conftest.py)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.conftest import Home, load_fixture
from tests.support import browser as br
from tests.support.search_rows import Rows

PROMPT = "Please write hello.txt with a greeting. We always use pnpm, never npm."
FEATURE_TITLE = "Added hello.txt"
DECISION_TITLE = "We always use pnpm, never npm"
TIMEOUT_MS = 20_000
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
# What Chromium logs while the worker is down (a refused fetch is a console error).
OUTAGE = r"ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_CONNECTION_RESET|Failed to load resource"


def token(home: Home) -> str:
    from kenning.paths import read_token

    return read_token(home.paths)


def base(home: Home) -> str:
    return f"http://127.0.0.1:{home.port}/"


def sign_in_url(home: Home, query: str = "") -> str:
    """The address `kenning open --print` gives (a one-time code, never the token), with a view's query."""
    r = home.kenning("open", "--print")
    assert r.returncode == 0, r.stderr
    url = r.stdout.strip()
    assert url.startswith(f"{base(home)}#code=") and token(home) not in url, url
    return url.replace("/#", f"/{query}#", 1) if query else url


def open_viewer(page: Any, home: Home, query: str = "") -> None:
    page.goto(sign_in_url(home, query))
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


def shot(page: Any, name: str, full_page: bool = False) -> None:
    """Screenshots at 1440x900 and 390x844 (the viewport is put back afterwards)."""
    size = page.viewport_size or DESKTOP
    for label, vp in (("1440", DESKTOP), ("390", PHONE)):
        page.set_viewport_size(vp)
        page.wait_for_timeout(150)  # layout and the charts' redraw at the new width
        page.screenshot(path=str(br.artifacts_dir() / f"{name}-{label}.png"), full_page=full_page)
    page.set_viewport_size(size)
    page.wait_for_timeout(100)


def obs_row(home: Home, like: str) -> Any:
    conn = home.db()
    try:
        return conn.execute("SELECT * FROM observations WHERE title LIKE ?", (f"%{like}%",)).fetchone()
    finally:
        conn.close()


def keys(page: Any) -> list[str]:
    return page.eval_on_selector_all("#feed article.item", "els => els.map(e => e.dataset.key)")


def scroll_to_end(page: Any, timeout: float = 60) -> None:
    """Scroll until the feed says it has reached its end (after a worker restart the viewer's retries back
    off: a fresh-clone run under load once took more than 30 s to get there; alone it takes a few)."""
    deadline = time.monotonic() + timeout
    while page.locator("#feed-end").is_hidden() or re.match(r"Could not|Waiting for the worker",
                                                            page.locator("#feed-end").inner_text()):
        assert time.monotonic() < deadline, "the feed never reached its end"
        page.locator("#feed-sentinel").scroll_into_view_if_needed()
        page.wait_for_timeout(100)


class ProjectRows(Rows):
    """``Rows`` whose sessions have a checkout of their project's own name (/src/<project>), so each
    project is shown by its name (one shared root would name them all after it)."""

    def session(self, project: str = "alpha", name: str = "s1", root: str = "") -> int:
        return super().session(project, name, root or f"/src/{project}")


class RepoRows(Rows):
    """``Rows`` whose project keys are their checkouts' paths (as kenning.project makes them), so two
    repositories of one folder name are told apart by their path."""

    def session(self, project: str = "alpha", name: str = "s1", root: str = "") -> int:
        return super().session(project, name, root or project)


def fill_rows(home: Home, n: int, *, projects: tuple[str, ...] = ("alpha",), per_session: int = 20,
              spacing_s: float = 3600, start: float | None = None) -> list[dict[str, Any]]:
    """``n`` observations written before the worker starts, newest first in the returned list."""
    now = time.time() if start is None else start
    home.paths.ensure()
    rows = ProjectRows(home.paths.db)
    types = ("bugfix", "feature", "change", "discovery")
    out = []
    for i in range(n):
        project = projects[i % len(projects)]
        at = now - spacing_s * i - 60
        rows.obs(f"Note {i:03d} about the ledger", project=project, session=f"s{i // per_session}-{project}",
                 type=types[i % 4], concepts=["gotcha"] if i % 5 == 0 else ["pattern"], at=at)
        out.append({"i": i, "project": project, "at": at, "type": types[i % 4]})
    rows.conn.close()
    return out
