"""What the session-start index lists, shapes found in sessions nobody here trained on: items of one list are
separate things (a fix said in one item is not about the change in the item before it: "Updated the batch size in
config.yaml — fix: fixed the path issue in eval.py", in every language), and a session in which nothing happened is
not recent work. Real SQLite file, offline observer, the real index."""

from __future__ import annotations

import pytest

from tests.support.judged import judged as _judged
from tests.support.judged import taken as _taken
from tests.support.memory_story import MATCHER_FINDING, Story, Turn, bash, edit, matcher_turn, read

ROOT = "/work/trainer"


LISTS = {
    "en": ("Made the following changes:\n1. Updated the batch size in `config.yaml`\n"
           "2. Fixed the path issue in `eval.py`", "Updated the batch size"),
    "zh": ("已完成以下修改：\n1. 更新了 `config.yaml` 中的 batch size\n2. 修复了 `eval.py` 中的路径问题", "更新了"),
    "ja": ("以下の変更を行いました：\n1. `config.yaml` のバッチサイズを更新\n2. `eval.py` のパスの問題を修正",
           "バッチサイズ"),
}


@pytest.mark.parametrize("lang", sorted(LISTS))
def test_a_fix_in_one_item_is_not_about_the_item_before(story: Story, lang: str) -> None:
    said, other = LISTS[lang]
    story.session("trainer", Turn("fix the training run", [
        read(ROOT, "train.py"), bash("python train.py", fails="FileNotFoundError: data/eval"),
        edit(ROOT, "config.yaml"), edit(ROOT, "eval.py"), bash("python train.py", "ok")], last=said))
    fixes = [r["title"] for r in story.active("trainer") if r["kind"] == "fix"]
    assert fixes and not [t for t in fixes if other in t], story.active("trainer")


def test_a_session_in_which_nothing_happened_is_not_recent_work(story: Story) -> None:
    """An unseen project's "Recent work" listed "test prompt → Received. What would you like me to do?" and "show
    me your version → claude-opus-4-7": no work, nothing learnt. A question answered in so many words stays."""
    story.session("trainer", Turn("fix the training run", [edit(ROOT, "train.py"), bash("python train.py", "ok")],
                                  last="The data path was relative to the wrong folder; it is now resolved from "
                                       "the config file's folder."))
    story.session("trainer", Turn("test prompt", last="Received. What would you like me to do?"))
    story.session("trainer", Turn("show me your version", last="model-x-2 (1M context)"))
    story.session("trainer", Turn("where do the evaluation datasets live?",
                                  last="They live in the shared bucket under eval/, mounted read-only at /data/eval "
                                       "on every training node."))
    story.session("trainer", Turn("resume the training run", [edit(ROOT, "config.yaml")], last="Resumed from step 40."))
    context = story.context("trainer")
    assert "test prompt" not in context and "show me your version" not in context, context
    assert "where do the evaluation datasets live" in context, context


@pytest.mark.parametrize("said", ["PR #48 now has the two commits: the follow-up fixes (`13642bf`) and this marker.",
                                  "Empty commit `d35fea9` (\"chore: wrap up the session\") is on `chore/review-fixes`.",
                                  "PR #1066 is open and ready for review, with the regression test first."])
def test_where_a_pull_request_stood_is_no_key_memory(story: Story, said: str) -> None:
    """How a pull request or a commit stood at that moment (an unseen project listed "PR #48 now has the two
    commits: …" as an open to-do): stale by the next session, as the checkout's state is."""
    from kenning.observer import gates

    assert gates.repo_state(said)
    story.session("trainer", Turn("push the review fixes", [edit(ROOT, "eval.py"), bash("git push", "ok")],
                                  last=said))
    assert not [r for r in story.active("trainer") if r["layer"] == "key"], story.active("trainer")


