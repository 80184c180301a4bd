"""Lines a reader of the development set's contexts (../shared/data/real-sessions) marked as misleading,
in shapes of our own: a task of one turn shown as a standing rule, a description of behaviour shown as
an open to-do, a state joined to a cause as if it were its symptom, a gotcha titled by the commit that
happened to be made in its turn. Each is stored in a real SQLite file by the offline observer.
"""

from __future__ import annotations

import json

import pytest

from kenning.memory import cues
from kenning.observer.compose import worth_saying
from kenning.observer.roles.roles import Judged
from kenning.observer.units import units
from kenning.observer.user_said import _user_keeps
from tests.support.memory_story import Story, Turn, bash, edit, read

ROOT = "/work/shop"


def _judged(text: str, role: str, speaker: str) -> Judged:
    """A sentence the role model judged ``role`` with confidence: what the observer's gates must do then."""
    return Judged(units(text)[0], role=role, p=0.95, speaker=speaker, origin="final" if speaker == "agent"
                  else "typed", worth=0.95)


def _kinds_of_answer(asked: str, said: str, role: str, changed: str) -> list[str]:
    """The kinds of the agent's memories of a turn that asked ``asked``, changed ``changed`` and whose answer is
    ``said``, judged ``role`` with confidence."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    r = Reading(prompt=asked, words=asked, agent=[_judged(said, role, "agent")])
    return [m.kind for m in agent_memories(r, 0.0, "prompt 1", [changed], [])[0]]


@pytest.mark.parametrize("task", [
    "At the top of the report, find a way to make the repository URL always visible.",
    "Analyse which folders should be added to the lint exclusions.",
    "Please investigate why the nightly export must be restarted by hand.",
    # "for each of the …" goes over a set of things, not over occasions ("before each commit")
    "Write up the report, then define clear naming conventions for each of the service types listed there.",
])
def test_a_task_for_this_turn_is_no_standing_rule(story: Story, task: str) -> None:
    story.session("shop", Turn(task, [edit(ROOT, "src/report.py")], last="Done: `src/report.py` updated."))
    assert not [r for r in story.active("shop") if r["kind"] == "rule"], story.active("shop")
    assert "## Standing rules" not in story.context("shop")


@pytest.mark.parametrize("plan", ["First of all, we run a prompt about the errors it found.",
                                  "Then, third step, we run the suggestions prompt on the updated repository.",
                                  "Don't write code in the Markdown files; with all the issues in, we first build "
                                  "a plan.",
                                  "Based on that, we will first fix all errors and then run the second prompt."])
def test_a_step_of_what_the_user_plans_to_build_is_no_standing_rule(plan: str) -> None:
    assert not _user_keeps(_judged(plan, "rule", "user"))


@pytest.mark.parametrize("said", [
    # rule words inside quotation marks are someone else's
    'The old wiki says "deploys must never happen on Fridays." Nobody ever checked that claim.',
    "The vendor’s guide claims “you should always pin the SDK”, which is marketing more than advice.",
    # "never" or "always" before a past tense tells what happened
    "The previous maintainer never documented why the cache is warmed twice.",
    # assent to go on with the work at hand
    "yes, go on with the migration and run the checks after each step until it is done",
    "OK, keep the old parser for this release then.",
    "好的，先按这个方案把剩下的几个接口改完。",
    # what a named document is to say
    "Update docs/deploy.md to say that every release needs a signed tag.",
    "also mention in the README that the CLI always asks before it deletes anything",
])
def test_a_sentence_that_only_sounds_like_a_rule_is_no_standing_rule(story: Story, said: str) -> None:
    assert not _user_keeps(_judged(said, "rule", "user"))
    story.session("shop", Turn(said, [edit(ROOT, "docs/deploy.md")], last="Done."))
    assert not [r for r in story.active("shop") if r["kind"] == "rule"], story.active("shop")


@pytest.mark.parametrize("rule", [
    '"Never force-push to a shared branch."',                       # the user quoting their own rule
    "ok, and from now on always squash before you merge.",          # assent, then a rule for good
    "yes, and we want renovate to bump the lock file, not cargo update.",  # what they want
    "Add to CLAUDE.md that we never commit generated files.",       # the agent's own instructions file
    "以后提交前都要先跑 `make lint`。",
])
def test_a_rule_that_quotes_assents_or_names_the_agents_file_is_still_a_rule(rule: str) -> None:
    assert _user_keeps(_judged(rule, "rule", "user"))


@pytest.mark.parametrize("rule", ["Always run `make lint` before you push.",
                                  "From now on we will run the migrations before every deploy.",
                                  "Check the migrations before every deploy.",
                                  "Do not apply the linter to the test files."])
def test_a_habit_said_with_a_task_verb_or_as_an_order_is_still_a_rule(story: Story, rule: str) -> None:
    story.session("shop", Turn(rule, last="Noted."))
    assert [r for r in story.active("shop") if r["kind"] == "rule"], story.active("shop")


@pytest.mark.parametrize(("said", "task"), [
    ("Open pull requests ready for review, not as drafts.", False), ("Review the diff before committing.", False),
    ("Create migrations with alembic, never by hand.", False), ("Fix lint errors before you push.", False),
    ("Review your changes to find potential issues.", True), ("Please investigate why the build is slow.", True),
    ("At the top of the report, find a way to make the URL always visible.", True),
    ('"Linked" should appear as "Linked docs" in the report.', True),
    ("We should have distinct sections for each coding agent.", True),
    ("also we should have a worker to drop the option from the yaml file.", True),  # (after its lead-in)
    ("Error messages should be shown in the user's language in every view.", False)])
def test_a_task_verb_alone_does_not_make_a_sentence_a_task_of_one_turn(said: str, task: bool) -> None:
    from kenning.observer.gates import one_off

    assert one_off(said) is task


def test_an_order_that_starts_with_do_not_is_no_question() -> None:
    assert "question" not in cues.signals("Do not apply the linter to the test files")
    assert "question" in cues.signals("Do we lint the test files")
    assert "question" in cues.signals("Does the linter read the test files")


@pytest.mark.parametrize(("text", "todo"), [
    ("If the deadline expires, it logs a warning with the count of remaining hosts.", False),
    ("Old journals are only removed at the next checkpoint, up to 12 hours later.", False),
    ("Remaining work: wire the new flag into the CLI.", True),
    ("Two tests remaining, both in the parser.", True),
    ("We will add the Windows job later.", True),
    ("If later paths are longer, later batches can still exceed the byte limit.", False),
    ("Leave the cleanup for later, once the API settles.", True),
])
def test_time_and_counts_are_not_work_left_to_do(text: str, todo: bool) -> None:
    assert ("todo" in cues.signals(text)) is todo


def test_a_description_of_behaviour_is_no_open_to_do(story: Story) -> None:
    story.session("shop", Turn(
        "What happens when the shutdown deadline expires?", [edit(ROOT, "src/shutdown.go")],
        last="If the deadline expires, `Shutdown()` logs a warning with the count of remaining hosts and then "
             "waits for the rotations already submitted. Journals left behind are removed at the next "
             "checkpoint, up to 12 hours later."))
    assert not [r for r in story.active("shop") if r["kind"] == "todo"], story.active("shop")
    assert "## Open to-dos" not in story.context("shop")


def test_a_state_is_not_made_the_symptom_of_a_cause(story: Story) -> None:
    story.session("shop", Turn(
        "Why does the CLI warn on every run?",
        [bash("git status", "On branch main\nnothing to commit"),
         bash("shop eval", fails="warning: targets.yaml has unknown key `byok`")],
        last="Current checkout: `main` at `354de72`, matching `origin/main`, with a clean status.\n\n"
             "The CLI warns because `.shop/targets.yaml` still has the `byok` key, which the provider no "
             "longer supports."))
    rows = [r for r in story.active("shop") if "byok" in r["title"]]
    assert rows, story.active("shop")
    assert not [r for r in rows if "354de72" in r["title"]], rows  # the checkout is no symptom of it


def test_a_gotcha_is_not_titled_by_the_commit_of_its_turn(story: Story) -> None:
    subject = "docs(retro): record the migration retrospective"
    story.session("shop", Turn(
        "회고 문서를 커밋하고 푸시해줘",
        [bash(f"git commit -m '{subject}'", f"[docs/retro 1a2b3c4] {subject}\n 1 file changed"),
         bash("git push origin main", fails="remote: error: GH006: Protected branch update failed for main")],
        last="main 브랜치는 보호 규칙 때문에 직접 push할 수 없습니다. 주의: 릴리스 커밋은 PR로 먼저 머지해야 합니다."))
    titled = [r for r in story.rows("shop") if "보호 규칙" in r["title"]]
    assert titled, story.rows("shop")
    assert not [r for r in titled if "retrospective" in r["title"]], titled


@pytest.mark.parametrize("step", ["Rebased onto `origin/main`; it was already up to date.",
                                  "Replied to and resolved the review thread on `src/step.rs`.",
                                  "Branch rebased onto `origin/main` and force-pushed.",
                                  "The commits are amended locally.",
                                  "R5 と R6 のリファクタリングとレビュー指摘の修正が完了しました。",
                                  "`main` is checked out, but it has diverged from `origin/main` by one commit.",
                                  "Clean except for the intended `targets.yaml` change, matching `origin/main`.",
                                  "3 files changed (52 additions, 7 deletions): the retry loop and its tests.",
                                  "3개 파일 변경(52 추가, 7 삭제) — 재시도 루프와 테스트",
                                  "Run it again with the `!` prefix, or unlock the GPG agent, and let me know.",
                                  "GPG 에이전트 잠금을 해제한 뒤 다시 실행해 주세요.",
                                  "署名キーのロックを解除してから、もう一度実行してください。",
                                  "请先解锁 GPG 代理，然后再运行一次。",
                                  "The unrelated untracked file `evals/baseline.json` was left untouched.",
                                  "The struct docs in `config.go` were already updated in the previous round.",
                                  "The header was already bumped to 2.3.1 and the `Makefile` version matches — "
                                  "those don't need further changes.",
                                  "The earlier flush fix and its changelog entry were already committed separately "
                                  "(`4c1d2e9`).",
                                  "重试逻辑已经提交到 `main` 了。",
                                  "Confirmed from the latest `main` before answering.",
                                  "Verified locally against the recorded fixture, twice.",
                                  "All three are additive polish — say the word if you want any of them.",
                                  "Want me to also drop the unused `Retry` option from `client.go`?",
                                  "If you'd rather keep `v1` as the default, I can flip the flag in `config.go`."])
def test_a_step_of_the_agents_workflow_or_the_checkouts_state_is_no_memory(step: str) -> None:
    """What the agent did in that run, with the "I" left out (its diffstat too), how the checkout stood at that
    moment, and what it asked the user to do: the session's line and its git state say where the work stands;
    the next session learns nothing else."""
    assert not worth_saying(_judged(step, "fix", "agent"))


@pytest.mark.parametrize("finding", [
    "When only new files are created, `git checkout .` has nothing to restore and fails.",
    "The branch is behind `origin/main` because the release job pushes its tag commit first.",
    "Fixed the batch size: each batch is now sized on its own in `src/step.rs`.",
    "Pushed tags trigger the release workflow, so a tag must only be pushed from `main`.",
    "Merged PRs are deployed by the `deploy` job within ten minutes.",
    "Changes pushed to `main` are deployed by the `deploy` job within ten minutes.",
    "Please note that the cache is per process, so each worker warms its own.",
    "You can pass `--admin` to merge past the branch policy, which needs an admin token.",
    "Confirmed the CI picture: `test.yml` builds with `-mod=vendor`, and nothing runs `go mod vendor`.",
    "Tested configurations are listed in `docs/matrix.md`, and only those are supported.",
    "The `Summary` struct is already defined in `checkpoint.go` with intent, outcome and open items.",
    "The publish job fails because the version was already published to npm, so bump it first."])
def test_a_finding_that_names_git_is_still_one(finding: str) -> None:
    assert worth_saying(_judged(finding, "gotcha", "agent"))


@pytest.mark.parametrize("asked", ["PR #221, #222 확인하고 머지해주세요",
                                   "Please check PRs #221 and #222 and merge them.",
                                   "Review your changes to find potential issues."])
def test_a_request_for_this_turn_is_no_decision(asked: str) -> None:
    assert not _user_keeps(_judged(asked, "decision", "user"))
    assert not _user_keeps(_judged(asked, "status", "user"))  # nor where some work stands


def test_where_the_user_says_work_stands_is_a_status() -> None:
    assert _user_keeps(_judged("The billing migration is paused until the audit is over.", "status", "user"))


@pytest.mark.parametrize("choice", ["Use Postgres instead of MySQL, because we need JSONB.",
                                    "Please keep the export as a plain module for now.",
                                    "Please use Postgres for the new service."])
def test_a_choice_said_as_a_request_with_its_reason_or_for_now_is_one(choice: str) -> None:
    assert _user_keeps(_judged(choice, "decision", "user"))


def test_not_knowing_is_a_musing_not_a_prohibition() -> None:
    said = cues.signals("This plan, I don't know how you want to process it, a markdown file or the prompt's output")
    assert "prohibit" not in said and "hypothesis" in said
    assert "prohibit" in cues.signals("I don't want `cargo update` in the release task")


@pytest.mark.parametrize(("lead", "joined"), [
    ("The nightly CI job failed on macOS",
     "The nightly CI job failed on macOS — cause: the cache key leaves the OS out"),
    ("v4.1.0 is tagged on GitHub, but npm never published it", "v4.1.0 is tagged on GitHub, but npm never published it"
                                                               " — cause: the cache key leaves the OS out"),
    ("Yes, but only through the custom task `release`", "Yes, but only through the custom task `release`. "
                                                       "The cache key leaves the OS out"),
    ("`release` bumped the lock file on the release PR", "`release` bumped the lock file on the release PR. "
                                                         "The cache key leaves the OS out"),
])
def test_a_cause_is_labelled_the_cause_of_what_came_first_only_when_that_says_something_is_wrong(
        lead: str, joined: str) -> None:
    """What the answer said first stays with the cause (search finds it by it), joined as said when it
    names no symptom: "Yes, only through the custom task — cause: …" would claim what nobody said."""
    from kenning.observer.conclusion import cause_and_fix as _cause_and_fix
    from kenning.observer.gates import symptom

    cause = _judged("The cache key leaves the OS out.", "rootcause", "agent")
    assert _cause_and_fix(cause, None, lead, as_said=not symptom(lead)) == joined


def test_a_cause_found_on_the_way_is_the_turns_when_the_conclusion_only_says_the_fix(story: Story) -> None:
    story.session("shop", Turn(
        "Startup got slow in the last two days.", [edit(ROOT, "cmd/server.go"), bash("go build ./...", "")],
        said=["Let me look at the shutdown changes of the last two days.",
              "The root cause is commit `93a9d73`, which put a hard 10-second deadline around `store.Shutdown()`, "
              "so the process exits before the journals are rotated and startup replays them in full."],
        last="Build succeeds. The fix raises the shutdown deadline in `cmd/server.go` from 10s to 120s, so "
             "`store.Shutdown()` can rotate the journals before the process exits."))
    keys = [r for r in story.active("shop") if r["layer"] == "key"]
    assert [r for r in keys if "93a9d73" in " ".join([r["title"], *r["facts"]])], story.active("shop")


@pytest.mark.parametrize("last", [
    "Now let me look at the float reading loop of `decodeLevel` more carefully:",
    "I'll check what format the snapshots were loaded in before.",
    "让我再看看 `decodeLevel` 的浮点读取循环。",
    "スナップショットの以前の形式を確認してみます。",
    "`decodeLevel`의 부동소수점 읽기 루프를 더 자세히 살펴보겠습니다."])
def test_a_cause_voiced_on_the_way_of_a_turn_that_ended_still_looking_is_no_finding(story: Story, last: str) -> None:
    """The turn ends with the agent saying what it will look at next (the user stepped in: "it must have been the
    shutdown changes"): the slow decoder it suspected on the way was a lead, not the cause."""
    story.session("metrics", Turn(
        "Startup got much slower since yesterday: loading the snapshots takes minutes.",
        [read(ROOT, "store/snapshot.go")],
        said=["Let me look at how the snapshots are loaded.",
              "The root cause is that `decodeLevel` decodes every value with `binary.Read`, which is extremely slow "
              "because of reflection."],
        last=last))
    keys = [r for r in story.active("metrics") if r["layer"] == "key"]
    assert not [r for r in keys if "decodeLevel" in r["title"]], keys
    # Searchable, and said as the lead it was wherever it is shown (search, next to a prompt).
    [lead] = [r for r in story.active("metrics") if "binary.Read" in r["title"]]
    assert lead["title"].startswith("Suspected, not confirmed: "), lead


@pytest.mark.parametrize("guess", [
    "It looks like the root cause is that SDK 2.0 removed `mcp.server.fastmcp`, so the import fails.",
    "The import fails because the `fastmcp` module path seems to have changed in SDK 2.0.",
    "MCP SDK 2.0에서 `mcp.server.fastmcp` 모듈 경로가 변경된 것으로 보입니다."])
def test_a_guess_on_the_way_is_not_the_turns_cause(guess: str) -> None:
    """Said while looking, as a guess; the conclusion gives no cause. Before a guess was a guess, a cause
    found on the way stood for the turn's (the test above); a guess never does."""
    from dataclasses import replace

    from kenning.observer.compose import _sure
    from kenning.observer.reading import Reading

    found = replace(_judged("The root cause is that SDK 2.0 removed `mcp.server.fastmcp`, so the import fails.",
                            "rootcause", "agent"), origin="progress")
    guessed = replace(_judged(guess, "rootcause", "agent"), origin="progress")
    fix = _judged("Updated the import in `src/server.py` to the SDK's new module path.", "fix", "agent")
    assert _sure(Reading(agent=[found, fix]), "rootcause") == [found]
    assert _sure(Reading(agent=[guessed, fix]), "rootcause") == []


@pytest.mark.parametrize(("premise", "told"), [
    ("Keep in mind that production runs on ARM64 machines.", "runs on ARM64 machines"),
    ("假设每个集群有上千个节点", "上千个节点"), ("前提として、本番は ARM64 で動きます", "ARM64 で動きます")])
def test_a_premise_the_user_gives_the_work_is_told_to_the_next_session(story: Story, premise: str,
                                                                      told: str) -> None:
    """Typed while the agent worked, four words or one sentence: the next session must start from it too."""
    story.session("shop", Turn("Make the journal flush faster.", [edit(ROOT, "src/wal.go")],
                               during=[("queued", premise)], last="Only files written since the last flush "
                                                                   "are flushed now, in `src/wal.go`."))
    assert told in story.context("shop")


def test_a_session_whose_outcome_a_row_above_says_is_not_listed_again(story: Story) -> None:
    story.session("shop", Turn(
        "The nightly export fails.",
        [bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character"),
         edit(ROOT, "jobs/export.py"), bash("python -m jobs.export", "exported 10 rows")],
        last="The export crashed because the CSV writer in `jobs/export.py` opened files without an encoding. "
             "Fixed it by opening the file with encoding='utf-8' in the CSV writer."))
    story.session("shop", Turn("Add a CSV header row.", [edit(ROOT, "jobs/header.py")], last=""))  # where we left off
    context = story.context("shop")
    [key] = [r for r in story.active("shop") if r["layer"] == "key" and "without an encoding" in r["title"]]
    assert context.count("without an encoding") == 1 and f"#{key['id']} " in context, context
    assert "The nightly export fails" not in context, context  # its line would only point at the row


def _commit(sha: str, subject: str) -> dict[str, object]:
    return bash(f"git commit -m '{subject}'", f"[main {sha}] {subject}\n 1 file changed")


def test_pushed_is_said_of_what_was_committed_before_the_push_not_after(story: Story) -> None:
    release = Turn("Release 1.2 and write the retro.", [
        edit(ROOT, "CHANGELOG.md"), _commit("1a2b3c4", "chore(release): v1.2.0"),
        bash("git push origin main", "To github.com:o/shop.git\n   0a1b2c3..1a2b3c4  main -> main"),
        edit(ROOT, "docs/retro.md"), _commit("5d6e7f8", "docs: retro of v1.2.0")], last="Released; retro written.")
    story.session("shop", release)
    state = next(ln for ln in story.context("shop").splitlines() if ln.startswith("State:"))
    # (named once: "committed" gives its subject, the unpushed part its hash)
    assert "pushed" in state and "later commits not pushed: 5d6e7f8" in state, state
    assert state.count("docs: retro of v1.2.0") == 1, state
    # The same session's next turn pushes it: nothing is left unpushed.
    story.session("ship", release, Turn("Push the retro.", [bash("git push origin main", "main -> main")],
                                        last="Pushed."))
    state = next(ln for ln in story.context("ship").splitlines() if ln.startswith("State:"))
    assert "pushed" in state and "not pushed" not in state, state


@pytest.mark.parametrize(("command", "printed", "branch"), [
    ("git push -u origin HEAD", "To github.com:o/shop.git\n * [new branch]      HEAD -> fix/azure\n", "fix/azure"),
    ("git push origin HEAD", "To github.com:o/shop.git\n   0a1b2c3..1a2b3c4  HEAD -> fix/azure\n", "fix/azure"),
    ("git push -u origin HEAD", "Everything up-to-date", "chore/tidy"),  # the branch its commit was made on
    ("git push origin feat/x", "", "feat/x"),
    # the remote refused the branch (a protected main), only the tag went up: no branch was pushed
    ("git push origin main --tags 2>&1 | tail -5",
     " * [new tag]         v1.2.0 -> v1.2.0\n ! [remote rejected] main -> main (protected branch hook declined)\n"
     "error: failed to push some refs to 'github.com:o/shop.git'", "")])
def test_a_push_is_said_of_the_branch_it_went_to(command: str, printed: str, branch: str) -> None:
    from kenning.observer import git_actions
    from kenning.observer.evidence import Command

    cmds = [Command("git commit -m 'Tidy'", True, "[chore/tidy 1a2b3c4] Tidy\n 1 file changed", 1.0, 1),
            Command(command, True, printed, 2.0, 2)]
    assert git_actions.read(cmds).pushed == [branch]


@pytest.mark.parametrize("said", ["Three changes were needed for `vet-lint` v2:",
                                  "为了 `vet-lint` v2，需要做以下三处修改：",
                                  "`vet-lint` v2 에 맞추려면 다음 세 가지를 바꿔야 했습니다:"])
def test_a_sentence_that_introduces_a_list_names_no_subject(said: str) -> None:
    """It says that a list follows (the colon that ended it is gone from the unit), not what the turn was about
    or what changed: no change or cause is titled by it."""
    from dataclasses import replace

    from kenning.observer.conclusion import topic
    from kenning.observer.reading import Reading

    [intro, first] = units(said + "\n\n1. **Formatters are separate**: `gofumpt` moved to a `formatters` section.")[:2]
    assert intro.introduces and not first.introduces
    lead = replace(_judged(said, "noise", "agent"), unit=intro, worth=0.3)
    item = replace(_judged("`gofumpt` moved to a `formatters` section.", "change", "agent"), unit=first, worth=0.3)
    assert topic(Reading(agent=[lead, item]), [], "") == "`gofumpt` moved to a `formatters` section"


def test_a_commit_in_a_scratch_worktree_the_command_removes_is_no_commit_of_the_project() -> None:
    """A script tries the release step on a throw-away worktree (committed there, removed on exit): what the
    session committed is the fix it made in the project, not "test release hardening"."""
    from kenning.observer import git_actions
    from kenning.observer.evidence import Command

    scratch = ('set -euo pipefail\nTMP=$(mktemp -d /tmp/release-check.XXXXXX)\ngit worktree add --detach "$TMP" HEAD\n'
               'trap \'git worktree remove --force "$TMP"\' EXIT\n(\n  cd "$TMP"\n  git add scripts/release.ts\n'
               '  git commit --quiet -m "try the release hardening"\n  bun scripts/release.ts finalize v1.2.1\n)')
    cmds = [Command(scratch, True, "v1.2.1", 1.0, 1),
            Command("git commit -m 'fix(release): recover the npm publish'", True,
                    "[main fd07a0a] fix(release): recover the npm publish\n 2 files changed", 2.0, 2),
            # a worktree kept for a pull request's branch is the project's (nothing removes it)
            Command("cd /tmp/pr135-wt && git add -A && git commit -q -m 'worker: bump the sync library'", True, "",
                    3.0, 3),
            # an old worktree removed before a commit in the checkout: the commit is the project's
            Command("git worktree remove ../old-wt && git commit -m 'docs: the release steps'", True, "", 4.0, 4)]
    assert [c.subject for c in git_actions.read(cmds).commits] == [
        "fix(release): recover the npm publish", "worker: bump the sync library", "docs: the release steps"]


def test_a_push_the_remote_refused_is_no_push() -> None:
    from kenning.observer import git_actions
    from kenning.observer.evidence import Command

    refused = (" ! [remote rejected] main -> main (protected branch hook declined)\n"
               "error: failed to push some refs to 'github.com:o/shop.git'")
    actions = git_actions.read([Command("git push origin main 2>&1 | tail -3", True, refused, 1.0, 1)])
    assert actions.pushed == [] and not actions.pushed_at


def test_a_pull_request_the_user_says_is_merged_is_not_left_opened(story: Story) -> None:
    """The merge happened on the forge, where no command of the session shows it; the user's word says so."""
    opened = Turn("Make a PR for the fix.", [
        edit(ROOT, "src/batch.py"), _commit("1a2b3c4", "fix: respect the argument size limit"),
        bash("git push -u origin fix/args", " * [new branch]      fix/args -> fix/args"),
        bash("gh pr create --fill", "https://github.com/o/shop/pull/1066")], last="Opened the PR.")
    story.session("shop", opened, Turn("What is structured argv support?", last="A list of arguments, not a string."))
    state = next(ln for ln in story.context("shop").splitlines() if ln.startswith("State:"))
    assert "PR #1066 opened" in state and "merged" not in state, state
    story.session("ship", opened, Turn("ok 1066 is merged, once #1067 is merged we release",
                                       last="Good; I'll start on the structured argv."))
    state = next(ln for ln in story.context("ship").splitlines() if ln.startswith("State:"))
    assert "merged #1066" in state and "opened" not in state and "#1067" not in state, state


@pytest.mark.parametrize(("words", "merged"), [
    ("1066 is merged", ["#1066"]), ("I merged #12 this morning", ["#12"]), ("PR 7 has been merged", ["#7"]),
    ("7 is merged", []), ("PR 70 has been merged", ["#70"]), ("#12 머지했어요", ["#12"]),
    ("#12 をマージしました", ["#12"]),
    ("1066 已经合并了", ["#1066"]), ("is 1066 merged?", []), ("check if #55 was merged", []),
    ("merged 3 files into one", [])])
def test_the_users_word_that_a_pull_request_is_merged(words: str, merged: list[str]) -> None:
    from kenning.observer.git_actions import said_merged

    assert said_merged(words) == merged


def test_the_state_with_commits_after_the_push_reads_back_as_written() -> None:
    """The next batch of a session starts from the state the last one wrote (summary.parse_state)."""
    from kenning.observer.summary import STATE, State, parse_state

    s = State(commits=["1a2b3c4 chore(release): v1.2.0", "5d6e7f8 docs: retro"], pushed=["main"],
              unpushed=["5d6e7f8 docs: retro"])
    back = parse_state(f"{STATE}{s.line()}")
    assert back.commits == s.commits and back.pushed == s.pushed and back.unpushed == s.unpushed, s.line()


def test_work_reported_complete_is_where_its_workstream_stands_not_a_finding(story: Story) -> None:
    story.session("shop", Turn("Finish moving the invoices to the v2 schema.",
                               [edit(ROOT, "migrations/0002_v2.sql"), bash("make migrate", "ok")],
                               last="The billing migration is done."))
    rows = [r for r in story.active("shop") if "billing migration is done" in r["title"]]
    assert [r["kind"] for r in rows] == ["status"], story.active("shop")


def test_a_cause_that_only_points_back_follows_the_fix_it_points_at() -> None:
    """"This prevents the TypeError …" said with nothing before it: after the fix it reads as said of it."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    cause = _judged("This prevents the TypeError when the runner stores a raw Error instead of a result.",
                    "rootcause", "agent")
    fix = _judged("Each debug write in `src/debug.ts` is now wrapped, so a failed write is logged, never fatal.",
                  "fix", "agent")
    drafts, _used = agent_memories(Reading(agent=[cause, fix]), 0.0, "prompt 1", ["src/debug.ts"], [])
    [memory] = [d for d in drafts if d.kind in ("rootcause", "fix")]
    assert memory.title.startswith("Each debug write"), memory.title
    assert "— this prevents the TypeError" in memory.title, memory.title


@pytest.mark.parametrize("report", ["PR #221 (hypothesis bump): auto-merge 활성화 완료 — CI 통과 후 자동 머지됩니다",
                                    "Release notes for v0.16.0 are done and the tag is pushed to the release branch"])
def test_a_report_of_what_was_done_is_no_root_cause(report: str) -> None:
    """Whatever the role model says: nothing in it says why something went wrong, so no fix is paired with it."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    cause = _judged(report, "rootcause", "agent")
    fix = _judged("`mcp.server.fastmcp` moved: the import in `server.py` needs the new module path.", "fix", "agent")
    drafts, _used = agent_memories(Reading(agent=[cause, fix]), 0.0, "prompt 1", [], [])
    assert not [d for d in drafts if d.kind in ("rootcause", "fix")], drafts


def test_a_report_of_what_was_done_does_not_lead_a_fix_as_its_subject() -> None:
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    report = _judged("PR #221 (hypothesis bump): auto-merge 활성화 완료 — CI 통과 후 자동 머지됩니다", "fact", "agent")
    fix = _judged("Changed the import in `server.py` to the new `mcp.server.fastmcp` module path.", "fix", "agent")
    drafts, _used = agent_memories(Reading(agent=[report, fix], words="The type-check fails on PR #222."), 0.0,
                                   "prompt 1", ["server.py"], [])
    [memory] = [d for d in drafts if d.kind in ("rootcause", "fix")]
    assert "PR #221" not in memory.title and memory.title.startswith("Changed the import"), memory.title


def test_a_plan_decision_that_only_points_back_is_not_kept_alone() -> None:
    from kenning.observer.compose import plan_memories
    from kenning.observer.reading import Reading

    plan = [_judged("This is safe because evaluations always run on local repositories or our own clones.",
                    "decision", "agent"),
            _judged("Run `git clean -fd` in `resetWorkingDirectory` after every remediation attempt, so that the "
                    "next attempt starts from a clean tree.", "decision", "agent")]
    titles = [d.title for d in plan_memories(Reading(plan=plan), 0.0, "prompt 1")]
    assert titles and not [t for t in titles if t.startswith("This is safe")], titles


def test_a_plan_step_that_says_no_reason_is_no_key_decision() -> None:
    """How the plan is to be built ("Replace all 4 early returns with …") is told by the code once built."""
    from kenning.observer.compose import plan_memories
    from kenning.observer.reading import Reading

    plan = [_judged("Replace all 4 early `return` statements with `log.Errorf(...)` + `continue`.", "decision",
                    "agent"),
            _judged("Keep the archive format at v2 because older readers cannot parse v3.", "decision", "agent")]
    titles = [d.title for d in plan_memories(Reading(plan=plan), 0.0, "prompt 1")]
    assert titles == ["Keep the archive format at v2 because older readers cannot parse v3."], titles


def test_where_we_left_off_says_the_latest_session_once(story: Story) -> None:
    """Its request, its state and what it did are said under "Where we left off", once: not also as a line of
    recent work, and "Done" repeats neither the commit the state line names nor a report that it was made."""
    story.session("shop", Turn("Add the CSV export.", [edit(ROOT, "jobs/export.py")], last="CSV export added."))
    story.session("shop", Turn("Speed up the nightly export.", [
        edit(ROOT, "jobs/export.py"), _commit("c653b3c", "Stream rows instead of loading the table")],
        last="Commit `c653b3c` created successfully."))
    context = story.context("shop")
    tail = context[context.index("## Where we left off"):]
    assert context.count("Speed up the nightly export") == 1 and "Worked on: Speed up the nightly export" in tail
    assert context.count("Stream rows instead of loading the table") == 1, context
    assert "created successfully" not in context, context
    assert "Add the CSV export" in context[:context.index("## Where we left off")]  # the earlier session: a line


@pytest.mark.parametrize("said", ["Commit `c653b3c` created successfully.", "머지 완료 (방금)", "コミット完了しました",
                                  "The PR was opened.", "提交完成", "PR #12 머지 완료.", "PR #12", "Pushed to main."])
def test_a_git_step_reported_done_is_left_to_the_state_line(said: str) -> None:
    from kenning.context.left_off import _told_by_state

    assert _told_by_state(said, "committed c653b3c Stream rows; pushed")


@pytest.mark.parametrize("said", ["Commit messages now follow the conventional format.", "Merged the two caches "
                                  "into one LRU, which halves memory", "Changed export.py: rows are streamed",
                                  "エラーメッセージの文言を維持", "Fixed the build"])
def test_work_that_only_mentions_git_is_still_done(said: str) -> None:
    from kenning.context.left_off import _told_by_state

    assert not _told_by_state(said, "committed c653b3c Stream rows instead of loading the table; pushed")


@pytest.mark.parametrize("item", ["Uses a 512-byte stack buffer for short keys to avoid heap allocations.",
                                  "Adds a 30s timeout on the `<-done` waits to prevent hangs."])
def test_a_list_item_without_its_subject_is_no_memory_alone(item: str) -> None:
    """The subject is the label of the list item it came from; alone, nobody knows what uses the buffer."""
    from kenning.observer.compose import dangling

    assert dangling(_judged(item, "decision", "agent"))
    assert not dangling(_judged("The encoder uses a 512-byte stack buffer for short keys.", "decision", "agent"))


@pytest.mark.parametrize(("label", "item", "title"), [
    ("More prominent buttons", "larger text (`text-sm`), bigger icons (`w-4 h-4`)",
     "More prominent buttons: larger text (`text-sm`), bigger icons (`w-4 h-4`)"),
    ("Encoder", "Uses a 512-byte stack buffer for `short` keys",
     "Encoder: Uses a 512-byte stack buffer for `short` keys"),
    ("Encoder", "The encoder uses a 512-byte stack buffer for `short` keys",
     "The encoder uses a 512-byte stack buffer for `short` keys")])  # says its subject: as said
def test_a_list_item_that_goes_on_from_its_label_is_titled_with_the_label(label: str, item: str, title: str) -> None:
    from kenning.observer.reading import Reading
    from kenning.observer.titles import self_contained

    assert self_contained(item, label, Reading(), []) == title


def test_a_verdict_on_a_text_it_does_not_say_is_no_memory_alone() -> None:
    from kenning.observer.compose import dangling

    assert dangling(_judged("The diagnosis is credible, but the fix belongs in the hook runner.", "decision", "agent"))
    assert not dangling(_judged("The diagnosis cache is keyed by the file's hash.", "fact", "agent"))


def test_what_was_decided_about_the_code_a_cause_names_is_its_fix() -> None:
    """The turn found the cause and decided what to do about the code it names: one row says both, not a cause
    without its fix beside a decision nobody ties to it."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    cause = _judged("`writer.Sync()` in `WriteArchiveFile()` is called after every single file, so the disk is "
                    "synced thousands of times per run.", "rootcause", "agent")
    decided = _judged("Keep `writer.Sync()` out of `WriteArchiveFile` and leave it to the caller, because one sync "
                      "per host is enough.", "decision", "agent")
    drafts, _used = agent_memories(Reading(agent=[cause, decided]), 0.0, "prompt 1", ["archive/write.go"], [])
    [memory] = [d for d in drafts if "WriteArchiveFile" in d.title]
    assert memory.title.startswith("`writer.Sync()` in `WriteArchiveFile()` is called"), memory.title
    assert "— fix: keep `writer.Sync()` out of" in memory.title, memory.title


def test_where_we_left_off_does_not_say_again_what_a_row_above_says(story: Story) -> None:
    story.session("shop", Turn("Add the CSV export.", [edit(ROOT, "jobs/export.py")], last="CSV export added."))
    story.session("shop", Turn("Why does the nightly export crash?", [
        bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character"),
        edit(ROOT, "jobs/export.py"), _commit("a1b2c3d", "Open CSV files as UTF-8")],
        last="Commit `a1b2c3d` created successfully."), Turn("And why did nobody notice?", [], last=(
            "The export crashed because the CSV writer in `jobs/export.py` opened files without an encoding, "
            "and the CI machines run with a UTF-8 locale.")))
    context = story.context("shop")
    assert context.count("opened files without an encoding") == 1, context


def test_a_short_chinese_finding_listed_above_is_not_said_again_below(story: Story) -> None:
    """A Korean project's "Where we left off" said again two findings its key rows listed ("브랜치 보호 정책으로
    일반 머지가 차단됩니다."): a title under 30 characters was never matched, and 25 Korean characters say as much as
    50 Latin letters."""
    story.session("shop", Turn("Add the CSV export.", [edit(ROOT, "jobs/export.py")], last="CSV export added."))
    story.session("shop", Turn("夜间导出为什么崩溃？", [
        bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character")],
        last="根因：`export.py` 打开文件时没有指定编码。"))
    context = story.context("shop")
    assert context.count("打开文件时没有指定编码") == 1, context


def test_the_users_rule_against_a_command_retires_the_finding_that_says_it_is_run() -> None:
    """"I don't want `pip-compile --upgrade` in the nightly job" after the agent said the job runs it: the next
    session is told the rule, not the old state of the job beside it."""
    from kenning.memory.supersession import Memory, replaces

    rule = Memory.of(9, "decision", "rule", "I don't want `pip-compile --upgrade` in the nightly job, renovate "
                     "bumps requirements.txt", 200.0, kind="rule")
    said = Memory.of(5, "discovery", "key", "The nightly job in `ci/nightly.yml` also runs `pip-compile --upgrade`, "
                     "which rewrites requirements.txt", 100.0, kind="fact")
    assert replaces(rule, said)
    # A finding about another use of the same tool stays.
    other = Memory.of(6, "discovery", "key", "`pip-compile` needs the `--resolver=backtracking` flag on old pips",
                      100.0, kind="gotcha")
    assert not replaces(rule, other)


def test_a_fix_or_plan_decision_that_only_points_back_is_not_a_row_alone() -> None:
    from kenning.observer.compose import agent_memories, plan_memories
    from kenning.observer.reading import Reading

    fix = _judged("This prevents `TypeError: undefined is not an object` when the pool stores a raw Error.",
                  "fix", "agent")
    drafts, _used = agent_memories(Reading(agent=[fix]), 0.0, "prompt 1", ["src/pool.ts"], [])
    assert not [d for d in drafts if d.kind in ("fix", "rootcause")], drafts
    [step] = units("Pass `--trust` to the CLI. This is safe because it only ever runs on our own clones.")[1:]
    decided = Judged(step, role="decision", p=0.95, speaker="plan", origin="plan", worth=0.95)
    titles = [d.title for d in plan_memories(Reading(plan=[decided]), 0.0, "prompt 1")]
    assert titles == ["Pass `--trust` to the CLI. This is safe because it only ever runs on our own clones."], titles


def test_the_plans_cause_and_what_the_plan_decided_about_its_code_are_one_row() -> None:
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    plan = ("## Root cause\n\nIn `WriteArchiveFile()` (`archive.go:115`), `w.writer.Sync()` is called after every "
            "archive file.\n\n## Change\n\nMove the `Sync()` out of `WriteArchiveFile` and into the caller, "
            "syncing once per host instead of once per archive file.\n")
    cause, change = (u for u in units(plan) if "`" in u.text)
    judged = [Judged(cause, role="rootcause", p=0.95, speaker="plan", origin="plan", worth=0.95),
              Judged(change, role="decision", p=0.95, speaker="plan", origin="plan", worth=0.95)]
    drafts, used = agent_memories(Reading(plan=judged), 0.0, "prompt 1", ["archive.go"], [])
    [memory] = [d for d in drafts if d.kind == "rootcause"]
    assert memory.title.startswith("In `WriteArchiveFile()`") and "— fix: move the `Sync()` out of" in memory.title
    assert judged[1] in used  # (the plan's own row of it is left out: kenning/observer/providers/rules.py)


def test_a_cause_that_points_back_takes_the_sentence_it_points_at() -> None:
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    _first, then = units("The lockfile bump moved `pklr` from 1.1.0 to 1.1.1. That made `hk test` print nothing, "
                        "so the Bats suite failed.")
    cause = Judged(then, role="rootcause", p=0.95, speaker="agent", origin="final", worth=0.95)
    fix = _judged("Pinning `pklr` back to 1.1.0 in `Cargo.lock` makes `hk test` list the tests again.", "fix", "agent")
    drafts, _used = agent_memories(Reading(agent=[cause, fix]), 0.0, "prompt 1", ["Cargo.lock"], [])
    [memory] = [d for d in drafts if d.kind == "rootcause"]
    assert memory.title.startswith("The lockfile bump moved `pklr` from 1.1.0 to 1.1.1. That made"), memory.title


@pytest.mark.parametrize("place", ["Line ~297 (worker `errs > 0`): log and `continue` instead of `return`.",
                                   "On line 42 the loop returns early instead of continuing."])
def test_a_line_number_is_no_subject(place: str) -> None:
    from kenning.observer.compose import dangling

    assert dangling(_judged(place, "decision", "agent"))


def test_a_cause_the_turn_committed_a_fix_of_says_so() -> None:
    """Said in the present tense ("uses a non-blocking send"), it would read as how the code is now."""
    from kenning.observer import git_actions
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    cause = _judged("The root cause: `RotateShards` uses a non-blocking send on rotation channels buffered at only 64.",
                    "rootcause", "agent")
    fixed = git_actions.Actions(commits=[git_actions.Commit("docs: note the shard layout", hash="1a2b3c4d"),
                                         git_actions.Commit("fix: shard rotation skipped on a full rotation channel",
                                                            hash="88c6586f")])
    drafts, _used = agent_memories(Reading(agent=[cause], actions=fixed), 0.0, "prompt 1", ["wal.go"], [])
    [memory] = [d for d in drafts if d.kind == "rootcause"]
    assert memory.title.endswith("— fixed in 88c6586 fix: shard rotation skipped on a full rotation channel"), \
        memory.title
    unrelated = git_actions.Actions(commits=[git_actions.Commit("fix: typo in the README", hash="5e6f7a8b")])
    drafts, _used = agent_memories(Reading(agent=[cause], actions=unrelated), 0.0, "prompt 1", ["wal.go"], [])
    assert not [d for d in drafts if "fixed in" in d.title], drafts


@pytest.mark.parametrize(("said", "fragment"), [
    ("The example `configs/config.json` intentionally omits it since the default is backward compatible.", True),
    ("The loader skips them when the feature flag is off.", True),
    ("The cache key includes the tenant so every lookup uses it.", False),
    ("The example config omits `max-wal-size` since 0 (unlimited) is the default.", False)])
def test_a_sentence_that_leaves_what_it_acts_on_to_a_pronoun_is_a_fragment(said: str, fragment: bool) -> None:
    from kenning.observer.titles import dangling

    assert dangling(_judged(said, "decision", "agent")) is fragment


def test_a_problem_heading_over_items_none_of_which_can_stand_gives_no_row() -> None:
    """(and no error: the rows of a listed problem are only what can be said of it)"""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading
    from kenning.observer.units import units

    text = "**1. Send-on-closed-channel panic** (`wal.go`):\n- Summary\n- I checked it"
    judged = [Judged(u, role="rootcause", p=0.9, speaker="agent", origin="final", worth=0.9) for u in units(text)]
    assert [j.unit.heading for j in judged] == ["Send-on-closed-channel panic"] * 2
    drafts, _used = agent_memories(Reading(agent=judged), 0.0, "prompt 1", ["wal.go"], [])
    assert not [d for d in drafts if d.title.startswith("Send-on-closed-channel panic — fix")], drafts


def test_facts_of_a_message_the_user_brings_in_are_not_stated_by_the_user() -> None:
    """A review, an issue or a report pasted as the prompt says how things looked to its author: its facts are
    not the user's statements (its decisions are still theirs); a short message's fact is."""
    from kenning.observer.reading import LONG_PROMPT, read_turn
    from kenning.observer.user_said import user_memories
    from kenning.records import Event

    review = ("Here is the review of the branch. The new `mirror` mode is mostly additive. The JSON field `mode` is "
              "renamed to `transfer_mode`, which breaks consumers. ") + " ".join(
        f"Point {n}: the helper in `sync/step{n}.go` repeats the guard." for n in range(LONG_PROMPT))
    turn = read_turn(Event(1, "UserPromptSubmit", 0.0, {"prompt": review}), [], None, [])
    assert len(turn.user) >= LONG_PROMPT and turn.brought == turn.user
    short = read_turn(Event(1, "UserPromptSubmit", 0.0, {"prompt": "The JSON field `mode` is now `transfer_mode`."}),
                      [], None, [])
    assert short.user and not short.brought

    fact, decision = _judged("The JSON field `mode` is renamed to `transfer_mode`.", "fact", "user"), \
        _judged("Keep `mode` as a deprecated alias until the next major release.", "decision", "user")
    turn.user, turn.brought = [fact, decision], [fact, decision]
    assert [m.kind for m in user_memories(turn, 0.0, "prompt 1")] == ["decision"]
    turn.brought = []
    assert [m.kind for m in user_memories(turn, 0.0, "prompt 1")] == ["fact", "decision"]


@pytest.mark.parametrize(("said", "made"), [
    ("If we stop sending the full index, the server no longer has to diff it.", False),
    ("The fork job could reuse the `load` output, and the extra input could then be deleted.", False),
    ("You may choose to keep the relay limited to branch updates.", False),
    ("Keeping both parsers looks like leftover work rather than a final design.", False),
    ("Si on garde l'ancien format, il faudra une migration.", False),
    ("如果以后要支持多租户，可以考虑把配置拆开。", False),
    ("We keep the relay limited to branch updates, because tag rewrites would need a force push.", True),
    ("The export stays a plain module: a CLI would duplicate the API.", True),
])
def test_an_agents_decision_is_one_made_not_one_weighed(said: str, made: bool) -> None:
    from kenning.observer.gates import weighs_a_choice

    assert weighs_a_choice(said) is not made
    kinds = _kinds_of_answer("What about the relay?", said, "decision", "src/relay.py")
    assert ("decision" in kinds) is made, kinds


@pytest.mark.parametrize("trace", [
    "    at div\n    at http://localhost:3000/chunk-4f2a.js:30815:13\n"
    "    at TreeNodeRenderer (http://localhost:3000/chunk-4f2a.js:33190:27)",
    'Traceback (most recent call last):\n  File "app/tree.py", line 41, in render\n'
    '  File "app/keys.py", line 7, in key_of'])
def test_a_stack_trace_the_user_pastes_gives_no_rule_or_decision_of_theirs(story: Story, trace: str) -> None:
    """The console's warning ("Never call hooks inside loops …; always call them at the top level", "Keys should be
    unique so that …") is the program's output, not a rule or decision the user stated; what the user wrote
    before it still counts."""
    story.session("web", Turn(
        "From now on, always run the frontend checks before you commit. Seems to work, but the console is full "
        "of warnings:\nWarning: Never call hooks inside loops, conditions or nested functions; always call them at "
        "the top level. Keys should be unique so that components maintain their identity across updates.\n"
        f"{trace}\n\nAnd from now on, never commit a console warning: treat each one as a failing test.",
        [edit(ROOT, "web/tree.tsx")]))
    mine = [r for r in story.active("web") if r["why"].get("by") == "user"]
    assert sorted(r["title"] for r in mine) == [
        "From now on, always run the frontend checks before you commit",
        "From now on, never commit a console warning: treat each one as a failing test"], mine


@pytest.mark.parametrize(("said", "role", "kept"), [
    ("Keys should be unique so that components maintain their identity across updates.", "decision", False),
    ("Overwriting is simply the default behaviour of a mirror, with no special mode for it.", "fact", False),
    ("缓存应该在写入时失效，这样读到的数据总是最新的。", "decision", False),
    # tied to the project: a name in it, a Latin name in CJK text, or what "we" do
    ("Keys of the `TreeView` items must be unique, or the tree drops the duplicates.", "decision", True),
    ("tij はバイナリクレートなので、公開メソッドの互換性は考慮不要と判断しました。", "decision", True),
    ("We keep the mirror overwrite-only, because nobody consumes the old refs.", "decision", True),
    ("**`flushAll()` → `flushDirty()`**: only flushes the files written since the last flush.", "decision", True),
    # a cause, and a tool's trap, can be said in plain words
    ("The cache was never invalidated on write, so readers saw stale totals.", "rootcause", True),
    ("The sed did not expand the tab escape, it wrote a literal t instead.", "gotcha", True),
])
def test_the_agents_reasoning_in_general_terms_is_no_memory_of_the_project(said: str, role: str, kept: bool) -> None:
    """A decision or fact of the agent that names nothing of the project and says nothing of what "we" do is
    general reasoning (1 of 15 such sentences in the labelled real sessions is worth keeping)."""
    from kenning.observer.gates import about_the_project

    unit = units(said)[0]
    assert about_the_project(unit.text, unit.heading) is kept or role in ("rootcause", "gotcha")
    kinds = _kinds_of_answer("Why do the totals look stale?", said, role, "src/cache.py")
    assert (role in kinds) is kept, kinds


@pytest.mark.parametrize(("said", "role", "kept"), [
    ("The public page shows the failing step was `test:nogit` on macOS, but the logs need a sign-in.", "fact", False),
    ("The comment at line 310 says the journals are deleted per host, so this is intentional.", "decision", False),
    ("Discussion #577 reports that `daemon clear` is confusing when caches are scoped per profile.", "fact", False),
    ("评论里提到 `/v1/export` 接口已经废弃了。", "fact", False),
    # a reviewer's word, a person's or a bot's
    ("The verifier flagged that the \"repin to v0.7.0\" line in the PR description isn't load-bearing.", "fact",
     False),
    ("Greptile independently flagged the same defect in `branch_guard.rs` plus a test gap.", "fact", False),
    ("리뷰어가 `load()`에서 핸들이 누수된다고 지적했습니다.", "rootcause", False),
    ("The author says clearing without `--profile` only clears the default profile's cache.", "rootcause", False),
    ("The bot token lacks the `workflow` scope, so the push of `.github/workflows/ci.yml` failed.", "rootcause",
     True),
    # what the agent found, in a command's output or in the code: its own finding
    ("The output shows that the cache key of `setup-node` leaves the OS out.", "fact", True),
    ("The log level shows up twice because `init_logging()` registers the handler in both entry points.",
     "rootcause", True),
])
def test_what_a_page_or_comment_says_is_its_authors_word_not_the_agents_finding(said: str, role: str,
                                                                                  kept: bool) -> None:
    from kenning.observer.gates import retells_a_source

    assert retells_a_source(said) is not kept
    kinds = _kinds_of_answer("Why does the nightly job fail?", said, role, "ci/nightly.yml")
    assert (role in kinds) is kept, kinds


@pytest.mark.parametrize(("said", "fix"), [
    ("The import path `mcp.server.fastmcp` needs to be fixed for the new SDK.", False),
    ("`mcp.server.fastmcp` → 새 모듈 경로 변경 + type-check 수정이 필요합니다.", False),
    ("The parser must be fixed before the release.", False),
    ("Fixed the import path: the new SDK moved `fastmcp` to `mcp.server.mcpserver`.", True),
])
def test_a_fix_still_to_make_is_no_fix(said: str, fix: bool) -> None:
    kinds = _kinds_of_answer("The server crashes on start since the SDK upgrade.", said, "fix", "src/server.py")
    assert ("fix" in kinds) is fix, kinds


@pytest.mark.parametrize(("said", "kept"), [
    ("The guidance text explicitly says to default to a plain update, overriding the decision criteria.", False),
    ("Each node of the decision tree is scored once per request.", False),
    ("We decided to score each node once, so that a request never pays twice.", True),
    ("Keep the export a plain module, because a CLI would duplicate the API.", True),
])
def test_the_noun_decision_alone_does_not_make_a_plans_sentence_a_decision(said: str, kept: bool) -> None:
    from kenning.observer.compose import plan_memories
    from kenning.observer.reading import Reading

    r = Reading(origin="plan", plan=[_judged(said, "decision", "user")])
    assert bool(plan_memories(r, 0.0, "prompt 1")) is kept


@pytest.mark.parametrize(("said", "kept"), [
    ("Update the cache so that it also holds the rendered pages, not only the raw rows.", False),
    ("Mention that skills can carry docs about the project's layout, whereas standards are bullet rules.", True),
    ("Make a PR that fixes it; the staging box runs the same kernel.", False),
    ("请把导出的编码改成 UTF-8，下游系统只认这个。", False),
    ("このファイルの文字コードは UTF-8 にしてください。", False),
    ("내보내기 파일 인코딩을 UTF-8로 해 주세요.", False),
    ("The staging box runs the same kernel as production.", True),
    ("Keep in mind that production runs on ARM64 machines.", True),  # a premise, brought in
    ("Note that the staging box runs the same kernel as production.", True),
    ("我查了一下，原因是连接池太小，高峰期请求都在排队。", True),   # 请求 is a noun: no order
])
def test_an_order_of_the_user_is_no_fact_or_cause(said: str, kept: bool) -> None:
    assert _user_keeps(_judged(said, "fact", "user")) is kept
    assert _user_keeps(_judged(said, "rootcause", "user")) is kept


@pytest.mark.parametrize("printed, branch", [
    ("[detached HEAD 1e4eb9d] refactor: extract helpers\n 10 files changed", "detached HEAD"),
    ("[HEAD détachée 1e4eb9d] refactor: extract helpers\n 10 files changed", "HEAD détachée"),
    ("[main (root-commit) 1e4eb9d] refactor: extract helpers\n 10 files changed", "main"),
    ("[feat/x 1e4eb9d] refactor: extract helpers\n 10 files changed", "feat/x")])
def test_a_commit_on_a_detached_head_keeps_its_hash_and_where_it_was_made(printed: str, branch: str) -> None:
    """A commit made on a detached HEAD (as a jj-colocated checkout is) is on no branch: its hash is what the
    next session needs to find it ("After 1e4eb9d the checkout is on a detached HEAD")."""
    from kenning.observer import git_actions
    from kenning.observer.evidence import Command

    commit = git_actions.read([Command("git commit -m 'refactor: extract helpers'", True, printed, 1.0, 1)]).commits[0]
    assert (commit.hash, commit.branch, commit.subject) == ("1e4eb9d", branch, "refactor: extract helpers")


@pytest.mark.parametrize(("said", "role", "kept"), [
    ("If you do not care about wire size, omitting `have`s buys you three simplifications.", "fact", False),
    ("If the target requires a self-contained pack, relaying with `omit` can stop being safe.", "fix", False),
    ("If they were ever passed through `resolver.py`, they'd fail: a required field is missing.", "fact", False),
    ("If you want, I can sketch the `overwrite` mode package by package.", "fact", False),
    ("如果你不在乎包的大小，省掉 `have` 可以简化三处。", "fact", False),
    ("원하시면 `replicate` 구현 계획을 파일별로 정리해 드릴게요.", "fact", False),
    ("Mirror'ları `us` bölgesine taşımak istersen `mirror create` ile o da mümkün.", "fact", False),
    # a condition said of what does happen, and a trap, stay
    ("If the ticker wins, the goroutine enters `ToCheckpointWAL` and then `RotateWALFiles`.", "fact", True),
    ("If `android.platforms` is an object, the caught error is `read(...).map is not a function`.", "rootcause",
     True),
    ("If you run `bun run test` under `rtk`, it fails with an unknown subcommand.", "gotcha", True),
])
def test_a_condition_put_to_the_reader_or_in_the_would_mood_is_no_finding(said: str, role: str, kept: bool) -> None:
    """"If you do not care about X, Y buys you …", "If they were ever …, they'd fail", "If you want, I can …": what
    might be, or an offer, not what the agent found (all 11 such kept sentences of the labelled real sessions are
    noise)."""
    from kenning.observer.gates import hypothetical

    assert hypothetical(said) is not kept or role == "gotcha"
    kinds = _kinds_of_answer("How does the relay decide what to send?", said, role, "src/relay.go")
    assert (role in kinds) is kept, kinds


def test_the_change_to_the_code_a_cause_names_is_its_fix() -> None:
    """"**Root cause**: `drain()` …" then the changes made, which the model read as routine changes: the one to the
    code the cause is about is its fix (one row); one to other code the cause only mentions is not."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    said = ("The shutdown ran into its 60s deadline.\n\n**Root cause**: On shutdown, `drain()` replayed every "
            "buffered message with file I/O before `WriteSnapshot()` could start, which used up the whole deadline."
            "\n\n**Changes made:**\n- `WriteSnapshot()` now logs its progress every 10s.\n"
            "- The `ctx.Done()` handler now calls `flushDirty()` instead of `drain()`.\n")
    symptom, cause, other, change = units(said)
    judged = [Judged(symptom, role="noise", p=0.9, speaker="agent", origin="final", worth=0.1),
              Judged(cause, role="rootcause", p=0.95, speaker="agent", origin="final", worth=0.95),
              Judged(other, role="change", p=0.9, speaker="agent", origin="final", worth=0.3),
              Judged(change, role="change", p=0.9, speaker="agent", origin="final", worth=0.3)]
    asked = "The shutdown still runs into the 60s timeout."  # (a problem: a feature's steps are no fix)
    drafts, _used = agent_memories(Reading(prompt=asked, words=asked, agent=judged), 0.0, "prompt 1",
                                   ["pkg/store/wal.go"], [])
    [memory] = [d for d in drafts if d.kind in ("rootcause", "fix")]
    assert "`drain()` replayed every buffered message" in memory.title, memory.title
    assert "fix: the `ctx.Done()` handler now calls `flushDirty()`" in memory.title.replace("fix: The", "fix: the"), \
        memory.title
    assert "logs its progress" not in memory.title, memory.title
    # nothing changed in the turn, or no problem: a change said is no fix of anything
    drafts, _used = agent_memories(Reading(prompt=asked, words=asked, agent=judged), 0.0, "prompt 1", [], [])
    assert not any("flushDirty" in d.title for d in drafts if d.kind in ("rootcause", "fix")), drafts
    drafts, _used = agent_memories(Reading(agent=judged), 0.0, "prompt 1", ["pkg/store/wal.go"], [])
    assert not any("flushDirty" in d.title for d in drafts if d.kind in ("rootcause", "fix")), drafts


