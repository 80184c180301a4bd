"""The LLM observer end to end: real hook processes, the real worker, the anthropic SDK, and a
fake Messages API scripted like a model that read the real observer prompt.

* the bundled invoice-api story (and a real Claude Code capture) replayed through the hooks
  produces the scripted observations, and the next session's context shows them;
* killing the worker while a call is in flight loses nothing: after a restart the events go
  to a fresh conversation and are stored once;
* 50 sessions never hold more conversations than the limit, and none once idle;
* a rate limit is visible in /api/health and `kenning doctor`, and nothing is dropped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning import spool
from kenning.demo.replay import load_story
from tests.conftest import Home, load_fixture
from tests.integration.test_crash_safety import alive, assert_no_duplicate_observations, record
from tests.integration.test_fixture_replay import hook_output, norm, session_start_context
from tests.support import fake_anthropic
from tests.support.llm_harness import Session, observation, summary

pytest.importorskip("anthropic")


class Model:
    """A fake model: the reply is chosen from what the rendered events in the turn show."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.hold = threading.Event()  # while set, requests hang (a model that never answers)
        self.lock = threading.Lock()
        self.fake = fake_anthropic.FakeAnthropic(script=self._reply)

    def turn(self, body: dict[str, Any]) -> str:
        """Every text of the last user message (the Claude Code CLI adds blocks of its own)."""
        content = body["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))

    def _reply(self, body: dict[str, Any]) -> Any:
        with self.lock:
            self.bodies.append(body)
        if self.hold.is_set():
            return {"content": [fake_anthropic.text("")], "delay": 60}
        t = self.turn(body)
        out = ""
        if 'tool="Edit"' in t and "totals.py" in t and "ROUND_HALF_UP" in t:
            out += observation("bugfix", "VAT is rounded per invoice line, half-up, to whole cents",
                               facts=("line_vat() in src/invoice_api/totals.py quantizes with ROUND_HALF_UP",),
                               files_modified=("src/invoice_api/totals.py",), concepts=("problem-solution",))
        if 'tool="Write"' in t and "export.py" in t:
            out += observation("feature", "CSV export of invoices with totals via invoices_to_csv()",
                               files_modified=("src/invoice_api/export.py",), concepts=("what-changed",))
        if "add a CLI" in t:
            out += observation("decision", "No CLI: the HTTP API is the supported interface",
                               concepts=("why-it-exists",))
        if "hello.txt" in t and 'tool="Write"' in t:
            out += observation("feature", "hello.txt holds the greeting of the fake model")
        if "<summary>" in t:
            out += summary("Observed session work", "per-line VAT rounding keeps totals equal to printed lines")
        return [fake_anthropic.text(out)] if out else []

    def count(self) -> int:
        with self.lock:
            return len(self.bodies)


@pytest.fixture
def model() -> Iterator[Model]:
    m = Model()
    m.fake.start()
    yield m
    m.hold.clear()
    m.fake.stop()


def use_model(home: Home, model: Model, **env: str) -> None:
    home.env.update(KENNING_PROVIDER="anthropic", KENNING_BASE_URL=model.fake.base_url, ANTHROPIC_API_KEY="sk-test",
                    **env)


def fill(value: Any, project: str) -> Any:
    if isinstance(value, str):
        return value.replace("{PROJECT}", project).replace("{TRANSCRIPTS}", "/tmp/transcripts")
    if isinstance(value, dict):
        return {k: fill(v, project) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, project) for v in value]
    return value


def rows(home: Home, sql: str) -> list[Any]:
    conn = home.db()
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def health(home: Home) -> dict[str, Any]:
    from kenning.daemon import running

    h = running(home.paths, timeout=2)
    assert h
    return h


