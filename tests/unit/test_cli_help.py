"""The CLI explains itself: every command and option described, grouped by task, and its version."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from kenning.cli import build_parser
from kenning.clihelp import GROUPS

ROOT = Path(__file__).resolve().parents[2]


def _walk(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.ArgumentParser]]:
    """This parser and every sub-parser below it, each with its command path."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.extend(_walk(child, f"{path} {name}"))
    return found


def test_every_command_and_option_has_help() -> None:
    missing: list[str] = []
    for path, parser in _walk(build_parser(), "kenning"):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{path} {c.dest}" for c in action._choices_actions if not (c.help or "").strip()]
                continue
            if not (action.help or "").strip():
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"no help text: {missing}"


def test_help_lists_every_command_once_under_a_task_sorted() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    grouped = [name for names in GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(sub.choices), "every command in exactly one group of kenning/clihelp.py"
    out = _kenning("--help").stdout
    for title, names in GROUPS.items():
        block = out.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0]
        listed = [line.split()[0] for line in block.splitlines() if not line.startswith("   ")]
        assert listed == sorted(names), title


def _kenning(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": "/nonexistent-kenning-home", "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "kenning", *args], capture_output=True, text=True,
                          env=env, timeout=60, cwd=ROOT)


def test_version_is_the_pyproject_version() -> None:
    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for flag in ("--version", "-V"):
        r = _kenning(flag)
        assert r.returncode == 0 and r.stdout == f"kenning {want}\n", r


def test_version_imports_neither_the_store_nor_the_worker() -> None:
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "kenning", "--version"],
                       capture_output=True, text=True, timeout=60)
    modules = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if "|" in line}
    assert r.returncode == 0 and "kenning.clihelp" in modules
    heavy = {m for m in modules if m in ("kenning.cli", "kenning.daemon", "sqlite3")
             or m.startswith(("kenning.store", "kenning.worker"))}
    assert not heavy, f"`kenning --version` imported {sorted(heavy)}"


def test_bare_kenning_prints_the_help_and_succeeds() -> None:
    r = _kenning()
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("usage: kenning") and "Start here:" in r.stdout and "import-history" in r.stdout


def test_a_commands_usage_names_only_that_command() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        usage = parser.format_usage()
        assert usage.startswith(f"usage: kenning {name} "), usage
        assert "COMMAND" not in usage, usage
