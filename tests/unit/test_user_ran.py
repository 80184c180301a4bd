"""A command that failed when the agent ran it and passed when the user ran it (``!``), nothing changed between: a
gotcha (kenning/observer/user_ran.py). The shape is that of a real session (commit signing refused to the agent,
the user running the prepared commit); the words are our own."""

from __future__ import annotations

from typing import Any

from kenning.observer.user_ran import UserRan
from tests.support.memory_story import Story, Turn, bash, edit, event

SIGNING = ("Exit code 128\nerror: Signing file /var/folders/x1/abcdefghijklmnopqrstu/T//.git_signing_buffer_tmpQ\n"
           "Couldn't sign message (signer): agent refused operation?\nfatal: failed to write commit object")


def _agent_commit_fails() -> dict[str, Any]:
    return {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": SIGNING,
            "tool_input": {"command": "git commit -m 'feat(cart): round refunds per line'"}}


def _user_commit(ok: bool = True) -> dict[str, Any]:
    p = bash("git commit -m 'feat(cart): round refunds per line' -m 'Tested: pytest'",
             "[main 1a2b3c4] feat(cart): round refunds per line\n 2 files changed", fails=None if ok else "nothing")
    return {**p, "actor": "user"}


def test_the_users_own_run_passing_after_the_agents_failed_is_a_gotcha() -> None:
    ran = UserRan()
    assert ran.gotchas([event(_agent_commit_fails(), 1)]) == []
    found = ran.gotchas([event(_user_commit(), 2)])  # a later turn: the user's `!` between prompts
    assert [d.title for d in found] == ["`git commit` fails when the agent runs it (Couldn't sign message (signer): "
                                        "agent refused operation?) and passes when you run it yourself"]


def test_no_gotcha_without_both_runs_and_nothing_changed_between() -> None:
    ran = UserRan()
    assert ran.gotchas([event(_agent_commit_fails(), 1), event(edit("/w/shop", "cart.py"), 2),
                        event(_user_commit(), 3)]) == []  # a file changed between: that may be why it passed
    ran = UserRan()
    assert ran.gotchas([event(_agent_commit_fails(), 1), event(_user_commit(ok=False), 2)]) == []
    ran = UserRan()
    assert ran.gotchas([event(_agent_commit_fails(), 1),
                        event({**bash("git push origin main", "ok"), "actor": "user"}, 2)]) == []  # another tool
    ran = UserRan()
    assert ran.gotchas([event(_agent_commit_fails(), 1), event(bash("git commit -m x", "[main 9f] x"), 2)]) == []


def test_the_gotcha_is_a_key_memory(story: Story) -> None:
    story.session("shop", Turn("Commit the refund rounding.", [_agent_commit_fails()],
                               last="The commit failed: signing was refused. Run it yourself with `!`."),
                  Turn("Done, I committed it.", [_user_commit()], last="Thanks, it is in."))
    keys = [r["title"] for r in story.active("shop") if r["layer"] == "key"]
    assert any(t.startswith("`git commit` fails when the agent runs it") for t in keys), keys
