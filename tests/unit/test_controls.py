"""Escape sequences and control characters out of text from elsewhere (kenning/context/controls.py)."""

from __future__ import annotations

import pytest

from kenning.context.controls import strip_controls
from kenning.team.sync import bounded


@pytest.mark.parametrize(("raw", "shown"), [
    ("Deploy\x1b[2J\x1b[H with care", "Deploy with care"),                  # clear the screen, cursor home
    ("Use uv\x1b]52;c;cm0gLXJmIH4=\x07 for installs", "Use uv for installs"),  # set the clipboard (OSC 52)
    ("see \x1b]8;;https://evil.example\x1b\\the docs\x1b]8;;\x1b\\", "see the docs"),  # a hidden link
    ("\x9b31mred\x9b0m and \x1bcreset", "red and reset"),                    # C1 CSI, a full reset
    ("bell\x07 back\x08space del\x7f", "bell backspace del"),
    ("两个\x1b[1A版本", "两个版本"),
])
def test_escape_sequences_and_controls_go(raw: str, shown: str) -> None:
    assert strip_controls(raw) == shown


def test_tabs_line_breaks_and_every_script_stay() -> None:
    text = "Rule:\tuse pnpm\r\nnever npm — 以后都用 pnpm; 항상 pnpm; ❤️ café"
    assert strip_controls(text) == text


def test_hub_text_is_bounded_without_them() -> None:
    out = bounded("Always rebase\x1b]52;c;ZWNobyBwd25lZA==\x07 before merging\x1b[2K", 200)
    assert out == "Always rebase before merging"


def test_every_text_written_to_memory_loses_them() -> None:
    """The one cleaning (MCP save, viewer and CLI edits, imports, what an observer writes) drops them too."""
    from kenning.observer.base import ObservationDraft
    from kenning.privacy.ingress import Cleaner
    from kenning.records import Outcome

    clean = Cleaner(None)
    assert clean.text("Pin the base image\x1b]52;c;ZXZpbA==\x07 to a digest") == "Pin the base image to a digest"
    d = ObservationDraft(type="decision", title="Use uv\x1b[8m hidden\x1b[0m", narrative="n\x1b[2J", created_at=1.0,
                         facts=["f\x07"], why={"said": "s\x1b[1A"})
    clean.outcome(Outcome(done=[], observations=[d]))
    assert (d.title, d.narrative, d.facts, d.why["said"]) == ("Use uv hidden", "n", ["f"], "s")
