"""A value a memory says it changed, that later memories state otherwise (kenning/context/values.py)."""

from __future__ import annotations

import pytest

from kenning.context.values import restated, stated

RAISED = ("The root cause is a hard 10-second deadline around `Shutdown()` — fix: raises the shutdown deadline "
          "from 10s to 120s, so the snapshots can be written")


@pytest.mark.parametrize(("text", "values"), [
    ("raises the shutdown deadline from 10s to 120s", {"deadline": ("t", 120.0, "120s")}),
    ("the cache TTL from 5 minutes to 1 hour", {"ttl": ("t", 3600.0, "1 hour")}),
    ("bumped the body limit from 10 MB to 64 MB", {"limit": ("b", 64e6, "64 MB")}),
    ("The HTTP timeout is 30s and the retry count is 5.", {}),      # said in passing: not a change
])
def test_a_value_a_memory_says_it_changed(text: str, values: dict[str, tuple[str, float, str]]) -> None:
    assert stated(text, changed_only=True) == values


@pytest.mark.parametrize(("text", "values"), [
    ("wasting the entire 60s deadline on redundant work", {"deadline": ("t", 60.0, "60s")}),
    ("a 2-minute deadline for the shutdown", {"deadline": ("t", 120.0, "2-minute")}),
    ("The HTTP timeout is 30s and the retry count is 5.", {"timeout": ("t", 30.0, "30s")}),
    ("keeps the TTL of 10 minutes", {"ttl": ("t", 600.0, "10 minutes")}),
    ("a 10s deadline, then a 20s deadline", {}),                    # two values of one noun: neither holds
])
def test_values_said_in_passing(text: str, values: dict[str, tuple[str, float, str]]) -> None:
    assert stated(text) == values


def test_a_later_memory_of_the_same_thing_that_says_another_value() -> None:
    later = [("Shutdown drained every buffered message first, wasting the entire 60s deadline", "#167")]
    assert restated(RAISED, later) == ("deadline", "60s", "#167")
    # the same value, another noun, or nothing else in common: nothing to say
    assert restated(RAISED, [("Shutdown now finishes well within the 120s deadline", "#2")]) is None
    assert restated(RAISED, [("Shutdown waits at most 60s for the HTTP server", "#3")]) is None
    assert restated(RAISED, [("The rotation send has a 2-minute deadline per node", "#4")]) is None
    # a value said in passing is not weighed against later ones: two deadlines of one program may differ
    assert restated("wasting the entire 60s deadline on shutdown", [("a shared 2-minute deadline on shutdown",
                                                                      "#5")]) is None
