"""The offline ``rules`` observer on real-shaped input: the bundled invoice-api story and the
real Claude Code print-mode captures, fed in one batch and turn by turn as the worker does.

What is asserted is what a developer wants remembered (DESIGN.md §9): the rules the user states,
each with the sentence it rests on; the decisions with their reasons; a fix named by its command and
error, listing only the files edited to fix it, and routine when the failure was the turn's own
slip; created files make a feature; a failure that is not fixed is left to the summary, not made a
gotcha; the summary says what was asked, what changed, where the work stands and what is left.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any

import pytest

from kenning.demo.replay import load_story
from kenning.observer import evidence
from kenning.observer.providers.rules import RulesObserver
from kenning.observer.stated import decisions_in, gist_of
from kenning.records import Event, ObservationDraft, Outcome, SessionInfo, SummaryDraft
from tests.conftest import load_fixture

ROOT = "/work/projects/invoice-api"
T0 = 1_709_543_700.0  # 2024-03-04, any fixed instant: the observer must not look at the clock
STEP = 7.0  # seconds between two events of the story


# ----------------------------------------------------------------------------- helpers


def _fill(value: Any, project: str) -> Any:
    # str.replace, never str.format: the payloads hold real code full of braces.
    if isinstance(value, str):
        return value.replace("{PROJECT}", project).replace("{TRANSCRIPTS}", "/tmp/transcripts")
    if isinstance(value, dict):
        return {k: _fill(v, project) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, project) for v in value]
    return value


def make_events(payloads: Iterable[dict[str, Any]], *, start: float = T0, first_id: int = 1) -> list[Event]:
    """Events as the worker stores them: increasing times and ids, prompt numbers counted."""
    out: list[Event] = []
    prompt = 0
    for i, p in enumerate(payloads):
        kind = p["hook_event_name"]
        if kind == "UserPromptSubmit":
            prompt += 1
        tool = p.get("tool_name")
        out.append(Event(id=first_id + i, kind=kind, occurred_at=start + i * STEP, payload=p,
                         tool_name=tool if isinstance(tool, str) else None, prompt_number=prompt,
                         size_chars=len(json.dumps(p))))
    return out


def story_payloads(index: int, root: str = ROOT) -> list[dict[str, Any]]:
    session = load_story()["sessions"][index]
    payloads = [_fill(item["payload"], root) for item in session["events"]]
    assert [p["hook_event_name"] for p in payloads] == [item["event"] for item in session["events"]]
    return payloads


def story_events(index: int) -> list[Event]:
    return make_events(story_payloads(index), start=T0 + index * 86_400)


def session_info(events: list[Event], *, ended: bool, root: str = ROOT, **kw: Any) -> SessionInfo:
    prompts = [str(e.payload.get("prompt") or "") for e in events if e.kind == "UserPromptSubmit"]
    return SessionInfo(id=1, agent_session_id="test-session", project="invoice-api", project_root=root,
                       prompts=prompts, ended=ended, **kw)


def observe_batch(index: int) -> Outcome:
    events = story_events(index)
    return RulesObserver().observe(session_info(events, ended=True), events, now=events[-1].occurred_at + 1)


def of_type(out: Outcome | list[ObservationDraft], kind: str) -> list[ObservationDraft]:
    drafts = out.observations if isinstance(out, Outcome) else out
    return [d for d in drafts if d.type == kind]


def fingerprint(d: ObservationDraft) -> tuple[Any, ...]:
    return (d.content_hash(), d.type, d.title, d.subtitle, tuple(d.facts), d.narrative, tuple(d.concepts),
            tuple(d.files_read), tuple(d.files_modified), d.created_at, d.prompt_number, d.source_tokens)


class Worker:
    """The worker's loop for one session, in memory.

    Events arrive one at a time; after each arrival the observer sees every pending event of
    the session; only the ids it reports in ``done`` leave the queue; stored observations
    (deduplicated by content hash) and the summary become the ``SessionInfo`` of later calls.
    """

    def __init__(self, observer: RulesObserver, root: str = ROOT) -> None:
        self.observer = observer
        self.root = root
        self.pending: list[Event] = []
        self.prompts: list[str] = []
        self.ended = False
        self.stored: list[ObservationDraft] = []
        self.superseded: set[int] = set()  # indexes into ``stored``, as ids
        self.summary: dict[str, Any] | None = None

    @property
    def active(self) -> list[ObservationDraft]:
        return [d for i, d in enumerate(self.stored) if i not in self.superseded]

    def add(self, ev: Event) -> None:
        if ev.kind == "UserPromptSubmit":
            self.prompts.append(str(ev.payload.get("prompt") or ""))
        if ev.kind == "SessionEnd":
            self.ended = True
        self.pending.append(ev)

    def cycle(self, now: float) -> Outcome:
        info = SessionInfo(
            id=1, agent_session_id="test-session", project="invoice-api", project_root=self.root,
            prompts=list(self.prompts), ended=self.ended,
            prior_observations=[{"id": i, "type": d.type, "title": d.title, "files_read": d.files_read,
                                 "files_modified": d.files_modified, "facts": d.facts, "kind": d.kind,
                                 "why": json.dumps(d.why) if d.why else "", "status": "active"}
                                for i, d in enumerate(self.stored) if i not in self.superseded],
            prior_summary=dict(self.summary) if self.summary else None)
        out = self.observer.observe(info, list(self.pending), now=now)
        pending_ids = {e.id for e in self.pending}
        assert set(out.done) <= pending_ids, "done names events that were not fed"
        assert len(out.done) == len(set(out.done)), "an event reported done twice"
        self.pending = [e for e in self.pending if e.id not in set(out.done)]
        known = {d.content_hash() for d in self.stored}
        for d in out.observations:
            self.superseded.update(d.supersedes)  # what the store marks no longer true
        self.stored.extend(d for d in out.observations if d.content_hash() not in known)
        if out.summary is not None:
            self.summary = dataclasses.asdict(out.summary)
        return out


# ------------------------------------------------------------------ the demo story, batch


@pytest.fixture(scope="module")
def batch() -> list[Outcome]:
    return [observe_batch(i) for i in range(3)]


def test_every_event_of_an_ended_session_is_done(batch: list[Outcome]) -> None:
    for i, out in enumerate(batch):
        ids = [e.id for e in story_events(i)]
        assert sorted(out.done) == ids


def test_session1_bugfix_names_the_pytest_command_and_the_assertion_error(batch: list[Outcome]) -> None:
    bugfixes = of_type(batch[0], "bugfix")
    assert len(bugfixes) == 1
    fix = bugfixes[0]
    assert "python -m pytest tests/test_totals.py" in fix.title
    assert "AssertionError" in fix.title
    assert "Decimal('0.24') == Decimal('0.26')" in fix.title  # the actual failing assertion, not a footer
    assert fix.prompt_number == 1
    assert any("passes after the change" in f for f in fix.facts)
    # totals.py had been changed in the same turn before the test failed: the agent fixed its own first
    # attempt, routine work for the session log, not a root cause for the key layer.
    assert fix.kind == "change" and "what-changed" in fix.concepts


def test_session1_bugfix_lists_only_files_edited_between_the_failure_and_the_pass(batch: list[Outcome]) -> None:
    events = story_events(0)
    fail = next(e for e in events if e.kind == "PostToolUseFailure")
    passing = next(e for e in events if e.kind == "PostToolUse" and e.tool_name == "Bash"
                   and e.occurred_at > fail.occurred_at
                   and e.payload["tool_input"]["command"] == fail.payload["tool_input"]["command"])
    edited_between = {e.payload["tool_input"]["file_path"].removeprefix(ROOT + "/") for e in events
                      if e.tool_name == "Edit" and fail.occurred_at < e.occurred_at < passing.occurred_at}
    edited_before = {e.payload["tool_input"]["file_path"].removeprefix(ROOT + "/") for e in events
                     if e.tool_name == "Edit" and e.occurred_at < fail.occurred_at}

    fix = of_type(batch[0], "bugfix")[0]
    assert fix.files_modified == ["src/invoice_api/totals.py"]
    assert set(fix.files_modified) == edited_between
    assert "tests/test_totals.py" in edited_before  # the new test was written before the failure
    assert "tests/test_totals.py" not in fix.files_modified
    assert all(not f.startswith("/") for f in fix.files_modified + fix.files_read)
    # Timestamped when the fix was proven (the passing run), not when the observer ran.
    assert fix.created_at == passing.occurred_at


def test_session1_change_to_totals(batch: list[Outcome]) -> None:
    changes = [d for d in batch[0].observations if d.type in ("change", "feature")]
    assert len(changes) == 1
    change = changes[0]
    assert change.type == "change"  # nothing was created
    assert "totals.py" in change.title
    assert change.files_modified == ["src/invoice_api/totals.py", "tests/test_totals.py"]
    assert "Modified src/invoice_api/totals.py (3 edits)" in change.facts
    assert "Last check: `python -m pytest -q` passed" in change.facts
    # Titled by what the agent's conclusion says came of it (with an identifier-free first sentence the
    # commit of the next turn is not this turn's), not by the request.
    assert change.title.startswith("Changed totals.py, test_totals.py: ")
    assert "rounded per invoice line" in change.title
    assert change.kind == "change"


def test_session1_decision_decimal_for_money(batch: list[Outcome]) -> None:
    decisions = of_type(batch[0], "decision")
    assert [d.title for d in decisions] == ["Use Decimal, never float, for money anywhere in this codebase"]
    d = decisions[0]
    assert d.files_modified == [] and d.files_read == []
    assert d.subtitle == "stated by the user"
    assert d.kind == "rule" and d.scope == "project"
    # Why it was judged a rule: the user's own sentence, and where it was said.
    assert d.why["said"].endswith("use Decimal, never float, for money anywhere in this codebase.")
    assert d.why["by"] == "user" and d.why["origin"] == "typed" and d.why["where"].startswith("prompt 1 ")
    # "Looks good, commit it." in the second turn states no rule and changes nothing.
    assert all(o.prompt_number == 1 for o in batch[0].observations)


def test_session2_feature_creates_export_module(batch: list[Outcome]) -> None:
    features = of_type(batch[1], "feature")
    assert len(features) == 1
    f = features[0]
    assert "export.py" in f.title and f.title.startswith("Added ")
    assert "Created src/invoice_api/export.py" in f.facts
    assert "Created tests/test_export.py" in f.facts
    assert f.files_modified == ["src/invoice_api/export.py", "tests/test_export.py"]
    assert f.prompt_number == 1


def test_session2_bugfix_for_the_name_error(batch: list[Outcome]) -> None:
    bugfixes = of_type(batch[1], "bugfix")
    assert len(bugfixes) == 1
    fix = bugfixes[0]
    assert "NameError: name 'invoice_totals' is not defined" in fix.title
    assert "uv run pytest tests/test_export.py" in fix.title
    assert fix.files_modified == ["src/invoice_api/export.py"]
    assert fix.kind == "change"  # the import the agent forgot in the file it had just written: its own slip
    # …and the feature description is not mistaken for the fix of a problem.
    assert not [d for d in batch[1].observations if d.kind in ("fix", "rootcause")]


def test_session2_decisions_uv_not_pip_and_a_tentative_one(batch: list[Outcome]) -> None:
    decisions = of_type(batch[1], "decision")
    rules = [d for d in decisions if d.kind == "rule"]
    assert [d.title for d in rules] == ["We use uv, not pip — run everything through `uv run`, never bare pip"]
    # "the export should be a plain module for now, we'll decide on an endpoint later" is no rule: a
    # decision for now, marked tentative.
    [later] = [d for d in decisions if "endpoint" in d.title]
    assert later.kind == "decision" and later.tentative


def test_session2_readme_change_belongs_to_the_second_prompt(batch: list[Outcome]) -> None:
    readme = [d for d in batch[1].observations if "README.md" in d.files_modified]
    assert len(readme) == 1
    assert readme[0].type == "change" and readme[0].prompt_number == 2 and readme[0].kind == "change"


def test_session2_todowrite_contributes_nothing(batch: list[Outcome]) -> None:
    events = story_events(1)
    todos = [e for e in events if e.tool_name == "TodoWrite"]
    assert len(todos) == 3
    without = [e for e in events if e.tool_name != "TodoWrite"]
    out = RulesObserver().observe(session_info(without, ended=True), without, now=without[-1].occurred_at + 1)
    # Same observations with or without the TodoWrite calls (content identity, not sizes).
    assert [d.content_hash() for d in out.observations] == [d.content_hash() for d in batch[1].observations]
    text = json.dumps([dataclasses.asdict(d) for d in batch[1].observations])
    for todo in todos:
        for item in todo.payload["tool_input"]["todos"]:
            assert item["content"] not in text
            assert item["activeForm"] not in text
    # A turn made of TodoWrite calls alone yields nothing, and they are still consumed.
    prompt = make_events([{"hook_event_name": "UserPromptSubmit", "prompt": "Plan the work"}])
    only = prompt + [dataclasses.replace(t, id=100 + i) for i, t in enumerate(todos)]
    only_out = RulesObserver().observe(session_info(only, ended=True), only, now=T0 + 10_000)
    assert only_out.observations == []
    assert sorted(only_out.done) == sorted(e.id for e in only)


def test_session3_why_the_cli_fails_and_the_users_decision(batch: list[Outcome]) -> None:
    # The agent explained why `python -m invoice_api.cli` fails: one memory of that cause (both attempts,
    # plain python and `uv run python`, are the same command), naming the command.
    [cli] = [d for d in batch[2].observations if "invoice_api.cli" in d.title]
    assert cli.kind in ("rootcause", "gotcha") and cli.files_modified == []
    assert cli.why["by"] == "agent"
    # Nothing was changed in session 3: no routine work.
    assert not [o for o in batch[2].observations if o.kind in ("change", "fix")]
    [decided] = [o for o in batch[2].observations if o.why.get("by") == "user"]
    assert decided.title == "Don't add a CLI — the HTTP API is the supported interface"
    assert decided.kind in ("decision", "rule") and decided.prompt_number == 2


def test_session3_the_question_is_remembered_by_its_reason(batch: list[Outcome]) -> None:
    # Not "user asked X, I answered Y": what the answer holds that matters is a decision and its reason.
    [why] = [d for d in batch[2].observations if "every line on the PDF shows its own VAT" in d.title]
    assert why.kind == "decision" and why.type == "decision"
    assert "src/invoice_api/totals.py" in why.files_read
    # What pins it in the code is kept too (the test that proves per-line rounding, or how line_vat() works).
    assert any(d.kind in ("note", "fact") and ("line_vat()" in d.title or "test_vat_is_rounded_per_line" in d.title)
               for d in batch[2].observations)
    assert not [d for d in batch[2].observations if d.kind == "answer"]


def test_summaries_say_what_was_asked_changed_and_left(batch: list[Outcome]) -> None:
    s1, s2, s3 = (out.summary for out in batch)
    assert s1 is not None and s2 is not None and s3 is not None

    assert s1.request.startswith("Invoice totals need VAT rounding")
    assert "Looks good, commit it" in s1.request
    assert s1.files_modified == ["src/invoice_api/totals.py", "tests/test_totals.py"]
    assert "Round VAT per line, half-up to the cent" in s1.completed  # the commit's subject
    # Where the work stands, from what the commands did: committed (its hash and subject), not pushed, on the
    # branch git printed ("[main 5d8e5ed] …").
    assert "State: committed 5d8e5ed Round VAT per line, half-up to the cent; not pushed (main)\n" in s1.notes
    assert "AssertionError" not in s1.learned  # the agent's own slip is no lesson
    assert "python -m pytest tests/test_totals.py -q (failed)" in s1.notes
    assert s1.prompt_number == 2

    assert s2.request.startswith("Add a CSV export for invoices")
    assert "Add a short note about the export to the README" in s2.request
    assert s2.files_modified == ["src/invoice_api/export.py", "tests/test_export.py", "README.md"]
    assert "prints all stored invoices as CSV" in s2.completed
    assert "TodoWrite" not in s2.notes and "todos" not in s2.notes

    assert s3.request.startswith("Why do we compute VAT per line")
    assert s3.files_modified == []
    assert "invoice_api.cli" in s3.completed  # what the session found out
    # The CLI failed in the first turn; the user then decided there is to be no CLI: nothing is left open.
    assert "Still failing" not in s3.next_steps
    assert s3.investigated.startswith("Read ") and "pyproject.toml" in s3.investigated

    for s, out in zip((s1, s2, s3), batch, strict=True):
        last_stop = [e for e in story_events(batch.index(out)) if e.kind == "Stop"][-1]
        assert s.created_at == last_stop.occurred_at
        assert s.source_tokens > 0


# ---------------------------------------------------------------- turn by turn, as the worker


@pytest.mark.parametrize("index", [0, 1, 2])
def test_turn_by_turn_open_turns_stay_pending_until_their_stop(index: int, batch: list[Outcome]) -> None:
    worker = Worker(RulesObserver(turn_idle_seconds=600))
    events = story_events(index)
    for ev in events:
        worker.add(ev)
        out = worker.cycle(now=ev.occurred_at + 1)  # well inside the idle timeout
        if ev.kind == "SessionStart":
            assert out.done == [ev.id] and not out.observations and out.summary is None
        elif ev.kind in ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure"):
            # The turn is open: nothing is observed and nothing of it is marked done.
            assert ev.id not in out.done
            assert out.observations == [] and out.summary is None
            assert ev in worker.pending
        elif ev.kind == "Stop":
            # Fed again together with the Stop, the whole turn is observed and consumed.
            assert worker.pending == []
            assert ev.id in out.done
            turn = [d.prompt_number for d in out.observations]
            assert all(n == ev.prompt_number for n in turn)
            assert out.summary is not None
    assert worker.pending == []

    expected = batch[index]
    assert sorted(d.content_hash() for d in worker.active) == sorted(d.content_hash() for d in expected.observations)
    assert worker.summary is not None and expected.summary is not None
    for key in ("request", "learned", "completed", "next_steps", "notes", "files_read", "files_modified",
                "investigated"):
        assert worker.summary[key] == getattr(expected.summary, key), key
    # The summary compresses the whole session, not only its last turn (within rounding and
    # the closing SessionEnd, which the batch also counts).
    assert worker.summary["source_tokens"] >= 0.95 * expected.summary.source_tokens


def test_turn_by_turn_stop_produces_exactly_the_turns_observations() -> None:
    worker = Worker(RulesObserver())
    events = story_events(0)
    first_stop = next(i for i, e in enumerate(events) if e.kind == "Stop")
    for ev in events[:first_stop]:
        worker.add(ev)
        worker.cycle(now=ev.occurred_at + 1)
    open_ids = [e.id for e in worker.pending]
    assert open_ids == [e.id for e in events[1:first_stop]]  # all but SessionStart
    worker.add(events[first_stop])
    out = worker.cycle(now=events[first_stop].occurred_at + 1)
    assert sorted(out.done) == [*open_ids, events[first_stop].id]
    assert {d.kind for d in out.observations} >= {"rule", "change"}
    assert all(d.prompt_number == events[first_stop].prompt_number for d in out.observations)


# ------------------------------------------------------------------------- determinism


def test_same_input_twice_gives_identical_drafts() -> None:
    for index in range(3):
        a = RulesObserver().observe(session_info(story_events(index), ended=True), story_events(index),
                                    now=T0 + 10**6)
        b = RulesObserver().observe(session_info(story_events(index), ended=True), story_events(index),
                                    now=T0 + 2 * 10**6)  # a later clock changes nothing
        assert [fingerprint(d) for d in a.observations] == [fingerprint(d) for d in b.observations]
        assert a.summary == b.summary
        assert a.done == b.done
        hashes = [d.content_hash() for d in a.observations]
        assert len(set(hashes)) == len(hashes)


def test_content_hash_ignores_timestamps_and_changes_with_content() -> None:
    d = ObservationDraft(type="bugfix", title="Fixed x", created_at=1.0, facts=["a"], narrative="n")
    assert dataclasses.replace(d, created_at=2.0, source_tokens=9).content_hash() == d.content_hash()
    assert dataclasses.replace(d, title="Fixed y").content_hash() != d.content_hash()
    assert dataclasses.replace(d, facts=["b"]).content_hash() != d.content_hash()


# ------------------------------------------------------------------------- idle timeout


def test_turn_without_stop_closes_only_after_turn_idle_seconds() -> None:
    events = story_events(0)
    stop = next(i for i, e in enumerate(events) if e.kind == "Stop")
    open_turn = events[:stop]  # SessionStart, the prompt and its tools: the Stop never came
    last = open_turn[-1].occurred_at
    observer = RulesObserver(turn_idle_seconds=120)
    info = session_info(open_turn, ended=False)

    early = observer.observe(info, open_turn, now=last + 119)
    assert early.done == [open_turn[0].id]  # only SessionStart is consumed
    assert early.observations == [] and early.summary is None

    late = observer.observe(info, open_turn[1:], now=last + 120)
    assert sorted(late.done) == [e.id for e in open_turn[1:]]
    assert sorted(d.type for d in late.observations) == ["bugfix", "change", "decision"]
    assert late.summary is not None and late.summary.request.startswith("Invoice totals")
    # Timestamps stay those of the events, not of the moment the timeout fired.
    assert all(d.created_at <= last for d in late.observations)


def test_idle_timeout_comes_from_settings_through_the_registry() -> None:
    from kenning.observer.registry import choose
    from kenning.settings import Settings

    observer, _why = choose(Settings().replace(turn_idle_seconds=42))
    assert isinstance(observer, RulesObserver) and observer.turn_idle_seconds == 42


def test_session_with_only_start_and_end_produces_no_summary() -> None:
    events = make_events([{"hook_event_name": "SessionStart", "source": "startup"},
                          {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}])
    out = RulesObserver().observe(session_info(events, ended=True), events, now=T0 + 10**6)
    assert out.summary is None
    assert out.observations == []
    assert sorted(out.done) == [1, 2]


def test_session_start_alone_is_consumed_without_output() -> None:
    events = make_events([{"hook_event_name": "SessionStart", "source": "startup"}])
    out = RulesObserver().observe(session_info(events, ended=False), events, now=T0 + 10**6)
    assert out.done == [1] and out.observations == [] and out.summary is None


# ----------------------------------------------------------- real Claude Code print-mode run

PRINT_MODE = ["SessionStart.json", "UserPromptSubmit.json", "PostToolUse.Bash.json", "PostToolUse.Write.json",
              "PostToolUse.Read.json", "PostToolUseFailure.Bash.json", "Stop.json", "SessionEnd.json"]


def test_real_print_mode_capture_gives_feature_and_discovery(tmp_path: Any) -> None:
    root = str(tmp_path / "project")
    payloads = [load_fixture(f"print-mode/events/{name}", cwd=root) for name in PRINT_MODE]
    # The real order of the run (tool_use ids 1, 4, 7, 10): echo, Write, Read, failing ls.
    assert [p.get("tool_use_id") for p in payloads[2:6]] == [f"toolu_fake0000{n:02d}" for n in (1, 4, 7, 10)]
    events = make_events(payloads)
    out = RulesObserver().observe(session_info(events, ended=True, root=root), events, now=T0 + 10**6)

    assert sorted(out.done) == [e.id for e in events]
    features = of_type(out, "feature")
    assert len(features) == 1
    f = features[0]
    assert f.title.startswith("Added hello.txt")
    assert f.files_modified == ["hello.txt"]
    assert "Created hello.txt" in f.facts

    # The `ls` that failed and was left so is no gotcha (nothing says why, nothing fixed it): it is what
    # the session left failing.
    assert not of_type(out, "discovery")
    assert not of_type(out, "bugfix") and not of_type(out, "decision")
    # `echo hi` teaches nothing: no observation is about the command (the prompt's gist may name it).
    assert not any("`echo hi`" in json.dumps(dataclasses.asdict(o)) for o in out.observations)
    assert out.summary is not None
    assert out.summary.files_modified == ["hello.txt"]
    assert out.summary.completed.startswith("Added hello.txt")
    assert "Still failing: `ls /definitely-not-here-xyz`" in out.summary.next_steps
    assert out.summary.request == "Run echo hi, write hello.txt, read it back, then finish"


# ------------------------------------------------------------ synthetic sessions: invariants

SYNTH_ROOT = "/tmp/synth/project"


@pytest.mark.parametrize("seed", [1, 7])
def test_synthetic_sessions_batch_and_turn_by_turn_agree(seed: int) -> None:
    from tests.support.synthetic import synthetic_sessions

    for n, payloads in enumerate(synthetic_sessions(6, 60, seed=seed, cwd=SYNTH_ROOT)):
        events = make_events(payloads, start=T0 + n * 86_400)
        written = {f.removeprefix(SYNTH_ROOT + "/") for e in events for f in evidence.modified_files(e)}
        batch_out = RulesObserver().observe(session_info(events, ended=True, root=SYNTH_ROOT), events,
                                            now=events[-1].occurred_at + 1)
        assert sorted(batch_out.done) == [e.id for e in events]
        for d in batch_out.observations:
            assert d.type in {"bugfix", "feature", "change", "discovery", "decision"}
            assert d.title and len(d.title) <= 320  # a key memory's title: its subject, cause and fix
            # files_modified comes only from successful write tools, relative to the project.
            assert set(d.files_modified) <= written, (d.title, d.files_modified)
            assert not any(f.startswith("/") for f in d.files_modified)
            assert events[0].occurred_at <= d.created_at <= events[-1].occurred_at

        worker = Worker(RulesObserver(), root=SYNTH_ROOT)
        for ev in events:
            worker.add(ev)
            worker.cycle(now=ev.occurred_at + 1)
        assert worker.pending == []
        # What is still true is the same (turn by turn, a memory said again later supersedes the stored one;
        # in one batch the earlier draft is never stored).
        assert (sorted(d.content_hash() for d in worker.active)
                == sorted({d.content_hash() for d in batch_out.observations}))
        assert (worker.summary is None) == (batch_out.summary is None)
        if batch_out.summary is not None and worker.summary is not None:
            assert worker.summary["files_modified"] == batch_out.summary.files_modified
            assert worker.summary["request"] == batch_out.summary.request


# ---------------------------------------------------------------------- rules, one by one


def _tool(tool: str, tool_input: dict[str, Any], response: Any = None, *, failed: bool = False,
          error: str = "") -> dict[str, Any]:
    p: dict[str, Any] = {"hook_event_name": "PostToolUseFailure" if failed else "PostToolUse",
                         "tool_name": tool, "tool_input": tool_input}
    if failed:
        p["error"] = error
    else:
        p["tool_response"] = response if response is not None else {}
    return p


def _bash(cmd: str, *, ok: bool = True, out: str = "") -> dict[str, Any]:
    if ok:
        return _tool("Bash", {"command": cmd}, {"stdout": out, "stderr": "", "interrupted": False})
    return _tool("Bash", {"command": cmd}, failed=True, error=out)


def _turn(prompt: str, *tools: dict[str, Any]) -> list[Event]:
    return make_events([{"hook_event_name": "UserPromptSubmit", "prompt": prompt}, *tools,
                        {"hook_event_name": "Stop", "last_assistant_message": "Done."}])


def _observe(events: list[Event]) -> Outcome:
    return RulesObserver().observe(session_info(events, ended=False), events, now=T0 + 10**6)


def test_failure_that_passes_again_without_an_edit_is_neither_bugfix_nor_discovery() -> None:
    out = _observe(_turn("Run the tests", _bash("pytest -q", ok=False, out="Exit code 1\nE   ConnectionError: x"),
                         _bash("pytest -q", out="3 passed")))
    assert out.observations == []


def test_failure_fixed_by_an_edit_but_checked_with_another_command_is_no_fix() -> None:
    out = _observe(_turn(
        "Make the build green",
        _bash("npm run build", ok=False, out="Exit code 1\nsrc/a.ts(1,1): error TS2304: Cannot find name 'x'."),
        _tool("Edit", {"file_path": f"{ROOT}/src/a.ts", "old_string": "x", "new_string": "y"}, {}),
        _bash("npm run lint", out="ok")))
    assert not of_type(out, "bugfix")  # nothing proved the build passes now
    [c] = of_type(out, "change")
    assert c.files_modified == ["src/a.ts"]


def test_failed_edit_is_not_a_fix() -> None:
    out = _observe(_turn(
        "Fix it",
        _bash("pytest -q", ok=False, out="E   AssertionError: boom"),
        _tool("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "x", "new_string": "y"}, failed=True,
              error="String to replace not found"),
        _bash("pytest -q", out="1 passed")))
    assert not of_type(out, "bugfix")
    assert all(o.files_modified == [] for o in out.observations)


def test_read_only_turn_is_an_exploration_discovery() -> None:
    out = _observe(_turn(
        "How does the parser handle quoted strings?",
        _tool("Read", {"file_path": f"{ROOT}/src/parser.py"}, {"type": "text", "file": {"filePath": "x"}}),
        _tool("Grep", {"pattern": "def quote"}, {"filenames": []})))
    [d] = out.observations
    assert d.type == "discovery"
    assert d.title.startswith("Explored parser.py: ")
    assert d.files_read == ["src/parser.py"] and d.files_modified == []
    assert "Searched: Grep def quote" in d.facts


def test_trivial_commands_alone_produce_no_observation() -> None:
    out = _observe(_turn("status?", _bash("git status --short"), _bash("ls src", out="a.py")))
    assert out.observations == []


def test_notification_prompt_yields_no_decision() -> None:
    out = _observe(_turn("<task-notification>Never mind, the task always fails</task-notification>"))
    assert out.observations == []


# ---------------------------------------------------------------------------- decisions_in


@pytest.mark.parametrize(("prompt", "expected"), [
    ("use pnpm, not npm", "Use pnpm, not npm"),
    ("don't touch the API", "Don't touch the API"),
    ("Don’t touch the API.", "Don’t touch the API"),  # a curly apostrophe, as pasted from a chat
    ("we always squash merge", "We always squash merge"),
    ("never commit to main", "Never commit to main"),
    ("Please never commit to main!", "Never commit to main"),
    ("Also: prefer httpx over requests.", "Prefer httpx over requests"),
    ("From now on, write the tests first.", "From now on, write the tests first"),
])
def test_decisions_in_finds_rules(prompt: str, expected: str) -> None:
    assert decisions_in(prompt) == [expected]


@pytest.mark.parametrize("prompt", [
    "Should we always squash merge?",
    "Can you use pnpm instead of npm?",
    "Why does it never return?",
    "fix the bug in parser.py",
    "Fix the bug in parser.py.",
    "run the tests",
    "Looks good, commit it.",
    "Add a CSV export for invoices.",
    "I don't know why it fails",
    "We don't understand the retry logic, explain it",
    "```\n# never do this\nx = 1\n```",
    "",
])
def test_decisions_in_ignores_requests_and_questions(prompt: str) -> None:
    assert decisions_in(prompt) == []


def test_decisions_in_picks_the_rules_out_of_a_longer_prompt() -> None:
    prompt = ("Add retries to the HTTP client. Why is it so slow on CI? Never retry POST requests; "
              "and use httpx, not requests. Thanks!")
    assert decisions_in(prompt) == ["Never retry POST requests", "Use httpx, not requests"]


def test_decisions_in_dedupes_and_caps_at_three() -> None:
    assert decisions_in("Never use float. Never use float.") == ["Never use float"]
    assert len(decisions_in("never do a1; never do b2; never do c3; never do d4")) == 3


# --------------------------------------------------------------------------------- gist_of


@pytest.mark.parametrize(("prompt", "gist"), [
    ("Nice. Add a short note about the export to the README.", "Add a short note about the export to the README"),
    ("Hi! Can you fix the login bug in auth.py? Thanks.", "Fix the login bug in auth.py?"),
    ("Thanks!\n\nRefactor the parser", "Refactor the parser"),
    ("please, could you rename foo to bar", "Rename foo to bar"),
    ("<task-notification>agent finished</task-notification>", ""),
    ("<command-name>/clear</command-name>", ""),
    ("ok", ""),
    ("", ""),
])
def test_gist_of(prompt: str, gist: str) -> None:
    assert gist_of(prompt) == gist


def test_gist_of_is_one_bounded_line() -> None:
    g = gist_of("Implement " + "the very long feature " * 30 + "now.")
    assert len(g) <= 90 and g.endswith("…") and "\n" not in g
    assert gist_of("Fix   the\tparser   now", limit=200) == "Fix the parser now"


# --------------------------------------------------------------------------- error_headline

PYTEST_OUT = """Exit code 1
..F                                                                      [100%]
=================================== FAILURES ===================================
_________________________________ test_total __________________________________

    def test_total():
