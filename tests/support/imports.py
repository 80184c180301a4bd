"""What the ``kenning import-history`` tests share: agents' history folders in a scratch home, the
import run as the user runs it, and the rows it left."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import Home


def agent_homes(home: Home, tmp_path: Path) -> Home:
    """``home`` with Claude Code's, Codex's and Copilot CLI's history folders under ``tmp_path`` (``home.claude``,
    ``home.codex``, ``home.copilot``), the offline observer, and nothing imported yet."""
    home.claude = tmp_path / "claude-config"  # type: ignore[attr-defined]
    home.codex = tmp_path / "codex-home"  # type: ignore[attr-defined]
    home.copilot = tmp_path / "copilot-home"  # type: ignore[attr-defined]
    home.env.update(CLAUDE_CONFIG_DIR=str(home.claude), CODEX_HOME=str(home.codex),  # type: ignore[attr-defined]
                    COPILOT_HOME=str(home.copilot), KENNING_PROVIDER="rules")  # type: ignore[attr-defined]
    return home


def imported(h: Home, *args: str) -> str:
    r = h.kenning("import-history", *args, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def rows(h: Home, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(h.paths.db)
    try:
        return [tuple(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()