WRONG_THEN_FIX = (
    "Done: the import is diagnosed and fixed, and up as draft PR #12.\n\n"
    "**What was actually wrong** — two defects on top of each other, which is why the totals looked plausible:\n\n"
    "1. **The importer reads amounts as `float`**, so `0.1 + 0.2` drifted and `round_total()` rounded the drift.\n"
    "2. **Refunds were never negated**: `apply_refund()` added them like sales.\n\n"
    "**The fix**: the importer now parses amounts with `Decimal`, and `apply_refund()` subtracts the amount.\n\n"
    "Two side notes: the slow run you saw is the cold cache, not a bug.")


def test_a_defect_listed_under_what_was_wrong_is_a_cause_and_the_fix_is_the_fix(story: Story) -> None:
    """An unseen project's answer listed its defects under "**What was actually wrong** — …:" and its change under
    "**The fix**:"; the index said the first defect was the fix ("— fix: search defaults to `syntax-only` …")."""
    story.session("trainer", Turn("the monthly totals are off, find out why", [
        read(ROOT, "importer.py"), bash("pytest tests/test_totals.py", fails="AssertionError: 10.30 != 10.3"),
        edit(ROOT, "importer.py"), edit(ROOT, "refunds.py"), bash("pytest tests/test_totals.py", "2 passed")],
        last=WRONG_THEN_FIX))
    titles = [r["title"] for r in story.active("trainer")]
    fixes = [t.split("fix:", 1)[1] for t in titles if "fix:" in t]
    assert not [f for f in fixes if "reads amounts as" in f or "never negated" in f], titles
    # the message's own cause and fix, under their two labels, are one memory
    assert [t for t in titles if "two defects" in t.split("fix:", 1)[0] and "Decimal" in t.split("fix:", 1)[-1]], \
        titles


def test_a_lead_cut_off_before_its_list_opens_no_memory() -> None:
    """"All three references in `SKILL.md` now say:" over a list: its substance is the list, the sentence alone
    is cut off ("… now say. <the finding>" was a title)."""
    from kenning.observer.conclusion import counts_a_list
    from kenning.observer.roles.roles import judge
    from kenning.observer.units import units

    said = units("Done. All three references in `guide.md` now say:\n\n- **Step 1:** `read setup.md`\n\n"
                 "VAT is now rounded per line:\n\n- `line_total()` rounds each line")
    cut, kept = said[1], said[3]
    assert cut.introduces and counts_a_list(judge(cut, speaker="agent", origin="final"))
    assert kept.introduces and not counts_a_list(judge(kept, speaker="agent", origin="final"))


@pytest.mark.parametrize("said", [
    "Then continued one small step and clarified that the `export` map should list only real commit SHAs, leaving "
    "out local uncommitted placeholders.",
    "Current pending diff also includes the earlier uncommitted `skip-placeholders` note in `export.md`.",
])
def test_a_step_the_agent_took_or_its_pending_diff_is_no_open_item(said: str) -> None:
    """An unseen project's "Open to-dos" held the agent's report of a step it took and the state of its diff
    (judged to-dos for the words "uncommitted" and "pending"): done in that run, or the working tree then. Even
    judged a to-do with confidence, neither is one; a sentence that says what waits is."""
    waits = _judged("todo", "`csv_export.py` and `xml_export.py` still need to move to the new map.")
    assert _taken("todo", _judged("todo", said), waits) == [waits]


def test_what_waits_is_still_an_open_item() -> None:
    from kenning.observer import gates, no_finding

    for said in ("Blocked on the vendor's API key; the export stays disabled until it arrives.",
                 "Deferred: the retry logic, until the queue is migrated.",
                 "Still to do: migrate the remaining two exporters."):
        assert not no_finding.reports_an_act(said) and not gates.repo_state(said), said


def test_what_we_would_do_is_no_fix() -> None:
    """"We'd then debug the manifest (likely candidates: …)" was an unseen project's fix of a cause: a plan for a
    result not yet seen. "We'd been …" is what had happened."""
    plan = _judged("fix", "We'd then debug `plugin.json` (likely candidates: the `skills` path format, or a missing "
                          "`name:`).")
    done = _judged("fix", "We'd been reading `plugin.json` from the wrong folder; `load()` now resolves it from the "
                          "root.")
    assert _taken("fix", plan, done) == [done]
    # "The fix would be to set `state.FilesTouched = remainingFiles` even when …": an unseen project's cause
    would = _judged("rootcause", "The fix would be to set `state.touched = remaining` even when the write is skipped "
                                 "(the files are gone but must still be tracked).")
    cause = _judged("rootcause", "The write is skipped for deleted files, so `state.touched` keeps the old list.")
    assert _taken("rootcause", would, cause) == [cause]