def test_the_demo_story_through_real_hooks_gives_the_scripted_observations_back(home: Home,
                                                                                   model: Model) -> None:
    use_model(home, model)
    for session in load_story()["sessions"]:
        for item in session["events"]:
            payload = fill(item["payload"], str(home.project))
            r = home.hook(item["event"], payload)
            assert r.returncode == 0, r.stderr
    home.flush(timeout=60)
    titles = {r["title"]: r["observer"] for r in rows(home, "SELECT title, observer FROM observations")}
    expected = {"VAT is rounded per invoice line, half-up, to whole cents",
                "CSV export of invoices with totals via invoices_to_csv()",
                "No CLI: the HTTP API is the supported interface"}
    assert expected <= set(titles) and set(titles.values()) == {"anthropic"}
    assert_no_duplicate_observations(home)
    bugfix = rows(home, "SELECT files_modified, files_read FROM observations WHERE type = 'bugfix'")[0]
    assert json.loads(bugfix["files_modified"]) == ["src/invoice_api/totals.py"]
    assert len(rows(home, "SELECT id FROM session_summaries")) == 3
    # the real observer prompt went out: our mode's instructions, the events rendered
    first = model.bodies[0]
    assert "engineering notebook" in first["system"][0]["text"]
    assert any('tool="Read"' in model.turn(b) and "totals.py" in model.turn(b) for b in model.bodies)
    assert "TodoWrite" not in json.dumps(model.bodies)  # never captured (skip_tools)
    # a new session in the project is told
    start = fill(load_story()["sessions"][0]["events"][0]["payload"], str(home.project))
    start["session_id"] = "9f0e8d7c-0000-4000-8000-0000000000aa"
    text = session_start_context(home.hook("SessionStart", start))
    key = {"VAT is rounded per invoice line, half-up, to whole cents",
           "No CLI: the HTTP API is the supported interface"}
    for title in key:  # the key memories themselves; the CSV export (routine work) is told by its session's line
        assert norm(title) in norm(text), text
    h = health(home)["observer"]
    assert h["provider"] == "anthropic" and h["replies"]["calls"] == model.count()
    assert h["conversations"]["peak"] <= 2


def test_a_real_claude_code_capture_is_observed(home: Home, model: Model) -> None:
    use_model(home, model)
    names = ["SessionStart.startup", "UserPromptSubmit", "PostToolUse.Write", "PostToolUse.Read",
             "PostToolUse.Bash", "Stop", "SessionEnd"]
    for name in names:
        payload = load_fixture(f"print-mode/events/{name}.json", cwd=str(home.project))
        r = home.hook(payload["hook_event_name"], payload)
        assert r.returncode == 0
        if name.startswith("SessionStart"):
            hook_output(r)
    home.flush(timeout=60)
    titles = [r[0] for r in rows(home, "SELECT title FROM observations")]
    assert titles == ["hello.txt holds the greeting of the fake model"]
    assert json.loads(rows(home, "SELECT files_modified FROM observations")[0][0]) == ["hello.txt"]


def test_killing_the_worker_mid_call_loses_nothing(home: Home, model: Model) -> None:
    use_model(home, model)
    pid = home.start_worker()["pid"]
    s = Session(home.project)
    model.hold.set()
    for p in (s.prompt("Round VAT per line; use ROUND_HALF_UP."),
              s.edit("src/invoice_api/totals.py", "return x", "return x.quantize(CENT, ROUND_HALF_UP)"),
              s.bash("pytest -q", "4 passed"), s.stop("Done.")):
        assert home.hook(p["hook_event_name"], p).returncode == 0
    deadline = time.monotonic() + 30
    while model.count() == 0:
        assert time.monotonic() < deadline, "no call reached the model"
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    while alive(pid):
        time.sleep(0.01)
    assert home.pending() >= 4  # nothing was marked done: the reply never came
    model.hold.clear()
    home.start_worker()
    home.flush(timeout=60)
    assert home.pending() == 0
    before = model.count()
    retry = model.bodies[-1]
    assert len([m for m in retry["messages"] if m["role"] == "user"]) == 1  # a fresh conversation
    for needle in ("Round VAT per line", 'tool="Edit"', 'tool="Bash"', "<turn_end"):
        assert needle in model.turn(retry), needle  # every unconfirmed event, in one turn
    titles = [r[0] for r in rows(home, "SELECT title FROM observations")]
    assert titles == ["VAT is rounded per invoice line, half-up, to whole cents"]
    assert len(rows(home, "SELECT id FROM session_summaries")) == 1
    # restarting again re-sends nothing and stores nothing twice
    home.stop_worker()
    home.start_worker()
    home.flush()
    assert model.count() == before
    assert_no_duplicate_observations(home)


