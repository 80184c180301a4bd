"""A settings file kept as a symlink (dotfiles) stays a symlink whoever writes it.

Through the real CLI and a real worker: ``kenning install`` and ``uninstall`` writing Claude Code's
``settings.json``, and a settings change saved by the worker (the viewer's route) writing
Kenning's own. Each time the link is intact, its target holds the new content, the target's mode
is kept, and no temp file is left beside it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from kenning.paths import read_token
from tests.conftest import Home
from tests.security import http


def _linked(tmp_path: Path, link: Path, name: str, content: dict[str, object], mode: int) -> Path:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir(exist_ok=True)
    target = dotfiles / name
    target.write_text(json.dumps(content, indent=2) + "\n")
    target.chmod(mode)
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    return target


def _intact(link: Path, target: Path, mode: int) -> dict[str, object]:
    assert link.is_symlink(), f"{link} was replaced by a regular file"
    assert os.readlink(link) == str(target)
    assert stat.S_IMODE(os.stat(target).st_mode) == mode, oct(os.stat(target).st_mode)
    assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(target.name + ".")) == [], \
        "a temp file was left beside the target"
    value = json.loads(target.read_text())
    assert isinstance(value, dict)
    return value


def test_install_and_uninstall_write_through_a_symlinked_claude_settings(home: Home, tmp_path: Path) -> None:
    claude = tmp_path / "claude-config"
    home.env["CLAUDE_CONFIG_DIR"] = str(claude)
    link = claude / "settings.json"
    target = _linked(tmp_path, link, "claude-settings.json", {"model": "opus"}, 0o640)

    r = home.kenning("install", "--no-start")
    assert r.returncode == 0, r.stdout + r.stderr
    installed = _intact(link, target, 0o640)
    assert installed["model"] == "opus"
    assert {"SessionStart", "Stop"} <= set(installed["hooks"])  # type: ignore[arg-type]

    r = home.kenning("uninstall", "--keep-worker")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _intact(link, target, 0o640) == {"model": "opus"}


def test_a_settings_change_writes_through_a_symlinked_kenning_settings(home: Home, tmp_path: Path) -> None:
    home.paths.ensure()
    link = Path(home.paths.settings)
    target = _linked(tmp_path, link, "kenning-settings.json", {"context_observations": 30}, 0o644)
    home.start_worker()
    r = http(home.port, "PUT", "/api/viewer/settings", token=read_token(home.paths),
             body=json.dumps({"changes": {"context_observations": 42}}).encode())
    assert r.status == 200, r.body[-500:]
    saved = _intact(link, target, 0o644)
    assert saved["context_observations"] == 42