def test_a_consequence_is_not_labelled_the_cause() -> None:
    """"… the ranking safeguards are incomplete — cause: Consequently, `--top-k > 20` gives …": a sentence that goes
    on from the one before ("Consequently", "As a result") follows it as said."""
    from kenning.observer.conclusion import cause_and_fix, lead_of
    from kenning.observer.reading import Reading
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    lead, then = units("`pytest tests/test_retry.py` passes, but the backoff is still broken. Consequently, "
                       "`max_retries > 5` waits the full hour before the first retry.")
    r = Reading(agent=[Judged(lead, role="fact", p=0.9, speaker="agent", origin="final", worth=0.9),
                       cause := Judged(then, role="rootcause", p=0.9, speaker="agent", origin="final", worth=0.9)])
    said = cause_and_fix(cause, None, *lead_of(r, cause, None))
    assert "cause:" not in said and "Consequently" not in said and "`max_retries > 5` waits" in said, said


def test_a_fix_said_as_a_possibility_is_no_fix() -> None:
    """"— fix: it may be using the same reusable workflow but getting `license_finder` from …" was an unseen
    project's fix: a guess at what happens. A step the agent reports having taken stays, whatever it warns of."""
    guess = _judged("fix", "It may be using the shared `release.yml` workflow but getting `cargo-deny` from its own "
                           "image.")
    done = _judged("fix", "Added a warning to `release.yml` that the shared workflow may pin an older `cargo-deny`.")
    assert _taken("fix", guess, done) == [done]


def test_what_happened_next_is_no_fix() -> None:
    """"— fix: then three focused verifiers attacked the final fix mechanisms …" and "— fix: but two adversarial
    rounds have now …" were an unseen project's fixes: the story going on, not the change made."""
    story = _judged("fix", "Then two reviewers attacked the new `parse_header()` guard and found nothing.")
    done = _judged("fix", "`parse_header()` now rejects a header longer than 8 KiB instead of reading past the buffer.")
    assert _taken("fix", story, done) == [done]


@pytest.mark.parametrize("guess", [
    "It's possible the editor picks those up directly because it sees `.plugin/manifest.json` at the repo root.",
    "Presumably `sync.py` skips the folder because `.gitignore` lists it.",
    "I think the root cause is that `load()` reads the cache before `init()` runs.",
])
def test_a_cause_guessed_in_the_conclusion_is_no_cause(guess: str) -> None:
    """An unseen project's key memories held "It's possible Cursor picks those up directly because …": a guess, said
    in the agent's last message. A cause found stays."""
    found = _judged("rootcause", "The root cause is that `load()` reads `cache.json` before `init()` has written it.")
    assert _taken("rootcause", _judged("rootcause", guess), found) == [found]


def test_a_word_of_work_left_inside_a_quotation_is_no_open_item() -> None:
    """'We have content-aware logic for "should we link this commit?" but use file-level logic for "what's left to
    carry forward?"' and 'on stop hook I want a "notification" if a review is still "pending"' were an unseen
    project's open to-dos, for words they quote."""
    from kenning.observer.user_said import _user_keeps

    quoted = _judged("todo", '`link()` checks content, but `carry()` asks "what\'s left to carry forward?" by file.')
    left = _judged("todo", "`carry()` and `merge()` still need the same content check as `link()`.")
    assert _taken("todo", quoted, left) == [left]
    assert not _user_keeps(_judged("todo", 'Show a "notification" when a review is still "pending" in `stop.go`',
                                   "user"))
    assert _user_keeps(_judged("todo", "Next time we must add the content check to `carry()` as well", "user"))


