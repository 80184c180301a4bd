"""`kenning extras`: what it would install comes from our own installed metadata, nothing else."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kenning.commands import extras

REPO = Path(__file__).resolve().parents[2]


def test_declared_extras_are_exactly_pyproject_s() -> None:
    optional = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    got = extras.declared()
    assert set(got) == set(optional)
    for name, reqs in optional.items():
        # Setuptools may reorder a specifier (">=0.2.189,<0.3" becomes "<0.3,>=0.2.189"): compare names.
        assert sorted(r.split(">")[0].split("<")[0].split("=")[0] for r in got[name]) == \
            sorted(r.split(">")[0].split("<")[0].split("=")[0] for r in reqs)
    assert set(extras.HELP) <= set(got)  # every extra we offer exists


def test_markers_other_than_the_extra_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    class Meta:
        def get_all(self, key: str) -> list[str]:
            return ["embeddings", "win"]

    monkeypatch.setattr(extras.metadata, "metadata", lambda dist: Meta())
    monkeypatch.setattr(extras.metadata, "requires", lambda dist: [
        "starlette>=0.40", 'numpy>=1.24; extra == "embeddings"',
        'pywin32>=300; sys_platform == "win32" and extra == "win"'])
    assert extras.declared() == {"embeddings": ["numpy>=1.24"], "win": ['pywin32>=300; sys_platform == "win32"']}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kenning", "extras", *args], capture_output=True, text=True,
                          timeout=60)


def test_list_names_what_each_extra_is_for() -> None:
    r = run("list")
    assert r.returncode == 0, r.stderr
    for name in extras.HELP:
        assert any(line.split()[0] == name for line in r.stdout.splitlines()), r.stdout
    assert "dev" not in r.stdout.split()  # for working on Kenning itself, not offered


@pytest.mark.parametrize("args, message", [
    (("add",), "name the extras to add"),
    (("add", "requests"), "no extra named requests"),
    (("add", "anthropic,torch"), "no extra named torch"),
])
def test_add_refuses_anything_we_do_not_declare(args: tuple[str, ...], message: str) -> None:
    r = run(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_add_runs_pip_with_the_declared_requirements_then_the_no_deps_ones(monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(extras.subprocess, "run", fake_run)
    monkeypatch.setattr(extras, "_restart_worker", lambda: None)
    import argparse

    assert extras.cmd_extras(argparse.Namespace(action="add", names=["embeddings"], quiet=True)) == 0
    declared = extras.declared()["embeddings"]
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", *declared],
                     [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *extras.NO_DEPS["embeddings"]]]
