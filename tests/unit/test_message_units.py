"""How a message is cut into units: code is not prose, except the short command a sentence introduces."""

from __future__ import annotations

from kenning.observer.units import is_output, units

FENCE = "```"


def test_a_short_command_a_sentence_introduces_becomes_its_object() -> None:
    said = (f"The checkout is on a detached HEAD. To pick the commit up in jj, run:\n\n{FENCE}bash\n"
            f"jj git import\njj bookmark set main -r @\n{FENCE}\n\nThen push.")
    texts = [u.text for u in units(said)]
    assert "To pick the commit up in jj, run: `jj git import; jj bookmark set main -r @`" in texts
    assert texts[-1] == "Then push."


def test_the_same_in_japanese_and_korean() -> None:
    ja = f"jj でこのコミットを取り込むには:\n{FENCE}\njj git import\n{FENCE}"
    ko = f"다시 생성하려면:\n{FENCE}\nmise run pkl:gen\n{FENCE}"
    assert [u.text for u in units(ja)] == ["jj でこのコミットを取り込むには: `jj git import`"]
    assert [u.text for u in units(ko)] == ["다시 생성하려면: `mise run pkl:gen`"]


def test_a_long_block_or_one_nothing_introduced_stays_out() -> None:
    long_block = "Here is the new function:\n" + FENCE + "\n" + "\n".join(f"line_{i} = {i}" for i in range(6)) + \
        "\n" + FENCE
    loose = f"The tests pass.\n{FENCE}\nrm -rf build\n{FENCE}"
    assert [u.text for u in units(long_block)] == ["Here is the new function"]
    assert [u.text for u in units(loose)] == ["The tests pass."]


def test_a_block_quoting_another_block_is_code_to_its_end() -> None:
    """An unseen project's user pasted research that shows a README snippet (a Markdown block holding a YAML block);
    the inner "```yaml" was read as the outer block's end, and the config after it ("# Inline rules agentRules: |
    Always run tests before pushing.") as the user's words, a standing rule."""
    said = (f"Is this aligned with what we do? The research:\n\n{FENCE}markdown\n## Config\n{FENCE}yaml\n"
            f"agentRules: |\n  Always run tests before pushing.\n{FENCE}\n{FENCE}\n\nWe keep the rules in AGENTS.md.\n"
            f"{FENCE} [1](#0-0)\nstray: true\n{FENCE}\nThe end.")
    texts = [u.text for u in units(said)]
    assert not [t for t in texts if "Always run tests" in t or "Config" in t], texts
    assert "We keep the rules in AGENTS.md." in texts
    assert texts[-1] == "The end.", texts


def test_a_pasted_stack_trace_is_no_unit_but_a_sentence_naming_one_frame_is() -> None:
    js = "at render at http://localhost:3000/chunk-a1.js:30815:13 at http://localhost:3000/chunk-a1.js:31375:23"
    py = 'File "app/main.py", line 40, in run File "app/db.py", line 12, in connect'
    said = "The crash is in src/app.tsx:12:5, where render reads a prop the parent never passes."
    two = ("The crash starts in src/app.tsx:12:5 and ends in src/table.tsx:40:2, because the table renders "
           "before the parent has fetched the rows it passes down.")
    assert units(js) == [] and units(py) == []
    assert [u.text for u in units(said)] == [said]
    assert [u.text for u in units(two)] == [two]


def test_a_pasted_log_line_is_no_unit_wherever_it_starts_but_a_sentence_naming_a_component_is() -> None:
    log = ("(2 attempts left) [JobQueue] Stored failed job 1b4e28ba-2fa1-11d2-883f-0016d3cca427 "
           "[Scheduler] Run 1b4e28ba-2fa1-11d2-883f-0016d3cca427 failed: the runner exited with code 1")
    web = "[14:02:51.118] [API] GET /api/jobs/42 returned 500 after the retry"
    said = "The retry loop in [Scheduler] gave up too early, so a failed job was never run again."
    assert units(log) == [] and units(web) == []
    assert [u.text for u in units(said)] == [said]