@pytest.mark.parametrize(("said", "cause"), [
    # advice of how to go on, with its reason: never what caused the problem (invented sentences)
    ("これは振る舞いを変えない修正なので、`git commit --fixup` で記録してから rebase するのが適切です。", False),
    ("Since the token cannot trigger workflows, a GitHub App installation token is the way to go.", False),
    ("I'd recommend pinning the SDK to 1.x because the 2.0 module path moved.", False),
    ("因为句柄容易泄漏，交给 logrotate 来轮转日志比较合适。", False),
    ("핸들이 새기 쉬우므로 로그 회전은 logrotate에 맡기는 것이 적절합니다.", False),
    # what caused it, said with the same words around it
    ("The workflow never ran because tags pushed with `GITHUB_TOKEN` do not trigger other workflows.", True),
    ("ハンドルが閉じられていないのが原因で、ログのローテーション後も古いファイルに書き込んでいました。", True),
    # a cause in which advice is only a noun (what broke may be the suggestions prompt itself)
    ("The suggestions prompt was never sent because `runSuggestions()` returned before the AI call.", True),
])
def test_advice_with_its_reason_is_no_root_cause(said: str, cause: bool) -> None:
    kinds = _kinds_of_answer("Why did the release not publish?", said, "rootcause", "ci/release.yml")
    assert ("rootcause" in kinds) is cause, kinds


