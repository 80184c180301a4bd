"""``kenning import-history`` stores what real transcripts say, once, under the right project: through
the real CLI into a real database, from synthetic transcripts in the shapes Claude Code and Codex write
(tests/fixtures/history/README.md). The dev set of real sessions is scored by
shared/tools/real_sessions_eval.py; one test below reads it when it is there.

* a resumed Claude Code session, written into a new file that repeats the earlier one's lines, adds
  only what is new, whether both files are imported together or the second one later;
* what nobody typed is no prompt row, and every prompt event says where its text came from;
* one repository's sessions (a main checkout, a Codex throw-away worktree, Claude Code and Codex)
  are one project that ``kenning context --project <name>`` shows; another repository that shares
  the folder name stays apart.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.support.imports import agent_homes, imported, rows

HISTORY = Path(__file__).resolve().parent.parent / "fixtures" / "history"
SLUG = "-Users-dev-src-ledger"
RESUMED_A = "d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f7a"
RESUMED_B = "e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a8b"
MAIN = "3f0c2d1e-5b6a-4c7d-8e9f-a0b1c2d3e4f5"
REAL = Path("/work/shared/data/real-sessions")


def _last_time(path: Path) -> float:
    from kenning.history import timestamp

    stamps = [timestamp(json.loads(line).get("timestamp")) for line in path.read_text().splitlines() if line]
    return max(s for s in stamps if s is not None)


def install(src: Path, dest: Path) -> Path:
    """Copy a transcript where the agent keeps it, its mtime at its last line (a finished session)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    last = _last_time(src)
    os.utime(dest, (last, last))
    return dest


@pytest.fixture
def agents(home: Home, tmp_path: Path) -> Home:
    return agent_homes(home, tmp_path)


def claude_file(h: Home, name: str, folder: str = "claude-code-resumed", slug: str = SLUG) -> Path:
    src = HISTORY / folder / (name if name.endswith(".jsonl") else f"{name}.jsonl")
    return install(src, h.claude / "projects" / slug / src.name)  # type: ignore[attr-defined]


def codex_file(h: Home, folder: str, name: str) -> Path:
    src = HISTORY / folder / name
    return install(src, h.codex / "sessions" / "2026" / "06" / src.name[8:10] / src.name)  # type: ignore[attr-defined]


def prompts_by_session(h: Home) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sid, text in rows(h, "SELECT s.agent_session_id, p.prompt_text FROM user_prompts p JOIN sessions s "
                             "ON s.id = p.session_id ORDER BY s.agent_session_id, p.prompt_number"):
        out.setdefault(sid, []).append(text)
    return out


def tool_ids(h: Home, sid: str) -> list[str]:
    return [r[0] for r in rows(h, "SELECT e.event_key FROM events e JOIN sessions s ON s.id = e.session_id "
                                  "WHERE s.agent_session_id = ? AND e.kind LIKE 'PostToolUse%' ORDER BY e.id", (sid,))]


@pytest.mark.parametrize("later", [False, True], ids=["together", "resumed-file-imported-later"])
def test_a_resumed_session_stores_only_what_is_new(agents: Home, later: bool) -> None:
    claude_file(agents, RESUMED_A)
    if later:
        imported(agents, "--no-observe")
    claude_file(agents, RESUMED_B)
    out = imported(agents, "--no-observe")
    assert "were stored already" in out, out
    assert prompts_by_session(agents) == {
        RESUMED_A: ["Add a weekly export next to the nightly one."],
        RESUMED_B: ["Continue: the weekly export must also skip holidays."],
    }
    assert tool_ids(agents, RESUMED_A) == ["PostToolUse:toolu_resume_write1"]
    assert tool_ids(agents, RESUMED_B) == ["PostToolUse:toolu_resume_edit2"]
    # The resumed session starts with what it added, not with the copy of what came before.
    started = dict(rows(agents, "SELECT agent_session_id, datetime(started_at, 'unixepoch') FROM sessions"))
    assert started[RESUMED_B] == "2026-05-07 15:30:00", started
    stops = rows(agents, "SELECT COUNT(*) FROM events WHERE kind = 'Stop'")[0][0]
    assert stops == 2
    # Imported again (the files touched: read again): nothing new.
    before = rows(agents, "SELECT COUNT(*) FROM events")[0][0]
    for name in (RESUMED_A, RESUMED_B):
        p = agents.claude / "projects" / SLUG / f"{name}.jsonl"  # type: ignore[attr-defined]
        os.utime(p, (os.stat(p).st_mtime + 1, os.stat(p).st_mtime + 1))
    imported(agents, "--no-observe")
    assert rows(agents, "SELECT COUNT(*) FROM events")[0][0] == before


