"""What the history readers make of the lines real transcripts hold (kenning/history/claude_code.py,
claude_lines.py, codex.py, identity.py), on synthetic transcripts in the exact shapes Claude Code and
Codex write (tests/fixtures/history/README.md): who typed a prompt (``prompt_origin``), queued messages,
plan hand-offs, rejected tool calls, interrupted turns, text nobody typed, the user's own shell commands,
Codex's duplicated prompts and code-mode tool calls, and the repository a session names.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kenning.history import Event, SessionFile, claude_code, codex
from kenning.history.claude_lines import queued_text, rejection
from kenning.history.identity import checkout, remote_of_pr, remote_of_url

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
LEDGER = HISTORY / "claude-code" / "-Users-dev-src-ledger"
MAIN = LEDGER / "3f0c2d1e-5b6a-4c7d-8e9f-a0b1c2d3e4f5.jsonl"
PLAN = LEDGER / "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"
HEADLESS = LEDGER / "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f.jsonl"
WORKTREE_ROLLOUT = HISTORY / "codex" / "rollout-2026-06-01T08-00-00-019e0a1b-2c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl"
CALC_ROLLOUT = HISTORY.parent / "codex" / "rollout-calc-session.jsonl"
POLLED_ROLLOUT = HISTORY.parent / "codex" / "rollout-polled-commands.jsonl"


def read(path: Path, agent: str = "claude-code") -> list[Event]:
    reader = claude_code if agent == "claude-code" else codex
    return list(reader.events(SessionFile(agent, str(path), 1, 0.0), now=time.time()))


def prompts(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.payload["prompt"], e.payload["prompt_origin"]) for e in events if e.kind == "UserPromptSubmit"]


def at(stamp: str) -> float:
    from kenning.history import timestamp

    value = timestamp(stamp)
    assert value is not None
    return value


@pytest.fixture(scope="module")
def main() -> list[Event]:
    return read(MAIN)


def test_every_prompt_says_who_wrote_it_and_nothing_else_is_a_prompt(main: list[Event]) -> None:
    assert prompts(main) == [
        ("The nightly export drops rows whose amount is zero. Find out why.", "typed"),
        ("Note that zero amounts are valid refunds", "queued"),
        ("Do not touch the importer, only the export filter.", "rejection"),
        ("Check the refund path as well", "typed"),
        ("use the staging bucket, not prod, for the rerun", "typed"),
        ("thanks, that is all for today", "typed"),
    ]
    # Never a prompt: the compaction summary, slash commands and their output, a task notification,
    # an agent-team message, a sidechain, a meta caveat, the user's shell command, a bare "/compact".
    said = " ".join(p for p, _ in prompts(main))
    for text in ("continued from a previous conversation", "/clear", "local-command", "task-notification",
                 "squash", "Search the repository", "Caveat", "git commit", "/compact", "/model", "task_id"):
        assert text not in said


def test_a_slash_command_run_with_the_users_words_is_their_prompt(tmp_path: Path) -> None:
    """Claude Code records "/goal tidy the parser …" only as <command-name> and <command-args>; /plan's words,
    cut short there, again whole as the next line; a skill's expansion as a meta line (the skill file's words)."""
    from tests.support.transcripts import ClaudeSession

    whole = "The export still drops refunds. Before planning, ask me up to five questions about the filter " \
            "so that we agree on what a refund row is."
    s = ClaudeSession("/w/ledger", "2026-05-04T09:00:00Z")
    s.command("model", "opus", output="Set model to opus").command("effort", "high", output="Set effort to high")
    s.command("goal", "tidy the parser and keep every public function", output="Goal set: tidy the parser")
    s.say("Starting with the tokenizer.")
    s.command("plan", whole[:60], output="Enabled plan mode").prompt(" " + whole).say("Here are five questions.")
    s.command("review", "only the commits of this branch", expands_to="You are a careful reviewer. ARGUMENTS: only "
                                                                      "the commits of this branch")
    s.say("No findings.").command("compact", "keep the parser notes").command("clear")
    events = read(s.write(tmp_path / "claude"))
    assert prompts(events) == [("/goal tidy the parser and keep every public function", "typed"), (whole, "typed"),
                               ("/review only the commits of this branch", "typed")]
    stops = [e for e in events if e.kind == "Stop"]
    assert [e.payload["last_assistant_message"] for e in stops] == [
        "Starting with the tokenizer.", "Here are five questions.", "No findings."]
    # a headless run's command (another program wrote its words) is scripted
    run = ClaudeSession("/w/ledger", "2026-05-05T09:00:00Z").command("review", "Scope: the commits of this branch")
    for line in run.say("No findings.").lines:
        line["entrypoint"] = "sdk-cli"
    assert prompts(read(run.write(tmp_path / "claude"))) == [("/review Scope: the commits of this branch", "headless")]


def test_a_queued_message_is_imported_once_at_its_own_time(main: list[Event]) -> None:
    queued = [e for e in main if e.payload.get("prompt_origin") == "queued"]
    assert len(queued) == 1 and queued[0].at == at("2026-05-04T09:00:07.000Z")
    # Read by the agent mid-turn: it does not close the turn (no Stop between the prompt and it).
    kinds = [e.kind for e in main]
    assert kinds[1:4] == ["UserPromptSubmit", "UserPromptSubmit", "PostToolUse"]
    # Dequeued and submitted, or taken back and sent edited: only the prompt that carries it.
    assert sum("Check the refund path" in p for p, _ in prompts(main)) == 1
    assert sum("use the staging bucket" in p for p, _ in prompts(main)) == 1


def test_what_the_queue_holds_besides_typed_messages_is_not_a_prompt() -> None:
    def enqueue(content: object) -> dict[str, object]:
        return {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-05-04T09:00:00.000Z",
                "sessionId": "s", "content": content}

    assert queued_text(enqueue("Assume a few thousand rows")) == "Assume a few thousand rows"
    for content in ('{"task_id":"b1","description":"npm test","task_type":"local_bash"}', {"task_id": "b1"},
                    "<task-notification>\n<task-id>b1</task-id>\n</task-notification>",
                    '<agent-message from="reviewer">\nok\n</agent-message>', "/model", "/plan make it faster",
                    "/plugin:skill", "", None):
        assert queued_text(enqueue(content)) is None, content
    assert queued_text({**enqueue("typed"), "operation": "remove"}) is None
    assert queued_text(enqueue("/Users/dev/notes.md is the spec")) == "/Users/dev/notes.md is the spec"


def test_a_plan_hand_off_and_a_headless_run_are_marked() -> None:
    plan = prompts(read(PLAN))
    assert len(plan) == 1 and plan[0][1] == "plan" and plan[0][0].startswith("Implement the following plan:")
    # The scripted prompt was queued, dequeued and then written as a user line: one prompt.
    assert prompts(read(HEADLESS)) == [("You review a diff and list risky changes. Answer in one paragraph.",
                                        "headless")]


def test_a_rejected_tool_call_is_no_failure_and_what_the_user_said_redirects(main: list[Event]) -> None:
    failures = [e.payload["tool_use_id"] for e in main if e.kind == "PostToolUseFailure"]
    assert failures == ["toolu_ledger_test1"]  # the real failure stays; the two refusals are none
    assert not any(e.payload.get("tool_use_id") in ("toolu_ledger_plan1", "toolu_ledger_edit1") for e in main)
    said = next(e for e in main if e.payload.get("prompt_origin") == "rejection")
    assert said.payload["rejected_tool"] == "ExitPlanMode" and said.at == at("2026-05-04T09:01:00.000Z")
    assert rejection("Error: The user doesn't want to proceed with this tool use. The tool use was rejected. "
                     "To tell you how to proceed, the user said:\nkeep it small") == "keep it small"
    assert rejection("The user doesn't want to proceed with this tool use. STOP what you are doing.") == ""
    assert rejection("Exit code 1") is None


def test_an_interrupted_turn_ends_with_a_stop_that_says_so(main: list[Event]) -> None:
    stops = [(e.payload["last_assistant_message"], e.payload.get("interrupted", False),
              e.payload.get("rejected_tool")) for e in main if e.kind == "Stop"]
    assert stops == [
        ("Fine, only the export filter then.", True, "Edit"),  # refused without a word, then interrupted
        ("The background test run finished.", False, None),  # the turn a task notification started
        ("The refund path goes through the same filter.", True, None),  # "[Request interrupted by user]"
        ("Rerunning the export against the staging bucket.", False, None),
        ("You're welcome.", False, None),
    ]
    interrupted = [e for e in main if e.payload.get("interrupted")]
    assert [e.at for e in interrupted] == [at("2026-05-04T09:01:30.100Z"), at("2026-05-04T09:02:40.100Z")]
    # A turn's Stop comes after everything the turn did: events are in time order.
    assert [e.at for e in main] == sorted(e.at for e in main)


def test_a_shell_command_the_user_ran_is_their_own_bash_call(main: list[Event]) -> None:
    shell = [e for e in main if e.payload.get("actor") == "user"]
    assert len(shell) == 1
    p = shell[0].payload
    assert shell[0].kind == "PostToolUse" and p["tool_name"] == "Bash"
    assert p["tool_input"] == {"command": 'git commit -am "Keep zero-amount refunds in the nightly export"'}
    assert p["tool_response"]["stdout"].startswith("[main 1a2b3c4] Keep zero-amount refunds")
    # Between turns: after the Stop of the turn before it.
    i = main.index(shell[0])
    assert main[i - 1].kind == "Stop"


def test_session_start_names_branch_and_the_repository_of_its_pull_request(main: list[Event]) -> None:
    start = main[0].payload
    assert main[0].kind == "SessionStart" and start["git_branch"] == "main"
    assert start["repository"] == "github.com/acme/ledger"
    assert {e.payload["session_id"] for e in main} == {MAIN.stem}


def test_codex_prompts_once_harness_items_never_and_an_aborted_turn_says_so() -> None:
    events = read(WORKTREE_ROLLOUT, "codex")
    assert prompts(events) == [("why does the export skip refunds", "typed"), ("fix it and make a pr", "typed")]
    stops = [(e.payload["last_assistant_message"], e.payload.get("interrupted", False))
             for e in events if e.kind == "Stop"]
    assert stops == [("The filter drops zero amounts.", True),
                     ("Opened a pull request that keeps zero amounts.", False)]
    assert events[0].payload["repository"] == "github.com/acme/ledger"
    assert events[0].payload["git_commit"] == "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"  # evidence of the repository


def test_codex_code_mode_scripts_become_the_tool_calls_they_make() -> None:
    tools = [(e.kind, e.payload["tool_name"], e.payload["tool_input"]["command"].splitlines()[0])
             for e in read(WORKTREE_ROLLOUT, "codex") if e.kind.startswith("PostToolUse")]
    assert tools == [
        ("PostToolUse", "Bash", "rg -n 'amount > 0' src"),
        ("PostToolUseFailure", "Bash", "npm test -- export"),  # the script printed exit_code 1
        ("PostToolUse", "apply_patch", "*** Begin Patch"),
        ("PostToolUse", "Bash", "git push -u origin codex/keep-refunds"),
    ]


def test_a_codex_code_mode_result_object_is_read_as_what_the_command_printed(tmp_path: Path) -> None:
    """An unseen project's gotcha read "`hk` is not on the PATH here ({"chunk_id":"a91c39","wall_time_seconds":…)":
    the result object a code-mode script printed, taken for the command's output."""
    from tests.support.transcripts import CodexSession

    path = CodexSession("/Users/dev/src/ledger", "2026-07-16T18:00:00Z").prompt("run the hooks").script(
        "hk run pre-commit", "zsh:1: command not found: hk\n", code=127).script(
        "mise x hk -- hk run pre-commit", "all 4 steps passed\n").answer("Done.").write(tmp_path / ".codex")
    tools = [e for e in read(path, "codex") if e.kind.startswith("PostToolUse")]
    assert [e.kind for e in tools] == ["PostToolUseFailure", "PostToolUse"]
    assert tools[0].payload["error"] == "Exit code 127\nzsh:1: command not found: hk"
    assert tools[1].payload["tool_response"] == "all 4 steps passed"


