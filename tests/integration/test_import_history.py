"""``kenning import-history`` on real transcripts: Claude Code 2.1.332 (with its subagent file) and a
Codex 0.171.0 rollout, through the real CLI and a real worker with the offline observer.

Idempotent (a second run stores nothing), original days kept (the index shows them), a grown
transcript adds only its new turn, redaction and ``<private>`` as in live capture, excluded projects
and sessions the hooks captured live left alone, ``--dry-run`` stores nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, Home

CC_SESSION = "fc3ba2f5-df72-4ca7-a1b4-049024f31ca2"
CODEX_FIXTURE = FIXTURES.parent / "codex" / "rollout-calc-session.jsonl"
SECRET = "ghp_" + "Z" * 36  # a GitHub token shape the redactor knows


def _rewrite(src: Path, dest: Path, old: str, new: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(src.read_text().replace(old, new))
    old_time = os.stat(src).st_mtime - 7 * 86400  # a finished session, quiet for days
    os.utime(dest, (old_time, old_time))


@pytest.fixture
def history(home: Home, tmp_path: Path) -> Home:
    user = tmp_path / "user"
    slug = "-" + str(home.project).strip("/").replace("/", "-").replace("_", "-")
    cc_dir = user / ".claude" / "projects" / slug
    _rewrite(FIXTURES / "transcripts" / f"session-{CC_SESSION}.jsonl", cc_dir / f"{CC_SESSION}.jsonl",
             "/tmp/cc-harness-XXXX/project", str(home.project))
    _rewrite(FIXTURES / "transcripts" / "subagent-agent-a294e0e97ab2d2300.jsonl",
             cc_dir / CC_SESSION / "subagents" / "agent-a294e0e97ab2d2300.jsonl",
             "/tmp/cc-harness-XXXX/project", str(home.project))
    codex_project = tmp_path / "calc-project"
    (codex_project / ".git").mkdir(parents=True)
    _rewrite(CODEX_FIXTURE, user / ".codex" / "sessions" / "2026" / "11" / "20" / CODEX_FIXTURE.name,
             "/tmp/codex-run-XXXX/calc-project", str(codex_project))
    home.env.update(HOME=str(user), KENNING_PROVIDER="rules")
    home.env.pop("CLAUDE_CONFIG_DIR", None)
    home.env.pop("CODEX_HOME", None)
    home.user = user  # type: ignore[attr-defined]
    home.codex_project = codex_project  # type: ignore[attr-defined]
    home.cc_file = cc_dir / f"{CC_SESSION}.jsonl"  # type: ignore[attr-defined]
    return home


def _counts(home: Home) -> dict[str, int]:
    conn = sqlite3.connect(home.data / "kenning.db")
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("sessions", "events", "user_prompts", "observations", "session_summaries")}
    finally:
        conn.close()


def _rows(home: Home, sql: str) -> list[tuple]:
    conn = sqlite3.connect(home.data / "kenning.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_import_is_idempotent_keeps_days_and_feeds_the_observer(history: Home) -> None:
    try:
        first = history.kenning("import-history", timeout=120)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "Imported 2 session(s) (Claude Code 1, Codex CLI 1)" in first.stdout, first.stdout
        after_first = _counts(history)
        assert after_first["sessions"] == 2 and after_first["observations"] >= 3, after_first

        # Timestamps are the original ones: events, observations and the index's day headers.
        days = {r[0] for r in _rows(history, "SELECT date(created_at, 'unixepoch') FROM observations")}
        assert days == {"2026-11-30", "2026-11-20"}, days
        platforms = dict(_rows(history, "SELECT agent_session_id, platform FROM sessions"))
        assert platforms[CC_SESSION] == "claude-code" and "codex" in platforms.values()
        bugfix = _rows(history, "SELECT o.title, o.files_modified FROM observations o JOIN sessions s "
                                "ON s.id = o.session_id WHERE s.platform = 'codex' AND o.type = 'bugfix'")
        assert bugfix and "add is broken" in bugfix[0][0] and json.loads(bugfix[0][1]) == ["calc.py"], bugfix
        context = history.kenning("context", "--cwd", str(history.codex_project))  # type: ignore[attr-defined]
        # (its only session is where it left off: the header gives the day the session happened)
        assert "## Where we left off (S" in context.stdout and ", 2026-11-20 " in context.stdout, context.stdout
        assert "calc.py" in context.stdout, context.stdout
        summaries = _rows(history, "SELECT request FROM session_summaries")
        assert any("echo hi" in r[0] for r in summaries), summaries

        second = history.kenning("import-history", timeout=120)
        assert second.returncode == 0, second.stderr
        assert "Imported 0 session(s)" in second.stdout and "2 unchanged" in second.stdout, second.stdout
        assert _counts(history) == after_first

        # A transcript that grew: only its new turn is stored.
        cc_file: Path = history.cc_file  # type: ignore[attr-defined]
        lines = cc_file.read_text().splitlines()
        prompt = next(r for r in map(json.loads, lines)
                      if r.get("type") == "user" and r["message"]["content"] == "Second prompt after resume.")
        prompt.update(uuid="11111111-2222-3333-4444-555555555555", timestamp="2026-11-30T06:10:00.000Z")
        prompt["message"]["content"] = f"Third prompt: rotate the token {SECRET} <private>my pin 4242</private>"
        answer = {"type": "assistant", "uuid": "66666666-2222-3333-4444-555555555555", "sessionId": CC_SESSION,
                  "timestamp": "2026-11-30T06:10:05.000Z", "cwd": str(history.project),
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "Rotated."}]}}
        with cc_file.open("a") as fh:
            fh.write(json.dumps(prompt) + "\n" + json.dumps(answer) + "\n")
        old = os.stat(cc_file).st_mtime - 86400
        os.utime(cc_file, (old, old))
        third = history.kenning("import-history", timeout=120)
        assert "Imported 1 session(s)" in third.stdout and "were stored already" in third.stdout, third.stdout
        grown = _counts(history)
        assert grown["user_prompts"] == after_first["user_prompts"] + 1
        assert grown["events"] == after_first["events"] + 2  # the prompt and its Stop
        stored = _rows(history, "SELECT prompt_text FROM user_prompts ORDER BY id DESC LIMIT 1")[0][0]
        assert SECRET not in stored and "4242" not in stored and "rotate the token" in stored, stored
        assert SECRET.encode() not in (history.data / "kenning.db").read_bytes()
    finally:
        history.stop_worker()


def test_dry_run_excluded_projects_and_live_sessions(history: Home) -> None:
    dry = history.kenning("import-history", "--dry-run")
    assert dry.returncode == 0 and "Would import 2 session(s)" in dry.stdout, dry.stdout
    assert not (history.data / "kenning.db").exists() or _counts(history)["events"] == 0

    # The Codex project is excluded; the Claude Code session was captured live by the hooks.
    settings = history.data / "settings.json"
    history.data.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"excluded_projects": [str(history.codex_project)]}))  # type: ignore[attr-defined]
    r = history.hook("SessionStart", {"session_id": CC_SESSION, "cwd": str(history.project),
                                      "hook_event_name": "SessionStart", "source": "startup"})
    assert r.returncode == 0
    try:
        history.flush()
        before = _counts(history)
        out = history.kenning("import-history", "--no-observe", timeout=120)
        assert out.returncode == 0, out.stderr
        assert "Imported 0 session(s)" in out.stdout, out.stdout
        assert "1 captured live by the hooks" in out.stdout and "1 in excluded projects" in out.stdout, out.stdout
        assert _counts(history) == before
    finally:
        history.stop_worker()


def test_install_offers_the_import(history: Home, tmp_path: Path) -> None:
    history.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-config")
    shutil.copytree(history.user / ".claude" / "projects",  # type: ignore[attr-defined]
                    tmp_path / "claude-config" / "projects")
    out = history.kenning("install", "--no-start")
    assert out.returncode == 0, out.stderr
    assert "Found 2 past session(s) not in memory yet (Claude Code 1, Codex CLI 1)" in out.stdout, out.stdout
    assert "kenning import-history" in out.stdout


def test_a_session_continued_live_after_its_import_is_not_imported_again(history: Home) -> None:
    first = history.kenning("import-history", "--no-observe", "--agent", "claude-code", timeout=120)
    assert "Imported 1 session(s)" in first.stdout, first.stdout
    r = history.hook("UserPromptSubmit", {"session_id": CC_SESSION, "cwd": str(history.project),
                                          "hook_event_name": "UserPromptSubmit", "prompt": "Resumed live."})
    assert r.returncode == 0
    history.start_worker()
    try:
        deadline = time.monotonic() + 20
        while history.spool_depth() and time.monotonic() < deadline:
            time.sleep(0.1)
        cc_file: Path = history.cc_file  # type: ignore[attr-defined]
        with cc_file.open("a") as fh:  # the transcript grows with the live turn
            fh.write(json.dumps({"type": "user", "uuid": "77777777-2222-3333-4444-555555555555",
                                 "sessionId": CC_SESSION, "timestamp": "2026-11-30T07:00:00.000Z",
                                 "cwd": str(history.project),
                                 "message": {"role": "user", "content": "Resumed live."}}) + "\n")
        before = _counts(history)
        again = history.kenning("import-history", "--no-observe", "--agent", "claude-code", timeout=120)
        assert "1 captured live by the hooks" in again.stdout, again.stdout
        assert _counts(history)["user_prompts"] == before["user_prompts"]
    finally:
        history.stop_worker()


def test_a_copilot_cli_session_is_imported_into_its_project(history: Home, tmp_path: Path) -> None:
    """Copilot CLI's own log (``~/.copilot/session-state/<id>/events.jsonl``) through the real CLI and worker: the
    session is stored under its folder's project as Copilot's, its work says where it left off, and a second
    import stores nothing."""
    from tests.support.transcripts import CopilotSession

    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    log = CopilotSession(str(shop), "2026-11-25T10:00:00Z") \
        .prompt("Why does the nightly export skip refunds?").say("Reading the filter.", tools=True) \
        .bash("pytest tests/test_export.py -q", "1 failed", code=1) \
        .tool("apply_patch", f"*** Begin Patch\n*** Update File: {shop}/export.py\n@@\n-a\n+b\n*** End Patch", "ok") \
        .bash("pytest tests/test_export.py -q", "3 passed") \
        .bash("git commit -am 'fix: keep refunds in the nightly export'", "[main 1a2b3c4] fix: keep refunds") \
        .say("The filter dropped negative amounts, so refunds never reached the export; it keeps them now.")
    path = log.write(history.user / ".copilot")  # type: ignore[attr-defined]
    old = time.time() - 7 * 86400
    os.utime(path, (old, old))
    try:
        first = history.kenning("import-history", "--agent", "copilot", timeout=120)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "Imported 1 session(s) (GitHub Copilot CLI 1)" in first.stdout, first.stdout
        assert _rows(history, "SELECT platform, agent_session_id FROM sessions") == [("copilot", log.sid)]
        context = history.kenning("context", "--cwd", str(shop))
        assert "## Where we left off (S" in context.stdout and "in GitHub Copilot CLI" in context.stdout, \
            context.stdout
        assert "1a2b3c4 fix: keep refunds in the nightly export" in context.stdout, context.stdout
        again = history.kenning("import-history", "--agent", "copilot", timeout=120)
        assert "Imported 0 session(s)" in again.stdout and "1 unchanged" in again.stdout, again.stdout
    finally:
        history.stop_worker()
