"""The README is the user's first five minutes: keep it true."""

from __future__ import annotations

from pathlib import Path

from kenning.cli import build_parser, settings_markdown

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_configuration_table_matches_the_settings() -> None:
    assert settings_markdown() in README, "regenerate the table with `kenning settings --markdown`"


def test_every_command_is_documented() -> None:
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    words = set(section.replace("`", " ").replace("|", " ").split())
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert name in words, f"`kenning {name}` is not in the README's Commands section"


def test_readme_has_exactly_the_two_setup_commands() -> None:
    assert "bash scripts/install.sh" in README
    assert "bash scripts/test.sh" in README
    assert (Path(__file__).resolve().parents[2] / "scripts" / "install.sh").exists()
