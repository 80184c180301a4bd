"""The MCP tools in-process (no transport): argument checks, the save path, read-only reads,
no database created by a read, excluded projects, and the lazy import of the SDK."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kenning.mcp import inputs, tools
from kenning.mcp.inputs import ToolInputError
from kenning.mcp.tools import MemoryTools
from kenning.paths import Paths
from kenning.privacy.ingress import Cleaner
from kenning.privacy.redact import Redactor
from kenning.settings import Settings
from kenning.store import manual
from kenning.store.db import open_db
from tests.support.erasure import assert_erased, assert_present

CLEAN = Cleaner(Redactor()).text
TYPES = ["bugfix", "feature", "refactor", "change", "discovery", "decision", "security_alert", "security_note",
         "sensitive"]


@pytest.fixture
def project(tmp_path: Path) -> str:
    p = tmp_path / "shop-api"
    (p / ".git").mkdir(parents=True)
    return str(p)


@pytest.fixture
def memory(tmp_path: Path) -> MemoryTools:
    return MemoryTools(Paths(str(tmp_path / "data")), Settings())


# ------------------------------------------------------------------------------ inputs

def test_dates_relative_ages_and_whole_days() -> None:
    now = datetime(2026, 11, 30, 15, 0).timestamp()
    day = datetime(2026, 11, 20).timestamp()
    assert inputs.parse_time("2026-11-20", "since", now=now) == day
    assert inputs.parse_time("2026-11-20", "until", end=True, now=now) == day + 86400  # the whole day
    assert inputs.parse_time("2026-11-20T10:30", "since") == datetime(2026, 11, 20, 10, 30).timestamp()
    assert inputs.parse_time("2026-11-20T10:30:00Z", "since") == 1_795_170_600.0
    assert inputs.parse_time("7d", "since", now=now) == now - 7 * 86400
    assert inputs.parse_time("12h", "since", now=now) == now - 12 * 3600
    assert inputs.parse_time("3 days ago", "since", now=now) == now - 3 * 86400
    assert inputs.parse_time("today", "since", now=now) == datetime(2026, 11, 30).timestamp()
    assert inputs.parse_time("yesterday", "until", end=True, now=now) == datetime(2026, 11, 30).timestamp()
    assert inputs.parse_time(None, "since") is None and inputs.parse_time("  ", "since") is None
    for bad in ("last tuesday", "2026-13-45", "soon", "7x", "1e9"):
        with pytest.raises(ToolInputError, match="is not a date"):
            inputs.parse_time(bad, "since")
    with pytest.raises(ToolInputError, match="must be before"):
        inputs.time_range("2026-11-30", "2026-11-01")


def test_ids_are_numbers_hash_numbers_or_summary_refs() -> None:
    assert inputs.parse_ids([12, "13", "#14", "S3", 12], most=20, allow_summaries=True) == [
        ("observation", 12), ("observation", 13), ("observation", 14), ("summary", 3)]
    assert inputs.parse_ids("12, #13", most=20, allow_summaries=True) == [("observation", 12), ("observation", 13)]
    assert inputs.parse_ids(7, most=20, allow_summaries=False) == [("observation", 7)]
    cases: list[tuple[Any, str]] = [
        ([], "ids is empty"), ([0], "positive"), ([-3], "positive"), (["x1"], "is not an id"),
        ([True], "must be an observation id"), (list(range(1, 22)), "too many ids"), (["1" * 40], "is not an id"),
        ([2**63], "positive id"), ([10**30], "positive id")]
    for bad, msg in cases:
        with pytest.raises(ToolInputError, match=msg):
            inputs.parse_ids(bad, most=20, allow_summaries=True)
    with pytest.raises(ToolInputError, match="observation ids only"):
        inputs.parse_ids(["S2"], most=20, allow_summaries=False)


def test_types_limits_and_queries() -> None:
    assert inputs.types_list("Bugfix, decision", TYPES) == ["bugfix", "decision"]
    assert inputs.types_list(["feature"], TYPES) == ["feature"]
    assert inputs.types_list(" , ", TYPES) is None
    with pytest.raises(ToolInputError, match="unknown type 'poem'; types are: bugfix"):
        inputs.types_list("poem", TYPES)
    assert inputs.bounded(None, "limit", default=20, low=1, high=100) == 20
    with pytest.raises(ToolInputError, match="between 1 and 100"):
        inputs.bounded(101, "limit", default=20, low=1, high=100)
    with pytest.raises(ToolInputError, match="whole number"):
        inputs.bounded(True, "limit", default=20, low=1, high=100)
    assert inputs.query_text("  vat  ", required=True) == "vat"
    assert inputs.query_text("", required=False) == ""
    with pytest.raises(ToolInputError, match="too long"):
        inputs.query_text("x" * (inputs.MAX_QUERY_CHARS + 1), required=True)


# --------------------------------------------------------------------------- save path

def test_prepare_cleans_validates_and_titles() -> None:
    d = manual.prepare("Use pnpm, not npm. The lockfile is pnpm-lock.yaml.", title=None, type=None,
                       valid_types=TYPES, clean=CLEAN)
    assert (d.type, d.title) == ("discovery", "Use pnpm, not npm.")
    assert d.narrative == "Use pnpm, not npm. The lockfile is pnpm-lock.yaml."
    long_line = "word " * 100
    assert manual.prepare(long_line, title=None, type="decision", valid_types=TYPES, clean=CLEAN).title.endswith("…")
    secret = "ghp_" + "a" * 36
    d = manual.prepare(f"CI token is {secret} <private>and the vault path</private>", title=f"token {secret}",
                       type="Security_Note", valid_types=TYPES, clean=CLEAN)
    assert secret not in d.narrative and secret not in d.title and "vault" not in d.narrative
    assert d.type == "security_note"
    assert manual.prepare(f"x {secret}", title=None, type=None, valid_types=TYPES,
                          clean=Cleaner(None).text).narrative.endswith(secret)
    for text, kw, msg in (("", {}, "text is empty"), ("x" * 20_001, {}, "too long"),
                          ("ok", {"type": "poem"}, "unknown type"), ("ok", {"title": "t" * 201}, "title is too long"),
                          ("<private>all of it</private>", {}, "nothing is left")):
        with pytest.raises(manual.InvalidMemory, match=msg):
            manual.prepare(text, title=kw.get("title"), type=kw.get("type"), valid_types=TYPES, clean=CLEAN)


def test_save_dedups_by_content_and_groups_by_day_and_project(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "kenning.db"))
    day1 = datetime(2026, 11, 29, 10).timestamp()
    day2 = datetime(2026, 11, 30, 10).timestamp()

    def draft(text: str, at: float) -> Any:
        return manual.prepare(text, title=None, type="decision", valid_types=TYPES, now=at, clean=CLEAN)

    a = manual.save(conn, draft("We deploy on Tuesdays.", day1), project="shop")
    same = manual.save(conn, draft("We deploy on Tuesdays.", day2), project="shop")
    other_project = manual.save(conn, draft("We deploy on Tuesdays.", day2), project="blog")
    b = manual.save(conn, draft("Feature flags live in flags.yaml.", day1), project="shop")
    c = manual.save(conn, draft("Logs go to stderr.", day2), project="shop")
    assert a.created and not same.created and same.id == a.id
    assert other_project.created and other_project.id != a.id
    sessions = conn.execute("SELECT platform, agent_session_id, project, status FROM sessions ORDER BY id").fetchall()
    assert [tuple(s) for s in sessions] == [("mcp", "2026-11-29:shop", "shop", "completed"),
                                            ("mcp", "2026-11-30:blog", "blog", "completed"),
                                            ("mcp", "2026-11-30:shop", "shop", "completed")]
    sid = {r[0]: r[1] for r in conn.execute("SELECT id, session_id FROM observations")}
    assert sid[a.id] == sid[b.id] != sid[c.id]
    # FTS is kept by the triggers: the memory is searchable at once.
    hits = [r[0] for r in conn.execute("SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'flags'")]
    assert hits == [b.id]
    # A retracted memory saved again (same day) comes back instead of failing on the unique key.
    conn.execute("UPDATE observations SET status = 'retracted' WHERE id = ?", (c.id,))
    again = manual.save(conn, draft("Logs go to stderr.", day2), project="shop")
    assert again.id == c.id and not again.created
    assert conn.execute("SELECT status FROM observations WHERE id = ?", (c.id,)).fetchone()[0] == "active"


# -------------------------------------------------------------------------- the tools

def test_reads_never_create_or_write_the_database(memory: MemoryTools, project: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory.search("anything", cwd=project).startswith("No memory yet")
    assert not os.path.exists(memory.paths.db)
    with pytest.raises(ToolInputError, match="no memory yet"):
        memory.get([1], cwd=project)
    assert not os.path.exists(memory.paths.db)
    memory.save("Migrations run with alembic upgrade head.", cwd=project, type="discovery")
    opened: list[bool] = []
    real = tools.connect

    def spy(path: str, *, readonly: bool = False) -> sqlite3.Connection:
        opened.append(readonly)
        return real(path, readonly=readonly)

    monkeypatch.setattr(tools, "connect", spy)
    monkeypatch.setattr(tools, "open_db", lambda *a, **k: pytest.fail("a read opened the database for writing"))
    out = memory.search("alembic", cwd=project)
    assert "#1 " in out and "project shop-api" in out
    assert "alembic" in memory.get([1], cwd=project)
    assert "▶ #1 " in memory.timeline(1, cwd=project)
    assert opened and all(opened)


def test_an_old_database_is_brought_up_to_date_once_when_the_worker_is_down(memory: MemoryTools,
                                                                           project: str) -> None:
    from kenning.store.db import connect, current_version, migrate, migration_files

    memory.paths.ensure()
    conn = connect(memory.paths.db)
    migrate(conn, target=1)
    conn.close()
    assert "No memory of project shop-api" in memory.search("anything", cwd=project)
    conn = connect(memory.paths.db, readonly=True)
    assert current_version(conn) == migration_files()[-1][0]
    conn.close()


def test_excluded_projects_are_neither_searched_nor_written(tmp_path: Path, project: str) -> None:
    settings = Settings()
    settings.excluded_projects = ("shop-*",)
    memory = MemoryTools(Paths(str(tmp_path / "data")), settings)
    with pytest.raises(ToolInputError, match="excluded"):
        memory.search("x", cwd=project)
    with pytest.raises(ToolInputError, match="excluded"):
        memory.save("something", cwd=project)
    with pytest.raises(ToolInputError, match="excluded"):
        memory.save("something", cwd=str(tmp_path), project="shop-legacy")
    with pytest.raises(ToolInputError, match="project is too long"):
        memory.search("x", cwd=str(tmp_path), project="p" * 600)
    assert not os.path.exists(memory.paths.db)


def test_save_into_a_named_project_or_a_project_path(tmp_path: Path, project: str) -> None:
    """Into another project only with the user's setting (tests/mcp/test_mcp_scope.py: refused without it)."""
    settings = Settings()
    settings.mcp_cross_project_writes = True
    memory = MemoryTools(Paths(str(tmp_path / "data")), settings)
    out = memory.save("The staging DB is reset nightly.", cwd=str(tmp_path), project="billing", type="discovery")
    assert out.startswith("Saved as #1 (discovery) in project billing")
    out = memory.save("Use ruff format.", cwd=str(tmp_path), project=project + "/src")
    assert "in project shop-api" in out
    assert "#1 " in memory.search("staging", cwd=str(tmp_path), project="billing")
    assert "#2 " in memory.search("ruff", cwd=project)
    both = memory.search("", cwd=project, project="*", since="1d")
    assert "[billing]" in both and "[shop-api]" in both  # rows name their project when several answer


