"""Where a session's work stands, written into its summary and read back when the session goes on."""

from __future__ import annotations

from kenning.observer.summary import STATE, State, parse_state


def test_many_commits_keep_the_first_and_the_latest_and_count_the_rest() -> None:
    s = State(commits=[f"{i:07x} commit {i}" for i in range(1, 6)], pushed=["main"])
    line = s.line()
    assert line == "committed 0000001 commit 1, … 2 more, 0000004 commit 4, 0000005 commit 5; pushed (main)", line
    again = parse_state(STATE + line)
    again.commits.append("0000006 commit 6")
    assert again.line().startswith("committed 0000001 commit 1, … 3 more, 0000005 commit 5, 0000006 commit 6")


def test_reverts_name_their_commit_and_a_discard_is_said_plainly() -> None:
    s = State(reverted=["d1e24ae9f00"], discarded=True)
    assert s.line() == "reverted d1e24ae; uncommitted changes discarded"
    back = parse_state(STATE + s.line())
    assert back.reverted == ["d1e24ae"] and back.discarded
    assert parse_state(STATE + "changes reverted").discarded  # as summaries said it before


def test_commits_not_pushed_say_their_branch_and_read_back_with_it() -> None:
    """'[hotfix 937984d] fix: …': the commits wait on `hotfix`; the next batch starts from that."""
    s = State(commits=["937984d fix: WAL rotation skipped"], branch="hotfix")
    assert s.line() == "committed 937984d fix: WAL rotation skipped; not pushed (hotfix)"
    back = parse_state(STATE + s.line())
    assert back.branch == "hotfix" and back.line() == s.line()
    assert State(commits=["Add the export"]).line() == "committed Add the export; not pushed"  # git named none
    assert parse_state(STATE + "committed Add the export; not pushed").branch == ""
    # Pushed since: the branch went up with the push, as "pushed (…)" says.
    assert State(commits=["937984d fix"], branch="hotfix", pushed=["hotfix"]).line() == \
        "committed 937984d fix; pushed (hotfix)"


def test_commits_with_a_pull_request_opened_are_not_said_to_be_unpushed() -> None:
    """`gh pr create` needs the branch on the remote: a push the commands did not show (a script's) happened."""
    s = State(commits=["937984d fix: WAL rotation skipped"], branch="hotfix", prs=["#12"])
    assert s.line() == "committed 937984d fix: WAL rotation skipped; PR #12 opened"


def test_a_clean_status_is_said_and_read_back_and_files_left_say_more() -> None:
    s = State(commits=["1a2b3c4 notes"], pushed=["main"], clean=True)
    assert s.line() == "committed 1a2b3c4 notes; pushed (main); working tree clean"
    assert parse_state(STATE + s.line()).clean
    assert State(uncommitted=["NOTES.md"], clean=True).line() == "not committed: NOTES.md"


def test_a_clean_tree_is_no_longer_said_once_a_later_turn_changes_files() -> None:
    from kenning.observer.summary import Notes, advance

    seen = advance(State(), [Notes(tree_seen=True)])
    assert seen.clean and seen.line() == "working tree clean"
    # edits, then a commit that may not have taken all of them: nothing proves the tree clean now
    after = advance(seen, [Notes(touched=True, commits=["1a2b3c4 part of it"])])
    assert not after.clean and "clean" not in after.line()
    # a turn that only reads keeps what the last status said
    assert advance(State(clean=True), [Notes()]).clean


def test_a_commit_made_again_with_the_same_message_is_listed_once_as_its_newest() -> None:
    """An unseen project's state read "committed c2fe52e Add repo header image, … 4 more, 0a69b3c Add command demo
    videos, 8b4d61d Add command demo videos": one commit, amended and force-pushed, said three times."""
    from kenning.observer.summary import Notes, advance

    state = advance(State(), [Notes(commits=["c2fe52e Add header image", "b294a4c Add demo videos"]),
                              Notes(commits=["0a69b3c Add demo videos"]),
                              Notes(commits=["8b4d61d Add demo videos", "5d6e7f8 Link the videos"])])
    assert state.line() == "committed c2fe52e Add header image, 8b4d61d Add demo videos, 5d6e7f8 Link the videos; " \
                           "not pushed"


def test_a_summary_too_long_keeps_its_newest_items_whole() -> None:
    """What the session did, learned and left open grows turn by turn; past the size kept, the oldest items go
    whole: the first one kept never begins mid-word ("it v6 returns …" of "But go-git v6 returns …")."""
    from kenning.observer.summary import Notes, summarize
    from kenning.records import SessionInfo

    older = [f"But go-git v{n} returns `CommandStatusErr` by value, constructed at `report_status.go:{n}` "
             + "and checked by pointer in the worker " * 3 for n in range(7)]
    info = SessionInfo(id=1, agent_session_id="s", project="p", project_root="/p", prompts=["review it"],
                       prior_summary={"completed": "; ".join(older), "created_at": 1.0})
    done = summarize(info, [Notes(done=["Opened PR #72 with the value-target fix."], at=2.0)], []).completed
    items = done.split("; ")
    assert items[-1] == "Opened PR #72 with the value-target fix." and len(done) <= 1200, done
    assert all(i.startswith("But go-git v") for i in items[:-1]) and len(items) > 2, items
