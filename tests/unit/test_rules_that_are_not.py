"""What a user types that sounds like a standing rule (or work left open) and is none (DESIGN.md §9): work
ordered for this turn, a finding, an inference, what the program is to do, an example, words of quoted code.
Each shape was a "standing rule" injected first into every session of a project nobody here trained on; the
words are our own. Real SQLite file, the offline observer, the session-start index.
"""

from __future__ import annotations

import pytest

from tests.support.memory_story import Story, Turn, edit

ROOT = "/work/indexer"

NOT_RULES = [
    # work for this turn, ordered or needed
    "Implement the release:notes task in this repository",
    "we need to initialize the license checker with the allowed licenses",
    "implement it but don't commit",
    "Confirm the new symbols are searchable: `tool search orders --json` should return them",
    # an inference about a failure, a worry, options still open
    "so either must be a bug in the fixture in this repo or an issue with the parser code in this repo.",
    "ripgrep might not be available on every machine",
    "We should either check that ripgrep exists and fall back to grep, or always use grep",
    # what the program is to do, or to let someone do
    "if I run the docker e2e tests without docker installed it should tell me.",
    "also for each invoice line i can expand it to the full text or collapse it.",
    # how the code behaves, said by the user
    "IMPORTS already resolves modules; type edges don't, so any common name like Config pollutes the graph.",
    "The same cause gives a wrong edge (parse_list in the cli crate → Parser.parse_list in a crate it never "
    "touches).",
    # an example, and quoted code
    "For example, if .gitignore excludes a folder and the include list names it, the indexer should include it.",
    "the migration adds a column: `total integer generated always as (a + b) stored`",
    # "should", "need to", "instead" alone, the model not leaning to a rule: a spec, a task, a pasted failure
    "The plugins should be passed as individual args instead.",
    "FAIL: TestHookInstall (0.05s) --- FAIL: TestHookInstall/dev_mode (0.01s) hooks_test.go:650: dev hooks should "
    "use 'go run', but settings.json doesn't contain it FAIL",
    "This duplication means any future fix to the parser needs to be applied in two places.",
    # rule words telling what happened
    "The session-end hook never actually worked, and it is a weird scenario anyway, so let's just remove it",
    # a complaint about how things are, no way of working
    "I don't like that there are two prompts per turn in review mode",
    "i dont like how the banner always flickers when the worker restarts",
    # a review finding pasted to ask about it: what the code does not do, for all of some things
    "  1. Stage exit codes silently swallowed — If the wrapped pre-commit stage returns non-zero, the runner doesn't "
    "propagate the failure for all stage types consistently.\n\nWhat are our options here?",
    "The importer reads every row twice, it doesn't stream.",
    # what this work does not need: nothing forbidden
    "we don't need the fallback strategy test",
    # how a thing behaves, with the extent of what it says ("on every call", "for any caller", "by default")
    "parser/encoder.go:66 returns the same []Item slice on every call, and Encode mutates those items while writing",
    "That is a breaking change for any external caller storing these structs as JSON, because the outer structs "
    "keep the default names.",
    "Upstream by default only follows the first request, a redirect won't get the token unless users opt in.",
    # the second half of a quotation, its mark in the sentence before
    'always set, value 0 when empty" tells consumers what to expect.',
    # what may be done; what to do now; whom a thing is for
    "If you can live with approximation, you can avoid the full walk and bisect on observed sizes.",
    "yeah let's migrate the CLI to cobra (I was actually assuming we use it already)",
    "let's add more tests for each gap you listed, do commits",
    "oh no, the others won't see the local dashboard..that's just for me",
    # what the user believed or meant, a question without its mark (an unseen project's "standing rules")
    "I thought the pass rates in the report are for each assertion",
    "i meant for the cli which we set up in this repo and configured in the .tool folder",
    "i don't think the importer has any use of the remote name, can you confirm.",
    # configuration pasted in, and a request "for me to" do something
    "store: auto-commit: on # Create a commit after each successful write auto-push: false # Opt-in for one writer",
    "# Inline rules agentRules: | Always run tests before pushing.",
    "Please submit the rebased PR for me to review.",
    # a review of the code at hand, pasted: what it causes, what would be better, what "these" should be
    "This causes estimateSelfEdits to always return 0, counting the user's edits as the agent's.",
    "While this matches the existing CreatedAt field, using UTC would be more consistent and avoid timezone issues.",
    "To fully detach the output and avoid leaking anything, these should be redirected to a discard sink rather "
    "than left as nil.",
    # someone else's words the user hands over: another agent's answer, a plan to weigh
    "hey I spoke with my other agent about this issue and he had this to say. does this change anything for us?\n\n"
    "Confirmed, the writer goes through the shared root too.\nNever drop data when the resolver returns None.\n"
    "Always sort the entries by version and options.\nNever touch the generated files under gen/.",
    "what do you think of this? just tell me first before changing anything:\n\nKeep the stale-version guard.\n"
    "Resolver returns None → leave the platform where it is, never drop data.\n"
    "Always run the whole test suite before pushing.",
    # an answer to the agent's options, about one of them ("for 2." is no sentence of its own)
    'Yes, but for 2. we need to have a sturdier solution to ensure it is definitely "always" handled. What do you '
    'suggest?',
    # a ban on a thing the sentence does not name, only points at ("it", "them", "our own", "它"): the file, the
    # branch or the scheme of that turn, unreadable alone
    "Also don't give it a number and it needs no status line in the file",
    "- Do not merge it until it matches the final implementation and the linked issue.",
    "avoid inventing our own.",
    "这个文件先别提交，也不要再改它",
    # the work the user has for this turn, and how to read it
    "I have three more dialogs to implement they are described in docs/DIALOGS.md please do not mind the order "
    "they are listed in",
]