def test_a_retry_log_with_spaced_tags_is_pasted_output_but_an_explanation_of_the_exit_code_is_not() -> None:
    log = "(1 retry left) [Build Runner] Attempt 2/3 failed: the runner exited with code 2 [Build Runner] Retrying"
    said = "The runner exited with code 2 because [Build Runner] reads its config before the checkout exists."
    assert units(log) == []
    assert [u.text for u in units(said)] == [said]


def test_a_plain_label_line_naming_a_cause_or_fix_heads_the_list_under_it_and_only_that() -> None:
    said = ("The report describes a real bug in the branch guard.\n\nRoot cause:\n\n"
            "- Rebases detach `HEAD`.\n"
            "- `git symbolic-ref` exits 1 then, and every nonzero exit is treated as fatal.\n\n"
            "This has been so since the first release.\n\nThere is also a testing gap:\n\n"
            "- Nothing covers a detached `HEAD`.\n\nRecommended fix:\n\n- Treat exit 1 as detached `HEAD`.\n\n"
            "Changes:\n\n- Renamed the guard.\n\n根因：\n缓存从未失效。\n\n之后的段落。")
    got = [(u.heading, u.text) for u in units(said)]
    assert ("Root cause", "Rebases detach `HEAD`.") in got
    assert ("Root cause", "`git symbolic-ref` exits 1 then, and every nonzero exit is treated as fatal.") in got
    # the paragraph after the list, and a sentence that introduces a list, are not under the label
    assert ("", "This has been so since the first release.") in got
    assert ("", "Nothing covers a detached `HEAD`.") in got
    assert ("Recommended fix", "Treat exit 1 as detached `HEAD`.") in got
    assert ("根因", "缓存从未失效。") in got and ("", "之后的段落。") in got
    assert not [t for _h, t in got if t in ("Root cause", "Recommended fix", "根因")]  # such a label is no unit
    assert ("", "Renamed the guard.") in got  # a label naming no cause or fix heads nothing (as before)


def test_a_short_label_before_a_command_introduces_it_and_heads_nothing() -> None:
    got = [(u.heading, u.text) for u in units(f"Done. Fix:\n\n{FENCE}\njj git import\n{FENCE}\n\nIt is pushed.")]
    assert got == [("", "Done."), ("", "Fix: `jj git import`"), ("", "It is pushed.")]


def test_machine_markup_on_its_own_lines_is_no_unit() -> None:
    """The reply a Codex automation's heartbeat asks for ends the agent's message in XML; an app directive before
    it is no sentence either. A tag inside a sentence stays."""
    said = ("I fixed the Windows path in the test and pushed it. The checks restarted.\n\n"
            '::git-push{cwd="/w/app" branch="fix/paths"}\n\n'
            "<heartbeat>\n  <automation_id>watch-pr-12</automation_id>\n  <decision>NOTIFY</decision>\n"
            "  <message>Pushed a fix; checks are pending.</message>\n</heartbeat>\n\n"
            "The `<slot>` element keeps <b>its</b> children.")
    assert [u.text for u in units(said)] == ["I fixed the Windows path in the test and pushed it.",
                                             "The checks restarted.", "The `<slot>` element keeps <b>its</b> children."]


def test_emphasis_goes_but_the_marks_of_inline_code_stay() -> None:
    """`*T` is a pointer and `T` a value, `src/**/*.ts` a glob, `pkg/__init__.py` a file: stripping the emphasis
    marks inside code turned a cause about a pointer into one about a value (a real session said "both
    `CommandStatusErr` and `*CommandStatusErr` satisfy `error`")."""
    said = ("Because `Error()` has a *value* receiver, both `CommandStatusErr` and `*CommandStatusErr` satisfy "
            "`error` — so it **compiles** and looks right. The glob `src/**/*.ts` skips `pkg/__init__.py`; see "
            "[`push.go`](/src/push.go:175) and the __main__ module, __not bold__ any more.")
    [first, second] = [u.text for u in units(said)]
    assert first == ("Because `Error()` has a value receiver, both `CommandStatusErr` and `*CommandStatusErr` "
                     "satisfy `error` — so it compiles and looks right.")
    assert second == ("The glob `src/**/*.ts` skips `pkg/__init__.py`; see `push.go` and the __main__ module, "
                      "not bold any more.")


