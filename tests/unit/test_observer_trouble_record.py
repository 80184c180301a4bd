"""Why the observer cannot work, recorded by the worker's pipeline and told in one line with the fix.

The SDKs' own exceptions from real connections (a closed port), the pipeline writing and removing
``<data>/observer.trouble`` as calls fail and succeed (the anthropic SDK against the fake Messages
API), the spent daily budget, and the sentences each kind gives.
"""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kenning.context.session_start import context_text
from kenning.observer import trouble
from kenning.observer.llm.errors import classify, connection_cause
from kenning.paths import Paths
from tests.conftest import free_port
from tests.support import fake_anthropic
from tests.support.llm_harness import Harness

NOW = 1_750_000_000.0


def rec(kind: str, **kw: Any) -> dict[str, Any]:
    return {"kind": kind, "provider": "anthropic", "endpoint": "", "cause": "", "key_var": "ANTHROPIC_API_KEY",
            "retry_at": NOW + 1800, **kw}


# ----------------------------------------------------------------------------------- the lines

@pytest.mark.parametrize("kind,cause,want", [
    ("unreachable", "connection refused", "the Anthropic API is unreachable (connection refused); they will be "
                                          "turned into memory when it answers. `kenning doctor` checks it."),
    ("unreachable", "host name not found (DNS)", "is unreachable (host name not found (DNS))"),
    ("quota", "HTTP 429", "refuses calls for now: rate limit or quota (HTTP 429); they will be turned into memory "
                          "once it takes calls again (next try in 30 min)"),
    ("auth", "HTTP 401", "rejected the worker's credentials (HTTP 401); they will be turned into memory once it "
                         "accepts them. Set a valid key in ANTHROPIC_API_KEY where the worker starts, then run "
                         "`kenning worker restart`."),
    ("transient", "HTTP 529", "is failing (HTTP 529); they will be turned into memory when it recovers"),
    ("fatal", "HTTP 400", "refuses the observer's requests (HTTP 400)"),
])
def test_each_kind_says_why_and_the_fix(kind: str, cause: str, want: str) -> None:
    line = trouble.line(rec(kind, cause=cause), 12, NOW, here=" of this project")
    assert line.startswith("12 events of this project wait for the observer: ") and want in line, line
    assert "\n" not in line


def test_one_event_nothing_waiting_and_no_trouble() -> None:
    assert trouble.line(rec("unreachable"), 1, NOW).startswith("1 event waits for the observer")
    idle = trouble.line(rec("unreachable", endpoint="http://10.0.0.9:8080"), 0, NOW)
    assert idle.startswith("Kenning's observer cannot work now: the Anthropic API at http://10.0.0.9:8080 is "
                           "unreachable; what is captured waits, and will be turned into memory when it answers.")
    assert trouble.line(None, 12, NOW) == ""
    openai = trouble.line(rec("auth", provider="openai", key_var="OPENAI_API_KEY"), 2, NOW)
    assert "the OpenAI-compatible API rejected" in openai and "OPENAI_API_KEY" in openai


def test_a_spent_budget_names_the_setting() -> None:
    line = trouble.line({"kind": "budget", "budget": 3_000_000}, 5, NOW)
    assert line.startswith(trouble.BUDGET_SPENT) and "daily_token_budget 3,000,000" in line
    assert "offline rules observer" in line and "KENNING_DAILY_TOKEN_BUDGET" in line


def test_a_record_that_is_not_ours_is_not_believed(tmp_path: Path) -> None:
    paths = Paths(str(tmp_path))
    for raw in (b"not json", b'{"kind": "meteor"}', b"[1]", b"{" + b" " * 9000 + b"}"):
        Path(trouble.path_of(paths)).write_bytes(raw)
        assert trouble.read(paths) is None
    trouble.write(paths, rec("quota"))
    assert trouble.read(paths) == rec("quota")
    assert trouble.clear(paths) and not trouble.clear(paths)


# ------------------------------------------------------------------- what the SDKs raise

@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_closed_port_is_unreachable_connection_refused(sdk: str) -> None:
    module = pytest.importorskip(sdk)
    url = f"http://127.0.0.1:{free_port()}"
    if sdk == "anthropic":
        client = module.Anthropic(api_key="k", base_url=url, max_retries=0, timeout=5)
        call = lambda: client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])  # noqa: E731
    else:
        client = module.OpenAI(api_key="k", base_url=url, max_retries=0, timeout=5)
        call = lambda: client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])  # noqa: E731
    with pytest.raises(Exception) as info:
        call()
    err = classify(info.value)
    assert (err.kind, err.cause, err.unreachable) == ("transient", "connection refused", True)