def test_fifty_sessions_stay_within_the_conversation_limit(home: Home, model: Model) -> None:
    use_model(home, model, KENNING_MAX_CONCURRENT_CONVERSATIONS="2", KENNING_IDLE_TIMEOUT_S="1")
    home.paths.ensure()
    at = time.time() - 3600
    for i in range(50):
        s = Session(home.project)
        events = [s.start(), s.prompt(f"Session {i}: check totals.py"),
                  s.edit("src/invoice_api/totals.py", f"v{i}", "ROUND_HALF_UP"), s.stop("Done.")]
        if i % 2:
            events.append(s.end())
        for p in events:
            at += 0.2
            spool.write(home.paths, record(home, p, at), sync_dir=False)
    home.start_worker()
    peak = 0
    deadline = time.monotonic() + 120
    while True:
        conv = health(home)["observer"]["conversations"]
        peak = max(peak, conv["slots_held"], conv["live"])
        # The spool too: right after start nothing is ingested yet, so nothing is pending either.
        if home.spool_depth() == 0 and home.pending() == 0 and conv["slots_held"] == 0 and conv["live"] == 0:
            break
        assert time.monotonic() < deadline, conv
        time.sleep(0.1)
    assert peak <= 2 and conv["peak"] <= 2
    assert conv["opened"] == conv["closed"] >= 25
    assert len(rows(home, "SELECT id FROM session_summaries")) == 50