def test_chinese_and_japanese_sentences_end_at_their_full_stop() -> None:
    zh = "我先看了日志。根因是缓存键没有包含租户ID。修复：加入 `tenant_id`。测试都通过了！"
    ja = "「これは問題です。」と彼は言った。原因は `a。b` の区切りです。直しました？"
    assert [u.text for u in units(zh)] == ["我先看了日志。", "根因是缓存键没有包含租户ID。", "修复：加入 `tenant_id`。",
                                          "测试都通过了！"]
    assert [u.text for u in units(ja)] == ["「これは問題です。」と彼は言った。", "原因は `a。b` の区切りです。",
                                          "直しました？"]


def test_a_hard_line_break_ends_the_unit_and_a_soft_one_does_not() -> None:
    """Markdown's hard break (two spaces or a backslash at the line's end) ends a line on purpose: a
    never-trained session's "Opened PR: …  ⏎ Replied to discussion: …" was one unit, and a list of
    recommendations written that way ("Treat this as a release bug.  ⏎ AL2023 has glibc 2.34 …") was judged
    as one sentence."""
    said = ("Opened PR: [#582 fix(pass): resolve relative store_dir](https://github.com/o/r/pull/582)  \n"
            "Replied to discussion: [#579 comment](https://github.com/o/r/discussions/579)\n\n"
            "Treat this as a release bug for ARM64 GNU.\\\n"
            "AL2023 has glibc 2.34, and the current artifact requires 2.39.\n\n"
            "A line that wraps\nsoftly goes on.")
    got = [(u.text, u.heading) for u in units(said)]
    assert got == [("#582 fix(pass): resolve relative store_dir", "Opened PR"),
                   ("#579 comment", "Replied to discussion"),
                   ("Treat this as a release bug for ARM64 GNU.", ""),
                   ("AL2023 has glibc 2.34, and the current artifact requires 2.39.", ""),
                   ("A line that wraps softly goes on.", "")]


def test_a_cause_and_a_fix_of_two_list_items_are_two_findings() -> None:
    """A review's list: the cause of one item and the fix of another were joined into one memory ("The ID embeds
    the path, so a rename breaks every edge — fix: the second regex is meant to catch import blocks …")."""
    from kenning.observer.conclusion import together
    from kenning.observer.roles.roles import Judged

    said = units("1. The ID embeds the file path, so a rename breaks every edge that pointed at it.\n"
                 "2. Fixed the import scanner: it now tracks block state line by line.\n\n"
                 "- Removed the direct delete inside the workers. This raced with the goroutine that held the file.")
    cause, fix, fix2, cause2 = (Judged(u, role, 0.9, "agent", "final") for u, role in zip(
        said, ("rootcause", "fix", "fix", "rootcause"), strict=True))
    assert [u.para for u in said] == [1, 2, 3, 3]
    assert not together(cause, fix)      # two items, no word in common
    assert together(cause2, fix2)        # one item: its fix and the cause it gives


def test_a_label_that_introduces_a_list_heads_its_items() -> None:
    """"**What was wrong** — two defects:" over a numbered list: its items are said under that label (an item
    with a label of its own keeps its own), and the paragraph after the list is not."""
    said = units("**What was wrong** — two defects:\n\n1. **Amounts read as float**, so totals drifted.\n"
                 "2. **Refunds**: never negated.\n\nThe rest of the run is fine.")
    assert [(u.text, u.heading) for u in said] == [
        ("two defects", "What was wrong"),
        ("Amounts read as float, so totals drifted.", "What was wrong"),
        ("never negated.", "Refunds"),
        ("The rest of the run is fine.", "")]