def test_a_codex_command_still_running_gets_the_output_and_exit_code_its_polls_brought() -> None:
    """A long command returns "still running" (session id) and its output comes with later ``write_stdin`` polls,
    in code mode and as function calls: one tool call each, with all its output and how it ended; one still
    running when the turn ends belongs to that turn, with what it printed."""
    events = read(POLLED_ROLLOUT, "codex")
    tools = [e for e in events if e.kind.startswith("PostToolUse")]
    assert [(e.kind, e.payload["tool_input"]["command"]) for e in tools] == [
        ("PostToolUse", "git push -u origin fix/args"),
        ("PostToolUseFailure", "cargo test"),  # "Process exited with code 101", said by the poll
        ("PostToolUse", "npm run dev")]
    push, test, dev = (e.payload for e in tools)
    assert "fix/args -> fix/args" in push["tool_response"] and "SESSION_ID" not in push["tool_response"]
    assert test["error"].startswith("Exit code 101") and "running 12 tests" in test["error"] \
        and "1 failed" in test["error"]
    # (still running when the rollout ends: what it printed, and that its end was never seen)
    assert "ready on http://localhost:5173" in dev["tool_response"]["stdout"] and dev["tool_response"]["unfinished"]
    assert events.index(tools[-1]) < next(i for i, e in enumerate(events) if e.kind == "Stop")