RULES = [
    "Add a regression test for every fix.",
    "Create a new branch for each ticket.",
    "Install dependencies with pnpm, never with npm.",
    "Do not rewrite unrelated code.",
    "Never touch the generated files under gen/.",
    "Always run the whole test suite before pushing.",
    "Run the linter after each change.",
    "Never skip failing tests, fix them.",
    "以后都不要跳过失败的测试。",
]


def _rules(story: Story) -> list[str]:
    return [r["title"] for r in story.active("indexer") if r["kind"] == "rule"]


@pytest.mark.parametrize("said", NOT_RULES)
def test_what_sounds_like_a_rule_and_is_none(story: Story, said: str) -> None:
    story.session("indexer", Turn(said, [edit(ROOT, "src/graph.rs")], last="Done: the graph builder is updated."))
    assert _rules(story) == [], story.active("indexer")


@pytest.mark.parametrize("said", RULES)
def test_a_rule_said_as_an_order_is_still_one(story: Story, said: str) -> None:
    story.session("indexer", Turn(said, [edit(ROOT, "src/graph.rs")], last="Understood."))
    assert len(_rules(story)) == 1, story.active("indexer")


def test_an_aside_of_the_explanatory_style_gives_its_words_without_its_frame() -> None:
    """Claude Code's explanatory style sets an aside between "`★ Insight ───…`" and "`───…`": its frame was the
    first words of the next sentence (a title "`★ Insight ─────` The fix mirrors …")."""
    from kenning.observer.units import units

    said = ("## Fix\n\nThe loader is fixed.\n\n`★ Insight ─────────────────────────────`\n"
            "The trimming was never applied to the IDE transcript, so every checkpoint held the whole "
            "conversation.\n`─────────────────────────────────────`\n\nTests pass.")
    assert [(u.text, u.heading) for u in units(said)] == [
        ("The loader is fixed.", "Fix"),
        ("The trimming was never applied to the IDE transcript, so every checkpoint held the whole conversation.",
         "Insight"),
        ("Tests pass.", "Fix")]