def test_forget_takes_ids_only_and_reports_the_missing(memory: MemoryTools, project: str) -> None:
    memory.save("One thing.", cwd=project)
    memory.save("Another thing.", cwd=project)
    out = memory.forget([1, 99], cwd=project)
    assert out.startswith("Forgot #1 for good") and "Not found: #99" in out
    assert "#1 " not in memory.search("thing", cwd=project)
    assert_erased(memory.paths.root, "One thing")
    assert_present(memory.paths.root, "Another thing")
    with pytest.raises(ToolInputError, match="no observation with id #1"):
        memory.forget([1], cwd=project)


def test_the_guide_names_every_tool() -> None:
    for name in ("search_memory", "memory_timeline", "get_observations", "save_memory", "forget_memory"):
        assert name in tools.GUIDE


def test_other_commands_never_import_the_mcp_sdk() -> None:
    code = ("import sys, time; t = time.perf_counter(); from kenning.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('mcp', 'pydantic', 'mcp_types', 'kenning.mcp.server') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_saved_time_is_now(memory: MemoryTools, project: str) -> None:
    before = time.time()
    memory.save("Timestamps are UTC in the API.", cwd=project)
    conn = sqlite3.connect(memory.paths.db)
    created = conn.execute("SELECT created_at FROM observations").fetchone()[0]
    conn.close()
    assert before <= created <= time.time()


def test_search_asks_the_running_worker_first_and_falls_back_to_the_database(
        home: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.hook import client

    memory = MemoryTools(home.paths, Settings())
    memory.save("Invoices are numbered per fiscal year.", cwd=str(home.project))
    asked: list[str] = []
    real = client.request

    def spy(port: int, method: str, path: str, **kw: Any) -> Any:
        asked.append(path)
        return real(port, method, path, **kw)

    monkeypatch.setattr(client, "request", spy)
    # A stale pid file (nothing listens there): the database answers, quickly.
    home.paths.ensure()
    Path(home.paths.pid_file).write_text('{"pid": 999999, "port": 9, "start_token": "x"}')
    t0 = time.monotonic()
    assert "#1 " in memory.search("fiscal year", cwd=str(home.project))
    assert time.monotonic() - t0 < 2
    assert not [p for p in asked if p.startswith("/api/search")]  # no listener proven ours: no token sent
    os.unlink(home.paths.pid_file)
    home.start_worker()
    asked.clear()
    out = memory.search("fiscal year", cwd=str(home.project), since="1d")
    assert "#1 " in out and "project project" in out
    searched = [p for p in asked if p.startswith("/api/search?")]
    assert searched, asked
    sent = parse_qs(urlsplit(searched[-1]).query)
    assert sent["query"] == ["fiscal year"] and float(sent["since"][0]) > 0
    assert sent["project"] == [home.key]  # the project's key, not its folder name
    with pytest.raises(ToolInputError, match="no observation matches"):
        memory.timeline(query="zzzqqq unknown words", cwd=str(home.project))
    assert "▶ #1 " in memory.timeline(query="fiscal", cwd=str(home.project))
    assert any(p.startswith("/api/timeline?") for p in asked)