def test_what_a_session_was_about_is_not_the_output_pasted_into_it() -> None:
    """An unseen project's session lines read "…; then: === RUN TestE2E_AgentCommitsDuri…" and "This one is still
    failing to checkpoint: {"time":"2026-02-15T20:46:19…","level":"DEBUG",…": a test run and a JSON log record
    pasted as the prompt. The user's words before the output are what they asked."""
    from kenning.observer.stated import gist_of

    assert gist_of("=== RUN   TestExport\n--- FAIL: TestExport (3.20s)\n    export_test.go:40: no rows") == ""
    assert gist_of("=== NAME  TestExport\n    export_test.go:19: Step 1: run the export with the refunds") == ""
    assert gist_of('This one still fails to export: {"time":"2026-02-15T20:46:19+11:00","level":"DEBUG",'
                   '"msg":"export invoked"}') == "This one still fails to export"
    assert gist_of("Fix the export of refunds") == "Fix the export of refunds"


def test_a_prompt_that_is_a_pasted_test_run_has_no_gist_from_its_lines() -> None:
    """An unseen project's session line read "then: Error: \"0\" is not greater than o…": go test's run pasted as
    the prompt, whose testify detail (set in by a tab) and whose log lines ("agent_test.go:36: Agent output: Done!
    I've committed …", the program's sentences) slipped through a sentence at a time. A line set in that far, a
    line that names where it was printed and a package's verdict are what a program printed."""
    from kenning.observer.stated import gist_of

    run = ("=== RUN   TestExport\n=== NAME  TestExport\n"
           "    export_test.go:36: Agent output: Done! I've exported the refunds with the new rounding\n"
           "    export_test.go:40:\n                Error Trace:    /home/ci/export_test.go:40\n"
           "                Error:          \"0\" is not greater than or equal to \"1\"\n"
           "                Messages:       Should have at least one row\n"
           "--- FAIL: TestExport (3.20s)\nFAIL\nFAIL    github.com/acme/shop/export 3.412s\n"
           "ok      github.com/acme/shop/cart (cached)\n")
    assert gist_of(run) == ""
    assert gist_of("The refunds are still missing:\n" + run) == "The refunds are still missing:"
    assert gist_of(run + "\nwhy does the export drop the refunds?").lower() == "why does the export drop the refunds?"
    # The user's own list, set in under an item, is still theirs
    assert gist_of("  - keep the rounding per line") == "Keep the rounding per line"


def test_a_prompt_that_points_at_what_follows_takes_it_in() -> None:
    """An unseen project's session line read "take a look at:; then: …": the user pointed at the issue they pasted
    next, and the gist stopped at the pointer. A prompt nobody typed (another session's message, a shell escape's
    output, a summary of a session continued) has no gist."""
    from kenning.observer.stated import gist_of

    assert gist_of("can you take a look at: \n\nHere's the issue, as the billing team wrote it.\n\n## Refunds are "
                   "rounded twice") == "take a look at: Here's the issue, as the billing team wrote it"
    assert gist_of("Fix the rounding in these two places:\n- totals\n- refunds") == \
        "Fix the rounding in these two places:"  # (it says what it asks; the list is what it is about)
    assert gist_of("Another Claude session sent a message:\n\n## Round 2 review\nAll good.") == ""
    assert gist_of("<bash-input>git push origin main</bash-input>") == ""
    assert gist_of("This session is being continued from a previous conversation that ran out of context.") == ""


def test_a_to_do_that_counts_the_items_before_it_leaves_them_unsaid() -> None:
    """An unseen project's open to-dos held "Neither warrants a follow-up PR on its own; worth folding in if that
    file is touched again.": which two things, the to-do does not say."""
    counted = _judged("todo", "Neither warrants a follow-up PR on its own; worth folding in if that file is touched "
                              "again.")
    named = _judged("todo", "A follow-up PR should add a timeout to the retry helper in `client.go`.")
    assert _taken("todo", counted, named) == [named]
    out_of_scope = _judged("todo", "Out of scope for this PR but worth filing as a follow-up if you want parity.")
    assert _taken("todo", out_of_scope, named) == [named]