def test_a_codex_exec_run_is_headless() -> None:
    assert {origin for _, origin in prompts(read(CALC_ROLLOUT, "codex"))} == {"headless"}


def test_worktree_conventions_and_which_pull_request_names_the_repository() -> None:
    assert checkout("/Users/dev/.codex/worktrees/4f2a/ledger") == ("ledger", "/Users/dev/.codex/worktrees/4f2a/ledger")
    assert checkout("/Users/dev/.codex/worktrees/4f2a/ledger/src/export") == \
        ("ledger", "/Users/dev/.codex/worktrees/4f2a/ledger")
    assert checkout("/Users/dev/src/ledger/.claude/worktrees/fix-refunds") == ("ledger", "/Users/dev/src/ledger")
    assert checkout("/Users/dev/src/ledger") == ("ledger", "/Users/dev/src/ledger")
    assert remote_of_url("git@github.com:Acme/Ledger.git") == remote_of_url("https://github.com/acme/ledger") \
        == "github.com/acme/ledger"
    assert remote_of_pr("https://github.com/acme/ledger/pull/4", "acme/ledger", "ledger") == "github.com/acme/ledger"
    # A pull request opened in another repository says nothing about this checkout.
    assert remote_of_pr("https://github.com/acme/toolkit/pull/9", "acme/toolkit", "ledger") == ""


