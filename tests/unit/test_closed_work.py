"""Open work that the repository's history since says is done (kenning/context/closed.py)."""

from __future__ import annotations

import pytest

from kenning.context import closed
from tests.support.memory_story import Story, Turn, bash, edit

ROOT = "/home/dev/shop"

RELEASED = closed.history([  # (the summaries' state lines, kenning/context/layout.py state_of)
    ("committed 2d6f7eb chore: tidy, … 4 more, 62ad1de chore(release): v2.3.0, b9d1481 fix: y; pushed", 100.0),
    ("committed 4ce076c fix: z; pushed; merged #41, #42", 200.0)])


@pytest.mark.parametrize("open_work", [
    "Release v2.3.0 after the 2 remaining fixes.",
    "v2.3.0의 남은 2개 항목 완료 후 릴리스",
    "v2.3.0 の残り2件を片付けてからリリースする",
    "v2.3.0 还剩两项，完成后发布",
    "Of the 12 items planned for v2.3.0, 10 are done; the remaining 2 are the docs and the CLI flag."])
def test_work_on_a_version_is_closed_by_its_release(open_work: str) -> None:
    assert closed.closed(open_work, 50.0, RELEASED)


def test_a_pull_request_to_merge_is_closed_by_its_merge() -> None:
    assert closed.closed("Merge PR #42 once CI is green.", 150.0, RELEASED)
    assert closed.closed("PR #41 CI 통과하면 머지", 150.0, RELEASED)


@pytest.mark.parametrize(("open_work", "said_at"), [
    ("Release v2.3.1 after the fix.", 50.0),               # another version
    ("Release v2.3.0 after the fix.", 150.0),              # said after that release: a new release of it is asked
    ("Merge PR #43 once CI is green.", 150.0),             # another pull request
    ("Review PR #42 again.", 150.0),                       # not a merge
    ("Wait 1.5 hours, then release.", 50.0),               # not a version
    ("Document the v2.3.0 API for the wiki.", 50.0)])      # names the version, is no release or what remains of it
def test_other_work_stays_open(open_work: str, said_at: float) -> None:
    assert not closed.closed(open_work, said_at, RELEASED)


def test_a_to_do_to_release_a_version_leaves_the_index_once_it_is_released(story: Story) -> None:
    story.session("shop", Turn("Next time we must release v2.3.0, once the 2 remaining fixes are in.",
                               [edit(ROOT, "shop/cart.py")], last="Noted: the release of v2.3.0 is for next time."))
    assert "## Open to-dos" in story.context("shop"), story.context("shop")
    story.session("shop", Turn("Release v2.3.0 now.", [
        edit(ROOT, "CHANGELOG.md"),
        bash("git commit -am 'chore(release): v2.3.0'", "[main 62ad1de] chore(release): v2.3.0\n 1 file changed")],
        last="Released."))
    assert "## Open to-dos" not in story.context("shop"), story.context("shop")


def test_a_finding_that_names_a_merged_pull_request_stays_true() -> None:
    gotcha = "`gh pr merge 42 --merge` needs `--admin`: the base branch policy prohibits the merge of PR #42."
    assert not closed.closed(gotcha, 150.0, RELEASED, open_work=False)
    assert not closed.closed("Tag v2.3.0 was cut from the release branch, so it lacks the two fixes.", 50.0,
                             RELEASED, open_work=False)
    assert closed.closed("Of the 12 items for v2.3.0, the remaining 2 are the docs and the CLI flag.", 50.0,
                         RELEASED, open_work=False)
    for next_up in ("The lock file is fine as it is. The top priority now is the v2.3.0 release.",
                    "가장 높은 우선순위는 v2.3.0 릴리스입니다", "次は v2.3.0 のリリースです", "下一步是发布 v2.3.0",
                    # with a word between "next" and the work
                    "Recommended next feature work: tag and release v2.3.0 with the docs.",
                    "다음 기능 작업 추천: v2.3.0 태깅 후 릴리스"):
        assert closed.closed(next_up, 50.0, RELEASED, open_work=False), next_up
        assert not closed.closed(next_up, 150.0, RELEASED, open_work=False)  # said after that release
    assert not closed.closed("Priority queues drop v2.3.0 events when full.", 50.0, RELEASED, open_work=False)
    assert not closed.closed("Next time the v2.3.0 tag is pushed, CI publishes it.", 50.0, RELEASED,
                             open_work=False)


CAUSE = ("The CI job failed because of a timing-dependent test assertion: it assumes a deterministic execution "
         "order that the scheduler does not guarantee")


@pytest.mark.parametrize("commit", ["f924895 test(step): make the check list failure test deterministic",
                                    "fix: make the timing-dependent assertion deterministic",
                                    "Fix the deterministic execution order of the check list test"])