@pytest.mark.parametrize("opening", [
    "All verification gates are green, including the 190-second race suite.",
    "The PR is still not mergeable, and this round brings an important signal."])
def test_a_conclusion_that_opens_with_where_things_stand_gives_the_cause_no_such_lead(story: Story,
                                                                                      opening: str) -> None:
    """An unseen project's key rows opened "All verification gates are green, including the 187-second race suite.
    The full suite caught a real false positive …" and "The PR is still not mergeable, and this round carries …
    — cause: …": how things stood when the agent answered, put in front of the cause as its subject."""
    story.session("trainer", matcher_turn(ROOT, f"{opening} {MATCHER_FINDING}"))
    rows = [r["title"] for r in story.active("trainer") if r["layer"] == "key"]
    assert rows and all("matcher" in t for t in rows), rows
    assert not [t for t in rows if t.startswith(opening[:20])], rows
    assert [t for t in rows if "fix: `isTestPath` now only looks at the file name" in t], rows  # (not "fix: Fixed:")


def test_the_checks_a_label_says_passed_are_no_lead_of_the_cause(story: Story) -> None:
    """An unseen project's key row read "`lint`, `test`, and `check-licenses`. The repo's `errcheck.check-blank` …":
    the value of "**All three checks pass:**", taken alone as what the answer was about, in front of the cause."""
    story.session("trainer", matcher_turn(
        ROOT, "PR #12 is green.\n\n**All four checks pass:** `lint`, `test`, `race`, and `license-scan`.\n\n"
              "## What I did\n\nRoot cause: the broadened matcher treated `.github/workflows/test.yml` as a test "
              "artifact because it matched `test` anywhere in the path. Fixed: `isTestPath` now only looks at the "
              "file name."))
    rows = [r["title"] for r in story.active("trainer") if r["layer"] == "key"]
    assert rows and all("matcher" in t for t in rows), rows
    assert not [t for t in rows if "license-scan" in t], rows


def test_how_things_are_after_the_work_is_no_lead_of_the_cause(story: Story) -> None:
    """An unseen project's key row read "Now the user will see these on each prompt-submit while a review is running.
    The problem is the detached process runs with `cmd.Dir = "/"` …": the answer's report of what the change does,
    put in front of the cause found along the way as what it was about."""
    story.session("trainer", Turn("the review log is empty, why?", [
        read(ROOT, "review.go"), edit(ROOT, "review.go"), bash("go test ./...", "ok  \tacme/trainer\t0.4s")],
        said=["The problem is the detached reviewer runs with `cmd.Dir = \"/\"`, so the `logging` package (which "
              "finds `.trainer/logs/` relative to the repo root) cannot open its file."],
        last="Now the user will see the warning on each prompt-submit while a review is running. The reviewer "
             "process now starts in the repository root."))
    rows = [r["title"] for r in story.active("trainer") if r["layer"] == "key"]
    assert [t for t in rows if "cmd.Dir" in t], rows
    assert not [t for t in rows if t.startswith("Now the user")], rows


def test_a_cause_and_a_fix_under_two_headings_of_their_own_need_more_than_one_word_in_common() -> None:
    """An unseen project's key row read "No test for the force-close path: triggering a real `Shutdown` timeout …
    flaky for low value — fix: strengthened `TestFlow_StringRedactsSecrets` to embed the state value in the URL": a
    decision not to test, and a test of another commit, tied by the word "value"."""
    from kenning.observer.conclusion import together
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    said = units("**Commit 1 — `9f8e7d6` mask the token in `Client.String()`**\n"
                 "- Strengthened `TestClient_String` to embed the token value in the header.\n\n"
                 "**No test for the retry path:** forcing a real timeout needs a stalled server — flaky for low value."
                 "\n\n## Lint\n\nThe pre-push hook failed on lint errors in `.cache/settings.json`.\n\n## Changes\n\n"
                 "- `.cache/` is excluded from linting now.")
    fix, cause, lint, excluded = (Judged(u, role="fix", p=0.9, speaker="agent", origin="final", worth=0.9)
                                  for u in said)
    assert fix.unit.heading.startswith("Commit 1") and cause.unit.heading == "No test for the retry path"
    assert not together(cause, fix)
    assert together(lint, excluded)  # a folder and a file in it: the same thing