def test_a_codex_rollout_that_ends_inside_a_turn_keeps_what_the_agent_said_in_it(tmp_path: Path) -> None:
    """A copy of a rollout taken as its turn ended (Codex writes task_complete after the turn's hooks) ends on the
    agent's last message: that is the turn's conclusion. One cut while the agent was still at work (a call after
    its last words) said none: all it said is along the way. Either way the turn's words are observed."""
    from kenning.observer.transcript import PAYLOAD_KEY
    from tests.support.transcripts import CodexSession

    def stops(session: CodexSession) -> list[tuple[str, list[str]]]:
        path = session.write(tmp_path / session.sid)
        return [(e.payload["last_assistant_message"], e.payload[PAYLOAD_KEY]) for e in read(path, "codex")
                if e.kind == "Stop"]

    concluded = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("fix the failing checks") \
        .say("The lint job fails because the schema file is not formatted.").run("make fmt") \
        .say("Fixed the schema formatting; lint passes.")
    assert stops(concluded) == [("Fixed the schema formatting; lint passes.",
                                 ["The lint job fails because the schema file is not formatted."])]
    cut = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("fix the failing checks") \
        .say("The lint job fails because the schema file is not formatted.").run("make fmt")
    assert stops(cut) == [("", ["The lint job fails because the schema file is not formatted."])]
    # a turn that ended in the record is not said twice; a turn in which the agent said nothing has no Stop
    done = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("run the tests").run("make test").answer("All pass.")
    assert stops(done) == [("All pass.", [])]
    assert stops(CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("run the tests").run("make test")) == []


