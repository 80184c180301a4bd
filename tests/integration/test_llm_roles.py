"""The LLM observer says what each memory is (DESIGN.md §9), and the events decide what is kept: through
the real pipeline, a real database and the real SDKs, against the fake Anthropic and OpenAI-compatible
APIs over HTTP.

The fake model answers each turn like a model that read the observer prompt, mistakes included: it
calls an accepted plan's sentence a rule, quotes a sentence nobody wrote, gives a project rule scope
user, writes a kind we do not have, and once answers in the format from before kinds existed. What is
stored is checked: kind, scope, tentative, the why (the sentence, who said it, in what message, where)
and the layer each kind decides; then what the next session is told, here and in another project.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.context.session_start import build
from kenning.memory.layers import KIND_LAYERS
from tests.support.llm_harness import Harness, observation, served, summary

# The user's words (typed, queued), the plan the agent wrote, and the agent's own messages, as captured.
RULE_ZH = "以后每次提交之前都必须先运行 ruff check，不要跳过。"
PROMPT_ZH = RULE_ZH + "顺便看看现在有没有 lint 报错？"
ANSWER_ZH = "现在没有 lint 报错，ruff check 全部通过。"
PREFERENCE = "In every project, answer me in French from now on, even when I write in English."
TENTATIVE = "Let's keep SQLite for now instead of Postgres, because the deploy box has no database server."
PLAN_RULE = "Always include tenant_id in the cache key so tenants never share entries."
PLAN = ("Implement the following plan:\n\n# Plan: tenant-safe cache keys\n\n## Approach\n\n" + PLAN_RULE +
        "\n\n## Steps\n\n1. Change cache_key() in src/app/cache.py.\n2. Add a regression test in tests/test_cache.py.")
QUEUED = "Also never push straight to main; always open a pull request."
CAUSE = ("The root cause was that cache_key() ignored tenant_id, so two tenants could read each other's "
         "cached invoices.")
STOP_CAUSE = CAUSE + " Fixed by adding tenant_id to the key; all 5 tests pass."
INVENTED = "Remember to flush the cache after every deploy."
KEPT = "Kept SQLite; the connection string stays in src/app/db.py."


class Model:
    """Replies to the events of each turn like a model that read our prompt, with a model's mistakes."""

    def __init__(self) -> None:
        self.turns: list[str] = []
        self.lock = threading.Lock()

    def reply(self, turn: str) -> str:
        with self.lock:
            self.turns.append(turn)
        m = re.search(r"<observed_events>(.*)</observed_events>", turn, re.DOTALL)
        seen = m.group(1) if m else ""
        out = ""
        if "ruff check" in seen and "以后每次" in seen:
            # scope user although the sentence says nothing of other projects
            out += observation("decision", "提交之前必须先运行 ruff check", kind="rule", scope="user",
                               tentative=False, why=RULE_ZH, concepts=("pattern",))
            out += observation("discovery", "ruff check 目前没有 lint 报错", kind="answer", scope="project",
                               tentative=False, why=ANSWER_ZH)
        if "answer me in French" in seen:
            out += observation("decision", "Answer the user in French in every project", kind="rule", scope="user",
                               tentative=False, why=f"“{PREFERENCE}”", concepts=("pattern",))
        if "keep SQLite for now" in seen:
            out += observation("decision", "SQLite stays instead of Postgres for now: the deploy box has no "
                               "database server", kind="decision", scope="project", tentative=True,
                               why=TENTATIVE, concepts=("trade-off",))
        if "Implement the following plan" in seen:
            # the plan's sentence taken for a standing rule: the agent's words, never the user's
            out += observation("decision", "Always include tenant_id in the cache key", kind="rule", scope="project",
                               tentative=False, why=PLAN_RULE, concepts=("pattern",))
            out += observation("decision", "Never push straight to main: open a pull request", kind="rule",
                               why=QUEUED, concepts=("pattern",))
            out += observation("bugfix", "Cross-tenant cache hits: cache_key() ignored tenant_id", kind="rootcause",
                               why=CAUSE.replace("so two", "so  two"),  # whitespace differs: still the sentence
                               files_modified=("src/app/cache.py",), concepts=("problem-solution",))
            out += observation("discovery", "The cache must be flushed after every deploy", kind="gotcha",
                               why=INVENTED, concepts=("gotcha",))
        if "--verbose" in seen:
            out += observation("feature", "The CLI has a --verbose flag", files_modified=("src/app/cli.py",),
                               concepts=("what-changed",))  # the format from before kinds existed
            out += observation("discovery", "src/app/cli.py parses its flags with argparse", kind="bananas",
                               why="Added --verbose to src/app/cli.py.")
            # a sentence of an earlier turn of this conversation
            out += observation("decision", "The connection string lives in src/app/db.py", kind="fact", why=KEPT)
        if "<summary>" in turn:
            out += summary("Observed work", "what the session learned")
        return out


@pytest.fixture(params=["anthropic", "openai"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Harness, Model]]:
    pytest.importorskip(request.param)
    model = Model()
    with served(request.param, lambda turn: model.reply(turn), tmp_path) as h:  # a test may swap reply
        yield h, model