def test_a_fix_listed_under_a_plain_recommended_fix_label_is_a_proposal_not_a_fix_made() -> None:
    """"Recommended fix:" on its own line over a list (no bold): in a turn that changed nothing, what it lists was
    not done; the cause is kept with it as a proposed fix, never as one made."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    said = ("Root cause:\n\n- `git symbolic-ref` exits 1 on a detached `HEAD`, and the guard treats every nonzero exit "
            "as fatal.\n\nRecommended fix:\n\n- Treat exit 1 as a detached `HEAD` and allow the commit.")
    cause_unit, fix_unit = units(said)
    assert (cause_unit.heading, fix_unit.heading) == ("Root cause", "Recommended fix")
    cause = Judged(cause_unit, role="rootcause", p=0.95, speaker="agent", origin="final", worth=0.95)
    fix = Judged(fix_unit, role="fix", p=0.95, speaker="agent", origin="final", worth=0.95, message=0)
    drafts, _used = agent_memories(Reading(prompt="Why does the guard fail during a rebase?", agent=[cause, fix]),
                                   0.0, "prompt 1", [], [])
    titles = [d.title for d in drafts if d.kind in ("rootcause", "fix")]
    assert [t for t in titles if "— proposed fix: treat exit 1" in t] == titles and titles, titles


@pytest.mark.parametrize(("fix_said", "changed", "proposal"), [
    ("Add a replication-specific relay gate, separate from `CanIncrementalRelay`.", [], True),
    ("Treat exit 1 as a detached `HEAD` and allow the commit.", [], True),
    ("Added a replication-specific relay gate, separate from `CanIncrementalRelay`.", [], False),
    # the same words in a turn that changed the code: how the agent names the change it made
    ("Add a replication-specific relay gate, separate from `CanIncrementalRelay`.", ["internal/relay.go"], False),
])
def test_a_fix_said_as_an_instruction_in_a_turn_that_changed_nothing_is_a_proposal(
        fix_said: str, changed: list[str], proposal: bool) -> None:
    """"Because the fallback differs … Add a relay gate of its own": in a turn that changed no file, the agent tells
    what to do, it did not do it (no bugfix, "proposed fix")."""
    from kenning.observer.compose import agent_memories
    from kenning.observer.reading import Reading

    cause = _judged("Replication fails on targets that reject thin packs, because the relay gate only checks "
                    "`no-thin`.", "rootcause", "agent")
    fix = _judged(fix_said, "fix", "agent")
    drafts, _used = agent_memories(Reading(prompt="Why does replicate fail on that target?", agent=[cause, fix]),
                                   0.0, "prompt 1", changed, [])
    [row] = [d for d in drafts if d.kind in ("rootcause", "fix")]
    assert ("— proposed fix:" in row.title) is proposal and (row.type == "bugfix") is not proposal, row


_DRAFT = ("## Install\n\nWe decided to always ship the CLI as one static binary — that is the only supported way to "
          "install it. (Windows support is a follow-up PR.)\n\n## Tests\n\n14 new tests.")


@pytest.mark.parametrize("shown", [
    json.dumps({"body": _DRAFT, "number": 31}),                   # `gh pr view --json body`: JSON-escaped
    json.dumps({"body": _DRAFT}, ensure_ascii=True).replace("—", "-"),
    _DRAFT.replace("one static binary", "**one static binary**")])  # as rendered markdown
def test_what_the_user_pastes_to_criticise_is_not_their_word(story: Story, shown: str) -> None:
    """"The PR description is wrong, this bit: <its paragraphs>", and the agent fetches that description: the
    pasted sentences are the description's (a decision nobody here made, a to-do of its author), not the user's;
    what the user says around them is theirs."""
    story.session("cli", Turn(
        "the PR description is wrong, especially this bit:\n\nWe decided to always ship the CLI as one static "
        "binary — that is the only supported way to install it. (Windows support is a follow-up PR.)\n\n"
        "nobody decided that. From now on, never describe the wheel install as unsupported.",
        [bash("gh pr view 31 --json body,number", shown), edit(ROOT, "docs/install.md")],
        last="Rewrote the description's install section."))
    mine = [r["title"] for r in story.active("cli") if r["why"].get("by") == "user"]
    assert mine == ["From now on, never describe the wheel install as unsupported"], story.active("cli")


def test_a_message_a_tool_prints_back_whole_is_still_the_users(story: Story) -> None:
    """A prompt file or a session list that shows the user's message, from its first sentence on, is the message
    coming back, not where the user quoted it from."""
    said = ("Create the release notes for 2.1 from the merged pull requests. From now on, always list breaking "
            "changes first in the release notes.")
    story.session("cli", Turn(said, [bash("cat .entire/metadata/prompt.txt", said), edit(ROOT, "CHANGES.md")]))
    mine = [r["title"] for r in story.active("cli") if r["kind"] == "rule"]
    assert mine == ["From now on, always list breaking changes first in the release notes"], story.active("cli")


def test_a_pasted_chinese_paragraph_is_found_in_what_the_tool_showed() -> None:
    from kenning.observer.relayed import quoted

    said = ["这段描述不对：", "我们决定所有服务都必须部署在同一个集群里，这是唯一支持的方式。", "其实没有这个决定。"]
    shown = json.dumps({"body": "## 部署\n\n我们决定所有服务都必须部署在同一个集群里，这是唯一支持的方式。"})
    assert quoted(said, [shown]) == {1}
    assert quoted(said, [json.dumps({"body": "\n".join(said)})]) == set()  # the message itself, printed back
    assert quoted(["Look at this:", "run it", "ok then"], ["run it"]) == set()  # too short to be told apart


def test_words_said_refusing_a_tool_are_the_users_though_the_refusal_shows_them(story: Story) -> None:
    """The refused call's error carries what the user said refusing it: that is the user's message coming back,
    not text they quoted (each message of the turn is told apart on its own)."""
    said = "No. Never delete the fixtures folder, we keep it under version control on purpose."
    refusal = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "rm -rf f"},
               "error": f"The tool use was rejected. To tell you how to proceed, the user said:\n{said}"}
    story.session("shop", Turn("Tidy up the test data and speed up the export.", [refusal],
                               during=[("rejection", said)], last="Understood: the fixtures stay."))
    rules = [r["title"] for r in story.active("shop") if r["kind"] == "rule"]
    assert any("fixtures folder" in t for t in rules), story.active("shop")


def test_a_table_row_of_the_answer_is_not_what_a_change_did() -> None:
    """An unseen project's session line ended "→ Changed checkpoint-scenarios.md: 7; Content-aware overlap only for
    new files; …": a row of a table the answer showed, taken for what the change did."""
    from kenning.observer.providers.rules import _change
    from kenning.observer.reading import Reading

    row, said = units("| 7 | Retries only for idempotent calls | POST is never retried |\n\n"
                      "Documented the retry caveat in the scenarios doc.")
    assert row.table
    judged = [Judged(row, role="change", p=0.9, speaker="agent", origin="final", worth=0.3),
              Judged(said, role="change", p=0.6, speaker="agent", origin="final", worth=0.3)]
    draft = _change(Reading(prompt="document the caveats", words="document the caveats", agent=judged),
                    ["docs/scenarios.md"], set(), [], "document the caveats", 0.0, {})
    assert draft.title == "Changed scenarios.md: Documented the retry caveat in the scenarios doc.", draft.title


