"""A worker taken for an orphan (kenning/daemon.py ``orphans``): one whose ``worker.lock`` is held by nobody while
no start is under way. A worker that is starting holds the start lock until it holds ``worker.lock``; a starter
that asks about both locks while the worker passes from one to the other must not call it an orphan (ten starts
at once did, once: "Kenning's worker … runs without its lock file")."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning import daemon
from kenning.paths import Paths
from kenning.worker import processes


def test_a_worker_that_takes_worker_lock_between_the_two_questions_is_no_orphan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = Paths(str(tmp_path / "data"))
    # The worker's start as the questions see it: it holds the start lock; right after the first question it
    # takes worker.lock and lets go of the start lock.
    state = {"start_lock": True, "worker_lock": False}
    asked: list[str] = []

    def held(path: str) -> bool:
        which = "start_lock" if path == paths.start_lock else "worker_lock"
        answer = state[which]
        asked.append(which)
        if len(asked) == 1:
            state.update(worker_lock=True, start_lock=False)
        return answer

    monkeypatch.setattr(daemon, "_held", held)
    monkeypatch.setattr(processes, "workers", lambda p: [4242])
    assert daemon.orphans(paths) == []
    # a worker that holds neither lock (its worker.lock was deleted) is one
    state.update(start_lock=False, worker_lock=False)
    asked.append("")  # (no more moves)
    assert daemon.orphans(paths) == [4242]
