"""The install routes of docs/install.md, each on a fresh machine (a scratch HOME): ``uv tool install``
and ``pipx install`` of a copy of this checkout and of its wheel, and ``pip install`` of the wheel
into a new venv; then ``kenning install`` and every command of the README's "See it work" block as
written, through a shell; and ``scripts/install.sh`` with options for ``kenning install``. Then
``kenning uninstall`` leaves the tool installer's command alone (its own uninstall removes it, and
does) and removes the script's link.

uv and pipx are the dev extras' (pyproject.toml); a route whose tool is missing is skipped. They fetch
Kenning's dependencies from the package index, as they do for a user.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, free_port
from tests.integration.test_first_five_minutes import readme_block
from tests.support.machine import outside_env, user_commands

pytestmark = pytest.mark.slow


def tool(name: str) -> str | None:
    """``uv`` / ``pipx``: the dev venv's (beside this interpreter), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


@dataclass
class Machine:
    root: Path
    home: Path
    env: dict[str, str]

    def sh(self, line: str, *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", line], cwd=self.home, env=self.env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)


def checkout_copy(dest: Path) -> Path:
    """This checkout as it would be committed (tracked and new files, not what .gitignore hides)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


@pytest.fixture(scope="module")
def wheel_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support import wheel

    return wheel.build(tmp_path_factory.mktemp("route-wheel"))


def machine(root: Path) -> Machine:
    home = root / "home"
    home.mkdir()
    env, system_path = outside_env("UV_", "PIPX_", "XDG_", "CODEX_", "GEMINI_")
    bin_dir = user_commands(root, fake_claude=True)  # what a machine with Claude Code installed has on PATH
    # The user's own folder of commands first, as `uv tool update-shell` / `pipx ensurepath` make it.
    env.update({"HOME": str(home), "PATH": os.pathsep.join([str(home / ".local" / "bin"), str(bin_dir),
                                                            *system_path]),
                "KENNING_PORT": str(free_port()), "BROWSER": str(bin_dir / "browser"),
                "UV_CACHE_DIR": str(root / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return Machine(root=root, home=home, env=env)


ROUTES = ["uv-checkout", "uv-wheel", "pipx-checkout", "pipx-wheel", "pip-wheel", "script-checkout"]


@pytest.mark.parametrize("route", ROUTES)
def test_install_route_then_kenning_install_then_see_it_work(route: str, tmp_path: Path, wheel_file: Path) -> None:
    how, what = route.split("-")
    exe = tool(how) if how in ("uv", "pipx") else sys.executable
    if exe is None:
        pytest.skip(f"{how} is not installed (the dev extras bring it)")
    m = machine(tmp_path)
    source = str(checkout_copy(tmp_path / "kenning")) if what == "checkout" else str(wheel_file)
    if how == "uv":
        step = f"{shlex.quote(exe)} tool install {shlex.quote(source)}"
    elif how == "pipx":
        step = f"{shlex.quote(exe)} install {shlex.quote(source)}"
    elif how == "script":  # its options reach `kenning install`: Codex, found, is not set up
        (m.home / ".codex").mkdir()
        step = f"bash {shlex.quote(source)}/scripts/install.sh --agent claude-code --yes"
    else:  # a venv of the user's, its bin folder on PATH
        venv = m.home / "venv"
        step = f'{shlex.quote(sys.executable)} -m venv "$VENV" && "$VENV/bin/pip" install -q "$SOURCE"'
        m.env.update(VENV=str(venv), SOURCE=source)
        m.env["PATH"] = f"{venv}/bin{os.pathsep}{m.env['PATH']}"
    r = m.sh(step, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    if how == "script":
        assert "Hooks for SessionStart" in r.stdout and not (m.home / ".codex" / "config.toml").exists(), r.stdout
    command = shutil.which("kenning", path=m.env["PATH"])
    assert command and command.startswith(str(m.home)), command
    try:
        r = m.sh("kenning install")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "not on this machine" not in r.stderr and "Start a new Claude Code" in r.stdout, r.stdout
        # The hooks run the tool's own interpreter, not this checkout's.
        settings = json.loads((m.home / ".claude" / "settings.json").read_text())
        hook = settings["hooks"]["SessionStart"][0]["hooks"][0]
        assert hook["command"].startswith(str(m.home)) and "kenning.hook.main" in " ".join(hook["args"]), hook

        lines = readme_block("See it work")
        out: dict[str, str] = {}
        for line in lines:
            r = m.sh(line)
            assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
            assert "Traceback" not in r.stdout + r.stderr, line
            out[shlex.split(line, comments=True)[1]] = r.stdout
        # What the block shows, checked for each command it holds (test_first_five_minutes.py checks it all).
        assert "Added to your memory" in out["demo"]
        assert out["context"].startswith("<kenning-context>") and "# Memory of kenning-demo" in out["context"]
        assert "18 observations" in out.get("status", "18 observations"), out["status"]
        assert "✗" not in out.get("doctor", ""), out["doctor"]
        if "open" in out:
            assert (tmp_path / "opened-url").read_text().startswith(f"http://127.0.0.1:{m.env['KENNING_PORT']}/")
        doctor = m.sh("kenning doctor --json")
        assert not [c for c in json.loads(doctor.stdout) if c["status"] == "fail"], doctor.stdout

        r = m.sh("kenning uninstall")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Removed Kenning's hooks" in r.stdout
        if how == "script":
            assert "Removed the link" in r.stdout and shutil.which("kenning", path=m.env["PATH"]) is None
        elif how == "pip":
            assert "command stays" not in r.stdout
        else:  # the tool installer's command stays until its own uninstall
            assert f"The `kenning` command stays: `{how} {'tool uninstall' if how == 'uv' else 'uninstall'} kenning`" \
                   " removes it." in r.stdout, r.stdout
            assert shutil.which("kenning", path=m.env["PATH"]) == command
            r = m.sh(f"{shlex.quote(exe)} {'tool uninstall' if how == 'uv' else 'uninstall'} kenning")
            assert r.returncode == 0, r.stdout + r.stderr
            assert shutil.which("kenning", path=m.env["PATH"]) is None
    finally:
        subprocess.run(["bash", "-c", "kenning worker stop"], env=m.env, capture_output=True, timeout=60)
