"""The session-start index across agents: one project's memory whichever agent recorded it, each row
of another agent marked with that agent's name, the asking agent's own rows and rows of no agent not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kenning.context.session_start import build
from kenning.records import ObservationDraft, SummaryDraft
from kenning.settings import Settings
from kenning.store import repo
from kenning.store.db import open_db

PROJECT = "/work/invoice-api"


def _session(conn: sqlite3.Connection, platform: str, name: str, title: str, at: float) -> None:
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform=platform, agent_session_id=name, project=PROJECT,
                                  project_root=PROJECT, cwd=PROJECT, at=at)
        repo.insert_observation(conn, sid, PROJECT, ObservationDraft(type="bugfix", title=title, created_at=at),
                                "rules")
        repo.upsert_summary(conn, sid, PROJECT, SummaryDraft(created_at=at, request=f"{title} request"), "rules", at)


def test_rows_of_other_agents_are_marked(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "kenning.db"))
    _session(conn, "claude-code", "a", "Fixed the VAT rounding", 1_800_000_000.0)
    _session(conn, "codex", "b", "Fixed the currency parser", 1_800_000_100.0)
    _session(conn, "mcp", "c", "Saved: invoices are immutable", 1_800_000_200.0)
    for_claude = build(conn, Settings(), PROJECT, now=1_800_000_300.0)
    assert "Fixed the currency parser · in Codex CLI" in for_claude
    # (no session line that would only point at the row it found)
    assert "Fixed the currency parser request" not in for_claude, for_claude
    assert "Fixed the VAT rounding · in" not in for_claude and "immutable · in" not in for_claude
    assert '"in <agent>" marks work done in another coding agent' in for_claude
    for_codex = build(conn, Settings(), PROJECT, now=1_800_000_300.0, agent="codex")
    assert "Fixed the VAT rounding · in Claude Code" in for_codex and "parser · in" not in for_codex
    alone = open_db(str(tmp_path / "alone.db"))
    _session(alone, "claude-code", "a", "Fixed the VAT rounding", 1_800_000_000.0)
    assert "in <agent>" not in build(alone, Settings(), PROJECT, now=1_800_000_300.0)
