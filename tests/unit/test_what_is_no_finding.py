"""Sentences of the agent that are no finding, whatever role they sound like: an offer to the user, a sentence cut off
where a list or block goes on, a step of its plan reported, what a test checks under the test's name, and an aside in
brackets put in front of a cause. Each shape was a key row of a project nobody here trained on. Real SQLite file,
offline observer, the real index where the story needs one."""

from __future__ import annotations

import pytest

from tests.support.judged import judged, taken
from tests.support.memory_story import MATCHER_FINDING, Story, matcher_turn

ROOT = "/work/trainer"


@pytest.mark.parametrize("offer", [
    "The medium-severity items remain open if you want to tackle them next: the depth limit and the page bounds.",
    "If you'd like exact mirroring, keep the delete planning; otherwise drop `prune` as well.",
])
def test_what_the_user_may_do_if_they_like_is_no_finding(offer: str) -> None:
    """An unseen project's key row read "The medium-severity items remain open if you want to tackle them next: …"
    (as a cause): an offer of that moment."""
    cause = judged("rootcause", "`Init()` returns nil when the HS512 key is unset, so the authenticator is "
                                "registered with a nil key.")
    assert taken("rootcause", judged("rootcause", offer), cause) == [cause]
    left = judged("todo", "The low-severity items of the audit are still open if you want them later: the ORDER BY "
                          "allow-list and the default keypair warning.")
    assert taken("todo", left) == [left]  # work left open stays open, offered or not


@pytest.mark.parametrize("cut", [
    "To support Windows, you'd need a separate `detached_windows.go` file using Windows-specific mechanisms like",
    "The reason the second pass exists is",
])
def test_a_sentence_that_stops_on_like_or_is_is_cut_off(cut: str) -> None:
    """An unseen project's key row read "To support Windows, you'd need a separate `detached_windows.go` file using
    Windows-specific mechanisms like": the sentence went on in a code block."""
    fact = judged("fact", "`Setpgid` is Unix-only: it puts the child in its own process group.")
    assert taken("fact", judged("fact", cut), fact) == [fact]
    kept = judged("decision", "Keep the retry budget of `ExportWorker` as is")
    assert taken("decision", kept) == [kept]  # an idiom that ends there says all it says


def test_a_step_going_on_as_the_agent_speaks_is_no_finding() -> None:
    gone = judged("fix", "Now pushing the `ExportWorker` fix and opening the draft PR.")
    fix = judged("fix", "The export dialog no longer renders the warning twice when the plan is local.")
    assert taken("fix", gone, fix) == [fix]


def test_a_step_of_the_plan_reported_is_no_fix() -> None:
    """An unseen project's key row read "Step 2 — `LocalExecutionWarning` sub-component added at the bottom of the
    file (before `PromptDisplay`)" (as a cause)."""
    step = judged("fix", "Step 2 — `ExportWarning` sub-component added at the bottom of the file (before `Footer`).")
    fix = judged("fix", "The export dialog no longer renders the warning twice when the plan is local.")
    assert taken("fix", step, fix) == [fix]
    phase = judged("fact", "Phase 2.5 stages the error changes, and phase 5 stages everything again.")
    assert taken("fact", phase) == [phase]  # (a phase's number is no report of a step)


def test_what_a_test_checks_is_no_fix() -> None:
    """An unseen project's key row read "… — fix: `TestBuildEventPayloadPreservesExplicitAgent` - Verifies explicit
    agent is preserved": the test's description, not what was fixed."""
    test = judged("fix", "`TestPayloadKeepsExplicitAgent` - Verifies an explicit agent is kept as given.")
    fix = judged("fix", "`buildPayload` now defaults the agent only when none was given.")
    assert taken("fix", test, fix) == [fix]
    testing = judged("fix", "Testing: `buildPayload` now defaults the agent only when none was given.")
    assert taken("fix", testing) == [testing]  # ("Testing" names no test)


def test_an_aside_in_brackets_is_no_lead_of_the_cause(story: Story) -> None:
    """An unseen project's key row opened "(The `walCheckpoint.go:659` lint warning is pre-existing in
    `joinSelector`, unrelated to this change.) — cause: on graceful shutdown the final snapshot was written, but …"."""
    aside = "(The `matcher.go:88` lint warning is pre-existing in `joinPaths`, unrelated to this change.)"
    story.session("trainer", matcher_turn(ROOT, f"{aside}\n\n{MATCHER_FINDING}"))
    rows = [r["title"] for r in story.active("trainer") if r["layer"] == "key"]
    assert [t for t in rows if "isTestPath" in t], rows
    assert not [t for t in rows if "lint warning" in t], rows


@pytest.mark.parametrize("story", [
    "As a developer, I want reactive stores and one set of number formatters in place, So that every component "
    "shows values the same way.",
    "作为运营人员，我希望导出失败时自动重试三次，以便夜间任务不丢数据。",
    "ユーザーとして、接続が切れても自動で再接続してほしい。",
])
def test_a_user_story_is_no_decision(story: str) -> None:
    """An unseen project's key rows held the stories of its epics ("Story 4.1: WebSocket Reconnection …: As a
    user, I want the dashboard to automatically recover from connection drops …, So that …") as decisions: a
    requirement written as a template, no choice made, whoever writes it."""
    from kenning.observer.user_said import _user_keeps

    decision = judged("decision", "Keep the page size of `-1`: it is the dashboard's deliberate \"load all\".")
    assert taken("decision", judged("decision", story), decision) == [decision]
    assert not _user_keeps(judged("decision", story, "user"))
    assert not _user_keeps(judged("rule", story, "user"))
    from kenning.observer.gates import user_story

    assert not user_story("As a fallback, the hook uses grep when ripgrep is missing, so that it never fails.")
    assert not user_story("As a result, I want to note that the cache is per host, so that nobody shares it.")


def test_a_sentence_the_model_cannot_place_must_be_surer_to_be_kept() -> None:
    """An unseen project's key rows held "Findings written to the review findings section in `2-1-….md`" as a
    cause (role model 0.26, worth keeping 0.58): when no role stands out, barely worth keeping is not enough."""
    from dataclasses import replace

    said = judged("rootcause", "Findings written to the review findings section in `2-1-stores-and-formatting.md`.")
    assert taken("rootcause", replace(said, p=0.26, worth=0.58)) == []
    assert taken("rootcause", replace(said, p=0.26, worth=0.7)) != []  # sure it is worth keeping
    assert taken("rootcause", replace(said, p=0.5, worth=0.58)) != []  # sure of what it is


def test_what_the_agent_will_do_once_you_act_is_no_fix() -> None:
    """An unseen project's key row read "We can amend locally, but we cannot update `origin/main` … because GitHub
    blocks force-pushes to `main` — fix: temporarily allow force-push / bypass rules for `main`, then I can push the
    corrected history …": a step asked of the user and the agent's next one, nothing fixed."""
    then = judged("fix", "Fix: temporarily allow force-pushes to `main`, then I can push the corrected history.")
    fix = judged("fix", "`publish.ts` now skips versions npm already has, so a rerun no longer fails.")
    assert taken("fix", then, fix) == [fix]


def test_one_way_weighed_against_another_is_no_cause() -> None:
    """An unseen project's key row read "This is actually better than `go run` because it only compiles once" as a
    cause: a choice and its reason."""
    weighed = judged("rootcause", "This is actually better than `go run` because it only compiles the binary once.")
    cause = judged("rootcause", "`Init()` returns nil when the HS512 key is unset, so the authenticator is "
                                "registered with a nil key.")
    assert taken("rootcause", weighed, cause) == [cause]