def test_the_agent_telling_itself_its_next_step_is_no_memory(story: Story) -> None:
    story.session("indexer", Turn("update the skills to the shared harness", [edit(ROOT, "skills/test-writer.md")],
                                  last="Now update the test-writer skill. This is the biggest change of the three, "
                                       "since it still describes a harness per agent."))
    assert not [r for r in story.active("indexer") if r["layer"] == "key"], story.active("indexer")


def test_why_the_agent_takes_its_next_step_is_no_memory(story: Story) -> None:
    """What follows "Now update X." in its paragraph is why the agent takes that step: what the file said before
    the agent's own edit changed it, no cause of anything."""
    story.session("indexer", Turn("move the guides to the shared fixtures", [edit(ROOT, "docs/guide.md")],
                                  last="Now update the contributor guide. This is the largest edit — it currently "
                                       "tells people to create a fixtures folder per plugin, but the actual code "
                                       "loads one shared `fixtures/` tree for all plugins."))
    assert not [r for r in story.active("indexer") if r["layer"] == "key"], story.active("indexer")


def test_each_shape_has_its_reason() -> None:
    """The reason each shape above is no rule (the model may or may not have kept the sentence)."""
    from kenning.memory import cues
    from kenning.memory.text import sentences
    from kenning.observer import gates, own_words
    from kenning.observer.conclusion import _FIRST_PERSON

    assert gates.builds_once("we need to initialize the license checker with the allowed licenses")
    assert gates.builds_once("Confirm the new symbols are searchable: `tool search orders --json` finds them")
    assert not gates.builds_once("Verify the checksum of every download")
    assert not gates.builds_once("we need to initialize the license checker before every release")
    assert not gates.builds_once("Always fix the lint warnings you touch")
    assert not gates.builds_once("Create a branch for each ticket")  # when it applies: a habit
    assert not gates.builds_once("Install dependencies with pnpm, not npm")  # a convention, not a task verb
    assert gates.one_off("if I run the docker e2e tests without docker installed it should tell me.")
    assert "hypothesis" in cues.signals("so either must be a bug in the fixture or an issue with the parser")
    assert "hypothesis" in cues.signals("ripgrep might not be available on every machine")
    assert "hypothesis" in cues.signals("We should either check that ripgrep exists or always use grep")
    assert "hypothesis" not in cues.signals("Evaluations always run on either local repos or our own clones.")
    assert own_words.not_a_rule("For example, if .gitignore excludes a folder, the indexer should include it.")
    assert own_words.not_a_rule("the migration adds a column: `total integer generated always as (a + b) stored`")
    assert own_words.not_a_rule("type edges don't, so any common name like Config pollutes the graph")
    assert own_words.not_a_rule("the provider never advertises the relation")
    assert not own_words.not_a_rule("Never touch the generated files under gen/.")
    assert not own_words.not_a_rule("Never pass --force to git push.")
    assert own_words.an_order("You can clone these repos into ~/Projects if they are not there already")
    assert not own_words.an_order("You cannot build it on Windows without WSL")
    assert own_words.own_rule_signals('We need to find a sturdier fix so it is definitely "always" handled') == {"must"}
    assert sentences("Yes, but for 2. we need a sturdier fix. It ran 3 times. Then it failed.") == [
        "Yes, but for 2. we need a sturdier fix.", "It ran 3 times.", "Then it failed."]
    assert "prohibit" in own_words.own_rule_signals("Never push to main directly.")
    assert own_words.not_a_rule("Other languages, so the trivial patterns don't cause false negatives")
    assert not own_words.not_a_rule("Please don't cause merge conflicts in the lockfile")
    assert not own_words.not_a_rule("Tests: we don't mock the database")
    assert own_words.not_a_rule("the runner doesn't propagate the failure for all stage types")
    assert own_words.own_rule_signals("we don't need the fallback strategy test") == frozenset()
    assert own_words.own_rule_signals("encoder.go returns the same slice on every call") == {own_words.SCOPE}
    assert own_words.own_rule_signals("Add a regression test for every fix") == {"always"}  # an order: a habit
    assert own_words.own_rule_signals("Upstream by default only follows the first request") == frozenset()
    assert own_words.own_rule_signals("that's just for me") == frozenset()
    assert own_words.own_rule_signals("Keep your answers short for me") == {"user_scope"}
    assert "user_scope" not in cues.signals("Please submit the rebased PR for me to review.")
    assert own_words.not_a_rule("I thought the pass rates are for each assertion")
    assert own_words.pasted_config("store: auto-commit: on # Create a commit after each write auto-push: false")
    assert not own_words.pasted_config("Rule: always use tabs. Reason: the linter wants them.")
    assert not own_words.not_a_rule("Tests: they should be hermetic, never touch the network.")
    half = 'always set, 0 when empty" tells consumers what to expect'
    assert own_words.unquoted(half) == " tells consumers what to expect"
    assert own_words.not_a_rule("yeah let's migrate to cobra")
    assert not own_words.not_a_rule("let's always squash before merging")
    assert not own_words.not_a_rule("Secrets are not allowed in the repository.")
    assert not own_words.not_a_rule("CI isn't reliable here, so never merge on red.")
    assert _FIRST_PERSON.search("Now update the test-writer skill.")
    assert not _FIRST_PERSON.search("Now the cache key includes the tenant.")