def test_a_cause_is_fixed_in_a_commit_of_its_session_that_changed_what_it_names(commit: str) -> None:
    assert closed.fixed_in(CAUSE, ["1a2b3c4 feat: add the export", commit]) == commit


@pytest.mark.parametrize("commit", ["f924895 docs: explain the deterministic test failure",
                                    "chore(release): v1.2.0 with the deterministic test",
                                    "feat(export): stream rows to the CSV writer",
                                    "refactor: split the deterministic test helpers"])
def test_a_commit_that_changed_no_code_or_something_else_is_not_its_fix(commit: str) -> None:
    assert closed.fixed_in(CAUSE, [commit]) == ""


def test_a_row_that_says_how_things_are_now_is_no_cause_to_fix() -> None:
    said = "The `.tool/` config is now enabled with telemetry off, and tool directories are excluded from linting"
    assert closed.fixed_in(said, ["7e89164 fix: exclude tool config directories from linting"]) == ""


FIRST_FIX = ("Rotation deadlock during shutdown — fix: `RotateShards` returns at once while shutting down; "
             "uses a non-blocking send to the rotation channels")


@pytest.mark.parametrize("commit", [
    "937984d fix: shard rotation skipped for all hosts due to non-blocking send on small chann…",
    "1a2b3c4 fix(store): rotation never ran, caused by the non-blocking send"])
def test_a_later_fix_that_names_part_of_a_fix_as_its_cause_replaces_that_part(commit: str) -> None:
    assert closed.replaced(FIRST_FIX, [commit]) == (
        "uses a non-blocking send to the rotation channels", "non-blocking send", commit)


@pytest.mark.parametrize("commit", [
    "937984d feat: shard rotation skipped for all hosts due to non-blocking send",  # no fix
    "937984d fix: shard rotation skipped for all hosts",  # names no cause
    "937984d fix: shard rotation skipped due to full disks",  # another cause
    "937984d fix: rotation deadlock due to shutting down twice"])  # the problem's own words, not the fix's
def test_a_later_fix_of_something_else_replaces_nothing(commit: str) -> None:
    assert closed.replaced(FIRST_FIX, [commit]) is None
    assert closed.replaced("Rotation uses a non-blocking send", [commit]) is None  # no fix said


@pytest.mark.parametrize("title, commit", [
    ("The `cursor-logo.svg` was invalid (404), so the existing inline path is reused",
     "Fix Cursor logo: replace corrupted SVG asset with official logo"),
    ("`flush_queue.rs` drops the last batch when the channel closes",
     "9f3e2a1 fix(store): flush queue keeps its last batch"),
    ("`parquetArchive.go` calls Flush after every checkpoint file",
     "1a2b3c4 fix: parquetArchive writes one row group")])
def test_a_memory_about_a_file_that_a_later_commit_fixed_again_names_that_commit(title: str, commit: str) -> None:
    assert closed.refixed(title, ["0000001 feat: add the export", commit]) == commit


@pytest.mark.parametrize("title, commit", [
    ("The `cursor-logo.svg` was invalid (404), so the existing inline path is reused",
     "feat: new Cursor logo for the agents list"),  # no fix
    ("`index.ts` re-exports the client", "fix: index page loads twice"),  # a stem of one short word names too little
    ("`walCheckpoint.go` flushes every open file after each batch",
     "fc47b12 fix: pause WAL writes during the checkpoint"),  # camelCase is one name, not "WAL … checkpoint"
    ("`Builtins.toMap()` yields no tests with pklr 1.1.1", "55c7b81 fix(builtins): allow detached HEAD")])  # a call
def test_a_later_fix_of_another_file_leaves_a_memory_as_it_is(title: str, commit: str) -> None:
    assert closed.refixed(title, [commit]) == ""


def test_a_memory_about_a_file_a_later_session_fixed_again_leaves_the_index(story: Story) -> None:
    """What a session said of a file, or decided about it ("the inline path is reused instead"), no longer holds
    once a later session had to fix that file: the index lists only what is still true."""
    story.session("shop", Turn("The agent logos are not rendered on the settings page.",
                               [edit(ROOT, "web/agents.tsx")],
                               last="Root cause: `cursor-logo.svg` was an HTML 404 page saved as SVG, so the inline "
                                    "path already in `agents.tsx` is reused instead of the file."))
    assert "cursor-logo.svg" in story.context("shop"), story.context("shop")
    story.session("shop", Turn("The Cursor logo is still broken, replace it with the official one.", [
        edit(ROOT, "web/assets/cursor-logo.svg"),
        bash("git commit -am 'fix: replace the corrupted Cursor logo SVG'",
             "[main 1a2b3c4] fix: replace the corrupted Cursor logo SVG\n 1 file changed")], last="Replaced."))
    context = story.context("shop")
    assert not [ln for ln in context.splitlines() if ln.startswith("#") and "cursor-logo.svg" in ln], context
    assert "fix: replace the corrupted Cursor logo SVG" in context, context  # what the later session did