@pytest.mark.parametrize("said", ["Finding 1 is a tradeoff the code already documents; finding 2 is real but "
                                  "nearly impossible to trigger.",
                                  "Fix 1 (fail loudly) is applied; fix 2 (the success page) stays as it was.",
                                  "Option 3 is probably the most practical, since the linter differs per platform.",
                                  "方案2更稳妥，因为它不需要改动数据库。",
                                  "The most useful are #1 and #3, since they cover the hooks that know the agent."])
def test_an_item_of_a_list_named_by_its_number_is_no_memory(said: str) -> None:
    """An unseen project's key rows held "Finding 1 flags a tradeoff …; Finding 2's mechanism is real …": which
    finding, the next session cannot tell. What was changed stays in the session's line; an option that says its
    name reads alone."""
    for role in ("fact", "decision", "fix"):
        assert not worth_saying(_judged(said, role, "agent"))
    assert worth_saying(_judged(said, "change", "agent"))
    assert worth_saying(_judged("Option 4: a per-file pool, because it needs no new storage.", "decision", "agent"))


def test_what_a_review_praises_is_no_memory() -> None:
    """An unseen project's key rows held a review's "Strengths: Coverage is genuine (83–95% across packages), not
    coverage theatre.": praise of the code at hand, under that label or heading, in any language; a finding of the
    review under its own heading stays."""
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    assert not worth_saying(_judged("Strengths: the retry tests are genuine, not coverage theatre.", "fact", "agent"))
    assert not worth_saying(_judged("优点：重试逻辑的测试覆盖很完整。", "fact", "agent"))
    under = [u for u in units("## ✅ Strengths\n\nThe ordering defense against raced moves is sound and narrow.\n\n"
                              "## Issues\n\nThe attach path drops the rejection reason, so retries never stop.")]
    kept = [worth_saying(Judged(u, role="gotcha", p=0.95, speaker="agent", origin="final", worth=0.95))
            for u in under if not u.text.startswith("#")]
    assert kept == [False, True], [(u.heading, u.text) for u in under]


