"""A scratch machine for install tests: an environment with none of this one's Kenning, agent or Python
variables, and a folder of commands standing for what the user has installed (Claude Code, a browser)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.claude_cli import ensure_claude_cli

_OURS = ("KENNING_", "CLAUDE", "ANTHROPIC_", "OPENAI_", "VIRTUAL_ENV", "PYTHON")


def outside_env(*more_prefixes: str) -> tuple[dict[str, str], list[str]]:
    """(this process's environment without our variables, the system PATH without any `kenning` and
    without this interpreter's folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OURS + more_prefixes)}
    system_path = [d for d in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                   if d and not (Path(d) / "kenning").exists() and Path(d) != Path(sys.executable).parent]
    return env, system_path


def user_commands(root: Path, *, fake_claude: bool = False) -> Path:
    """``root/bin``: the real Claude Code CLI when it can be had (else, with ``fake_claude``, a script that
    answers ``--version``), and a browser that writes the URL it was given to ``root/opened-url``."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    claude = ensure_claude_cli()
    if claude:
        (bin_dir / "claude").symlink_to(os.path.realpath(claude))
    elif fake_claude:
        (bin_dir / "claude").write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
        (bin_dir / "claude").chmod(0o755)
    (bin_dir / "browser").write_text(f"#!/bin/sh\necho \"$1\" > {root}/opened-url\n")
    (bin_dir / "browser").chmod(0o755)
    return bin_dir