def test_what_the_editor_attached_is_not_the_users_word(story: Story) -> None:
    """Codex's IDE extension and app send diff comments, open tabs and the selection in front of the user's words
    (under "## My request for Codex:"): an unseen project's standing rules held "Detect support independently for
    each existing side.", the last sentence of a review comment the editor forwarded. The request is the user's."""
    prompt = ("# Diff comments:\n\n## Comment 1\nFile: /work/indexer/src/walk.py\nSide: R\nLines: 26\nComment:\n"
              "[P2] Mark mixed renames\n\nBecause the marker needs both paths unsupported, a mixed rename gets no "
              "warning. Always check support for each existing side independently.\n\n"
              "## My request for Codex:\n\nFix all those, and from now on always run the linter before you commit.")
    story.session("indexer", Turn(prompt, [edit(ROOT, "src/walk.py")], last="Fixed both sides' checks."))
    rules = _rules(story)
    assert not [r for r in rules if "each existing side" in r], rules
    assert [r for r in rules if "linter" in r], rules
    assert "My request" not in story.context("indexer") and "Diff comments" not in story.context("indexer")


def test_a_weak_sign_of_a_rule_needs_the_model_to_lean_to_one() -> None:
    """"should", "need to", "instead" alone: most such sentences of the user are a spec, a task or a finding (an
    unseen project's standing rules held a pasted test failure, "… hooks should use 'go run', but settings.json
    doesn't contain it", judged a rule at 0.30). Judged a rule at 0.4 they are none; "never", "always", "don't",
    "from now on" still make one, and so does a model that leans to a rule."""
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units
    from kenning.observer.user_said import _user_keeps

    def rule(text: str, p: float) -> Judged:
        return Judged(units(text)[0], role="rule", p=p, speaker="user", origin="typed", worth=0.7)

    assert not _user_keeps(rule("The plugin list should be passed as separate args instead.", 0.4))
    assert not _user_keeps(rule("Every hook needs to be installed with `go run` in dev mode.", 0.3))
    assert _user_keeps(rule("The plugin list should be passed as separate args instead.", 0.6))
    assert _user_keeps(rule("Never pass the plugin list as one string.", 0.4))
    assert _user_keeps(rule("From now on pass the plugin list as separate args.", 0.4))