@pytest.mark.parametrize("said, figures", [
    ("Results: ns/op B/op allocs/op Encode ~ (noisy) -12.40% (2210→1936) -25.00% (20→15) Decode -3% ~ ~", True),
    ("9 files changed, +181 / -344 (net -163 lines)", True),
    ("Encoding is 12.4% faster (2210→1936 ns/op) and allocations fell by a quarter (20→15).", False),
    ("The shutdown deadline went from 10s to 120s so every snapshot can be written.", False)])
def test_a_row_of_figures_is_no_memory(said: str, figures: bool) -> None:
    """An unseen project's key rows held a benchmark table run together into one line: figures without the
    table's heads say nothing; a sentence that says what its figures mean stays."""
    assert worth_saying(_judged(said, "fact", "agent")) is not figures
    assert worth_saying(_judged(said, "gotcha", "agent")) is not figures


@pytest.mark.parametrize("said", ["Wait, that won't work either - the tool needs to run in the fixture repo.",
                                  "Hmm, the cache key still looks stale here.",
                                  "等等，这样也不行，命令要在测试仓库里运行。"])
def test_the_agent_thinking_aloud_is_no_memory(said: str) -> None:
    """An unseen project's key rows held "Wait, that won't work either - the `entire` command needs to run in the
    test repo directory …": a step of the agent's reasoning it went on to settle. A cause it gives stays."""
    assert not worth_saying(_judged(said, "gotcha", "agent"))
    assert worth_saying(_judged("Oh, the hook runs twice because it is registered in both settings files.",
                                "rootcause", "agent"))