def test_a_codex_patch_that_did_not_fit_changed_nothing(tmp_path: Path) -> None:
    """Codex checks a patch against the file before it applies it; one whose lines are not there is refused
    ("apply_patch verification failed: …", no exit code, no PostToolUse hook) and changed nothing: no file it
    names counts as modified. The corrected patch that follows does."""
    from kenning.observer.evidence import failed, modified_files
    from tests.support.memory_story import event
    from tests.support.transcripts import CodexSession

    s = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("update the docs") \
        .patch("docs/a.md", applies=False).patch("docs/b.md").answer("Updated the docs.")
    events = read(s.write(tmp_path), "codex")
    patches = [event(e.payload) for e in events if e.payload.get("tool_name") == "apply_patch"]
    assert [(failed(e), modified_files(e)) for e in patches] == [(True, []), (False, ["docs/b.md"])]
    assert "verification failed" in patches[0].payload["error"]


def test_a_codex_call_refused_before_it_ran_is_no_failure_and_no_pass(tmp_path: Path) -> None:
    """Codex writes only its reason when a call never ran: the user declined it, or the approval policy lets no
    command ask to leave the sandbox. Such a call is neither a failure nor a passing check; the commands that ran
    are read as before."""
    from tests.support.transcripts import CodexSession

    s = CodexSession("/w/shop", "2026-05-02T09:00:00Z").prompt("publish it") \
        .run("npm publish", outside=True, refused="approval policy is Never; reject command — you cannot ask for "
                                                  "escalated permissions if the approval policy is Never") \
        .run("rm -rf dist", refused="exec command rejected by user") \
        .patch("package.json", refused="patch rejected by user") \
        .run("npm pack", "shop-1.0.0.tgz").run("npm test", "1 failed", code=1).answer("Packed; one test fails.")
    ran = [(e.kind, e.payload["tool_input"]["command"].split("\n")[0]) for e in read(s.write(tmp_path), "codex")
           if e.kind.startswith("PostToolUse")]
    assert ran == [("PostToolUse", "npm pack"), ("PostToolUseFailure", "npm test")]


def test_a_copilot_cli_log_reads_as_the_hooks_capture_it(tmp_path: Path) -> None:
    """Copilot CLI's events.jsonl: typed prompts (the harness's reminders are none, a message typed while the agent
    worked is queued), tool calls in the shape Copilot's own hooks give (a shell's exit code read from its last
    line, a failed view, a patch's files), and a turn closed by the next prompt or where the log ends, its
    conclusion the agent's last message after which nothing ran."""
    from kenning.history import copilot
    from kenning.observer.evidence import command, modified_files
    from kenning.observer.transcript import PAYLOAD_KEY
    from tests.support.memory_story import event
    from tests.support.transcripts import CopilotSession

    log = CopilotSession("/w/shop", "2026-05-02T09:00:00Z", branch="main", commit="0f1e2d3c") \
        .prompt("Why does the nightly export skip refunds?").harness("<system_reminder>tools</system_reminder>") \
        .say("Looking at the export filter.", tools=True).tool("view", {"path": "/w/shop/src/gone.py"}, "", ok=False,
                                                               error="Path does not exist") \
        .bash("pytest tests/test_export.py -q", "1 failed", code=1) \
        .prompt("also keep zero amounts", steering=True) \
        .tool("apply_patch", "*** Begin Patch\n*** Update File: /w/shop/src/export.py\n@@\n-x\n+y\n*** End Patch",
              "ok") \
        .bash("pytest tests/test_export.py -q", "3 passed") \
        .say("The filter dropped amounts <= 0; it now keeps refunds and zero amounts.") \
        .prompt("commit it").bash("git commit -am 'fix: keep refunds'", "[main 1a2b3c4] fix: keep refunds") \
        .say("Committing now.", tools=True).bash("git log -1 --oneline", "1a2b3c4 fix: keep refunds")
    path = log.write(tmp_path / "copilot")
    files = copilot.discover(str(tmp_path / "copilot" / "session-state"))
    assert [f.path for f in files] == [str(path)] and copilot.session_id_of(str(path)) == log.sid
    events = list(copilot.events(files[0], now=time.time()))
    assert events[0].kind == "SessionStart" and events[0].payload["git_branch"] == "main" \
        and events[0].payload["git_commit"] == "0f1e2d3c" and events[0].payload["session_id"] == log.sid
    assert prompts(events) == [("Why does the nightly export skip refunds?", "typed"),
                               ("also keep zero amounts", "queued"), ("commit it", "typed")]
    tools = [e for e in events if e.kind.startswith("PostToolUse")]
    ran = [(e.kind, e.payload["tool_name"]) for e in tools]
    assert ran == [("PostToolUseFailure", "Read"), ("PostToolUseFailure", "Bash"), ("PostToolUse", "apply_patch"),
                   ("PostToolUse", "Bash"), ("PostToolUse", "Bash"), ("PostToolUse", "Bash")]
    failed = command(event(tools[1].payload))
    assert failed is not None and not failed.ok and failed.output.startswith("Exit code 1\n1 failed")
    assert modified_files(event(tools[2].payload)) == ["/w/shop/src/export.py"]
    stops = [(e.payload["last_assistant_message"], e.payload[PAYLOAD_KEY]) for e in events if e.kind == "Stop"]
    assert stops == [("The filter dropped amounts <= 0; it now keeps refunds and zero amounts.",
                      ["Looking at the export filter."]),
                     ("", ["Committing now."])]  # (the log ends while the agent was still at work)
    assert events[-1].kind == "SessionEnd"


