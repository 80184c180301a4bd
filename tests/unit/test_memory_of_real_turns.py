"""What the offline observer keeps of turns shaped like real ones (DESIGN.md §9), stored in a real
SQLite file and given back by the real session-start index.

The shapes are those of the development set's transcripts (../shared/data/real-sessions, their README):
a plan the agent wrote handed over as "Implement the following plan:", words typed while the agent
worked (Claude Code's queue-operation lines), the user's words when rejecting a tool call, a scripted
headless prompt, questions on several topics in a row, a change taken back. The words are our own.
"""

from __future__ import annotations

import pytest

from tests.support.memory_story import Story, Turn, bash, edit, read

ROOT = "/work/shop"


PLAN = """Implement the following plan:

# Plan: Tenant-aware cache keys

## Context
Dashboards leak between tenants because the cache key leaves the tenant out.

## Design
- Always include tenant_id in the cache key.
- Never cache responses that carry a Set-Cookie header.
- Store keys as `tenant:path` strings.
"""


def test_an_accepted_plan_is_the_agents_words_never_the_users_rules(story: Story) -> None:
    story.session("shop", Turn(PLAN, [edit(ROOT, "src/cache.py")], origin="plan",
                               last="Implemented the plan: cache keys are `tenant:path` now."))
    rows = story.active("shop")
    assert rows, rows
    assert not [r for r in rows if r["kind"] == "rule"], rows  # "Always …", "Never …" are the plan's bullets
    assert not [r for r in rows if r["why"].get("by") == "user"]
    assert "## Standing rules" not in story.context("shop")
    # Live, the hooks see no prompt_origin: the plan is known by its first words all the same.
    story.session("shop", Turn(PLAN, [edit(ROOT, "src/cache.py")], last="Done."))
    assert not [r for r in story.active("shop") if r["kind"] == "rule"]


def test_words_typed_while_the_agent_worked_and_said_rejecting_a_tool_are_the_users(story: Story) -> None:
    story.session("shop", Turn(
        "Speed up the nightly export job.",
        [bash("python -m jobs.export", "exported 10 rows")],
        during=[("queued", "Never push straight to main; always open a pull request."),
                ("rejection", "No. The export must keep writing one file per customer, from now on and always.")],
        last="Kept one file per customer; the export now streams rows."))
    rules = {r["title"]: r for r in story.active("shop") if r["kind"] == "rule"}
    queued = next(r for t, r in rules.items() if "push straight to main" in t)
    assert queued["why"]["origin"] == "queued" and queued["why"]["by"] == "user"
    rejected = next(r for t, r in rules.items() if "one file per customer" in t)
    assert rejected["why"]["origin"] == "rejection"
    assert "push straight to main" in story.context("shop")


def test_a_scripted_headless_prompt_gives_no_rules(story: Story) -> None:
    story.session("shop", Turn("You are an analyst. Always answer in JSON. Never ask questions.", origin="headless",
                               last='{"verdict": "neutral"}'))
    assert not [r for r in story.active("shop") if r["kind"] == "rule"]


def test_an_answer_chain_on_three_topics_keeps_three_answers(story: Story) -> None:
    """Each answer is about its own thing: none replaces another, whatever their order."""
    story.session(
        "shop",
        Turn("Where does the staging database live?", [read(ROOT, "deploy/staging.env")],
             last="The staging database runs on db-7.internal, port 6432 behind pgbouncer."),
        Turn("How do we get credentials for staging?", [read(ROOT, "docs/access.md")],
             last="Staging credentials come from the 1Password vault infra-staging; nobody keeps them in env files."),
        Turn("Why is the invoice total rounded per line?", [read(ROOT, "src/totals.py")],
             last="That was deliberate: every line on the PDF shows its own VAT, so the printed lines have to add "
                  "up to the printed total."))
    later = story.session("shop", Turn("Which port does the staging database use now?",
                                       [read(ROOT, "deploy/staging.env")],
                                       last="Still 6432 behind pgbouncer; only the admin port moved to 6543."))
    assert later
    rows = story.rows("shop")
    said = " ".join(r["title"] for r in rows if r["status"] == "active")
    for fact in ("db-7.internal", "infra-staging", "every line on the PDF shows its own VAT"):
        assert fact in said, rows
    assert not [r for r in rows if r["status"] == "superseded"], rows


def test_a_reverted_fix_is_no_fix(story: Story) -> None:
    story.session("shop", Turn(
        "The upload test fails, fix it.",
        [bash("pytest -q tests/test_upload.py", fails="E   AssertionError: 413"),
         edit(ROOT, "deploy/nginx.conf", "client_max_body_size 1m;", "client_max_body_size 50m;"),
         bash("pytest -q tests/test_upload.py", "3 passed")],
        last="The upload failed because client_max_body_size was 1m; raising it to 50m fixed the 413."),
        Turn("That breaks the other proxies, revert it.", [bash("git checkout -- .", "")],
             last="Reverted: nginx.conf is back to 1m."))
    rows = story.rows("shop")
    assert not [r for r in rows if r["status"] == "active" and r["kind"] in ("fix", "rootcause")
                and "50m" in r["title"]], rows
    assert "raising it to 50m" not in story.context("shop")


@pytest.mark.parametrize("edited", ["src/prompts/guidance.test.ts", "tests/test_guidance.py"])
def test_tests_made_to_match_a_change_of_the_turn_are_no_fix(story: Story, edited: str) -> None:
    """The turn changed the code, a test that checked the old behaviour failed, the test was updated: no fault was
    found (the test followed the change), so no "Fixed `bun run test`" among the key memories."""
    story.session("shop", Turn(
        "Stop defaulting to generic updates in the guidance text.",
        [edit(ROOT, "src/prompts/guidance.ts", "default to generic", "pick by category"),
         bash("bun run test", fails="error: script \"test\" exited with code 1 (guidance.test.ts)"),
         edit(ROOT, edited, "default to generic", "pick by category"),
         bash("bun run test", "42 pass")],
        last=f"The `{edited.rsplit('/', 1)[-1]}` failure was caused by the assertion on the old \"default to generic\" "
             "wording; I updated it to the category-based text and all 42 tests pass."))
    rows = story.active("shop")
    assert not [r for r in rows if r["kind"] == "fix" or (r["title"].startswith("Fixed `")
                and r["layer"] == "key")], rows


