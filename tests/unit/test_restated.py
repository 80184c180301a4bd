"""Key memories that say again what another says, in other words, are listed once (kenning/context/restated.py)."""

from __future__ import annotations

import pytest

from kenning.context.index import Row
from kenning.context.restated import LOOKED_AT, once, said
from tests.support.memory_story import Story, Turn, bash, edit


def _row(rid: int, title: str, at: float, kind: str = "fact") -> Row:
    return Row((rid, "discovery", title, at, "key", 6, 1, 0, "claude-code", rid, kind, "project", 0))


@pytest.mark.parametrize(("older", "newer"), [
    # the same trap found in two sessions, in Korean with and without particles and code quotes
    ("main 브랜치 보호 규칙 때문에 직접 push 불가.",
     "`main` 브랜치는 보호 규칙(3개 상태 체크 필수)으로 직접 푸시 불가."),
    ("The bats run skipped the password-store cases because `pass` is not installed locally",
     "Age/password-store bats ran but skipped the external-tool cases locally because `pass` is not installed"),
    ("Both fields use the `omitempty` JSON tag so they are empty in detached HEAD state",
     "Verifies that in detached HEAD state the branch field is empty and omitted from JSON (`omitempty`)"),
    ("主分支受保护，不能直接推送，必须通过拉取请求合并。",
     "主分支受保护：不能直接推送，只能通过拉取请求合并（需要三项检查）。"),
])
def test_a_memory_said_again_in_other_words_is_listed_once_the_newer(older: str, newer: str) -> None:
    rows = [_row(1, older, 100.0), _row(2, "`RotateWALFiles` blocks forever once the staging goroutine exited", 150.0),
            _row(3, newer, 200.0)]
    assert [r.id for r in once(rows)] == [3, 2]  # the newer, in the better ranked one's place


@pytest.mark.parametrize(("a", "b"), [
    ("`flushAll()` flushes every open host WAL file after each batch of at most 257 messages",
     "`flushAll()` → `flushDirty()`: only flushes files that received writes since the last flush"),
    ("The WAL journals have to be deleted before shutdown!",
     "`Shutdown()` writes 5800 snapshot files for 21GB, then calls `RotateWALFilesAfterShutdown()` to delete the "
     "WAL files"),
    ("The pre-commit hook fails because `bun test src/` picks up tests in `tmp/clones/`",
     "The 3 failures are in the prompt-builder tests because of the `JSON_OUTPUT_REMINDER` change"),
    ("main 브랜치 보호 규칙 때문에 직접 push 불가.", "레포지토리에 auto-merge가 비활성화되어 있습니다."),
    # templated alike, about different code
    ("Bugfix: render_invoice in src/auth/schema.py now handles the batch",
     "Bugfix: render_invoice in src/notify/models.py now handles the webhook"),
])
def test_memories_about_different_things_are_all_listed(a: str, b: str) -> None:
    rows = [_row(1, a, 100.0), _row(2, b, 200.0)]
    assert [r.id for r in once(rows)] == [1, 2]


def test_of_one_moment_the_cause_with_its_fix_is_kept_over_the_cause_alone() -> None:
    cause = "The pre-push hook failed because of lint errors in `.claude/settings.json` and `entire.ts`"
    rows = [_row(1, cause + ". These are untracked files, but Biome checks them.", 100.0, "gotcha"),
            _row(2, cause + " — fix: `.claude/` and `.entire/` are excluded from biome linting", 100.0, "rootcause")]
    assert [r.id for r in once(rows)] == [2]


def test_a_sentence_kept_alone_beside_its_paragraph_is_listed_once() -> None:
    first = "`--dry-run` only applies when you call `make deploy` directly (no cluster credentials needed)."
    paragraph = first + " What `render` does: every manifest is templated locally, validated against the " \
        "schema of the target version, and printed instead of applied; nothing reaches the API server."
    rows = [_row(1, paragraph, 100.0), _row(2, "`RotateWALFiles` blocks forever once the staging goroutine exited",
                                                  90.0), _row(3, first, 100.0)]
    assert [r.id for r in once(rows)] == [1, 2]  # the paragraph holds the sentence


def test_a_short_row_that_shares_most_but_not_all_of_its_words_stays() -> None:
    rows = [_row(1, "We should only run the linter on files that changed in this branch before merging", 100.0),
            _row(2, "The only lookup the linter needs is `git diff --name-only main`, because it cheaply answers "
                    "whether a file changed in this branch and skips the rest of the tree", 200.0)]
    assert [r.id for r in once(rows)] == [1, 2]


def test_rows_beyond_those_looked_at_keep_their_place() -> None:
    same = "`main` 브랜치는 보호 규칙으로 직접 푸시 불가."
    rows = [_row(i, f"`k{i:03d}x` breaks `m{i:03d}y` on `p{i:03d}z`", float(i)) for i in range(LOOKED_AT)]
    rows += [_row(99, same, 999.0), _row(98, same, 998.0)]
    assert [r.id for r in once(rows)] == [r.id for r in rows]
    assert said(rows[5].title) == frozenset({"k005", "m005", "p005", "brea"})


def test_the_index_lists_a_trap_found_again_in_a_later_session_once(story: Story) -> None:
    """Two sessions find that main is protected, in other words (the store groups only near-identical wording)."""
    root = "/home/dev/shop"
    refused = "To github.com:dev/shop.git\n ! [remote rejected] main -> main (protected branch hook declined)"
    for said_it in ("main 브랜치 보호 규칙 때문에 직접 push 불가합니다. PR을 만들어야 합니다.",
                    "`main` 브랜치는 보호 규칙(3개 상태 체크 필수)으로 직접 푸시 불가합니다."):
        story.session("shop", Turn("Push the fix to main.", [edit(root, "shop/cart.py"),
                                                              bash("git push origin main", fails=refused)],
                                   last=said_it))
    assert len([r for r in story.active("shop") if "보호 규칙" in r["title"] and r["layer"] == "key"]) == 2
    rows = [ln for ln in story.context("shop").splitlines() if ln.startswith("#") and "보호 규칙" in ln]
    assert len(rows) == 1 and "3개 상태 체크" in rows[0], rows


def test_a_cause_a_later_fix_of_its_session_is_about_is_history() -> None:
    """An unseen project's key rows kept "No-ship: the new loopback flow still leaks its live callback `state` through
    `Flow.String()` …" beside the later "Added `redactedAuthorizationURL()` which masks the `state` query param …"."""
    from kenning.context.restated import fixed_later

    def row(rid: int, title: str, at: float, kind: str, session: int = 7) -> Row:
        return Row((rid, "bugfix", title, at, "key", 8, 1, 0, "claude-code", session, kind, "project", 0))

    leak = row(1, "The token still leaks through `Client.String()`, which prints the raw header value", 100.0,
               "rootcause")
    fix = row(2, "Added `redact()` which masks the token; `Client.String()` now prints the masked header value", 200.0,
              "fix")
    assert fixed_later([leak, fix]) == {1}
    # not: a fix said before, one of another session, one about other code, a cause that says its fix
    assert fixed_later([row(1, leak.title, 300.0, "rootcause"), fix]) == set()
    assert fixed_later([leak, row(2, fix.title, 200.0, "fix", session=8)]) == set()
    assert fixed_later([leak, row(2, "Added `retry()` to the uploader; the client now waits between tries", 200.0,
                                  "fix")]) == set()
    assert fixed_later([row(1, leak.title + " — fix: mask it", 100.0, "rootcause"), fix]) == set()