def test_a_test_runners_verdict_is_pasted_output() -> None:
    """An unseen project's standing rules held "FAIL: TestHooks (0.05s) --- FAIL: TestHooks/dev (0.01s)
    hooks_test.go:650: dev hooks should use 'go run', but settings.json doesn't contain it FAIL": go test's
    output pasted as the prompt, its assertion's "should" read as a rule. What the user says around it stays."""
    said = units("This fails on my machine:\n\nFAIL: TestHooks (0.05s) --- FAIL: TestHooks/dev (0.01s) "
                 "hooks_test.go:650: dev hooks should use 'go run', but settings.json doesn't contain it FAIL\n\n"
                 "FAILED tests/test_api.py::test_login - AssertionError: token should be set\n\n"
                 "Please fix it without touching the fixtures.")
    assert [u.text for u in said] == ["This fails on my machine", "Please fix it without touching the fixtures."]


def test_lines_that_are_a_list_without_its_marks_are_its_items() -> None:
    """A review pasted with its list marks lost ("Consider testing:" over one case a line) read as one run-on
    sentence, a "standing rule" for the "don't" of its last line. Wrapped prose stays one sentence."""
    said = units("Consider testing:\n\nDifferent lengths around the 10-character threshold\nVarious trivial "
                 "patterns (comments, returns)\nOther languages so the patterns don't cause false negatives\n\n"
                 "The parser reads the header\nand then the body, which it\nKeeps In Memory Until The End.")
    assert [u.text for u in said] == [
        "Consider testing", "Different lengths around the 10-character threshold",
        "Various trivial patterns (comments, returns)", "Other languages so the patterns don't cause false negatives",
        "The parser reads the header and then the body, which it Keeps In Memory Until The End."]
    assert [u.heading for u in said[1:4]] == ["", "", ""] and all(u.bullet for u in said[1:4])


def test_an_error_a_program_printed_layer_by_layer_is_pasted_output() -> None:
    """An unseen project's first standing rule was Go's wrapped error, pasted: "error: sync: sync: materialized
    execute: push target refs: … cannot retry err …; define Request.GetBody to avoid this error" (its "avoid" a
    ban). The user's words around it stay; an error they explain in one layer is words."""
    said = units("Pushing the tags fails:\n\nerror: export: upload batch: post RPC: round trip: cannot retry err "
                 "after Request.Body was written; define Request.GetBody to avoid this error\n\n"
                 "Never retry a push whose body was already sent.")
    assert [u.text for u in said] == ["Pushing the tags fails", "Never retry a push whose body was already sent."]
    assert not is_output("Error: the config is wrong: it must list every target")


def test_a_table_row_leaves_its_number_and_a_long_bold_line_heads_the_list_under_it() -> None:
    """An unseen project's session ended "Changed checkpoint-scenarios.md: 7; Content-aware overlap only for new
    files; …" (a table row with its number), and "**Commit 1 — `47946b7` scrub state from `String()`'s URL (Fix 1)**"
    over what that commit did was a sentence of its own, its list under no heading."""
    said = ("| # | Caveat | Effect |\n|---|---|---|\n"
            "| 7 | Retries only for idempotent calls | POST is never retried |\n\n"
            "**Commit 1 — `9f8e7d6` stop logging the bearer token in `Client.String()` (Fix 1)**\n"
            "- Added `redactedHeader()` which masks the token.\n\n"
            "**Not a sentence heading.** It goes on.\n- An item.")
    got = units(said)
    assert [u.text for u in got if u.table] == ["#; Caveat; Effect", "Retries only for idempotent calls; POST is "
                                                                     "never retried"]
    item = next(u for u in got if u.text.startswith("Added"))
    assert item.heading.startswith("Commit 1 — `9f8e7d6`")
    assert not [u for u in got if u.text.startswith("Commit 1")]
    assert next(u for u in got if u.text == "An item.").heading != "Not a sentence heading."


def test_a_list_item_ends_without_the_semicolon_that_joined_it_to_the_next() -> None:
    """An unseen project's "Done:" read "`compound-v1` IDs remain stable across normal body/signature edits;;": the
    item kept the semicolon of the list it was cut from."""
    said = "Require the runner to check:\n- schema `1.x` remains additive-only;\n- IDs remain stable across edits;"
    assert [u.text for u in units(said)][-2:] == ["schema `1.x` remains additive-only",
                                                  "IDs remain stable across edits"]
