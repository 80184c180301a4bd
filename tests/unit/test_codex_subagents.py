"""A Codex sub-agent's thread (kenning/history/codex.py): Codex writes it as a rollout of its own that starts
with the thread's ``session_meta`` (``forked_from_id``, ``source.subagent``), then the parent's, then the
parent's whole conversation replayed, then the sub-agent's turn, whose prompt is what the parent agent told
it. An unseen project's standing rules held "Do not edit files", the last words of such a message; its
rollouts also filed each sub-agent's replay under the parent's session a second time. The shapes are those
of Codex 0.118's rollouts; the words are our own."""

from __future__ import annotations

import time
from pathlib import Path

from kenning.history import SessionFile, codex
from tests.support.transcripts import CodexSession


def _events(path: Path) -> list:
    return list(codex.events(SessionFile("codex", str(path), 1, 0.0), now=time.time()))


def _prompts(events: list) -> list[tuple[str, str, str]]:
    return [(e.payload["session_id"], e.payload.get("prompt_origin", ""), e.payload["prompt"]) for e in events
            if e.kind == "UserPromptSubmit"]


def test_a_sub_agents_thread_is_its_own_and_its_prompt_is_the_agents(tmp_path: Path) -> None:
    parent = CodexSession("/w/ledger", "2026-04-11T14:53:07Z").prompt("review the importer and spawn reviewers") \
        .run("git log --oneline -3", "a1b2c3d fix rounding").say("Spawning two reviewers.")
    child = parent.spawn("Review src/import.py for error handling. Do not edit files.")
    child.run("rg -n 'except' src/import.py", "12: except ValueError:").answer("Two bare excepts at lines 12, 40.")
    parent.answer("Both reviews are in: two bare excepts in src/import.py.")

    mine = _events(child.write(tmp_path / "codex"))
    assert _prompts(mine) == [(child.sid, "agent", "Review src/import.py for error handling. Do not edit files.")]
    assert {e.payload["session_id"] for e in mine} == {child.sid}  # not the parent's id, from its replayed meta
    assert [e.payload.get("tool_input", {}).get("command") for e in mine if e.kind == "PostToolUse"] == [
        "rg -n 'except' src/import.py"]  # the parent's `git log`, replayed, is the parent's rollout's only

    theirs = _events(parent.write(tmp_path / "codex"))
    assert _prompts(theirs) == [(parent.sid, "typed", "review the importer and spawn reviewers")]


def test_a_forked_conversation_keeps_the_users_new_prompts_and_drops_the_replay(tmp_path: Path) -> None:
    """A conversation the user forked has ``forked_from_id`` but no sub-agent source: its new prompts are typed."""
    parent = CodexSession("/w/ledger", "2026-04-11T14:53:07Z").prompt("add a --dry-run flag").answer("Added it.")
    fork = parent.spawn("now try it with a JSON report instead")
    fork.lines[0]["payload"]["source"] = "cli"
    fork.answer("The report is JSON now.")
    assert _prompts(_events(fork.write(tmp_path / "codex"))) == [
        (fork.sid, "typed", "now try it with a JSON report instead")]
