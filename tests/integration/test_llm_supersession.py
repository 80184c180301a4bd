"""The LLM observer names what its observation supersedes, by id, through the real pipeline and the
real SDKs against the fake Anthropic and OpenAI-compatible APIs.

The fake model reads the ``<current_memories>`` block of the turn it is sent, as a model would,
and answers with a corrected rule that supersedes the old one by its id, plus two ids it must not
be able to touch: one of another project (never shown to this conversation) and one that does not
exist. Only the shown id of the same project is superseded; the next session's context then
carries the new rule and not the old.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.context.session_start import build
from kenning.records import ObservationDraft
from kenning.store import repo
from tests.support.llm_harness import Harness, observation, served, summary

OLD_RULE = "Run the test suite with make test before every commit"
# Worded so that the offline rule would not tie it to the old one: only the named id supersedes it.
NEW_RULE = "Every commit is checked by the just recipe called check, nothing else"


class Model:
    """Replies like a model that read the observer prompt: the rule of the batch, and what it replaces."""

    def __init__(self) -> None:
        self.turns: list[str] = []
        self.foreign_id = 0
        self.lock = threading.Lock()

    def reply(self, turn: str) -> str:
        with self.lock:
            self.turns.append(turn)
        out = ""
        if "make test" in turn and "<observed_events>" in turn and "just test" not in turn:
            out += observation("decision", OLD_RULE, concepts=("pattern",))
        if "just test" in turn:
            listed = re.findall(r"\[#(\d+)\] \(rule decision\) " + re.escape(OLD_RULE), turn)
            ids = "".join(f"<id>{i}</id>" for i in [*listed, str(self.foreign_id), "987654"])
            out += observation("decision", NEW_RULE, concepts=("pattern",)).replace(
                "</observation>", f"<supersedes>{ids}</supersedes></observation>")
        if "<summary>" in turn:
            out += summary("Test command", "the test command changed")
        return out


@pytest.fixture(params=["anthropic", "openai"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Harness, Model]]:
    pytest.importorskip(request.param)
    model = Model()
    with served(request.param, lambda turn: model.reply(turn), tmp_path) as h:  # a test may swap reply
        yield h, model


def test_the_llm_observer_supersedes_by_the_ids_it_was_shown(setup: tuple[Harness, Model]) -> None:
    h, model = setup
    # Another project's rule: it exists, but this project's observer never sees it.
    with repo.transaction(h.conn):
        sid = repo.upsert_session(h.conn, platform="claude-code", agent_session_id="other", project="/elsewhere",
                                  project_root="/elsewhere", cwd="/elsewhere", at=h.at)
        foreign = repo.insert_observation(h.conn, sid, "/elsewhere", ObservationDraft(
            type="decision", title=OLD_RULE, created_at=h.at), "rules")
    assert foreign is not None
    model.foreign_id = foreign

    s1 = h.session()
    h.spool(s1.start(), s1.prompt("Run the tests with make test before every commit."),
            s1.bash("make test", "12 passed"), s1.stop("Tests pass."), s1.end())
    h.settle()
    [old] = [o for o in h.observations() if o["title"] == OLD_RULE and o["project"] == h.key]

    s2 = h.session()
    h.spool(s2.start(), s2.prompt("The Makefile is gone: from now on run the tests with just test."),
            s2.bash("just test", "12 passed"), s2.stop("Switched to just."), s2.end())
    h.settle()

    second_conversation = next(t for t in model.turns if "just test" in t)
    assert f"[#{old['id']}] (rule decision) {OLD_RULE}" in second_conversation  # shown, with its id
    assert f"[#{foreign}]" not in second_conversation  # another project's memory is never shown
    rows = {o["id"]: o for o in h.observations()}
    [new] = [o for o in rows.values() if o["title"] == NEW_RULE]
    assert (rows[old["id"]]["status"], rows[old["id"]]["superseded_by"]) == ("superseded", new["id"])
    assert rows[foreign]["status"] == "active"  # named, but never shown: ignored
    context = build(h.conn, h.settings, h.key)
    assert NEW_RULE in context and OLD_RULE not in context


def test_without_naming_it_the_llm_observer_leaves_the_old_rule(setup: tuple[Harness, Model]) -> None:
    """The control: the same history with a model that names no id keeps both (the wording is not
    one the offline rule ties together), so the test above proves the named path."""
    h, model = setup
    model.reply = lambda turn, reply=model.reply: re.sub(r"<supersedes>.*?</supersedes>", "", reply(turn))  # type: ignore[method-assign]
    for prompt, cmd in (("Run the tests with make test before every commit.", "make test"),
                        ("The Makefile is gone: from now on run the tests with just test.", "just test")):
        s = h.session()
        h.spool(s.start(), s.prompt(prompt), s.bash(cmd, "12 passed"), s.stop("Done."), s.end())
        h.settle()
    assert {o["title"]: o["status"] for o in h.observations() if o["type"] == "decision"} == {
        OLD_RULE: "active", NEW_RULE: "active"}