def test_a_live_copilot_stop_gets_what_the_agent_said_in_its_turn(tmp_path: Path) -> None:
    """Copilot's agentStop names the session's log; the worker reads the turn it closed from there (not the next
    one, already begun when the worker gets to it): the agent's texts along the way and what the user typed
    meanwhile, the last message (the payload's already) left out."""
    from kenning.observer.transcript import PAYLOAD_KEY, WORDS_KEY, TurnReader
    from tests.support.transcripts import CopilotSession

    log = CopilotSession("/w/shop", "2026-05-02T09:00:00Z").prompt("Why does the export skip refunds?") \
        .say("The filter drops amounts below zero, so refunds never reach the file.", tools=True) \
        .bash("pytest -q", "3 passed").prompt("keep zero amounts too", steering=True) \
        .say("Refunds and zero amounts are exported now.").agent_stop(1777712460000) \
        .prompt("now commit it").say("Committing.", tools=True)
    path = str(log.write(tmp_path / "copilot"))
    payload = {"hook_event_name": "Stop", "transcriptPath": path, "timestamp": 1777712460000,
               "last_assistant_message": "Refunds and zero amounts are exported now."}
    got = TurnReader(lambda t: t).enrich(payload)
    assert got[PAYLOAD_KEY] == ["The filter drops amounts below zero, so refunds never reach the file."]
    assert got[WORDS_KEY] == [{"origin": "queued", "text": "keep zero amounts too"}]


def test_a_copilot_turn_read_again_after_its_log_grew_has_the_same_stop(tmp_path: Path) -> None:
    """A quiet log that ends inside a turn gives that turn its Stop; read again after the session went on, the
    turn's Stop has the same key: the import, which keeps the first event of a key, does not close (and observe)
    the turn twice."""
    from kenning.history import copilot
    from tests.support.transcripts import CopilotSession

    log = CopilotSession("/w/shop", "2026-05-02T09:00:00Z").prompt("Why do the exports skip refunds?") \
        .say("Checking the filter.", tools=True).bash("pytest -q", "1 failed", code=1)
    path = log.write(tmp_path / "copilot")

    def stops() -> dict[str, str]:
        files = copilot.discover(str(tmp_path / "copilot" / "session-state"))
        return {e.key: e.payload["last_assistant_message"] for e in copilot.events(files[0], now=time.time())
                if e.kind == "Stop"}

    before = stops()
    log.say("The filter dropped negative amounts; it keeps refunds now.").prompt("commit it")
    assert log.write(tmp_path / "copilot") == path
    after = stops()
    key = next(iter(before))
    assert before == {key: ""} and after[key] == "The filter dropped negative amounts; it keeps refunds now."