def test_the_users_later_word_beats_a_plan_bullet(story: Story) -> None:
    story.session("shop", Turn(PLAN.replace("- Store keys as `tenant:path` strings.",
                                            "- The schema snapshot must always be regenerated on every build."),
                               [edit(ROOT, "src/cache.py")], origin="plan", last="Done."))
    story.session("shop", Turn("The schema snapshot must never be regenerated; from now on only update it by hand.",
                               last="Understood."))
    ctx = story.context("shop")
    assert "never be regenerated" in ctx
    assert "always be regenerated" not in ctx.split("## Key")[0]  # the plan's bullet is not a standing rule


@pytest.mark.parametrize("answer, subject", [
    ("**Why per line.** `round_line()` in src/totals.py rounds each line's tax to the cent. That was deliberate: "
     "every printed line shows its own tax, so the lines have to add up to the printed total.", "`round_line()`"),
    ("`round_line()` 按发票的每一行分别四舍五入税额。"
     "这是故意的：每一行都单独打印税额，所以各行之和必须等于打印出的总额。",
     "`round_line()`"),
    ("`round_line()` in src/totals.py rundet die Steuer jeder Zeile auf den Cent. Das war Absicht: jede "
     "gedruckte Zeile zeigt ihre eigene Steuer, also müssen die Zeilen den printed total ergeben.", "`round_line()`"),
])
def test_a_sentence_that_points_back_keeps_what_it_points_at(story: Story, answer: str, subject: str) -> None:
    """"That was deliberate: …" alone would tell the next session nothing of what was deliberate."""
    story.session("shop", Turn("Why is the tax rounded per line and not on the subtotal?",
                               [read(ROOT, "src/totals.py")], last=answer))
    rows = [r for r in story.active("shop") if "打印" in r["title"] or "printed" in r["title"]]
    assert rows, story.active("shop")
    assert all(subject in r["title"] for r in rows), rows


def _left_off(story: Story, project: str) -> str:
    ctx = story.context(project)
    return ctx.split("## Where we left off", 1)[1] if "## Where we left off" in ctx else ""


def test_stash_and_a_reset_to_a_remote_are_no_discarded_work(story: Story) -> None:
    """`git stash` keeps the changes; `git reset --hard origin/main` moves the branch: neither says the
    session's work was thrown away, and neither takes back the fix."""
    story.session("shop", Turn(
        "The upload test fails, fix it.",
        [bash("pytest -q tests/test_upload.py", fails="E   AssertionError: 413"),
         edit(ROOT, "deploy/nginx.conf", "client_max_body_size 1m;", "client_max_body_size 50m;"),
         bash("git stash && git pull --rebase && git stash pop", "Saved working directory"),
         bash("pytest -q tests/test_upload.py", "3 passed")],
        last="The upload failed because client_max_body_size was 1m; raising it to 50m fixed the 413."),
        Turn("Sync main with the remote.",
             [bash("git fetch && git reset --hard origin/main", "HEAD is now at 1a2b3c4")],
             last="main now matches origin/main."))
    left = _left_off(story, "shop")
    assert "discarded" not in left and "reverted" not in left, left
    assert [r for r in story.active("shop") if r["kind"] in ("fix", "rootcause") and "50m" in r["title"]]


def test_work_after_changes_were_thrown_away_is_where_things_stand(story: Story) -> None:
    def thrown(root: str) -> Turn:
        return Turn("Try a bigger upload limit.",
                    [edit(root, "deploy/nginx.conf", "client_max_body_size 1m;", "client_max_body_size 50m;"),
                     bash("git checkout -- .", "")], last="Threw the change away, as asked.")

    story.session("shop", thrown(ROOT))
    left = _left_off(story, "shop")
    assert "uncommitted changes discarded" in left and "not committed" not in left, left
    story.session("till", thrown("/work/till"), Turn(
        "Then raise the timeout instead.",
        [edit("/work/till", "deploy/nginx.conf", "proxy_read_timeout 10s;", "proxy_read_timeout 120s;")],
        last="Raised proxy_read_timeout from 10s to 120s in deploy/nginx.conf."))
    left = _left_off(story, "till")
    assert "discarded" not in left and "not committed: deploy/nginx.conf" in left, left


@pytest.mark.parametrize("choice", ["A for every call that goes through the HTTP client, please.",
                                    "Let's always go with option 2 here.",
                                    "方案B，以后就这么定了。"])
def test_picking_one_of_the_agents_options_is_no_rule(story: Story, choice: str) -> None:
    """The choice is readable only next to the options it picks from: no standing rule of its own."""
    story.session("shop", Turn(
        "How should the client retry failed uploads?", [read(ROOT, "src/client.py")],
        last="Two options:\n\n**A.** Retry inside the HTTP client, with backoff.\n\n"
             "**B.** Let each caller retry.\n\nWhich do you prefer?"),
        Turn(choice, [edit(ROOT, "src/client.py")], last="Done: retries now live in the HTTP client."))
    assert not [r for r in story.active("shop") if r["kind"] == "rule"], story.active("shop")


