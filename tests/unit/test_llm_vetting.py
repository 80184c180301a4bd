"""What an LLM observer says a memory is, checked against the events it was shown (DESIGN.md §9):
the sentence must be in them, who said it comes from them, a rule needs the user's own words, scope
user needs the sentence to say so, tentative is for rules and decisions; and a standing rule is
superseded by id only by the user's words."""

from __future__ import annotations

import json
from typing import Any

from kenning.observer.llm import vetting
from kenning.observer.llm.outcome import observation_drafts
from kenning.observer.parse import ParsedObservation, Reply, parse_reply
from kenning.observer.prompts import render_event
from kenning.observer.transcript import PAYLOAD_KEY, WORDS_KEY
from kenning.records import Event, SessionInfo

SESSION = SessionInfo(id=1, agent_session_id="5f1c2a9e-0000-4000-8000-000000000001", project="p",
                      project_root="/p")


def ev(kind: str, payload: dict[str, Any], *, eid: int, number: int = 1, tool: str | None = None) -> Event:
    return Event(id=eid, kind=kind, occurred_at=1_767_000_000.0 + eid, payload=payload, tool_name=tool,
                 prompt_number=number, size_chars=len(json.dumps(payload)))


def prompt(text: str, *, eid: int = 1, number: int = 1, origin: str | None = None) -> Event:
    return ev("UserPromptSubmit", {"prompt": text, **({"prompt_origin": origin} if origin else {})}, eid=eid,
              number=number)


def stop(last: str, *, along: tuple[str, ...] = (), eid: int = 9, number: int = 1) -> Event:
    return ev("Stop", {"last_assistant_message": last, PAYLOAD_KEY: list(along)}, eid=eid, number=number)


def bash(command: str, stdout: str, *, eid: int = 5) -> Event:
    return ev("PostToolUse", {"tool_input": {"command": command}, "tool_response": {"stdout": stdout}}, eid=eid,
              tool="Bash")


def judged(kind: str, why: str, *, scope: str = "project", tentative: bool = False,
           supersedes: tuple[int, ...] = ()) -> ParsedObservation:
    return ParsedObservation(type="decision", title="t", kind=kind, scope=scope, tentative=tentative, why=why,
                             roles_given=True, supersedes=list(supersedes))


def vet(obs: ParsedObservation, events: list[Event]) -> vetting.Verdict:
    return vetting.vet(obs, vetting.sources(events), where=lambda e: f"prompt {e.prompt_number if e else 0}",
                       judge="test observer")


def test_a_rule_in_the_users_own_words_stays_a_rule_wherever_they_said_it() -> None:
    for origin in (None, "typed", "queued", "rejection"):
        v = vet(judged("rule", "以后提交前都要先跑 ruff check。"),
                [prompt("以后提交前都要先跑 ruff check。谢谢", origin=origin)])
        assert v.kind == "rule" and v.why["by"] == "user" and v.why["origin"] == (origin or "typed")
        assert v.why["said"] == "以后提交前都要先跑 ruff check。" and not v.notes


def test_a_rule_that_is_not_the_users_words_is_kept_as_a_decision() -> None:
    plan = prompt("Implement the following plan:\n\n# Plan\n\nAlways pin ruff to one version in pyproject.toml.")
    cases = {
        "plan": ([plan], "Always pin ruff to one version in pyproject.toml.", "from a plan the agent wrote"),
        "agent": ([stop("From now on we always run the linter before committing.")],
                  "From now on we always run the linter before committing.", "the agent's"),
        "commands": ([bash("make lint", "hint: always run make lint before pushing")],
                     "always run make lint before pushing", "tool output"),
        "harness": ([prompt("Never touch the vendored files in third_party/.", origin="headless")],
                    "Never touch the vendored files in third_party/.", "from a headless prompt"),
        "": ([prompt("Use pnpm.")], "Never use npm in this repository.", "not in what it was shown"),
    }
    for by, (events, why, reason) in cases.items():
        v = vet(judged("rule", why), events)
        assert v.kind == "decision", by
        assert v.why["by"] == by and any(reason in n for n in v.notes), (by, v.notes)
    v = vet(judged("rule", "别用 npm"), [prompt("别用 npm。")])  # a short rule in Chinese is still a sentence
    assert v.kind == "rule" and v.why["said"] == "别用 npm"
    v = vet(judged("rule", ""), [prompt("Always use pnpm.")])  # no sentence at all
    assert v.kind == "decision" and "it quotes no sentence" in v.notes[0]