>       assert total([1, 2]) == 4
E       AssertionError: assert 3 == 4
E        +  where 3 = total([1, 2])

tests/test_sum.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_sum.py::test_total - AssertionError: assert 3 == 4
1 failed, 2 passed in 0.05s"""

TRACEBACK = """Traceback (most recent call last):
  File "/app/main.py", line 12, in <module>
    main()
  File "/app/main.py", line 8, in main
    cfg = load(path)
FileNotFoundError: [Errno 2] No such file or directory: 'config.toml'"""

NPM_MISSING_SCRIPT = """npm error Missing script: "build"
npm error
npm error To see a list of scripts, run:
npm error   npm run
npm error A complete log of this run can be found in: /root/.npm/_logs/2024-03-04T09_15_00_000Z-debug-0.log"""

NPM_ENOENT = """npm error code ENOENT
npm error syscall open
npm error path /work/app/package.json
npm error errno -2
npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open '/work/app/package.json'
npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log"""


@pytest.mark.parametrize(("output", "headline"), [
    (PYTEST_OUT, "AssertionError: assert 3 == 4"),
    ("FAILED tests/test_a.py::test_x - ValueError: bad value\n1 failed in 0.1s", "test_x: ValueError: bad value"),
    (TRACEBACK, "FileNotFoundError: [Errno 2] No such file or directory: 'config.toml'"),
    (NPM_MISSING_SCRIPT, 'npm error Missing script: "build"'),
    (NPM_ENOENT, "npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, "
                 "open '/work/app/package.json'"),
    ("npm ERR! Missing script: \"build\"\nnpm ERR!\nnpm ERR! A complete log of this run can be found in:\n"
     "npm ERR!     /root/.npm/_logs/x-debug-0.log", 'npm ERR! Missing script: "build"'),
    ("Exit code 2\nls: cannot access '/definitely-not-here-xyz': No such file or directory",
     "ls: cannot access '/definitely-not-here-xyz': No such file or directory"),
    ("/usr/bin/python3: No module named pytest", "No module named pytest"),
    ("bash: line 1: foo: command not found", "bash: line 1: foo: command not found"),
    ("something went sideways\nsecond line", "something went sideways"),
    ("Exit code 1", ""),
    ("", ""),
])
def test_error_headline(output: str, headline: str) -> None:
    assert evidence.error_headline(output) == headline


def test_error_headline_is_capped() -> None:
    assert len(evidence.error_headline("ValueError: " + "x" * 1000)) == 160


# ------------------------------------------------------------------------------ command_key


@pytest.mark.parametrize(("cmd", "key"), [
    ("python -m pytest tests/test_totals.py -q", ("pytest", "tests/test_totals.py")),
    ("uv run pytest -q", ("pytest",)),
    ("cd src && FOO=1 uv run pytest -x", ("pytest",)),
    ("uv run python -m invoice_api.cli --help", ("invoice_api.cli",)),
    ("python -m invoice_api.cli --help", ("invoice_api.cli",)),
    ("npm run build", ("build",)),
    ("pnpm test", ("test",)),
    ("git commit -m 'x'", ("git", "commit")),
    ("sudo time make all", ("make", "all")),
    ("pytest -q\necho done", ("pytest",)),
    ("", ()),
])
def test_command_key(cmd: str, key: tuple[str, ...]) -> None:
    assert evidence.command_key(cmd) == key


# ------------------------------------------------------------------- files_modified evidence


def _ev(payload: dict[str, Any]) -> Event:
    return make_events([payload])[0]


@pytest.mark.parametrize(("tool", "tool_input", "files"), [
    ("Write", {"file_path": "/p/new.py", "content": "x"}, ["/p/new.py"]),
    ("Edit", {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"}, ["/p/a.py"]),
    ("MultiEdit", {"file_path": "/p/b.py", "edits": [{"old_string": "a", "new_string": "b"}]}, ["/p/b.py"]),
    ("NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "x"}, ["/p/n.ipynb"]),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/b.py\n+z\n"
                              "*** Delete File: src/old.py\n*** End Patch"}, ["src/a.py", "src/b.py", "src/old.py"]),
    ("apply_patch", {"patch": "--- a/src/c.py\n+++ b/src/c.py\n@@ -1 +1 @@\n-x\n+y\n"}, ["src/c.py"]),
    ("apply_patch", {"command": ["apply_patch", "*** Begin Patch\n*** Update File: d.py\n*** End Patch"]}, ["d.py"]),
    ("Read", {"file_path": "/p/a.py"}, []),
    ("Bash", {"command": "sed -i s/a/b/ /p/a.py"}, []),
    ("Grep", {"pattern": "x", "path": "/p"}, []),
])
def test_modified_files_evidence(tool: str, tool_input: dict[str, Any], files: list[str]) -> None:
    assert evidence.modified_files(_ev(_tool(tool, tool_input, {}))) == files


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"])
def test_failed_writes_do_not_count(tool: str) -> None:
    ev = _ev(_tool(tool, {"file_path": "/p/a.py", "notebook_path": "/p/a.py",
                          "input": "*** Update File: a.py"}, failed=True, error="denied"))
    assert evidence.modified_files(ev) == []


def test_write_create_versus_update_and_reads() -> None:
    create = _ev(_tool("Write", {"file_path": "/p/n.py"}, {"type": "create", "filePath": "/p/n.py"}))
    update = _ev(_tool("Write", {"file_path": "/p/n.py"}, {"type": "update", "filePath": "/p/n.py"}))
    assert evidence.created(create) and not evidence.created(update)
    read = _ev(_tool("Read", {"file_path": "/p/r.py"}, {"type": "text", "file": {"filePath": "/p/r.py"}}))
    assert evidence.read_files(read) == ["/p/r.py"] and evidence.modified_files(read) == []
    failed_read = _ev(_tool("Read", {"file_path": "/p/r.py"}, failed=True, error="no such file"))
    assert evidence.read_files(failed_read) == []


def test_real_write_fixture_is_evidence_of_a_created_file() -> None:
    ev = _ev(load_fixture("print-mode/events/PostToolUse.Write.json", cwd="/w/proj"))
    assert evidence.modified_files(ev) == ["/w/proj/hello.txt"]
    assert evidence.created(ev)
    fail = _ev(load_fixture("print-mode/events/PostToolUseFailure.Bash.json"))
    cmd = evidence.command(fail)
    assert cmd is not None and not cmd.ok and cmd.command == "ls /definitely-not-here-xyz"
    assert evidence.modified_files(fail) == []


def test_summary_draft_defaults_are_empty() -> None:
    s = SummaryDraft(created_at=1.0)
    assert s.request == "" and s.files_modified == [] and s.source_tokens == 0


def test_a_link_alone_is_reported_with_its_label_and_a_lead_is_no_outcome() -> None:
    """The session's log says what a link is ("Draft PR created: https://…"), never only the link, and never
    the sentence that introduces a comparison as what was done."""
    events = make_events([
        {"hook_event_name": "UserPromptSubmit", "prompt": "Open a draft PR, then compare it with PR 343"},
        _bash("gh pr create --draft --title 'fix: parse array content'",
              out="https://github.com/acme/cli/pull/342"),
        {"hook_event_name": "Stop", "last_assistant_message":
            "Draft PR created: https://github.com/acme/cli/pull/342\n\n"
            "Here's the comparison between our PR #342 and the other PR #343:\n\n"
            "**Overlap:**\n- Both touch `hooks.go`\n- Both aim to fix the transcript parser"}])
    out = _observe(events)
    assert out.summary is not None
    done = out.summary.completed.split("; ")
    assert "Draft PR created: https://github.com/acme/cli/pull/342" in done, done
    assert "https://github.com/acme/cli/pull/342" not in done
    assert not any(x.startswith("Here's the comparison") for x in done), done


def test_a_command_run_through_another_program_proves_no_flag_it_needs() -> None:
    """An unseen project's gotcha read "`go test ./...` needs `--` (else: zsh:1: command not found: go)": `go` was
    not on the PATH and `mise exec -- go test ./...` ran it; the `--` is mise's, and the program was another.
    A flag the same program passes with stays a gotcha."""
    out = _observe(make_events([
        {"hook_event_name": "UserPromptSubmit", "prompt": "run the tests"},
        _bash("go test ./...", ok=False, out="Exit code 127\nzsh:1: command not found: go"),
        _bash("mise exec -- go test ./...", out="ok  \tacme/sync\t0.4s"),
        {"hook_event_name": "Stop", "last_assistant_message": "Tests pass with `mise exec -- go test ./...`."}]))
    assert not [o for o in out.observations if "needs `--`" in json.dumps(dataclasses.asdict(o))], out.observations

    out = _observe(make_events([
        {"hook_event_name": "UserPromptSubmit", "prompt": "run the tests"},
        _bash("go test ./...", ok=False, out="Exit code 1\n# runtime/cgo\ngcc: error: unrecognized option"),
        _bash("CGO_ENABLED=0 go test ./...", out="ok  \tacme/sync\t0.4s"),
        {"hook_event_name": "Stop", "last_assistant_message": "They pass with `CGO_ENABLED=0`: cgo needs a C "
                                                              "compiler this machine lacks."}]))
    assert [o for o in out.observations if "needs `CGO_ENABLED=0`" in json.dumps(dataclasses.asdict(o))], \
        out.observations