def test_a_rate_limit_is_visible_and_drops_nothing(home: Home, model: Model) -> None:
    use_model(home, model)
    model.fake.script = fake_anthropic.in_order(fake_anthropic.error(429, message="rate limited", retry_after=3600))
    home.start_worker()
    s = Session(home.project)
    for p in (s.prompt("Fix it"), s.edit("src/a.py"), s.stop("Done.")):
        home.hook(p["hook_event_name"], p)
    deadline = time.monotonic() + 30
    while not health(home)["observer"]["backoff"]["active"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    b = health(home)["observer"]["backoff"]
    assert b["kind"] == "quota" and b["retry_in_s"] > 3000 and "rate limited" in b["last_error"]
    assert home.pending() == 3
    out = home.kenning("doctor").stdout
    assert "observer back-off" in out and "quota" in out and "nothing is lost" in out
    assert "anthropic (claude-haiku-4-5): chosen in settings" in out


def test_the_worker_stops_with_no_conversation_left(home: Home, model: Model, tmp_path: Path) -> None:
    use_model(home, model)
    home.start_worker()
    s = Session(home.project)
    for p in (s.prompt("Round VAT"), s.edit("src/invoice_api/totals.py", "a", "ROUND_HALF_UP")):
        home.hook(p["hook_event_name"], p)
    home.flush(timeout=60)
    assert health(home)["observer"]["conversations"]["live"] == 1  # the session is still open
    r = home.kenning("worker", "stop")
    assert r.returncode == 0
    log = Path(home.paths.worker_log).read_text()
    assert "closing the observer failed" not in log


@pytest.mark.slow
def test_the_claude_provider_runs_under_the_same_manager(tmp_path: Path, model: Model,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Any ChatProvider works: the Claude Code CLI (claude-agent-sdk) against the fake API, with a
    limit of one live conversation: never two CLI processes at once, none left at the end."""
    pytest.importorskip("claude_agent_sdk")
    from kenning.observer.llm.claude_agent import ClaudeAgentProvider
    from kenning.observer.llm.observer import Config, LLMObserver
    from kenning.observer.modes import load_mode
    from kenning.observer.providers.rules import RulesObserver
    from tests.integration.test_claude_agent_provider_cli import claude_children, offline_env
    from tests.support.claude_cli import sdk_cli_dir
    from tests.support.llm_harness import Harness

    try:
        where = sdk_cli_dir(tmp_path / "claude-bin")
    except LookupError as e:
        pytest.skip(str(e))
    if where:
        monkeypatch.setenv("PATH", where + os.pathsep + os.environ.get("PATH", ""))
    home_dir = tmp_path / "home"
    (home_dir / ".claude").mkdir(parents=True)
    provider = ClaudeAgentProvider(data_dir=str(tmp_path / "data"), env=offline_env(home_dir, model.fake.base_url))
    observer = LLMObserver(provider, Config(model="claude-haiku-4-5", max_concurrent=1, idle_timeout_s=1),
                           load_mode("code"), RulesObserver())
    h = Harness(tmp_path, observer=observer)
    most = 0
    sessions = [h.session() for _ in range(3)]
    for s in sessions:
        h.spool(s.prompt("Round VAT per line; use ROUND_HALF_UP."),
                s.edit("src/invoice_api/totals.py", "a", "ROUND_HALF_UP"))
    h.cycle()  # ingest: from here on the events table holds them
    deadline = time.monotonic() + 240
    while h.pending() or observer.snapshot()["conversations"]["slots_held"]:
        assert time.monotonic() < deadline, observer.snapshot()
        h.cycle()
        most = max(most, len(claude_children()))
        time.sleep(0.1)
    assert most <= 1
    assert observer.snapshot()["replies"]["failures"] == 0, observer.snapshot()
    assert [r["title"] for r in h.observations()] == ["VAT is rounded per invoice line, half-up, to whole cents"] * 3
    h.close()
    deadline = time.monotonic() + 10
    while claude_children():
        assert time.monotonic() < deadline, claude_children()
        time.sleep(0.05)


def test_a_call_in_flight_does_not_hold_up_the_worker_stop(home: Home, model: Model) -> None:
    use_model(home, model)
    home.start_worker()
    model.hold.set()  # the model takes a minute
    s = Session(home.project)
    for p in (s.prompt("Round VAT"), s.edit("src/invoice_api/totals.py", "a", "ROUND_HALF_UP")):
        home.hook(p["hook_event_name"], p)
    deadline = time.monotonic() + 30
    while model.count() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    t0 = time.monotonic()
    assert home.kenning("worker", "stop").returncode == 0
    assert time.monotonic() - t0 < 8  # SIGTERM honoured at once, not after a SIGKILL at 10 s
    assert home.pending() == 2  # the unanswered events wait for the next worker
    assert "SIGKILL" not in Path(home.paths.worker_log).read_text()


def test_doctor_names_the_observer_the_worker_runs_not_the_shells(home: Home, model: Model) -> None:
    # The key only in the worker's environment: the shell that runs doctor has none.
    home.env.update(KENNING_PROVIDER="auto", KENNING_BASE_URL=model.fake.base_url, ANTHROPIC_API_KEY="sk-test")
    home.env.pop("OPENAI_API_KEY", None)
    home.start_worker()
    shell = {k: v for k, v in home.env.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KENNING_BASE_URL")}
    out = subprocess.run([*home._argv(), "doctor"], env=shell, capture_output=True, text=True, timeout=60).stdout
    line = next(ln for ln in out.splitlines() if "observer" in ln and "uses" in ln)
    assert "the worker uses anthropic (claude-haiku-4-5): picked by auto" in line, out
    assert "a worker started now from this shell would use rules" in line, out
    home.stop_worker()
    # The reverse: a worker started without the key, a shell that has it.
    home.env.pop("ANTHROPIC_API_KEY")
    home.env.pop("KENNING_BASE_URL")  # (a local base URL alone is a keyless openai-compatible server)
    home.start_worker()
    out = subprocess.run([*home._argv(), "doctor"], env={**home.env, "ANTHROPIC_API_KEY": "sk-test"},
                         capture_output=True, text=True, timeout=60).stdout
    line = next(ln for ln in out.splitlines() if "observer" in ln and "uses" in ln)
    assert "the worker uses rules: offline observer" in line, out
    assert "a worker started now from this shell would use anthropic (claude-haiku-4-5)" in line, out