def test_dns_failures_and_http_statuses_are_named() -> None:
    try:
        raise socket.gaierror(-2, "Name or service not known")
    except socket.gaierror as inner:
        try:
            raise RuntimeError("Connection error.") from inner
        except RuntimeError as outer:
            assert connection_cause(outer) == "host name not found (DNS)"

    class Status(Exception):
        def __init__(self, code: int) -> None:
            super().__init__(f"status {code}")
            self.status_code = code

    assert (classify(Status(401)).kind, classify(Status(401)).cause) == ("auth", "HTTP 401")
    assert (classify(Status(429)).kind, classify(Status(429)).cause) == ("quota", "HTTP 429")
    assert not classify(Status(503)).unreachable and classify(TimeoutError("timed out")).cause == "timed out"


# ------------------------------------------------------- the pipeline records and clears it

def events(h: Harness) -> None:
    s = h.session()
    h.spool(s.prompt("Fix ticket-1."), s.edit("src/a.py"), s.stop("Done."))


def test_a_failure_is_recorded_without_the_key_and_a_success_clears_it(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    key = "sk-ant-api03-" + "Zz9Yy8Xx" * 11 + "wV7uAA"
    fake = fake_anthropic.FakeAnthropic(script=fake_anthropic.in_order(
        fake_anthropic.error(401, message=f"invalid x-api-key {key}"), [fake_anthropic.text("")]))
    fake.start()
    try:
        h = Harness(tmp_path, provider="anthropic", base_url=fake.base_url)
        events(h)
        h.run_until(lambda: trouble.read(h.paths) is not None)
        got = trouble.read(h.paths)
        assert got is not None and got["kind"] == "auth" and got["cause"] == "HTTP 401"
        assert key not in Path(trouble.path_of(h.paths)).read_text() and "[REDACTED:" in got["message"]
        # what the next session is told, from the file, as the hook would read it without a worker
        text, _key = context_text(h.paths, h.settings, "project", lambda conn: h.key)
        assert "events of this project wait for the observer" in text and "credentials (HTTP 401)" in text
        assert "will be remembered" not in text
        h.observer.backoff.state.until = 0  # type: ignore[attr-defined]  # (the back-off would wait a minute)
        h.run_until(lambda: trouble.read(h.paths) is None and h.pending() == 0)
        text, _key = context_text(h.paths, h.settings, "project", lambda conn: h.key)
        assert "wait for the observer" not in text
        h.close()
    finally:
        fake.stop()


def test_a_spent_budget_is_recorded_and_told_when_there_is_no_memory(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    fake = fake_anthropic.FakeAnthropic(script=lambda body: [])  # empty replies: nothing worth keeping
    fake.start()
    try:
        h = Harness(tmp_path, provider="anthropic", base_url=fake.base_url, daily_token_budget=5)
        events(h)
        h.run_until(lambda: (trouble.read(h.paths) or {}).get("kind") == "budget")
        text, _key = context_text(h.paths, h.settings, "project", lambda conn: h.key)
        # Every event went in the one call the model answered with nothing: no memory, and why it is thin.
        assert "has no memory of project" in text and "will be remembered" not in text
        assert trouble.BUDGET_SPENT in text and "daily_token_budget 5" in text
        h.close()
    finally:
        fake.stop()


def test_a_new_worker_on_the_same_model_carries_the_trouble_while_events_wait(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    url = f"http://127.0.0.1:{free_port()}"
    h = Harness(tmp_path, provider="anthropic", base_url=url)
    events(h)
    h.run_until(lambda: (trouble.read(h.paths) or {}).get("kind") == "unreachable")
    h.close()
    # A restart on the same model: the record stays (its events still wait) until a call answers.
    again = Harness(tmp_path, provider="anthropic", base_url=url)
    assert again.observer.trouble()["kind"] == "unreachable"  # type: ignore[attr-defined]
    again.close()
    # Started on another observer (rules): its first cycle removes what no longer holds.
    rules = Harness(tmp_path)
    rules.cycle()
    assert trouble.read(rules.paths) is None
    rules.close()


def test_no_trouble_costs_the_context_no_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usual case: no record, so the pending count is never asked (one failed open, no SQL)."""
    from kenning.context import session_start

    asked: list[str] = []

    class Conn:
        def execute(self, sql: str, *a: Any) -> Any:
            asked.append(sql)
            raise sqlite3.OperationalError("not expected")

    paths = Paths(str(tmp_path))
    assert session_start.waiting_note(Conn(), paths, "k") == "" and asked == []  # type: ignore[arg-type]