def test_a_requirement_said_with_a_weak_sign_is_the_users_decision() -> None:
    """"The WAL journals have to be deleted before shutdown!" (a labelled decision of a project the model was not
    trained on, judged a rule at 0.27): what the user requires of this work, kept as their decision, not lost."""
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units
    from kenning.observer.user_said import _user_keeps, _weak_rule_as_decision

    said = Judged(units("The cache files have to be deleted before shutdown!")[0], role="rule", p=0.27,
                  speaker="user", origin="typed", worth=0.7)
    kept = _weak_rule_as_decision(said)
    assert kept.role == "decision" and _user_keeps(kept)
    sure = Judged(units("Never delete the cache files by hand.")[0], role="rule", p=0.3, speaker="user",
                  origin="typed", worth=0.7)
    assert _weak_rule_as_decision(sure).role == "rule"


def test_what_is_asked_of_this_turn_is_no_open_to_do() -> None:
    """An unseen project's "Open to-dos" held the user's "Friction Events per Checkpoint and Open Items per
    Checkpoint are emptym … could you please check if we parse properly" ("open items" named a chart), which the
    agent fixed in that turn; work said to be for later stays one."""
    from kenning.observer.user_said import _user_keeps
    from tests.support.judged import judged

    assert not _user_keeps(judged("todo", "The Pending Refunds and Open Items panels are empty although I synced "
                                          "today, could you please check if we parse the export properly", "user"))
    assert _user_keeps(judged("todo", "Later, once every caller passes the form, remove the legacy inference.",
                              "user"))
    assert _user_keeps(judged("todo", "could you please add a follow-up to drop the legacy flag", "user"))


def test_code_the_user_pastes_is_no_word_of_theirs() -> None:
    """An unseen project's key rows held the user's "accumulatedToNonAgentFiles := min(…) accumulatedToAgentFiles
    := … Calculate precisely" as a fact: a line of code pasted, outside any code quotes."""
    from kenning.observer.user_said import _user_keeps
    from tests.support.judged import judged

    for role in ("fact", "rule", "decision"):
        assert not _user_keeps(judged(role, "refundedToOpenOrders := min(allRefunds, openOrderTotal) "
                                            "refundedToClosed := allRefunds - refundedToOpenOrders Compute it exactly",
                                      "user"))
    assert _user_keeps(judged("rule", "Never set `DEBUG=1` in production, whatever the ticket says.", "user"))


def test_a_question_of_the_users_states_nothing() -> None:
    """An unseen project's key rows held the user's "Could we create a summary of the options for this and what we
    went with (I'd go with option 4 now …) but keep it in the repo" as their decision: a question asks, in any
    language; a condition that opens on "when" states, and a question may still leave work for later."""
    from kenning.observer.user_said import _user_keeps
    from tests.support.judged import judged

    for role in ("decision", "rule", "fact"):
        assert not _user_keeps(judged(role, "Could we write down the options and the one we took (I'd take the "
                                            "second for now) and keep it in the repo", "user"))
    assert not _user_keeps(judged("decision", "新しい通知の文言は既存の通知パターンと整合しているか", "user"))
    assert not _user_keeps(judged("decision", "Should we always use the pooled client here?", "user"))
    # a brainstorm: what might be done
    assert not _user_keeps(judged("decision", "the sample prompts should be fairly deterministic and we could have "
                                              "prompts that do several things and commit", "user"))
    assert not _user_keeps(judged("decision", "也许我们应该先加一个规划步骤，因为现在的提示太长了", "user"))
    assert _user_keeps(judged("decision", "We use the file cache for now because it needs no server, maybe Redis "
                                          "later", "user"))
    # a choice that hangs on what was said before
    assert not _user_keeps(judged("decision", 'ok, if that\'s the case we need to rename "start" to "start_session"',
                                  "user"))
    assert not _user_keeps(judged("decision", "如果是这样，我们就改用连接池，因为它更省资源", "user"))
    assert _user_keeps(judged("decision", "When both files exist, AGENTS.md is the source of truth.", "user"))
    assert _user_keeps(judged("decision", "We keep the pooled client because it halves the connection count.",
                              "user"))
