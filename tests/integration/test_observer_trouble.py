"""Events that wait for an observer that cannot work are told where the user looks, with why and the fix.

Real processes throughout: the worker runs the anthropic SDK against a closed port (nothing listens)
or a fake Messages API that answers 401 / 429; a session goes through real hook processes; then the
next SessionStart context, `kenning status` (text and JSON) and the viewer's API say that events
wait and why, never "no memory yet; what happens in this session will be remembered".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.hook.client import authed, json_answer, read_pid_file
from kenning.observer import trouble
from tests.conftest import Home, free_port
from tests.integration.test_fixture_replay import session_start_context
from tests.support import fake_anthropic
from tests.support.llm_harness import Session

pytest.importorskip("anthropic")

# The key the worker sends: shaped like a real one, so a message that echoes it must not keep it.
KEY = "sk-ant-api03-" + "Q7wX9zK2" * 11 + "mN4pAA"
PROMISE = "what happens in this session will be remembered"


def run_session(home: Home) -> Session:
    s = Session(home.project)
    for p in (s.start(), s.prompt("Round VAT per line with ROUND_HALF_UP"),
              s.edit("src/totals.py", "return x", "return x.quantize(CENT, ROUND_HALF_UP)"),
              s.bash("pytest -q", "4 passed"), s.stop("Rounded per line."), s.end()):
        r = home.hook(p["hook_event_name"], p)
        assert r.returncode == 0, r.stderr
    return s


def recorded(home: Home, kind: str, timeout: float = 40) -> dict[str, Any]:
    """Wait until the worker has recorded the observer's trouble of ``kind``."""
    deadline = time.monotonic() + timeout
    while True:
        rec = trouble.read(home.paths)
        if rec is not None and rec["kind"] == kind and home.pending() >= 5:
            return rec
        assert time.monotonic() < deadline, (rec, home.pending())
        time.sleep(0.1)


def next_context(home: Home) -> str:
    s = Session(home.project)
    return session_start_context(home.hook("SessionStart", s.start()))


def viewer_meta(home: Home) -> dict[str, Any]:
    info = read_pid_file(home.paths)
    assert info
    body = json_answer(authed(home.paths, info["port"], "GET", "/api/viewer/meta", timeout=10))
    assert body is not None
    return body


@pytest.fixture
def anthropic_api() -> Iterator[fake_anthropic.FakeAnthropic]:
    fake = fake_anthropic.FakeAnthropic()
    fake.start()
    yield fake
    fake.stop()


def test_an_unreachable_observer_api_is_told_in_context_status_and_viewer(home: Home) -> None:
    closed = free_port()  # nothing listens there: connection refused
    home.env.update(KENNING_PROVIDER="anthropic", KENNING_BASE_URL=f"http://127.0.0.1:{closed}", ANTHROPIC_API_KEY=KEY)
    home.start_worker()
    run_session(home)
    rec = recorded(home, "unreachable")
    assert rec["cause"] == "connection refused" and rec["provider"] == "anthropic"

    text = next_context(home)
    assert "Kenning has no memory of project" in text and PROMISE not in text, text
    line = (f"events of this project wait for the observer: the Anthropic API at http://127.0.0.1:{closed} is "
            "unreachable (connection refused); they will be turned into memory when it answers. "
            "`kenning doctor` checks it.")
    assert line in text, text

    status = home.kenning("status")
    observer = [ln for ln in status.stdout.splitlines() if ln.startswith("observer ")]
    assert len(observer) == 1 and "wait for the observer" in observer[0], status.stdout
    assert "unreachable (connection refused)" in observer[0]
    data = json.loads(home.kenning("status", "--json").stdout)
    told = data["observer_trouble"]
    # (The count may have moved between the two calls: the worker goes on capturing and retrying.)
    assert told["kind"] == "unreachable" and told["waiting"] >= 5
    assert told["line"].split(" ", 1)[1] in status.stdout, (told["line"], status.stdout)

    meta = viewer_meta(home)
    assert "unreachable (connection refused)" in meta["waiting"], meta
    doctor = json.loads(home.kenning("doctor", "--json").stdout)
    waits = [c for c in doctor if c["check"] == "observer waits"]
    assert len(waits) == 1 and waits[0]["status"] == "warn", doctor
    assert "unreachable (connection refused)" in waits[0]["detail"] and "kenning doctor" not in waits[0]["detail"]

    # A restarted worker (a reboot) keeps saying it until its own first call answers: the SessionStart
    # hook that finds no worker starts one, and the context it gets is still the truth.
    home.stop_worker()
    text = next_context(home)
    assert "unreachable (connection refused)" in text and PROMISE not in text, text


@pytest.mark.parametrize("status,kind,words", [
    (401, "auth", ("rejected the worker's credentials (HTTP 401)", "Set a valid key in ANTHROPIC_API_KEY where the "
                   "worker starts, then run `kenning worker restart`.")),
    (429, "quota", ("refuses calls for now: rate limit or quota (HTTP 429)", "next try in")),
])
def test_a_refused_key_or_a_rate_limit_is_told_with_its_fix(home: Home, anthropic_api: fake_anthropic.FakeAnthropic,
                                                              status: int, kind: str, words: tuple[str, ...]) -> None:
    # The API echoes the key in its message (some do): what is recorded and shown must not hold it.
    anthropic_api.script = fake_anthropic.in_order(
        fake_anthropic.error(status, message=f"refused for key {KEY}", retry_after=3600 if status == 429 else None))
    home.env.update(KENNING_PROVIDER="anthropic", KENNING_BASE_URL=anthropic_api.base_url, ANTHROPIC_API_KEY=KEY)
    home.start_worker()
    run_session(home)
    rec = recorded(home, kind)
    assert KEY not in json.dumps(rec) and "[REDACTED:" in rec["message"]
    assert KEY not in Path(trouble.path_of(home.paths)).read_text()

    text = next_context(home)
    assert PROMISE not in text and "events of this project wait for the observer" in text, text
    for w in words:
        assert w in text, text
    assert KEY not in text
    assert words[0] in home.kenning("status").stdout and words[0] in home.kenning("doctor").stdout
    assert words[0] in viewer_meta(home)["waiting"]


def test_a_working_observer_leaves_nothing_to_tell(home: Home, anthropic_api: fake_anthropic.FakeAnthropic) -> None:
    home.env.update(KENNING_PROVIDER="anthropic", KENNING_BASE_URL=anthropic_api.base_url, ANTHROPIC_API_KEY=KEY)
    home.start_worker()
    run_session(home)
    home.flush(timeout=60)
    assert trouble.read(home.paths) is None
    assert "wait for the observer" not in next_context(home)
    assert json.loads(home.kenning("status", "--json").stdout)["observer_trouble"] is None
    assert viewer_meta(home)["waiting"] == ""