def test_prompt_rows_hold_only_what_the_user_wrote_and_events_say_where_it_came_from(agents: Home) -> None:
    for name in (MAIN, "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d", "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f"):
        claude_file(agents, name, folder=f"claude-code/{SLUG}")
    imported(agents, "--no-observe")
    assert prompts_by_session(agents)[MAIN] == [
        "The nightly export drops rows whose amount is zero. Find out why.",
        "Note that zero amounts are valid refunds",
        "Do not touch the importer, only the export filter.",
        "Check the refund path as well",
        "use the staging bucket, not prod, for the rerun",
        "thanks, that is all for today",
    ]
    origins = sorted(json.loads(p)["prompt_origin"] for (p,) in rows(
        agents, "SELECT payload FROM events WHERE kind = 'UserPromptSubmit'"))
    assert origins == ["headless", "plan", "queued", "rejection", "typed", "typed", "typed", "typed"]
    # The refused calls are no failures; the user's own commit is the user's Bash call.
    assert [k for k in tool_ids(agents, MAIN) if "Failure" in k] == ["PostToolUseFailure:toolu_ledger_test1"]
    shell = [json.loads(p) for (p,) in rows(agents, "SELECT payload FROM events WHERE event_key LIKE "
                                                   "'PostToolUse:user-shell:%'")]
    assert len(shell) == 1 and shell[0]["actor"] == "user" and "git commit" in shell[0]["tool_input"]["command"]
    stops = [json.loads(p) for (p,) in rows(agents, "SELECT e.payload FROM events e JOIN sessions s ON "
                                                   "s.id = e.session_id WHERE s.agent_session_id = ? AND "
                                                   "e.kind = 'Stop' ORDER BY e.occurred_at", (MAIN,))]
    assert [s.get("interrupted", False) for s in stops] == [True, False, True, False, False]


def test_one_repository_is_one_project_and_a_namesake_is_not(agents: Home) -> None:
    claude_file(agents, MAIN, folder=f"claude-code/{SLUG}")  # /Users/dev/src/ledger; its PR names acme/ledger
    worktree = "rollout-2026-06-01T08-00-00-019e0a1b-2c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl"
    codex_file(agents, "codex", worktree)  # ~/.codex/worktrees/4f2a/ledger, origin git@github.com:acme/ledger
    codex_file(agents, "codex", "rollout-2026-06-02T08-00-00-019e0b2c-3d4e-7f5a-8b6c-1d2e3f4a5b6c.jsonl")
    try:
        out = imported(agents)
        assert "Imported 3 session(s) (Claude Code 1, Codex CLI 2)" in out, out
        projects = rows(agents, "SELECT COUNT(DISTINCT project) FROM sessions")
        assert projects == [(1,)]
        assert rows(agents, "SELECT name, remote FROM projects") == [("ledger", "github.com/acme/ledger")]
        context = agents.kenning("context", "--project", "ledger")
        assert context.returncode == 0, context.stderr
        text = context.stdout
        assert "Memory of ledger" in text, text
        assert "in Codex" in text and ("zero" in text or "refund" in text), text  # both agents' work

        # Another repository with a folder of the same name: its own project, never merged.
        codex_file(agents, "codex-other", "rollout-2026-06-03T08-00-00-019e0c3d-4e5f-7a6b-8c7d-2e3f4a5b6c7d.jsonl")
        imported(agents)
        assert rows(agents, "SELECT COUNT(*) FROM projects WHERE name = 'ledger'") == [(2,)]
        other = rows(agents, "SELECT project FROM sessions WHERE cwd = '/Users/dev/clients/ledger'")
        acme = rows(agents, "SELECT DISTINCT project FROM sessions WHERE cwd != '/Users/dev/clients/ledger'")
        assert len(other) == 1 and len(acme) == 1 and other[0] != acme[0]
        assert "invoices_v2" not in agents.kenning("context", "--project", acme[0][0]).stdout
    finally:
        agents.stop_worker()


@pytest.mark.skipif(not REAL.is_dir(), reason="the real-session dev set is not on this machine")
def test_the_dev_sets_hk_sessions_are_one_project(agents: Home) -> None:
    for src in sorted((REAL / "jdx-hk").glob("*.jsonl")):
        install(src, agents.codex / "sessions" / f"rollout-{src.name}")  # type: ignore[attr-defined]
    out = imported(agents, "--no-observe")
    assert "Imported 6 session(s) (Codex CLI 6)" in out, out
    assert rows(agents, "SELECT COUNT(DISTINCT project), COUNT(DISTINCT cwd) FROM sessions") == [(1, 5)]
    assert rows(agents, "SELECT name FROM projects") == [("hk",)]
    assert rows(agents, "SELECT COUNT(*) FROM events WHERE kind LIKE 'PostToolUse%'")[0][0] > 300
