"""The README is the user's first five minutes: keep it true, and keep the reference where it points."""

from __future__ import annotations

from pathlib import Path

from kenning.cli import build_parser, settings_markdown

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_configuration_table_matches_the_settings() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert settings_markdown() in page, "regenerate the table with `python -m kenning.docgen`"


def test_every_command_is_documented() -> None:
    assert "(docs/commands.md)" in README
    page = (ROOT / "docs" / "commands.md").read_text()
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"\n### kenning {name}\n" in page, f"`kenning {name}` is not in docs/commands.md"


def test_readme_has_exactly_the_two_setup_commands() -> None:
    # The install is the set-up; the test suite is what a contributor runs, under Development.
    assert "```bash\nbash scripts/install.sh " in section(README, "Set up on a fresh machine")
    assert "scripts/test.sh" not in section(README, "Set up on a fresh machine")
    assert "```bash\nbash scripts/test.sh " in section(README, "Development")
    assert (ROOT / "scripts" / "install.sh").exists() and (ROOT / "scripts" / "test.sh").exists()
