"""Lines of a Claude Code transcript that are nobody's words, and commands that are the user's request: an API error
or a usage limit Claude Code wrote as an ``assistant`` line (a real one: "You've hit your limit · resets 8pm
(Europe/Warsaw)", ``model: <synthetic>``, ``isApiErrorMessage``), what Claude Code's editor extension puts in front
of the user's words (``<ide_opened_file>``), and a project's command or skill run without words
("/bmad-code-review", then "y", "3" as answers to it). Synthetic transcripts in the exact shapes Claude Code writes."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from kenning.history import Event, SessionFile, claude_code
from tests.support.transcripts import ClaudeSession

LIMIT = "You've hit your limit · resets 8pm (Europe/Warsaw)"


def _read(path: Path) -> list[Event]:
    return list(claude_code.events(SessionFile("claude-code", str(path), 1, 0.0), now=time.time()))


def _prompts(events: list[Event]) -> list[str]:
    return [e.payload["prompt"] for e in events if e.kind == "UserPromptSubmit"]


def _cli_says(s: ClaudeSession, text: str) -> ClaudeSession:
    """An ``assistant`` line as Claude Code writes one itself when the API call fails."""
    s._line("assistant", {"id": str(uuid.uuid4()), "model": "<synthetic>", "role": "assistant",
                          "stop_reason": "stop_sequence", "type": "message",
                          "content": [{"type": "text", "text": text}]}, error="rate_limit", isApiErrorMessage=True)
    return s


def test_a_usage_limit_or_api_error_is_no_word_of_the_agent(tmp_path: Path) -> None:
    s = ClaudeSession("/w/metrics", "2026-03-25T14:00:00Z").prompt("review the nano stores story")
    s.say("The store resets on every page load because `persistentAtom` is never used.")
    _cli_says(s, LIMIT).prompt("y")
    _cli_says(s, "API Error: 400 invalid_request_error")
    events = _read(s.write(tmp_path / "claude"))
    said = " ".join(str(e.payload.get("last_assistant_message") or "") for e in events if e.kind == "Stop")
    assert "persistentAtom" in said
    assert "hit your limit" not in said and "API Error" not in said


def test_the_live_turn_reader_skips_what_the_cli_wrote(tmp_path: Path) -> None:
    from kenning.observer.transcript import read_turn

    s = ClaudeSession("/w/metrics", "2026-03-25T14:00:00Z").prompt("review the nano stores story")
    s.say("The store resets on every page load because `persistentAtom` is never used.")
    _cli_says(s, LIMIT)
    path = s.write(tmp_path / "claude")
    texts, _ = read_turn(str(path))
    assert texts and all("hit your limit" not in t for t in texts), texts
    assert any("persistentAtom" in t for t in texts)


def test_a_project_command_run_without_words_is_the_request(tmp_path: Path) -> None:
    """A real session opened with "/bmad-code-review" (a skill of the project) and then answered "y", "yes", "3":
    the session's request is the command. A bare "/plan" (plan mode on), "/clear" and a plugin's own set-up
    ("/codex:setup") stay settings."""
    s = ClaudeSession("/w/metrics", "2026-03-25T14:00:00Z").command("clear")
    s.command("bmad-code-review", expands_to="Base directory for this skill: /w/metrics/.claude/skills/"
                                             "bmad-code-review\n\nFollow the instructions in ./workflow.md.")
    s.say("Which story should I review? 1) 1-1 2) 2-1").prompt("2").say("Review written.")
    s.command("plan").prompt("now split the store per page").say("Plan ready.")
    s.command("codex:setup", output="Codex is ready").prompt("thanks").say("You're welcome.").command("quit")
    events = _read(s.write(tmp_path / "claude"))
    assert _prompts(events) == ["/bmad-code-review", "2", "now split the store per page", "thanks"]
    from kenning.observer.summary import request_of

    assert request_of(["/bmad-code-review", "y", "3"], []) == "/bmad-code-review"  # what the session was about
    assert request_of(["/commit", "/git:push"], []) == ""  # (a nod run as a command says no more than "commit")
    assert request_of(["/usr/local/bin/hk is not found when the hook runs"], []).startswith("/usr/local/bin/hk")


def test_what_the_editor_attaches_is_not_the_users_request() -> None:
    from kenning.observer import ide_request
    from kenning.observer.stated import gist_of

    prompt = ("<ide_opened_file>The user opened the file /w/metrics/docs/figma-structure.md in the IDE. This may or "
              "may not be related to the current task.</ide_opened_file>\nPlease add a menu to the pages with links "
              "to the home page and the metrics page")
    assert ide_request.request(prompt).startswith("Please add a menu")
    assert "figma-structure" in ide_request.attached(prompt)
    assert "opened the file" not in gist_of(prompt) and "menu" in gist_of(prompt)
    assert ide_request.request("keep <ide_> as written") == "keep <ide_> as written"
