"""The conversation manager: limits, idle timeouts, history bound, budget fallback, model tiers,
the trivial-event filter and summaries, through the real pipeline, the anthropic SDK and the
fake Messages API.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.context.session_start import build
from kenning.observer.llm import observer as llm_observer
from kenning.observer.llm.backoff import Backoff
from tests.support import fake_anthropic
from tests.support.llm_harness import Harness, observation, summary

pytest.importorskip("anthropic")


class Model:
    """Fake Messages API whose replies name the ticket of the batch: one observation per batch."""

    def __init__(self, delay: float = 0.0, fail: dict[str, Any] | None = None) -> None:
        self.delay = delay
        self.fail = fail
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.fake = fake_anthropic.FakeAnthropic(script=self._reply)

    def _reply(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.bodies.append(body)
        if self.fail is not None:
            return self.fail
        last = body["messages"][-1]["content"][-1]["text"]
        tickets = sorted(set(re.findall(r"ticket-(\d+)", last)))
        text = "".join(observation("change", f"Ticket {t} handled in batch {len(self.bodies)}") for t in tickets)
        if "<summary>" in last:
            text += summary(f"Work on tickets {', '.join(tickets)}")
        return {"content": [fake_anthropic.text(text)] if text else [], "delay": self.delay}

    def turns(self, body: dict[str, Any]) -> list[str]:
        return [m["content"][-1]["text"] for m in body["messages"] if m["role"] == "user"]

    def system(self, body: dict[str, Any]) -> str:
        return "".join(b["text"] for b in body["system"])


@pytest.fixture
def model() -> Iterator[Model]:
    m = Model()
    m.fake.start()
    yield m
    m.fake.stop()


def harness(tmp_path: Path, fake: Model, **settings: Any) -> Harness:
    return Harness(tmp_path, provider="anthropic", base_url=fake.fake.base_url, **settings)


def test_fifty_sessions_never_exceed_the_conversation_limit_and_end_at_zero(tmp_path: Path, model: Model,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_observer, "EVICT_MIN_IDLE_S", 0.2)
    model.delay = 0.02
    h = harness(tmp_path, model, max_concurrent_conversations=2, idle_timeout_s=1)
    obs = h.observer
    peaks: list[int] = []
    for i in range(50):
        s = h.session()
        events = [s.start(), s.prompt(f"Fix ticket-{i}."), s.edit(f"src/t{i}.py"), s.stop("Fixed.")]
        if i % 2:
            events.append(s.end())  # half end cleanly, half just go quiet
        h.spool(*events)
        if i % 5 == 4:
            h.cycle()
            peaks.append(obs.snapshot()["conversations"]["slots_held"])  # type: ignore[attr-defined]
    h.run_until(lambda: h.pending() == 0 and obs.snapshot()["conversations"]["slots_held"] == 0,  # type: ignore
                timeout=90)
    snap = obs.snapshot()  # type: ignore[attr-defined]
    assert snap["conversations"]["peak"] <= 2 and max(peaks) <= 2
    assert snap["conversations"]["live"] == 0 and snap["conversations"]["in_flight"] == 0
    assert snap["conversations"]["opened"] == snap["conversations"]["closed"] >= 25
    titles = {r["title"].split(" handled")[0] for r in h.observations()}
    assert titles == {f"Ticket {i}" for i in range(50)}
    assert len(h.summaries()) == 50
    h.close()


def test_an_idle_conversation_closes_and_a_fresh_one_gets_a_recap(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model, idle_timeout_s=1)
    s = h.session()
    h.spool(s.prompt("Work on ticket-1."), s.edit("src/a.py"))
    h.settle()
    h.run_until(lambda: h.observer.snapshot()["conversations"]["live"] == 0, timeout=10)  # type: ignore
    h.spool(s.prompt("Now ticket-2."), s.edit("src/b.py"))
    h.settle()
    first, second = model.bodies
    assert len(model.turns(second)) == 1  # a fresh conversation, not the old history
    assert "already recorded: Ticket 1 handled in batch 1" in model.system(second)
    assert "First request of the session: Work on ticket-1." in model.system(second)
    assert "already recorded:" not in model.system(first) and "First request" not in model.system(first)
    h.close()


def test_a_conversation_past_its_bound_starts_afresh(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model)
    s = h.session()
    for i in range(3):
        h.spool(s.read(f"src/m{i}.py", content=f"# ticket-{i}\n" + "x = 1\n" * 700))
        h.settle()
        if i == 0:  # room for one more turn of ~4,500 characters, not two
            h.observer.config.max_conversation_chars = len(model.system(model.bodies[0])) + 6000  # type: ignore
    sizes = [len(model.turns(b)) for b in model.bodies]
    assert sizes == [1, 2, 1]
    assert h.observer.snapshot()["conversations"]["closed"] == 1  # type: ignore[attr-defined]
    h.close()


def test_forgetting_a_memory_of_the_session_starts_its_conversation_afresh(tmp_path: Path, model: Model) -> None:
    """The conversation holds the forgotten memory's text: kept, the model could write it again."""
    from kenning.store import forget as fg

    h = harness(tmp_path, model)
    s = h.session()
    h.spool(s.prompt("Work on ticket-1."), s.edit("src/a.py"))
    h.settle()
    [made] = [r for r in h.observations() if r["title"].startswith("Ticket 1")]
    fg.forget(h.conn, h.paths.db, fg.Filters(ids=(int(made["id"]),)), dry_run=False)
    h.spool(s.prompt("Now ticket-2."), s.edit("src/b.py"))
    h.settle()
    _first, second = model.bodies
    assert len(model.turns(second)) == 1  # a fresh conversation, not the old history
    assert "ticket-1" not in json.dumps(second) and "Ticket 1" not in json.dumps(second)
    assert h.observer.snapshot()["conversations"]["closed"] == 1  # type: ignore[attr-defined]
    assert [r["title"].split(" handled")[0] for r in h.observations()] == ["Ticket 2"]
    h.close()