def test_work_left_open_because_other_work_is_done_already_stays_open() -> None:
    """"Since #11029 is already merged, this should be a separate follow-up PR": what is done already is the reason
    work is still to do; a to-do stays one, where the same words in a finding are how the work stood."""
    said = "Since #2210 is already merged, the nightly fix should be a separate follow-up PR."
    assert worth_saying(_judged(said, "todo", "agent"))
    assert not worth_saying(_judged(said, "fact", "agent"))


@pytest.mark.parametrize("said, kept", [
    ("Structure Alignment: every architectural decision maps to a specific file in the project tree.", False),
    ("The store pattern (services write, components read) is consistent with the one-way data flow decision.", False),
    ("Given the small scope, most standard decision categories (hosting, auth) are either N/A or trivial.", False),
    ("La décision sur le format des exports reste valable pour la version 2 du service.", False),
    ("Decision: keep the exports in CSV, because the accounting tool cannot read Parquet.", True),
    ("The `py.typed` decision — deferred until the API is stable, since the types still change.", True),
    ("We decided to keep the exports in CSV, because the accounting tool cannot read Parquet.", True)])
def test_a_review_of_decisions_is_no_decision(said: str, kept: bool) -> None:
    """An unseen project's key decisions held an architecture workflow's checklist ("Structure Alignment: Every
    architectural decision maps to …", "… consistent with unidirectional data flow decision"): decisions spoken
    of, none made. A decision the sentence states, by its label, a dash or a verb, stays."""
    kinds = _kinds_of_answer("Validate the architecture document.", said, "decision", "docs/architecture.md")
    assert ("decision" in kinds) is kept, kinds


@pytest.mark.parametrize("said, edit", [
    ('Added `goruntime "runtime"` import (aliased to avoid a clash with `cc-lib/v2/runtime`)', True),
    ("Removed unused imports from the exporter and its tests.", True),
    ("添加了 `os` 和 `sys` 的 import。", True),
    ("Removed the import of tkinter, which made start-up 2s slower because it loads Tcl.", False),
    ("Fixed the circular import between store.py and models.py by moving the schema out.", False),
    ("Added the import path helper so relative imports resolve from the config file's folder.", False)])
def test_an_import_added_or_removed_is_no_memory(said: str, edit: bool) -> None:
    """A project's key rows held "Added `goruntime "runtime"` import (aliased to avoid conflict …)": an edit the code
    shows, whatever reason it gives for the alias. An import that caused something, or a feature named so, stays."""
    assert worth_saying(_judged(said, "fix", "agent")) is not edit
