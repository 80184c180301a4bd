"""SessionStart through real hooks and a real worker that keeps the index's selection.

A new session's own events write nothing the index reads, so the next SessionStart is served
from the kept selection; new memories are in the very next answer, read again in the background
when the pipeline stored them. What the worker keeps is checked against the file itself.
"""

from __future__ import annotations

from typing import Any

from kenning.context.session_start import build_for_cwd
from kenning.paths import read_token
from kenning.settings import load
from tests.conftest import Home
from tests.security import bash, context_of, hook_json, http, prompt, session_end, session_start, stop, wait_until


def kept_stats(home: Home) -> dict[str, int]:
    body = http(home.port, "GET", "/api/status", token=read_token(home.paths)).json()
    return dict(body["worker"]["context_cache"])


def work(home: Home, sid: str, topic: str) -> None:
    proj = str(home.project)
    for event, payload in (("UserPromptSubmit", prompt(proj, sid, f"Fix the {topic} exporter")),
                           ("PostToolUse", bash(proj, sid, f"toolu_{sid}_1", f"pytest -q -k {topic}",
                                                "3 passed in 0.1s")),
                           ("Stop", stop(proj, sid, f"Fixed the {topic} exporter.")),
                           ("SessionEnd", session_end(proj, sid))):
        hook_json(home.hook(event, payload))


def start(home: Home, sid: str) -> str:
    return context_of(home.hook("SessionStart", session_start(str(home.project), sid)))


def same_as_the_file(home: Home, text: str) -> None:
    settings, _ = load(home.paths)
    fresh = build_for_cwd(home.paths, settings, str(home.project))
    strip = lambda t: t.split("\n", 2)[2]  # noqa: E731 - the header's minute may have turned meanwhile
    assert strip(text) == strip(fresh)


def test_kept_between_sessions_and_new_memory_is_in_the_next_answer(home: Home) -> None:
    home.start_worker()
    work(home, "kept-1", "zebracsv")
    home.flush()
    first = start(home, "kept-2")
    assert "zebracsv" in first
    home.flush()  # the SessionStart's own event: a session row, nothing the index reads
    before: dict[str, Any] = kept_stats(home)
    second = start(home, "kept-3")
    after = kept_stats(home)
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
    same_as_the_file(home, second)
    home.flush()
    work(home, "kept-4", "quokkajson")
    home.flush()
    wait_until(lambda: kept_stats(home)["warmed"] > after["warmed"], 10, "the selection read again")
    warmed = kept_stats(home)
    third = start(home, "kept-5")
    assert "quokkajson" in third and kept_stats(home)["hits"] == warmed["hits"] + 1
    same_as_the_file(home, third)