@pytest.mark.parametrize(("gap", "commit"), [
    ("The Pkl tests cover feature and protected branches, but not detached `HEAD`.",
     "55c7b81 fix(builtins): allow detached HEAD for branch guard"),
    ("There is no test for the empty cart total.", "3c4d5e6 test: empty cart total is zero"),
    ("The exporter does not handle nested archives.", "7a8b9c0 feat(export): nested archives"),
    ("折扣模块没有覆盖 refund rounding 的情况", "1f2e3d4 fix: refund rounding in the discount module")])
def test_a_gap_that_a_commit_filled_names_that_commit(gap: str, commit: str) -> None:
    assert closed.gap_filled(gap, ["0000001 chore: tidy the README", commit]) == commit


@pytest.mark.parametrize(("fact", "commit"), [
    ("The Pkl tests cover feature and protected branches, but not detached `HEAD`.",
     "55c7b81 docs: detached HEAD in the rebase guide"),        # a commit that adds nothing to the code
    ("The Pkl tests cover feature and protected branches, but not detached `HEAD`.",
     "55c7b81 fix(pkl): protected branch list from config"),     # fills another gap: one word in common
    ("The exporter writes nested archives as one file each.",
     "7a8b9c0 feat(export): nested archives"),                   # says how things are, no gap
])
def test_a_commit_about_something_else_leaves_a_gap_or_a_fact_as_it_is(fact: str, commit: str) -> None:
    assert closed.gap_filled(fact, [commit]) == ""


def test_a_gap_its_session_filled_leaves_the_index(story: Story) -> None:
    """A gap an observer kept as a fact ("the tests cover … but not a detached HEAD") that a commit of the same
    session then filled was true for minutes: the index does not list it as how things are."""
    from kenning.records import ObservationDraft, Outcome
    from kenning.store import repo

    gap = "The branch guard tests cover feature and protected branches, but not a detached `HEAD`"

    def session_with_gap(project: str, commit: str) -> str:
        found_at = story.t + 10
        sid = story.session(project, Turn("The branch guard fails during a rebase: add the test and fix it.", [
            edit(story.root(project), "tests/test_guard.py"), edit(story.root(project), "shop/guard.py"),
            bash(f"git commit -am '{commit}'", f"[main 55c7b81] {commit}\n 2 files changed")], last="Fixed."))
        fact = ObservationDraft(type="discovery", title=gap, subtitle="how it works", facts=[gap], narrative=gap,
                                concepts=["how-it-works"], created_at=found_at, kind="fact")
        with repo.transaction(story.conn):
            repo.store_outcome(story.conn, sid, story.root(project), Outcome(observations=[fact]), "rules")
        return "\n".join(ln for ln in story.context(project).splitlines() if ln.startswith("#"))

    assert gap in session_with_gap("other", "fix(cart): round refunds per line")
    assert gap not in session_with_gap("filled", "fix(guard): allow a detached HEAD")


def _todo_then(story: Story, name: str, order: str, *work: dict[str, object]) -> str:
    """A session whose first turn leaves a to-do, and whose next turn the user orders ``order`` and does ``work``."""
    story.session(name, Turn("Add the CSV export. Next time we must move the retry logic into a separate PR.",
                             [edit(ROOT, "shop/export.py")], last="CSV export added."),
                  Turn(order, [edit(ROOT, "shop/retry.py"), *work], last="Done."))
    return story.context(name)


def test_a_to_do_the_user_then_asks_for_and_the_turn_commits_is_done(story: Story) -> None:
    """mise's "Open to-dos" held "… this should be a separate follow-up PR" for months, though the user's next
    order in that session was "Make a separate pr" and the turn pushed that branch."""
    shown = _todo_then(story, "done", "Make the separate PR for the retry logic.",
                       bash("git commit -am 'fix: retry logic'", "[retry 1a2b3c4] fix: retry logic\n 1 file changed"),
                       bash("git push -u origin retry", " * [new branch]      retry -> retry"))
    assert "retry logic into a separate PR" not in shown, shown


@pytest.mark.parametrize("order, work", [
    ("Make the separate PR for the retry logic.", []),  # nothing committed, pushed or opened: not carried out
    ("Add the PDF export too.", [bash("git commit -am 'feat: pdf'", "[main 1a2b3c4] feat: pdf\n 1 file changed")]),
    ("Should the retry logic go into a separate PR?",  # a question asks, it orders nothing
     [bash("git commit -am 'feat: pdf'", "[main 1a2b3c4] feat: pdf\n 1 file changed")])])
def test_a_to_do_stays_open_until_a_turn_asked_for_it_commits(story: Story, order: str,
                                                              work: list[dict[str, object]]) -> None:
    shown = _todo_then(story, "open", order, *work)
    assert "## Open to-dos" in shown and "retry logic into a separate PR" in shown, shown