def test_past_the_daily_budget_the_rules_observer_takes_over(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model, daily_token_budget=50)
    s = h.session()
    h.spool(s.prompt("Fix ticket-1."), s.edit("src/a.py"), s.stop("Done."))
    h.settle()
    assert len(model.bodies) == 1
    h.spool(s.prompt("Use pnpm, never npm, for ticket-2."), s.edit("src/b.py"), s.stop("Done."))
    h.settle()
    assert len(model.bodies) == 1  # no call past the budget
    observers = [r["observer"] for r in h.observations()]
    assert observers[0] == "anthropic" and set(observers[1:]) == {"rules"}
    assert h.observer.snapshot()["budget"]["exhausted"]  # type: ignore[attr-defined]
    text = build(h.conn, h.settings, h.key)
    assert "token budget is spent" in text
    under = build(h.conn, h.settings.replace(daily_token_budget=10**9), h.key)
    assert "token budget" not in under
    h.close()


def test_read_only_batches_use_the_cheap_model(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model, model="claude-main", cheap_model="claude-cheap")
    s = h.session()
    h.spool(s.prompt("How does ticket-1 work?"), s.read("src/a.py"),
            s.tool("Grep", {"pattern": "total"}, {"mode": "files_with_matches", "filenames": ["src/a.py"],
                                                  "numFiles": 1}))
    h.settle()
    h.spool(s.edit("src/a.py"))
    h.settle()
    assert [b["model"] for b in model.bodies] == ["claude-cheap", "claude-main"]
    rows = h.conn.execute("SELECT model, calls FROM observer_usage ORDER BY model").fetchall()
    assert [tuple(r) for r in rows] == [("claude-cheap", 1), ("claude-main", 1)]
    h.close()


def test_trivial_events_never_reach_the_model(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model)
    s = h.session()
    h.spool(s.start(), s.prompt("Look at ticket-7."), s.bash("git status --short", ""), s.bash("ls -la", "a\nb"),
            s.tool("Grep", {"pattern": "nothing_here"}, {"mode": "files_with_matches", "filenames": [], "numFiles": 0}),
            s.tool("Glob", {"pattern": "*.nope"}, {"filenames": [], "numFiles": 0, "truncated": False}),
            s.tool("LS", {"path": str(h.root)}, "- a\n- b"), s.read("src/__init__.py", content=""))
    for _ in range(3):
        h.cycle()
    assert model.bodies == [] and h.pending() == 1  # only the prompt waits for real work
    h.spool(s.bash("git log --oneline -3", "abc1 Fix rounding"), s.stop("Nothing to change."))
    h.settle()
    (body,) = model.bodies
    turn = model.turns(body)[-1]
    assert "git log" in turn and "Look at ticket-7." in turn
    for noise in ("git status", "ls -la", "nothing_here", "*.nope", "__init__.py"):
        assert noise not in turn, noise
    assert h.observer.snapshot()["settled_trivial"] == 7  # type: ignore[attr-defined]
    h.close()


def test_no_summary_is_asked_when_the_session_did_nothing(tmp_path: Path, model: Model) -> None:
    h = harness(tmp_path, model)
    s = h.session()
    h.spool(s.prompt("What does ticket-3 mean?"), s.stop("It is a typo report."))
    h.settle()
    assert "<summary>" not in model.turns(model.bodies[0])[-1]
    assert h.summaries() == []
    h.spool(s.prompt("Fix ticket-3 then."), s.edit("src/a.py"), s.stop("Fixed."))
    h.settle()
    assert "<summary>" in model.turns(model.bodies[1])[-1]
    assert [r["request"] for r in h.summaries()] == ["Work on tickets 3"]
    h.close()


def test_unusable_requests_leave_the_session_to_the_rules_observer(tmp_path: Path) -> None:
    model = Model(fail=fake_anthropic.error(400, message="prompt is too long"))
    with model.fake:
        h = harness(tmp_path, model)
        h.observer.backoff = Backoff(scale=0.01)  # type: ignore[attr-defined]
        s = h.session()
        h.spool(s.prompt("Fix ticket-9; we always use uv, never pip."), s.edit("src/a.py"), s.stop("Done."))
        h.settle(timeout=20)
        assert len(model.bodies) == llm_observer.FATAL_LIMIT
        rows = h.observations()
        assert rows and {r["observer"] for r in rows} == {"rules"}
        assert h.observer.snapshot()["rules_only_sessions"] == 1  # type: ignore[attr-defined]
        h.close()


def test_waiting_sessions_evict_an_idle_conversation(tmp_path: Path, model: Model,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_observer, "EVICT_MIN_IDLE_S", 0.1)
    h = harness(tmp_path, model, max_concurrent_conversations=1)
    a, b = h.session(), h.session()
    h.spool(a.prompt("ticket-1"), a.edit("src/a.py"))
    h.settle()
    h.spool(b.prompt("ticket-2"), b.edit("src/b.py"))
    time.sleep(0.15)
    h.settle()
    snap = h.observer.snapshot()  # type: ignore[attr-defined]
    assert snap["conversations"]["peak"] == 1 and snap["conversations"]["closed"] == 1
    assert len(model.bodies) == 2
    h.observer.close()  # type: ignore[attr-defined]
    assert h.observer.snapshot()["conversations"]["live"] == 0  # type: ignore[attr-defined]
    h.close()