def test_a_cause_and_a_fix_of_two_different_things_are_not_one_memory(story: Story) -> None:
    """A conclusion with a section per thing done: the cause of one and the fix of another are two
    memories, never "cause of one — fix: the other"."""
    story.session("shop", Turn(
        "The nightly export fails and the badge in the README is broken.",
        [bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character"),
         edit(ROOT, "jobs/export.py"), edit(ROOT, "README.md"), bash("python -m jobs.export", "exported 10 rows")],
        last="**Export crash.** The export crashed because the CSV writer opened files without an encoding, so "
             "the locale's ascii codec was used.\n\n**README.** Fixed the README badge by pointing it at the "
             "renamed workflow file."))
    rows = [r for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert not [r for r in rows if "encoding" in r["title"] and "badge" in r["title"]], rows
    assert any("encoding" in r["title"] for r in rows) and any("badge" in r["title"] for r in rows), rows


def test_a_cause_and_its_fix_said_together_are_one_memory(story: Story) -> None:
    story.session("shop", Turn(
        "The nightly export fails.",
        [bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character"),
         edit(ROOT, "jobs/export.py"), bash("python -m jobs.export", "exported 10 rows")],
        last="The export crashed because the CSV writer opened files without an encoding. Fixed it by opening "
             "the file with encoding='utf-8' in the CSV writer."))
    [row] = [r for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert "without an encoding" in row["title"] and "utf-8" in row["title"], row


def test_a_session_that_only_committed_is_where_we_left_off(story: Story) -> None:
    """A dependency bumped with the package manager and committed: no file went through the agent's edit
    tools, yet that session is the latest work."""
    story.session("shop", Turn("Add retries to the client.", [edit(ROOT, "src/client.py")],
                               last="Retries added to src/client.py."))
    story.session("shop", Turn(
        "Bump golang.org/x/crypto for the advisory.",
        [bash("go get golang.org/x/crypto@v0.52.0 && go mod tidy", ""),
         bash('git commit -am "Bump golang.org/x/crypto to v0.52.0"',
              "[main d1e24ae] Bump golang.org/x/crypto to v0.52.0\n 2 files changed")],
        last="Bumped golang.org/x/crypto to v0.52.0 and committed it."))
    left = _left_off(story, "shop")
    assert "x/crypto" in left and "Retries added" not in left, left


@pytest.mark.parametrize("advice", [
    "I would suggest we move the base image to eclipse-temurin:21 since it is supported until 2031.",
    "**Recommendation:** use eclipse-temurin:21 as the base image so that it keeps getting security updates "
    "until 2031."])
def test_what_the_agent_recommends_is_no_decision(story: Story, advice: str) -> None:
    """Advice is decided only once someone takes it: not a key decision, a note for search."""
    story.session("shop", Turn("Check whether the base image is still supported.", [read(ROOT, "Dockerfile")],
                               last="The base image is eclipse-temurin:17, supported until 2027.\n\n" + advice))
    keys = [r for r in story.active("shop") if r["layer"] in ("key", "rule")]
    assert not [r for r in keys if "temurin:21" in r["title"]], keys
    assert any("temurin:21" in r["title"] for r in story.rows("shop")), story.rows("shop")  # a note keeps it


def test_a_version_the_package_manager_changed_later_supersedes_the_old_one(story: Story) -> None:
    """The agent chose a version and said why; the user then asked for a newer one, and the package
    manager's output says it changed: the memory of the old version is no longer given as true."""
    sid = story.session("shop", Turn(
        "Fix the Dependabot alerts for golang.org/x/crypto.",
        [bash("go get golang.org/x/crypto@v0.52.0", "go: upgraded golang.org/x/crypto v0.51.0 => v0.52.0"),
         bash('git commit -am "Bump golang.org/x/crypto to v0.52.0"', "[main d1e24ae] Bump golang.org/x/crypto")],
        last="We decided on golang.org/x/crypto v0.52.0 because it is the smallest version that closes all 13 "
             "alerts."))
    old = [r for r in story.active("shop") if r["layer"] == "key" and "v0.52.0" in r["title"]]
    assert old, story.active("shop")
    story.session("shop", Turn(
        "do 0.54.0", [bash("go get golang.org/x/crypto@v0.54.0 && go mod tidy",
                           "go: upgraded golang.org/x/crypto v0.52.0 => v0.54.0\n"
                           "go: upgraded golang.org/x/net v0.55.0 => v0.56.0")],
        last="Done: golang.org/x/crypto is at v0.54.0 now."), name=f"{sid}-b")
    rows = {r["id"]: r for r in story.rows("shop")}
    assert all(rows[r["id"]]["status"] == "superseded" for r in old), [rows[r["id"]] for r in old]
    assert [r for r in story.active("shop")
            if r["title"].startswith("Version changed: golang.org/x/crypto from v0.52.0 to v0.54.0")]
    assert "v0.52.0 because" not in story.context("shop"), story.context("shop")


def test_what_package_managers_print_when_they_change_a_version() -> None:
    from kenning.observer.evidence import Command
    from kenning.observer.upgrades import Upgrade, upgrades

    outputs = ["go: upgraded golang.org/x/crypto v0.51.0 => v0.52.0\ngo: added golang.org/x/term v0.1.0",
               "    Updating crates.io index\n    Updating serde v1.0.200 -> v1.0.203",
               "  - Updating httpx (0.27.0 -> 0.28.1)", "Updated pydantic v2.7.0 -> v2.8.2",
               "go: upgraded golang.org/x/crypto v0.52.0 => v0.54.0"]
    cmds = [Command("x", True, out, float(i), i) for i, out in enumerate(outputs)]
    cmds.append(Command("y", False, "Updating tokio v1.0.0 -> v1.1.0", 9.0, 9))  # a failed command changed nothing
    assert upgrades(cmds) == [Upgrade("golang.org/x/crypto", "0.51.0", "0.54.0"),
                              Upgrade("serde", "1.0.200", "1.0.203"), Upgrade("httpx", "0.27.0", "0.28.1"),
                              Upgrade("pydantic", "2.7.0", "2.8.2")]


@pytest.mark.parametrize("prompt", ["Why does the CSV export drop its last row?",
                                    "It must be the export changes of the last two days"])
def test_a_change_is_never_titled_by_the_question_or_guess_that_asked_for_it(story: Story, prompt: str) -> None:
    """No commit and no word of the agent on what it changed: the request is named as the request."""
    story.session("shop", Turn(prompt, [edit(ROOT, "src/export.py")], last=""))
    [change] = [r for r in story.active("shop") if r["kind"] == "change"]
    assert change["title"] == f"Changed export.py (asked: {prompt})", change
    # Where it stands says the same, once: the request is what it worked on, the file is not committed.
    context = story.context("shop")
    assert f"Worked on: {prompt.rstrip('?')}" in context and "not committed: src/export.py" in context, context
    assert context.count(prompt.rstrip("?")) == 1, context



def test_the_plan_file_the_agent_writes_is_not_a_change_of_the_project(story: Story) -> None:
    """Claude Code's plan mode writes ~/.claude/plans/<words>.md: the agent's plan, not the project's files."""
    story.session("shop", Turn("Make the export stream its rows.",
                               [edit("/home/dev/.claude/plans", "quiet-river-otter.md"), edit(ROOT, "src/export.py")],
                               last="The export streams rows now."))
    [change] = [r for r in story.active("shop") if r["kind"] == "change"]
    assert "quiet-river-otter" not in change["title"] and "export.py" in change["title"], change
    assert "quiet-river-otter" not in story.context("shop")


def test_a_session_line_does_not_say_its_request_twice(story: Story) -> None:
    story.session("shop", Turn("Why does the CSV export drop its last row?", [edit(ROOT, "src/export.py")], last=""))
    story.session("shop", Turn("Add a CSV header row.", [edit(ROOT, "src/header.py")], last=""))  # where we left off
    line = next(ln for ln in story.context("shop").splitlines() if ln.startswith("S"))
    assert line.count("drop its last row") == 1 and "→ Changed export.py" in line, line


@pytest.mark.parametrize(("said", "statement"), [
    ("Keep the retry limit at three, the provider bans clients above that; I'll tell the mobile team.",
     "Keep the retry limit at three, the provider bans clients above that"),
    ("On garde les montants en centimes pour éviter les arrondis ; je vais prévenir l'équipe mobile.",
     "On garde les montants en centimes pour éviter les arrondis"),
])
def test_what_the_user_will_do_next_is_no_part_of_their_statement(said: str, statement: str) -> None:
    """A clause in which the user says what they will do themselves is neither the decision's words nor a
    memory of its own: the decision is judged, titled and kept by what it says."""
    from kenning.observer.reading import judge_user

    assert [j.text for j in judge_user(said, "typed")] == [statement]


def test_a_sentence_a_title_took_in_front_is_not_also_a_note_of_its_own(story: Story) -> None:
    """"X. That was deliberate: Y" is one memory titled "X. That was deliberate: Y", not that plus a note "X"."""
    story.session("shop", Turn("Why are the rate limits what they are?", [read(ROOT, "src/api/limits.py")],
                               last="`rate_limit()` in `src/api/limits.py` allows 100 requests per minute per key "
                                    "and `burst()` adds 20 on top. That was deliberate: the upstream gateway "
                                    "throttles anything above 120, so the limits have to stay under it."))
    holding = [r for r in story.rows("shop") if "allows 100 requests per minute" in r["title"]]
    assert len(holding) == 1 and "That was deliberate" in holding[0]["title"], holding


@pytest.mark.parametrize("report", ["All pre-push checks passed (build, typecheck, lint, test, validate examples).",
                                    "所有测试都通过了。", "テストはすべてパスしました。", "모든 테스트 통과했습니다.",
                                    "Verification: `bash -n scripts/release` passed, and `rg` found no remaining "
                                    "`cargo update` in the release task paths.",
                                    "验证：`make check` 通过，`rg` 没有找到残留的 `cargo update`。"])
def test_a_run_reported_as_passing_is_no_key_memory(story: Story, report: str) -> None:
    """Where that moment stood: the next session learns nothing lasting from it."""
    story.session("shop", Turn("Add retries to the client.", [edit(ROOT, "src/client.py"),
                                                              bash("make check", "ok")],
                               last=f"Retries are in `src/client.py`.\n\n{report}"))
    assert not [r for r in story.active("shop") if r["layer"] in ("key", "rule") and report[:12] in r["title"]]



@pytest.mark.parametrize("finding", ["All checks pass only when HK_LIBGIT2=0 is set.",
                                     "All tests pass because the mock hides the network call.",
                                     "All checks passed, but the Windows job was skipped.",
                                     "All tests passed on Linux.", "所有测试在关闭缓存后才通过。"])
def test_a_passing_run_with_a_condition_or_a_reason_is_not_taken_for_a_bare_report(finding: str) -> None:
    from kenning.observer.compose import _PASSING_RUN

    assert not _PASSING_RUN.match(finding)


def test_a_report_of_the_checks_run_is_known_by_its_label() -> None:
    from kenning.observer.compose import _VERIFICATION

    assert _VERIFICATION.match("Verification: `bash -n x` passed") and _VERIFICATION.match("検証: テストは通過")
    assert not _VERIFICATION.match("The verification step failed because the token had expired.")


@pytest.mark.parametrize("lead", ["Here's a summary of the changes made to `jobs/export.py`:",
                                  "Voici un résumé des changements apportés à `jobs/export.py` :",
                                  "以下是对 `jobs/export.py` 的修改总结："])
def test_a_sentence_that_only_introduces_the_answer_does_not_lead_its_title(story: Story, lead: str) -> None:
    story.session("shop", Turn(
        "The nightly export fails.",
        [bash("python -m jobs.export", fails="UnicodeEncodeError: 'ascii' codec can't encode character"),
         edit(ROOT, "jobs/export.py"), bash("python -m jobs.export", "exported 10 rows")],
        last=f"{lead}\n\n- The export crashed because the CSV writer opened files without an encoding.\n"
             "- Fixed it by opening the file with encoding='utf-8' in the CSV writer."))
    [row] = [r for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert "without an encoding" in row["title"] and lead.split()[0] not in row["title"], row


def test_more_said_in_one_turn_about_the_same_named_thing_is_one_row(story: Story) -> None:
    story.session("shop", Turn(
        "Why does the pre-commit hook report 80 failing tests?",
        [bash("git commit -m wip", fails="80 tests failed in tmp/clones/eval-x/"), bash("rm -rf tmp/clones/eval-x")],
        last="The pre-commit hook runs `bun test src/`, which also picks up the test files under `tmp/clones/`. "
             "A leftover evaluation clone in `tmp/clones/` holds 80 tests of another repository, so removing "
             "it unblocks the commit. Separately, `bun test` needs `--timeout 20000` on this machine, or the "
             "slow integration tests time out."))
    keys = [r for r in story.active("shop") if r["kind"] in ("gotcha", "rootcause", "fact", "fix", "decision")]
    clones = [r for r in keys if "tmp/clones" in " ".join([r["title"], *r["facts"]])]
    assert len(clones) == 1, keys  # one subject, one row: what else was said of it is in its facts
    assert len(clones[0]["facts"]) >= 2, clones


@pytest.mark.parametrize(("said", "statement_"), [
    ("The fix is simple: open the file with encoding utf-8.", "Open the file with encoding utf-8."),
    ("Root cause: the cache key leaves the tenant out.", "The cache key leaves the tenant out."),
    # the agent's interjection (an unseen project: "Good — the implementer noticed an important issue: …")
    ("Good — the worker had to live in `build.go` because `env.go` is no test file.",
     "The worker had to live in `build.go` because `env.go` is no test file."),
    ("Excellent - there's already a `summary` package.", "There's already a `summary` package."),
    ("Right now only x86_64 has the guard.", "Right now only x86_64 has the guard."),
])
def test_a_statement_loses_the_words_that_only_announce_it(said: str, statement_: str) -> None:
    from kenning.observer.compose import statement

    assert statement(said) == statement_


@pytest.mark.parametrize(("prompt", "gist"), [
    ("修复登录页面的崩溃问题", "修复登录页面的崩溃问题"),  # no spaces between words: still a request
    ("ログイン画面のクラッシュを直して", "ログイン画面のクラッシュを直して"),
    ("好的", ""), ("네", ""), ("Thanks!", ""),  # a nod says nothing about the work
    ("The export fails like this [09:12:01.500] [Export] GET /api/export/7 failed", "The export fails like this"),
    ("导出失败了 [09:12:01] [Export] job 1b4e28ba-2fa1-11d2-883f-0016d3cca427 failed", "导出失败了"),
    ("Update the old [API] handler so GET /users works", "Update the old [API] handler so GET /users works"),
    ("[09:12:01] [Export] GET /api/export/7 failed. Why does the export fail?", "Why does the export fail?"),
    # a pasted document's heading marks are no words ("Implement this plan:\n# Fix …", "## Summary" over a report)
    ("Implement this plan:\n# Fix the parser's token gaps\n\n## Context\n- the lexer", "Implement this plan: Fix "
                                                                                   "the parser's token gaps"),
    ("Please review:\n## Summary\nThe exporter drops zero rows", "The exporter drops zero rows"),
    ("#123 is still broken on main", "#123 is still broken on main"),
])
def test_a_sessions_request_is_the_users_words_in_any_script_without_the_log_they_pasted(prompt: str,
                                                                                          gist: str) -> None:
    from kenning.observer.stated import gist_of

    assert gist_of(prompt) == gist


def test_a_nod_in_any_language_is_no_part_of_what_the_session_was_about() -> None:
    from kenning.observer.summary import request_of

    prompts = ["認証モジュールのリファクタリングを進めて", "確認内容、問題ありません。", "コミットお願いします",
               "提交吧", "커밋해주세요", "Thanks!"]
    assert request_of(prompts, []) == "認証モジュールのリファクタリングを進めて"


@pytest.mark.parametrize(("prompt", "gist"), [
    ("You are a release analyst. Assess what is left before the next release.", "Assess what is left before the next"),
    ("You are right, the cache was the issue. Now fix the export.", "You are right, the cache was the issue"),
    ("Act as a Go reviewer and check PR 12 for data races", "Act as a Go reviewer and check PR 12")])
def test_a_session_is_about_what_its_prompt_asks_not_the_role_it_gives(prompt: str, gist: str) -> None:
    from kenning.observer.stated import gist_of

    assert gist_of(prompt).startswith(gist)


def test_a_flag_proven_needed_is_a_gotcha_but_a_pipe_added_after_the_command_is_none(story: Story) -> None:
    """The same command failing, then passing with a flag added, is a gotcha when the agent names the flag;
    the command piped into another (`| sed -n 1,80p`) adds no flag of its own, and a word that only contains
    the flag's letters ("--no-results-push" holds "-n") does not name it."""
    story.session("shop", Turn(
        "Is the bench skill still there?",
        [bash("node cli.js skills get bench", fails="SyntaxError: Export named 'mergeConfig' not found"),
         bash("node cli.js skills get bench | sed -n 1,80p", "name: bench")],
        last="The skill is there. It also tried to publish results by default, so I added `--no-results-push`."))
    assert not [r for r in story.active("shop") if "needs" in r["title"]], story.active("shop")
    story.session("shop", Turn(
        "Run the slow suite.",
        [bash("pytest tests/slow", fails="ERROR: unknown marker 'slow'"),
         bash("pytest tests/slow -p slowmarks", "12 passed")],
        last="The slow suite needs the plugin loaded: run it with `-p slowmarks`, or pytest rejects the marker."))
    assert [r for r in story.active("shop") if "-p" in r["title"] and "slowmarks" in r["title"]], \
        story.active("shop")


def test_a_fix_the_agent_only_recommends_is_said_as_proposed_or_left_to_the_notes(story: Story) -> None:
    story.session("shop", Turn(
        "Investigate why large commits fail on Linux.",
        [read(ROOT, "src/batching.rs")],
        last="Root cause: the batcher sizes every chunk by the file count of the first one, so chunks of longer "
             "paths exceed `ARG_MAX`.\n\nRecommended fix: size each chunk by its own byte length in `batching.rs` "
             "instead of reusing the file count of the first chunk."))
    [row] = [r for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert "proposed fix: size each chunk" in row["title"], row
    story.session("shop", Turn(
        "The nightly export fails with a timeout.", [read(ROOT, "jobs/export.py")],
        last="Recommended fix: stream the rows in `jobs/export.py` with `fetchmany()` instead of loading all of "
             "them into memory at once."))
    assert not [r for r in story.active("shop") if r["kind"] == "fix" and "fetchmany" in r["title"]], \
        story.active("shop")


def test_changes_listed_under_the_problem_each_fixes_are_one_row_per_problem(story: Story) -> None:
    """A conclusion that names each problem in a bold numbered label and lists the changes under it: each problem
    with its own changes, never the first problem with the second one's fix."""
    story.session("shop", Turn(
        "Review the journal pipeline and fix what is real.",
        [edit(ROOT, "wal/checkpoint.go"), edit(ROOT, "wal/store.go"), bash("go test ./wal/...", "ok")],
        last="All builds, vet, and tests pass. Here's a summary of the two fixes:\n\n"
             "**1. Send-on-closed-channel panic** (`checkpoint.go` + `store.go`):\n"
             "- Added a `shuttingDown` atomic flag\n"
             "- `SendMessage` checks the flag before attempting to send\n\n"
             "**2. Periodic rotation deadlock** (`checkpoint.go`):\n"
             "- `RotateFiles` now returns immediately if `shuttingDown` is set\n"
             "- Uses a non-blocking send to the rotation channels, skipping hosts whose channel is full\n"))
    rows = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    panic = [t for t in rows if t.startswith("Send-on-closed-channel panic")]
    deadlock = [t for t in rows if t.startswith("Periodic rotation deadlock")]
    assert panic and "`SendMessage` checks the flag" in panic[0] and "RotateFiles" not in panic[0], rows
    assert deadlock and "`RotateFiles` now returns immediately" in deadlock[0], rows


def test_fixes_listed_under_a_heading_of_fixes_are_not_fixes_of_a_problem_named_so(story: Story) -> None:
    """An unseen project's key row read "Bug fixes — fix: OIDC role extraction fix; OIDC user sync role changes":
    a heading that only says the list is of fixes names no problem."""
    story.session("shop", Turn(
        "Update the release notes with the latest changes",
        [edit(ROOT, "ReleaseNotes.md"), bash("go test ./...", "ok")],
        last="Updated the release notes.\n\n**Bug fixes**\n- OIDC role extraction fix\n"
             "- OIDC user sync role changes (SyncUser/UpdateUser)\n- WAL message drops during checkpoint fixed\n"))
    rows = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert not [t for t in rows if t.startswith("Bug fixes")], rows


def test_what_is_listed_under_a_label_naming_a_cause_is_no_fix_of_it(story: Story) -> None:
    """An unseen project's key row read "CI lint failure cause — fix: `staticcheck SA5011` flagging "possible nil
    pointer dereference" after `t.Fatal()` checks": the label names the cause, its items say it."""
    story.session("shop", Turn(
        "CI lint is failing, fix it",
        [read(ROOT, "wal/checkpoint_test.go"), edit(ROOT, "wal/checkpoint_test.go"), bash("go vet ./...", "ok")],
        last="Added `//nolint:staticcheck` to the 5 places in `checkpoint_test.go`.\n\n**CI lint failure cause**\n"
             "- `staticcheck SA5011` flagging \"possible nil pointer dereference\" after `t.Fatal()` checks\n"
             "- This is a known false positive - staticcheck doesn't recognize that `t.Fatal()` terminates "
             "execution\n"))
    rows = [r["title"] for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert not [t for t in rows if t.startswith("CI lint failure cause")], rows


def test_a_workaround_is_said_as_one_not_as_the_fix(story: Story) -> None:
    story.session("shop", Turn(
        "The branch guard fails during a rebase, see the discussion.",
        [read(ROOT, "src/guard.rs"), bash("git symbolic-ref HEAD", fails="fatal: ref HEAD is not a symbolic ref")],
        last="The guard fails because `git symbolic-ref HEAD` exits 1 on a detached `HEAD`, which every rebase "
             "has, and the guard treats any nonzero exit as fatal.\n\nA temporary workaround is: "
             "`SKIP_STEPS=branch-guard git rebase --continue`."))
    rows = [r["title"] for r in story.active("shop") if r["kind"] in ("rootcause", "fix")]
    assert rows and "workaround: `SKIP_STEPS=branch-guard" in rows[0] and "fix:" not in rows[0], rows


def test_a_status_says_what_is_not_committed_whoever_changed_it(story: Story) -> None:
    """A file changed outside the agent's tools (by the user, a script, an earlier stash) is known from
    `git status`; what the turn committed after it is not listed, and a later clean status clears it."""
    story.session("shop", Turn("Write the retro and commit it.", [
        edit(ROOT, "docs/retro.md"),
        bash("git add docs/retro.md && git status --short", " M NOTES.md\nA  docs/retro.md"),
        bash("git commit -m 'docs: retro of the export release'", "[main ecc6c3c] docs: retro of the export release")],
        last="Committed the retro."))
    left = _left_off(story, "shop")
    assert "committed ecc6c3c docs: retro" in left and "not committed: NOTES.md" in left, left
    assert "docs/retro.md" not in left.split("not committed:")[1], left
    story.session("shop", Turn("Commit the notes too.", [
        bash("git commit -am 'notes'", "[main 1a2b3c4] notes"), bash("git status", "On branch main\nnothing to "
                                                                       "commit, working tree clean")],
        last="Committed."))
    context = story.context("shop")
    assert "not committed" not in context and "working tree clean" in _left_off(story, "shop"), context


def test_a_push_the_forge_refuses_for_a_protected_branch_is_a_gotcha(story: Story) -> None:
    """The remote's own words prove it: the next session should not push straight to main again."""
    refused = ("remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
               " ! [remote rejected] main -> main (protected branch hook declined)")
    story.session("shop", Turn("Release it.", [bash("git push origin main --tags", fails=refused)],
                               last="The push was refused."))
    [gotcha] = [r for r in story.active("shop") if r["kind"] == "gotcha"]
    assert gotcha["title"].startswith("`main` is protected: a direct push is rejected (GH006"), gotcha
    assert "`main` is protected" in story.context("shop").split("## Key")[1]


def test_the_checks_that_passed_are_said_where_work_stands(story: Story) -> None:
    """How the project is checked, as the commands proved it: the latest session's passing checks, not one piped
    through tail (its exit status is tail's), nor a fixer."""
    story.session("shop", Turn("Make the export stream its rows.", [
        edit(ROOT, "src/export.py"), bash("cargo fmt"), bash("cargo clippy 2>&1", "Finished"),
        bash("cargo test 2>&1 | tail -5", "test result: FAILED"), bash("cargo test", "test result: ok. 12 passed")],
        last="The export streams its rows."))
    left = _left_off(story, "shop")
    assert "Checks that passed: `cargo clippy`, `cargo test`" in left, left
    said = next(ln for ln in left.splitlines() if ln.startswith("Checks that passed:"))
    assert said == "Checks that passed: `cargo clippy`, `cargo test`", said


REPORT = """Can you make the Windows test job reliable again?

Findings
The force-install test failed because Windows still held the extension binary open.
Expected behavior
Extension cleanup should tolerate transient Windows file locks without test-specific sleeps.
Functional tests that change user configuration should always use isolated state.
"""


@pytest.mark.parametrize("report", [REPORT, REPORT.replace("Expected behavior", "## Expected behavior"),
                                    REPORT.replace("Expected behavior", "期望行为")])
def test_what_a_pasted_report_expects_is_no_rule(story: Story, report: str) -> None:
    """The sections of an issue the user pastes ("Expected behavior") say what this work is to achieve: a bug
    report, not how to work from now on (DESIGN.md §9)."""
    story.session("shop", Turn(report, [edit(ROOT, "src/cleanup.go"), bash("go test ./...", "ok")],
                               last="Cleanup now retries while Windows holds the file."))
    kept = [r["title"] for r in story.active("shop") if r["layer"] in ("rule", "key") and r["kind"] in (
        "rule", "decision", "preference")]
    assert not [t for t in kept if "isolated state" in t or "file locks" in t], kept


def test_a_report_section_heads_what_follows_it() -> None:
    from kenning.observer.units import units

    said = units(REPORT)
    assert [u.heading for u in said if "isolated state" in u.text or "file locks" in u.text] == \
        ["Expected behavior", "Expected behavior"]
    assert units("Expected behavior is what the docs describe.")[0].heading == ""  # a sentence, no section


@pytest.mark.parametrize("moment", ["No failures so far; several checks are still pending (`build-ubuntu`, `nightly`).",
                                    "The build is still running after finishing core, so the CLI waits.",
                                    "The `retry-upload` suite is running now; it exercises the lock timeout in "
                                    "`upload.go` through the real queue, which is why it is slower.",
                                    "目前为止没有失败，还有几个检查在排队。",
                                    "The worker had to run `bun install` because `tsup` was missing, then restarted "
                                    "the build; core has built successfully so far."])
def test_a_run_reported_while_still_going_is_no_key_memory(story: Story, moment: str) -> None:
    """Where a run stood while the agent watched it: never a cause, fix, fact or gotcha (all 41 such labelled
    sentences of the agent are noise)."""
    story.session("shop", Turn("Watch the CI of the retry PR.", [bash("gh pr checks 12", "pending")],
                               said=[moment], last=f"The retry change is pushed.\n\n{moment}"))
    assert not [r for r in story.active("shop") if r["layer"] in ("key", "rule") and moment[:14] in r["title"]]


def test_a_run_that_was_still_going_when_something_happened_is_not_taken_for_one() -> None:
    from kenning.observer.gates import in_progress

    assert not in_progress("The job was still running when the 10-minute timeout killed it, so no cache was written.")
    assert not in_progress("The fix so far only covers Linux; Windows keeps the old path.")
    assert not in_progress("The only bug found so far is the nil map in `Load`.")
    # what runs as something, or runs something, is no moment of a run
    assert not in_progress("The worker is running as root, so the socket belongs to root.")
    assert not in_progress("The daemon is running the old binary now, so the fix only shows after a restart.")
    assert not in_progress("Nothing is running, so port 8080 is held by the Docker proxy.")
    assert in_progress("CI is running/pending.") and in_progress("The deploy build is running, and the docs job waits.")


def test_a_scratch_file_outside_a_windows_checkout_is_not_left_uncommitted() -> None:
    """An agent on Windows writes a scratch file under its temp folder: the file is outside the project, as
    /tmp is for a POSIX one, and is not work left uncommitted."""
    from kenning.observer import git_actions
    from kenning.observer.providers.rules import _rel, standing
    from kenning.observer.summary import Notes

    root = "c:\\users\\me\\source\\numbers"
    changed = ["C:\\Users\\me\\source\\numbers\\Models\\Settings.cs",
               "C:\\Users\\me\\AppData\\Local\\Temp\\claude\\scratchpad\\recap.js"]
    note = Notes()
    standing(note, git_actions.Actions(), [], {_rel(f, root): 10.0 for f in changed}, root)
    assert note.uncommitted == ["Models/Settings.cs"], note.uncommitted


@pytest.mark.parametrize(("command", "refusal"), [
    ("git add src && git status --short --cached", "warning: in the working copy of 'src/a.cs', LF will be "
     "replaced by CRLF the next time Git touches it\n" * 40 + "error: unknown option `cached'\nusage: git status"),
    ("gh pr checks 7 --json conclusion", 'Unknown JSON field: "conclusion"\nAvailable fields:\n  bucket\n  name'),
    # the shell refused it: zsh found no file for the glob in an unquoted query, bash a token out of place
    ("tool search orders repo:*", "(eval):1: no matches found: repo:*"),
    ("tool search $(echo (orders)", "bash: -c: line 1: syntax error near unexpected token `('"),
])
def test_a_command_the_tool_refused_as_written_is_not_left_failing(story: Story, command: str, refusal: str) -> None:
    """The turn's last command failed because the tool does not take an option it was given, or the shell would
    not run it as written (a glob that matched nothing, a stray parenthesis): how the command was
    written, not work the next session must take up."""
    story.session("shop", Turn("Stage the converters.", [edit(ROOT, "src/convert.py"), bash(command, fails=refusal)],
                               last="Staged."))
    assert "Still failing" not in story.context("shop"), story.context("shop")
    story.session("shop", Turn("Run the tests.", [bash("pytest -q", fails="1 failed, 12 passed")], last="One fails."))
    assert "Still failing: `pytest -q`" in _left_off(story, "shop"), story.context("shop")


def test_a_quiet_commit_whose_message_comes_from_a_heredoc_is_a_commit(story: Story) -> None:
    """`git commit -q -F - <<'EOF' && git log --oneline -1`: git prints no "[branch hash]" line, and the line that
    opens the heredoc goes on; the message is still the commit's, and its files are committed."""
    command = ("git add -A && git commit -q -F - <<'EOF' && git log --oneline -1\nfeat: reject locales that fail late"
               "\n\nThree validation gaps.\nEOF")
    story.session("shop", Turn("Commit it.", [edit(ROOT, "src/locale.py"),
                                              bash(command, "3239db0 feat: reject locales that fail late")],
                               last="Committed."))
    left = _left_off(story, "shop")
    assert "feat: reject locales that fail late" in left and "not committed" not in left, left


def test_a_heredoc_that_feeds_another_program_is_no_commit_message() -> None:
    """A script reused a commit's message (`git commit -q -C 47a7b8b`), then patched a file with `python3 - <<'EOF'`:
    the script's first line ("src = open(…).read()") was recorded as a commit, and "Where we left off" said it was
    committed. The heredoc is the commit's message only when it opens on the commit's line."""
    from kenning.observer.git_actions import commit_message

    script = ("git add cli.go && git commit -q -C 47a7b8b\ncp cache.go $S/cache.go\npython3 - <<'EOF'\n"
              "src = open('cache.go').read()\nopen('cache.go', 'w').write(src.replace('a', 'b'))\nEOF\ngo build ./...")
    assert commit_message(script) == ""
    assert commit_message("git commit -q -F - <<'EOF' && git log -1\nfix: keep the cache\nEOF") == "fix: keep the cache"
    assert commit_message("cd repo\ngit commit -m \"$(cat <<'EOF'\nfeat: add the probe\nEOF\n)\"") == \
        "feat: add the probe"


@pytest.mark.parametrize(("command", "ours"), [
    ('S=/tmp/scratch/probe\ngit -C $S commit --allow-empty -q -m "same tree"\ntool search --repo $S', False),
    ("git -C /private/tmp/claude-501/scratchpad/nits commit -qm 'fix: nits'", False),
    ('git -C "$REPO" commit -m "try the cache"', False),
    ("git -C ../api commit -m 'feat: accept stable ids'", True),  # a sibling checkout named by its path: kept
    ("git commit -m 'feat: accept stable ids'", True),
])
def test_a_commit_in_a_scratch_checkout_is_not_the_projects(command: str, ours: bool) -> None:
    """An unseen project's session said it "committed same tree": an empty commit the agent made in a scratch clone
    (`git -C $S commit --allow-empty -m "same tree"`) to try a cache on a new commit."""
    from kenning.observer.evidence import Command
    from kenning.observer.git_actions import read

    commits = read([Command(command, True, "", 10.0, 1)]).commits
    assert bool(commits) == ours, commits


def test_an_explanation_that_opens_by_saying_what_the_agent_will_do_is_titled_by_its_finding(story: Story) -> None:
    """A real answer opened "Sure — let me build it up from the Go semantics, because the whole thing turns on
    one subtle rule …" and that narration became the root cause's title: its "because" is why the agent explains,
    not a cause. Narration that opens with "Sure", "OK", "Let me", "We'll" (capitalised, as sentences are) is no
    memory; of the labelled sentences of the agent that open so, 672 of 674 are noise."""
    story.session("shop", Turn(
        "why does the retry test never see the rejection?",
        tools=[read(ROOT, "internal/push.go"), edit(ROOT, "internal/push.go"), bash("go test ./...", "ok")],
        last="Sure — let me build it up from the Go semantics, because the whole thing turns on one subtle rule "
             "about `errors.As`. The root cause is that the lookup asks for a `*RejectError` pointer while the "
             "transport returns the error by value, so `errors.As` never matches and the retry never starts. "
             "Fixed by matching the value type in `asRejectError`."))
    [cause] = [r for r in story.active("shop") if r["kind"] == "rootcause"]
    assert "`*RejectError` pointer" in cause["title"] and not cause["title"].startswith("Sure"), cause
    index = story.context("shop")
    assert "let me build it up" not in index and "`*RejectError`" in index


@pytest.mark.parametrize("said", [
    "Sure — let me build it up from the Go semantics, because the whole thing turns on one rule.",
    "OK, let me look at the logs because the job failed twice.",
    "Let's see why it fails, since the cache was cleared.",
    "We'll rerun it later because the runner is busy.",
])
def test_narration_of_the_next_step_is_no_memory_in_any_case(said: str) -> None:
    from kenning.observer.conclusion import worth_saying
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    assert not worth_saying(Judged(units(said)[0], role="rootcause", p=0.95, speaker="agent", origin="final",
                                   worth=0.95))


@pytest.mark.parametrize("said", [
    "I/O errors are retried three times because the disk is network-mounted.",
    "Yes, the cause is the stale lock file left by the crashed run.",
])
def test_a_finding_that_merely_starts_like_narration_is_kept(said: str) -> None:
    from kenning.observer.conclusion import worth_saying
    from kenning.observer.roles.roles import Judged
    from kenning.observer.units import units

    assert worth_saying(Judged(units(said)[0], role="rootcause", p=0.95, speaker="agent", origin="final",
                               worth=0.95))
