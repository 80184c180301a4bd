"""``search --agent``: rows filtered by the coding agent whose session recorded them."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from kenning.observer.base import ObservationDraft
from kenning.search.service import search
from kenning.store import repo
from kenning.store.db import open_db


def _db(tmp_path: Path) -> sqlite3.Connection:
    conn = open_db(str(tmp_path / "kenning.db"))
    for platform, sid, title in (("claude-code", "a", "Fixed the retry loop in the uploader"),
                                 ("codex", "b", "Fixed the retry budget in the uploader"),
                                 ("gemini", "c", "Documented the retry flags of the uploader")):
        with repo.transaction(conn):
            s = repo.upsert_session(conn, platform=platform, agent_session_id=sid, project="up", project_root="",
                                    cwd="", at=1.0)
            repo.insert_observation(conn, s, "up", ObservationDraft(type="bugfix", title=title, created_at=1.0),
                                    "rules", 1.0)
            repo.add_prompt(conn, s, 1, f"make the uploader retry ({platform})", 1.0)
    return conn


def test_agent_filters_every_kind_of_row(tmp_path: Path) -> None:
    conn = _db(tmp_path)
    assert {h.title for h in search(conn, "retry uploader", agent="codex", kinds=("observation",))} == {
        "Fixed the retry budget in the uploader"}
    prompts = search(conn, "uploader retry", agent="gemini", kinds=("prompt",))
    assert [h.title for h in prompts] == ["make the uploader retry (gemini)"]
    assert len(search(conn, "retry uploader", kinds=("observation",))) == 3
    assert search(conn, "retry", agent="cursor") == []


def test_cli_search_agent(tmp_path: Path) -> None:
    _db(tmp_path).close()
    env = {"KENNING_DATA_DIR": str(tmp_path), "KENNING_PORT": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "kenning", "search", "retry", "--agent", "codex", "--kind",
                          "observation"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "retry budget" in out.stdout and "retry loop" not in out.stdout, out.stdout