def test_a_users_sentence_that_only_sounds_like_a_rule_is_kept_as_a_decision() -> None:
    for said in ('The old wiki says "deploys must never happen on Fridays." Nobody ever checked that claim.',
                 "yes, go on with the migration and run the checks after each step",
                 "Update docs/deploy.md to say that every release needs a signed tag.",
                 "Implement the release:notes task in this repository",
                 "For example, if .gitignore excludes a folder, the indexer should still include it.",
                 "As an operator, I want every export to retry three times, so that no night run loses rows.",
                 "retries := min(maxRetries, 3) always retry the export",
                 "Should we always squash before merging?",
                 "Also don't give it a number and it needs no status line"):
        v = vet(judged("rule", said), [prompt(said)])
        assert v.kind == "decision" and v.why["by"] == "user"
        assert any("assents to the work at hand" in n for n in v.notes), v.notes
    v = vet(judged("rule", "ok, and from now on always squash before you merge."),
            [prompt("ok, and from now on always squash before you merge.")])
    assert v.kind == "rule" and not v.notes


def test_the_sentence_must_be_in_the_events_or_it_is_cleared() -> None:
    events = [prompt("Please don’t   touch the generated\nfiles; run make proto instead.", number=3),
              stop("Done.", eid=4, number=3)]
    # whitespace, case and curly quotes aside, and … for a cut, it is the user's sentence
    for quote in ("please don't touch the generated files", "“Please don’t touch the generated files; run make "
                  "proto instead.”", "don't touch … run make proto instead."):
        v = vet(judged("decision", quote), events)
        assert v.why["said"] and v.why["by"] == "user" and v.why["where"] == "prompt 3", quote
    for quote in ("don't touch the generated files; run buf generate instead.", "Done", "files … make"):
        v = vet(judged("decision", quote), events)
        assert v.why["said"] == "" and v.why["by"] == "" and v.why["where"] == "prompt 0", quote
    # what the user said wins over the agent repeating it; the agent's last message over what it said before
    v = vet(judged("decision", "use uv, not pip"), [prompt("We use uv, not pip."),
                                                     stop("Noted: use uv, not pip.", along=("use uv, not pip",))])
    assert (v.why["by"], v.why["origin"]) == ("user", "typed")
    v = vet(judged("rootcause", "the lock was held across the await"),
            [stop("So the lock was held across the await.", along=("Maybe the lock was held across the await?",))])
    assert (v.why["by"], v.why["origin"]) == ("agent", "final")


def test_scope_user_only_for_a_users_rule_that_says_it_holds_everywhere() -> None:
    for said in ("In every project, answer me in French.", "所有项目都用 pnpm，不要用 npm。",
                 "すべてのプロジェクトで日本語で答えてください。", "모든 프로젝트에서 한국어로 답해 주세요."):
        v = vet(judged("rule", said, scope="user"), [prompt(said)])
        assert (v.kind, v.scope) == ("rule", "user"), said
    v = vet(judged("rule", "Always run ruff before committing.", scope="user"),
            [prompt("Always run ruff before committing.")])
    assert v.scope == "project" and "kept for this project" in v.notes[0]
    v = vet(judged("rule", "In every project, answer me in French.", scope="user"),
            [stop("In every project, answer me in French.")])  # the agent's words: a decision, of this project
    assert (v.kind, v.scope) == ("decision", "project")


def test_tentative_only_for_rules_and_decisions() -> None:
    said = "For now we keep SQLite, because the deploy box has no database server."
    assert vet(judged("decision", said, tentative=True), [prompt(said)]).tentative
    v = vet(judged("fact", said, tentative=True), [prompt(said)])
    assert not v.tentative and "not a rule or decision" in v.notes[0]


