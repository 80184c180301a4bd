"""Each network provider, through the real pipeline and the real SDK, against a fake server
speaking the real wire protocol: several observations, empty, prose, malformed XML, unknown
types, 429, 401, a slow reply while more events arrive, and a 1 MB tool output.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import fake_anthropic, fake_openai
from tests.support.llm_harness import Harness, observation, summary

pytest.importorskip("anthropic")
pytest.importorskip("openai")


class Wire:
    """One fake server behind a provider-neutral script: replies, failures, arrivals."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.steps: list[Any] = []
        self.arrivals: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.fake: Any = None

    def reply(self, text: str, delay: float = 0.0) -> Wire:
        if self.provider == "anthropic":
            content = [fake_anthropic.text(text)] if text else []
            self.steps.append({"content": content, "delay": delay})
        else:
            self.steps.append({"content": text, "delay": delay})
        return self

    def fail(self, status: int, message: str | None = None, retry_after: float | None = None) -> Wire:
        if self.provider == "anthropic":
            self.steps.append(fake_anthropic.error(status, message=message, retry_after=retry_after))
        else:
            self.steps.append(fake_openai.error(status, message, retry_after=retry_after))
        return self

    def _pick(self, body: dict[str, Any]) -> Any:
        with self._lock:
            i = len(self.arrivals)
            self.arrivals.append(body)
        return self.steps[min(i, len(self.steps) - 1)]

    def __enter__(self) -> Wire:
        cls = fake_anthropic.FakeAnthropic if self.provider == "anthropic" else fake_openai.FakeOpenAI
        self.fake = cls(script=self._pick).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.stop()

    @property
    def base_url(self) -> str:
        return str(self.fake.base_url)

    def user_turns(self, body: dict[str, Any]) -> list[str]:
        out = []
        for m in body.get("messages") or []:
            if m.get("role") != "user":
                continue
            c = m["content"]
            out.append(c if isinstance(c, str) else "".join(b.get("text", "") for b in c))
        return out

    def system(self, body: dict[str, Any]) -> str:
        if self.provider == "anthropic":
            return "".join(b["text"] for b in body["system"])
        return str(body["messages"][0]["content"])

    def request_bytes(self) -> list[int]:
        return [len(json.dumps(b)) for b in self.arrivals]


PROVIDERS = ["anthropic", "openai"]


@pytest.fixture(params=PROVIDERS)
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    with Wire(request.param) as w:
        yield w


@pytest.fixture
def make(tmp_path: Path, wire: Wire) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def build(**settings: Any) -> Harness:
        h = Harness(tmp_path, provider=wire.provider, base_url=wire.base_url, **settings)
        made.append(h)
        return h

    yield build
    for h in made:
        h.close()


def work(h: Harness) -> list[dict[str, Any]]:
    s = h.session()
    return [s.start(), s.prompt("Round VAT per line to whole cents."), s.read("src/totals.py"),
            s.edit("src/totals.py"), s.bash("pytest -q tests/test_totals.py", "1 failed", failed=True),
            s.edit("tests/test_totals.py"), s.bash("pytest -q tests/test_totals.py", "4 passed")]