def test_two_findings_of_a_turn_that_changed_nothing_are_no_cause_and_fix() -> None:
    """An unseen project's review turn kept "Renaming `sample.go` to `sample.ps1` produced a one-sided removal of
    `Run` … — fix: my probe produced a false `PARAM_TYPE` edge …": two findings of one message, said apart. In a turn
    that changed files, a message's cause and the change said after it are its cause and fix; in one paragraph, a
    proposal follows its cause either way."""
    from kenning.observer.conclusion import together
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    said = units("Renaming `main.go` to `main.rb` produced a one-sided removal of `Serve`.\n\n"
                 "My probe resolved a call to `api/client.go` instead of the imported one.\n\n"
                 "The cache never expires entries. Expire them after an hour.")
    first, second, cause, proposal = (Judged(u, role="fix", p=0.9, speaker="agent", origin="final", worth=0.9)
                                      for u in said)
    assert not together(first, second, changed=False) and together(first, second, changed=True)
    assert together(cause, proposal, changed=False)


def test_what_is_said_under_a_problem_label_is_no_fix() -> None:
    """An unseen project's key row read "Seven files duplicate `name` / `version` … — fix: three skills repeat the
    same algorithm inline — …": the problems of two proposals in one answer, each under "**Problem:**", the second
    taken for the first one's fix. What is under a label that names the problem says what is wrong."""
    from kenning.observer.no_finding import heads_a_cause

    problem = _judged("fix", "**Problem:** Two suites repeat the same loader inline — read `fixtures/*.json`, skip "
                             "files without `id`.")
    solution = _judged("fix", "**Solution:** Move the loader into `tests/_shared/load.py`.")
    assert problem.unit.heading == "Problem"
    assert _taken("fix", problem, solution) == [solution]
    assert heads_a_cause("Problem") and heads_a_cause("The issue") and heads_a_cause("问题")
    assert not heads_a_cause("Problems fixed in this PR") and not heads_a_cause("Solution")


def test_a_follow_up_step_of_a_mechanism_is_no_work_left() -> None:
    """An unseen project's open to-dos held "It's now grinding through ~28 batches …, each a ref-only follow-up
    push" and "… follow-up ops stay pointed at the user's URL": steps of how the code works, not work left."""
    step = _judged("todo", "The sync now runs in batches of 2,000, each a ref-only follow-up push.")
    ops = _judged("todo", "With the flag off, `resolvedEndpoint` stays empty and follow-up ops keep the typed URL.")
    left = _judged("todo", "A follow-up PR should batch the tag pushes as well.")
    assert _taken("todo", step, ops, left) == [left]
    # (the step by its name: a user's list of what manual testing showed, "but no checkpoint (or follow up
    # 'trailing transcript' commit)", was an open to-do)
    from kenning.observer.own_words import todo_words

    assert not todo_words("3. but no release (or follow up 'publish artifacts' run)")
    assert todo_words("as a follow up, add 'retry' to the client")


def test_an_order_to_act_once_is_no_decision_of_the_user() -> None:
    """An unseen project's key decisions held "open an issue that we need to address this as well" and "open an
    issue that we need to make an FAQ in the README …": tasks of that turn, their "need to" no choice. The order of
    steps is one ("Merge the service change first, then release the action")."""
    from kenning.observer.user_said import _user_keeps

    assert not _user_keeps(_judged("decision", "open an issue that we need to address the retries as well", "user"))
    assert not _user_keeps(_judged("decision", "commit the version command and push it, we need it today", "user"))
    assert _user_keeps(_judged("decision", "Merge the service change first, then release the action, we need "
                                           "production to accept the new request", "user"))
    assert _user_keeps(_judged("decision", "We decided to keep one service because two double the deploys",
                               "user"))