def test_a_reply_in_the_old_format_is_left_as_it_was() -> None:
    [obs] = parse_reply("<observation><type>decision</type><title>We use pnpm</title></observation>",
                        ["decision"]).observations
    v = vet(obs, [prompt("We use pnpm.")])
    assert (v.kind, v.why, v.scope, v.tentative) == ("", {}, "project", False)


def _drafts(obs: ParsedObservation, events: list[Event], said: list[Event] | None = None) -> list[Any]:
    session = SessionInfo(**{**SESSION.__dict__, "memories": [
        {"id": 5, "layer": "rule", "type": "decision", "title": "Run make test before every commit"},
        {"id": 6, "layer": "key", "type": "decision", "title": "The test suite runs under make"}]})
    return observation_drafts(Reply(kind="observations", observations=[obs]), events, session, tokens=0,
                              shown={5, 6}, said=said or [], judge="test observer")


def test_a_standing_rule_is_superseded_by_id_only_by_the_users_words() -> None:
    user = [prompt("The Makefile is gone: from now on run the tests with just test."),
            bash("just test", "12 passed"), stop("Switched to just test.")]
    [d] = _drafts(judged("rule", "from now on run the tests with just test", supersedes=(5, 6)), user)
    assert d.supersedes == [5, 6] and d.why["by"] == "user"
    [d] = _drafts(judged("fact", "Switched to just test.", supersedes=(5, 6)), user)
    assert d.supersedes == [6] and "only the user's words replace a rule" in d.why["how"]
    old = ParsedObservation(type="decision", title="Run tests with just test", supersedes=[5, 6])
    assert _drafts(old, user)[0].supersedes == [5, 6]  # the old format: as before


def test_a_sentence_may_come_from_an_earlier_turn_of_the_conversation() -> None:
    earlier = [prompt("Never commit the .env file; it holds the staging keys.", eid=1, number=2)]
    now = [prompt("Commit what we have.", eid=7, number=3), bash("git status", "modified: app.py", eid=8)]
    [d] = _drafts(judged("rule", "Never commit the .env file; it holds the staging keys."), now, said=earlier)
    assert (d.kind, d.why["by"], d.why["where"]) == ("rule", "user", "prompt 2 of session 5f1c2a9e")
    [d] = _drafts(judged("rule", "Never commit the .env file; it holds the staging keys."), now)
    assert d.kind == "decision" and d.why["said"] == ""


def test_words_a_live_turn_end_brings_from_the_transcript_are_the_users() -> None:
    """Live, what the user typed while the agent worked reaches the observer on the turn's end
    (read from the transcript): shown to the model as the user's prompt, and vetted as theirs."""
    end = ev("Stop", {"last_assistant_message": "Done.", PAYLOAD_KEY: [],
                      WORDS_KEY: [{"origin": "queued", "text": "From now on squash every merge into main."}]}, eid=9)
    shown = render_event(end)
    assert '<user_prompt number="1"' in shown and 'origin="queued"' in shown and "squash every merge" in shown
    v = vet(judged("rule", "From now on squash every merge into main."), [prompt("Clean up the branch."), end])
    assert v.kind == "rule" and (v.why["by"], v.why["origin"]) == ("user", "queued"), v


def test_text_the_user_pasted_and_the_agent_looked_up_is_not_the_users() -> None:
    """"The PR description is wrong, this bit: …", then `gh pr view`: the model may quote the pasted sentence as
    the user's; it is the description's (a decision, not a rule of the user), as the offline observer reads it.
    A prompt file printed back whole leaves the user's rule theirs."""
    pasted = "We always ship the CLI as one static binary, the only supported install."
    said = f"The PR description is wrong, especially this bit:\n\n{pasted}\n\nNobody decided that."
    body = json.dumps({"body": f"## Install\n\n{pasted}\n\n## Tests"})
    v = vet(judged("rule", pasted), [prompt(said), bash("gh pr view 31 --json body", body)])
    assert v.kind == "decision" and v.why["by"] == "commands", (v.kind, v.why, v.notes)
    v = vet(judged("rule", pasted), [prompt(said), bash("cat .entire/prompt.txt", said)])
    assert v.kind == "rule" and v.why["by"] == "user", (v.kind, v.why, v.notes)