def test_several_observations_are_stored_with_facts_from_evidence(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply(observation("bugfix", "VAT is rounded per line with ROUND_HALF_UP",
                           files_read=("src/models.py",), files_modified=("src/totals.py", "src/api.py"))
               + "\n" + observation("decision", "Totals are computed in Decimal, never float",
                                    concepts=("why-it-exists", "Trade-off: precision")))
    h = make()
    payloads = work(h)
    h.spool(*payloads)
    h.settle()
    assert h.observer.name == wire.provider
    rows = h.observations()
    assert [r["type"] for r in rows] == ["bugfix", "decision"]
    bugfix, decision = rows
    # files_modified only from tool evidence: api.py was claimed but never edited
    assert bugfix["files_modified"] == ["src/totals.py"]
    assert "src/models.py" in bugfix["files_read"] and "src/totals.py" not in bugfix["files_read"]
    assert decision["files_modified"] == [] and decision["concepts"] == ["why-it-exists", "trade-off"]
    events = {r["id"]: r for r in h.conn.execute("SELECT id, occurred_at, kind FROM events")}
    times = sorted(e["occurred_at"] for e in events.values())
    assert bugfix["created_at"] in times and bugfix["created_at"] < time.time() - 60  # the events' time
    assert bugfix["prompt_number"] == 1 and bugfix["observer"] == wire.provider
    assert bugfix["tokens_spent"] > 0 and bugfix["source_tokens"] > 0
    # one call: the system prompt of our mode, then one user turn with every event rendered
    assert len(wire.arrivals) == 1
    body = wire.arrivals[0]
    assert "engineering notebook" in wire.system(body) and "<observation>" in wire.system(body)
    turn = wire.user_turns(body)[-1]
    for needle in ('tool="Read"', 'tool="Edit"', 'tool="Bash"', 'failed="true"', "Round VAT per line",
                   f'cwd="{h.root}"', "<parameters>", "<outcome"):
        assert needle in turn, needle
    assert "originalFile" not in turn and "xxxxxxxxxx" not in turn  # Edit's whole file is not resent
    usage = h.conn.execute("SELECT provider, calls, tokens_in, tokens_out FROM observer_usage").fetchall()
    assert [tuple(u)[:2] for u in usage] == [(wire.provider, 1)] and usage[0][2] > 0
    per_session = h.conn.execute("SELECT calls, observations FROM observer_session_usage").fetchone()
    assert tuple(per_session) == (1, 2)


def test_the_conversation_is_long_lived_and_prompt_cached(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply(observation("discovery", "Totals live in src/totals.py"))
    h = make()
    s = h.session()
    h.spool(s.prompt("Where are totals computed?"), s.read("src/totals.py"))
    h.settle()
    h.spool(s.read("src/models.py"), s.bash("git log --oneline -3", "abc fix rounding"))
    h.settle()
    assert len(wire.arrivals) == 2
    first, second = wire.arrivals
    assert len(wire.user_turns(first)) == 1 and len(wire.user_turns(second)) == 2
    assert wire.user_turns(second)[0] == wire.user_turns(first)[0]  # same prefix: cacheable
    assert wire.system(first) == wire.system(second)
    if wire.provider == "anthropic":
        assert second["system"][-1]["cache_control"] == {"type": "ephemeral"}
        marks = [b for m in second["messages"] for b in m["content"] if "cache_control" in b]
        assert marks == [second["messages"][-1]["content"][-1]]  # only the newest turn is marked
    else:
        assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize("reply", ["", "   \n", "<skip/>"])
def test_an_empty_reply_settles_the_events_and_stores_nothing(make: Callable[..., Harness], wire: Wire,
                                                              reply: str) -> None:
    wire.reply(reply)
    h = make()
    h.spool(*work(h))
    h.settle()
    assert h.observations() == [] and h.pending() == 0
    assert h.observer.counters.empty == 1  # type: ignore[attr-defined]


def test_prose_is_dropped_not_retried(make: Callable[..., Harness], wire: Wire,
                                      caplog: pytest.LogCaptureFixture) -> None:
    wire.reply("I reviewed the changes; the agent fixed the rounding and the tests pass now.")
    h = make()
    h.spool(*work(h))
    h.settle()
    assert h.observations() == [] and h.pending() == 0
    assert len(wire.arrivals) == 1
    assert h.observer.counters.prose == 1  # type: ignore[attr-defined]
    assert any("prose" in r.message and "reviewed the changes" in r.message for r in caplog.records)


def test_malformed_xml_keeps_what_is_readable(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply("```xml\n<observation><type>discovery</type><title>Totals use Decimal &amp; round half-up"
               "</title><facts><fact>ROUND_HALF_UP in src/totals.py</fact></facts><narrative>unclosed"
               "\n<observation><type>bugfix<title>never closed")
    h = make()
    h.spool(*work(h))
    h.settle()
    rows = h.observations()
    assert [r["title"] for r in rows] == ["Totals use Decimal & round half-up"]
    assert h.pending() == 0


def test_garbage_markup_settles_without_rows(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply("<observation><type></type></observation><!DOCTYPE x [<!ENTITY a 'b'>]>")
    h = make()
    h.spool(*work(h))
    h.settle()
    assert h.observations() == [] and h.pending() == 0


def test_unknown_types_are_mapped_and_flagged(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply(observation("insight", "Invoices are immutable once issued")
               + observation("zebra", "Exports are streamed row by row"))
    h = make()
    h.spool(*work(h))
    h.settle()
    rows = h.observations()
    assert [r["type"] for r in rows] == ["discovery", "discovery"]
    assert "(observer wrote type 'insight')" in rows[0]["facts"]
    assert "(observer wrote type 'zebra')" in rows[1]["facts"]


def test_rate_limit_keeps_events_pending_and_backs_off(make: Callable[..., Harness], wire: Wire) -> None:
    wire.fail(429, "rate limited", retry_after=0.3).reply(observation("feature", "CSV export of invoices"))
    h = make()
    h.spool(*work(h))
    h.run_until(lambda: len(wire.arrivals) == 1 and h.observer.counters.failures == 1)  # type: ignore[attr-defined]
    snap = h.observer.snapshot()  # type: ignore[attr-defined]
    assert snap["backoff"]["kind"] == "quota" and snap["backoff"]["active"]
    assert h.pending() > 0 and h.observations() == []
    h.settle()
    assert len(wire.arrivals) == 2
    assert wire.user_turns(wire.arrivals[1])[-1] == wire.user_turns(wire.arrivals[0])[-1]  # same events again
    assert [r["title"] for r in h.observations()] == ["CSV export of invoices"]
    assert not h.observer.snapshot()["backoff"]["active"]  # type: ignore[attr-defined]


def test_auth_failure_keeps_events_pending_and_is_visible(make: Callable[..., Harness], wire: Wire) -> None:
    wire.fail(401, "invalid x-api-key")
    h = make()
    h.spool(*work(h))
    h.run_until(lambda: h.observer.counters.failures == 1)  # type: ignore[attr-defined]
    for _ in range(5):
        h.cycle()
    snap = h.observer.snapshot()  # type: ignore[attr-defined]
    assert snap["backoff"]["kind"] == "auth" and snap["backoff"]["retry_in_s"] > 30
    assert "invalid x-api-key" in snap["backoff"]["last_error"]
    assert len(wire.arrivals) == 1  # no hammering while backing off
    assert h.pending() == 6  # SessionStart was settled; the rest waits


def test_usage_limit_prose_is_a_quota_failure(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply("Claude AI usage limit reached|1767225600")
    h = make()
    h.spool(*work(h))
    h.run_until(lambda: h.observer.counters.failures == 1)  # type: ignore[attr-defined]
    assert h.observer.snapshot()["backoff"]["kind"] == "quota"  # type: ignore[attr-defined]
    assert h.pending() == 6 and h.observations() == []


def test_events_arriving_during_a_slow_reply_go_together_in_the_next_turn(make: Callable[..., Harness],
                                                                          wire: Wire) -> None:
    wire.reply(observation("discovery", "First batch"), delay=1.5).reply(observation("discovery", "Second batch"))
    h = make()
    s = h.session()
    h.spool(s.prompt("Check the exports."), s.read("src/export.py"))
    h.run_until(lambda: len(wire.arrivals) == 1)
    late = [s.bash(f"pytest -q -k case_{i}", f"case {i} passed") for i in range(5)]
    h.spool(*late)
    t0 = time.monotonic()
    h.cycle()  # ingests the new events: never waits for the model
    assert time.monotonic() - t0 < 0.5
    h.settle()
    assert len(wire.arrivals) == 2
    first, second = (wire.user_turns(b)[-1] for b in wire.arrivals)
    assert all(f"case_{i}" not in first for i in range(5))
    assert all(f"case_{i}" in second for i in range(5))  # one request carries the five queued events
    assert [r["title"] for r in h.observations()] == ["First batch", "Second batch"]


def test_a_1mb_tool_output_is_elided_and_the_request_bounded(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply("")
    h = make()
    s = h.session()
    big = "".join(f"line {i:07d} of a very long build log\n" for i in range(28_000))[:1_000_000]
    assert len(big) == 1_000_000
    h.spool(s.prompt("Why is the build slow?"), s.bash("make build", big))
    h.settle()
    turn = wire.user_turns(wire.arrivals[0])[-1]
    assert '<elided chars="' in turn and 'of="1000000"' in turn
    assert big[:9000] in turn and big[-4000:] in turn
    assert max(wire.request_bytes()) < 60_000


def test_a_summary_is_asked_at_stop_and_stored(make: Callable[..., Harness], wire: Wire) -> None:
    wire.reply(observation("change", "Totals round per line") + summary("Round VAT per line", "per-line rounding"))
    h = make()
    s = h.session()
    h.spool(s.prompt("Round VAT per line."), s.edit("src/totals.py"), s.stop("Done: VAT rounds per line."))
    h.settle()
    turn = wire.user_turns(wire.arrivals[0])[-1]
    assert "<summary>" in turn and "Done: VAT rounds per line." in turn
    (row,) = h.summaries()
    assert row["request"] == "Round VAT per line" and row["learned"] == "per-line rounding"
    assert row["observer"] == wire.provider and json.loads(row["files_modified"]) == ["src/totals.py"]


def test_a_summary_states_what_the_commands_prove_not_what_the_model_says(make: Callable[..., Harness],
                                                                          wire: Wire) -> None:
    """The model writes the summary's words; where the repository stands (commits, pushes, files not
    committed) is read from the commands, as the offline observer reads it, and a state the model wrote
    itself does not stand beside it."""
    told = summary("Round VAT per line", "per-line rounding").replace(
        "<notes></notes>", "<notes>State: everything pushed\nAsked for per-line rounding.</notes>")
    wire.reply(observation("change", "Totals round per line") + told)
    h = make()
    s = h.session()
    h.spool(s.prompt("Round VAT per line and commit it."), s.edit("src/totals.py"),
            s.bash("git add src/totals.py && git commit -m 'Round VAT per line'", "[main 1a2b3c4] Round VAT per line"),
            s.bash("git status --short", " M NOTES.md"), s.stop("Committed the rounding."))
    h.settle()
    (row,) = h.summaries()
    lines = row["notes"].splitlines()
    assert lines[0] == "State: committed 1a2b3c4 Round VAT per line; not pushed (main); not committed: NOTES.md", lines
    # (the model's own words stay, without the label that would make them read as the proven state)
    assert lines[1:] == ["everything pushed Asked for per-line rounding."], lines