def test_what_the_user_means_to_do_is_no_fact() -> None:
    """An unseen project's key rows held "For git sync..we need to research how the repo works", the user's, as how
    things are: it is what they mean to do."""
    from kenning.observer.user_said import _user_keeps

    assert not _user_keeps(_judged("fact", "For the sync tool..we need to research how the repo works", "user"))
    assert _user_keeps(_judged("fact", "The integration tests need Docker running on this machine", "user"))


def test_what_the_user_can_do_is_no_cause_or_fix() -> None:
    """An unseen project's key row read "So for the screenshot, you can capture the `plan` output without exposing
    any real source/target": advice for that moment, judged a cause."""
    advice = _judged("rootcause", "So for the screenshot, you can capture the `dry-run` output without exposing "
                                  "any real host.")
    cause = _judged("rootcause", "The export drops refunds because `amount > 0` filters out negative rows.")
    cannot = _judged("rootcause", "The deploy fails because you can't push tags from a fork's workflow token.")
    assert _taken("rootcause", advice, cause, cannot) == [cause, cannot]


@pytest.mark.parametrize("resolved", [
    "Resolved conflict in `explain.go` by keeping HEAD features while using `gitutil.OpenRepository()`",
    "The conflicts were resolved by keeping both",
    "已解决合并冲突，保留了两边的改动。",
])
def test_merge_conflicts_resolved_are_no_fix(resolved: str) -> None:
    """An unseen project's key rows held "Resolved conflict in `explain.go` by keeping HEAD features …" and "The
    conflicts were resolved by keeping both" as fixes: joining two lines of work, no defect found or fixed."""
    merged = _judged("fix", resolved)
    fix = _judged("fix", "The session conflict check now clears `BaseCommit` when the conflict is resolved, so hooks "
                         "no longer create the branch `entire/`.")
    assert _taken("fix", merged, fix) == [fix]


PLAN = """# Plan: Output filter

## Design

- Run the filter before a blob is written, so that no secret reaches git history.
- Consider if `CheckpointInfo` should also drop the session IDs (probably keep for now).

## Files to Modify

1. `cmd/cli/checkpoint/temporary.go` - Filter transcripts in tree building, to avoid unfiltered writes
"""


def test_a_plans_list_of_files_and_its_maybes_are_no_decisions() -> None:
    """An unseen project's key rows held "`cmd/entire/cli/checkpoint/temporary.go` - Filter transcripts in tree
    building (tentative)" (a plan's list of files to modify, read "provisional" for the file's name) and "Consider if
    `CheckpointInfo` should also drop SessionIDs (probably keep for now)" as decisions of the plan the user accepted."""
    from kenning.observer.compose import plan_memories
    from kenning.observer.reading import Reading
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    said = [Judged(u, role="decision", p=0.95, speaker="user", origin="plan", worth=0.95) for u in units(PLAN)
            if u.text.startswith(("Run the", "Consider", "`cmd"))]
    assert len(said) == 3
    kept = plan_memories(Reading(origin="plan", plan=said, plan_title="Output filter"), 0.0, "prompt 1")
    assert [d.title for d in kept] == [said[0].text]


def test_what_the_agent_verified_or_a_test_it_added_is_no_finding() -> None:
    """An unseen project's key rows held "Verified each bullet is a real delta since v0.4.0 (`git log v0.4.0..HEAD`)
    … — no stale survivors." (a fact) and "New `TestExchange_ExchangeErrorWithoutDescription` exercises the
    previously-untested no-description branch …" (a fix): a check of that moment, and work on the tests."""
    verified = _judged("fact", "Verified each entry is a real change since v1.2.0 (`git log v1.2.0..HEAD`): the "
                               "`export` package and the Go bump — nothing stale.")
    fact = _judged("fact", "The `export` package is unreleased: it sits under `## Unreleased` in the changelog.")
    assert _taken("fact", verified, fact) == [fact]
    test = _judged("fix", "New `TestExport_RefundWithoutReason` exercises the previously untested branch of "
                          "`Error()`, asserting the bare rendering.")
    fix = _judged("fix", "`Error()` no longer leaves a dangling separator when the reason is empty.")
    assert _taken("fix", test, fix) == [fix]