def test_what_the_model_says_a_memory_is_is_kept_only_as_far_as_the_events_bear_it_out(
        setup: tuple[Harness, Model]) -> None:
    h, model = setup
    s = h.session()
    h.spool(s.start(),
            s.prompt(PROMPT_ZH), s.bash("ruff check .", "Found 0 errors; all checks passed for 42 files."),
            s.stop(ANSWER_ZH),
            s.prompt(PREFERENCE), s.stop("D'accord : je vous répondrai en français désormais."),
            s.prompt(TENTATIVE), s.edit("src/app/db.py", "DB = 'postgres://'", "DB = 'sqlite:///app.db'"),
            s.stop(KEPT),
            s.prompt(PLAN), s.edit("src/app/cache.py", "key = (name,)", "key = (tenant_id, name)"),
            s.prompt(QUEUED, origin="queued"), s.bash("pytest -q", "5 passed in 0.31s"), s.stop(STOP_CAUSE),
            s.prompt("Add a --verbose flag to the CLI."), s.edit("src/app/cli.py", "args = []", "args = ['-v']"),
            s.stop("Added --verbose to src/app/cli.py."), s.end())
    h.settle(timeout=30)
    sid = s.sid[:8]
    rows = {o["title"]: o for o in h.observations()}

    def why(title: str) -> dict[str, Any]:
        raw = rows[title]["why"]
        return json.loads(raw) if raw else {}

    # what the model was shown: who wrote each prompt
    assert any('origin="plan"' in t and "Implement the following plan" in t for t in model.turns)
    assert any('origin="queued"' in t and QUEUED in t for t in model.turns)
    assert any('origin="typed"' in t and PREFERENCE in t for t in model.turns)

    # a rule in Chinese, from the user's own words: a standing rule of this project (scope user was not said)
    zh = rows["提交之前必须先运行 ruff check"]
    assert (zh["kind"], zh["scope"], zh["tentative"], zh["layer"]) == ("rule", "project", 0, "rule")
    assert why(zh["title"]) | {"how": ""} == {"said": RULE_ZH, "by": "user", "origin": "typed",
                                              "where": f"prompt 1 of session {sid}", "how": ""}
    assert "kept for this project" in why(zh["title"])["how"]
    # routine Q&A: the session log, resting on the agent's last message
    answer = rows["ruff check 目前没有 lint 报错"]
    assert (answer["kind"], answer["layer"]) == ("answer", "log")
    assert (why(answer["title"])["by"], why(answer["title"])["origin"]) == ("agent", "final")

    # a preference for all of the user's work: scope user (its quotation marks are not part of the sentence)
    fr = rows["Answer the user in French in every project"]
    assert (fr["kind"], fr["scope"], fr["layer"]) == ("rule", "user", "rule")
    assert why(fr["title"])["said"] == PREFERENCE and why(fr["title"])["where"] == f"prompt 2 of session {sid}"

    # a provisional decision
    sqlite = next(o for t, o in rows.items() if t.startswith("SQLite stays"))
    assert (sqlite["kind"], sqlite["tentative"], sqlite["layer"]) == ("decision", 1, KIND_LAYERS["decision"][0])
    assert why(sqlite["title"])["said"] == TENTATIVE

    # the accepted plan's sentence is the agent's: never a rule, whatever the model said
    plan = rows["Always include tenant_id in the cache key"]
    assert (plan["kind"], plan["layer"]) == ("decision", "key")
    assert {k: why(plan["title"])[k] for k in ("said", "by", "origin")} == {
        "said": PLAN_RULE, "by": "plan", "origin": "plan"}
    assert "judged a rule, but its sentence is from a plan the agent wrote" in why(plan["title"])["how"]
    # what the user typed while the agent worked is their own word: a rule
    queued = rows["Never push straight to main: open a pull request"]
    assert (queued["kind"], queued["layer"], why(queued["title"])["by"], why(queued["title"])["origin"]) == (
        "rule", "rule", "user", "queued")

    # the agent's root cause: a key memory, the sentence from its last message
    cause = rows["Cross-tenant cache hits: cache_key() ignored tenant_id"]
    assert (cause["kind"], cause["layer"], why(cause["title"])["by"]) == ("rootcause", "key", "agent")
    assert cause["files_modified"] == ["src/app/cache.py"]
    # a sentence nobody wrote is never shown as a quote
    gotcha = rows["The cache must be flushed after every deploy"]
    assert gotcha["kind"] == "gotcha" and why(gotcha["title"])["said"] == ""
    assert why(gotcha["title"])["by"] == ""
    assert "not in what the model was shown: cleared" in why(gotcha["title"])["how"]
    assert INVENTED not in json.dumps(h.observations(), ensure_ascii=False)

    # the old format is still stored, without a kind or a why; an unknown kind is dropped, the memory kept
    old = rows["The CLI has a --verbose flag"]
    assert (old["kind"], old["why"], old["scope"], old["tentative"]) == (None, "", "project", 0)
    assert old["files_modified"] == ["src/app/cli.py"]
    odd = rows["src/app/cli.py parses its flags with argparse"]
    assert odd["kind"] is None and "'bananas', not one of ours" in why(odd["title"])["how"]
    # a sentence said in an earlier turn of the same conversation is found there, with its own place
    kept = rows["The connection string lives in src/app/db.py"]
    assert (kept["kind"], kept["layer"]) == ("fact", "key")
    assert {k: why(kept["title"])[k] for k in ("said", "by", "where")} == {
        "said": KEPT, "by": "agent", "where": f"prompt 3 of session {sid}"}

    # what the next sessions are told: this project's rules, and the user's preference in another project
    here = build(h.conn, h.settings, h.key)
    assert "提交之前必须先运行 ruff check" in here and "Never push straight to main" in here
    rules_part = here.split("## Key")[0]
    assert "Always include tenant_id" not in rules_part  # a plan's decision is no standing rule
    elsewhere = build(h.conn, h.settings, "/some/other/project", name="other")
    assert "Answer the user in French in every project" in elsewhere
    assert "提交之前必须先运行 ruff check" not in elsewhere