@pytest.mark.parametrize("lead", [
    "Here's what the deferred approach requires that per-commit condensation would eliminate",
    "Here is how the retry budget is shared between the two workers",
    "以下是延迟方案需要而逐次提交压缩可以省掉的部分",
])
def test_what_introduces_what_follows_is_no_finding(lead: str) -> None:
    """An unseen project's key row read "Here's what the deferred approach requires that per-commit condensation
    would eliminate": the lead-in of a list, which says nothing of its own."""
    fact = _judged("fact", "The retry budget is shared: both workers draw from one token bucket of 10 per minute.")
    assert _taken("fact", _judged("fact", lead), fact) == [fact]


def test_the_other_way_to_what_was_said_before_is_no_finding() -> None:
    """An unseen project's key row read "Or if that doesn't work, create the tap structure manually without
    `tap-new`": the alternative to a step said before, which it does not say."""
    other = _judged("gotcha", "Or if that doesn't work, create the tap structure by hand without `tap-new`.")
    gotcha = _judged("gotcha", "`brew tap-new` refuses a tap outside `$(brew --repository)/Library/Taps`.")
    assert _taken("gotcha", other, gotcha) == [gotcha]


def test_the_agents_own_work_and_its_offers_are_no_finding() -> None:
    """An unseen project's key rows: "All metric names use only `[a-z0-9_]` — my regex won't reject any legitimate
    names — cause: Re-ran my forgery PoC mentally against the new path: …" and "Nothing else is left uncommitted in
    the working tree, and the branch is ready to push whenever you want" (a decision)."""
    mine = _judged("rootcause", "Re-ran my forgery PoC against the new path: a key-less deployment no longer "
                                "registers the authenticator.")
    cause = _judged("rootcause", "`Init()` returns nil when the HS512 key is unset, so the authenticator is "
                                 "registered with a nil key.")
    assert _taken("rootcause", mine, cause) == [cause]
    offer = _judged("decision", "The branch is ready to push whenever you want (`git push`), since the release "
                                "notes are in.")
    kept = _judged("decision", "Keep the `-1` page size: it is the dashboard's deliberate \"load all\".")
    assert _taken("decision", offer, kept) == [kept]


def test_a_sentence_cut_off_where_it_goes_on_is_no_finding() -> None:
    """An unseen project's key row read "The fix replaces the ternary in `UnifiedFileRow` (lines 631-654) so that":
    the sentence went on in a block the row does not hold."""
    cut = _judged("fix", "The fix replaces the ternary in `FileRow` (lines 631-654) so that")
    fix = _judged("fix", "`FileRow` now renders the issues beside the diff when a row is expanded.")
    assert _taken("fix", cut, fix) == [fix]


def test_what_the_agent_looks_at_is_no_part_of_what_it_found() -> None:
    """A development session's cause read "문제 맥락을 다시 확인합니다: feature worktree에서 …" ("let me check the
    context again: …"): the finding is what follows the colon."""
    from kenning.observer.titles import statement

    assert statement("문제 맥락을 다시 확인합니다: 워크트리를 지우면 main DB에 결정이 없어 조회가 실패했습니다.") == \
        "워크트리를 지우면 main DB에 결정이 없어 조회가 실패했습니다."
    assert statement("日志を確認します：キャッシュの鍵が二回読まれていました。") == \
        "キャッシュの鍵が二回読まれていました。"


def test_a_suggestion_the_user_pastes_is_no_decision_of_theirs() -> None:
    """An unseen project's key rows held review comments the user pasted as their decisions: "To reduce the risk of
    accidentally exposing the PostHog key …, consider removing these fields from the payload …"."""
    from kenning.observer.user_said import _user_keeps

    assert not _user_keeps(_judged("decision", "To reduce the risk of exposing the key, consider removing these "
                                               "fields from the payload and reading them from the package.", "user"))
    assert _user_keeps(_judged("decision", "We decided to keep one service because two double the deploys",
                               "user"))
