"""A damaged database, told the same way everywhere, repaired from what is left and from a backup.

Through real processes: the SessionStart hook, the CLI, the MCP server (the SDK's own client), the
worker's status API the viewer reads. A file cut at some byte (SQLite refuses it) is salvaged page
by page; the worker's online backups are taken, rotated, private, restored from, and reset by a
forget so that none keeps the forgotten text.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kenning.paths import read_token
from kenning.store import backup
from tests.conftest import Home
from tests.security import context_of, files_containing, hook_json, http, session_start, tree_bytes, wait_until
from tests.security.test_fault_matrix import CANARY, corrupt, grow, run_session

FAST_S = 5.0
LINE = re.compile(r"the database \S+ is corrupt \([^)]*\): run `kenning repair`")


def damage_line(text: str) -> str:
    found = LINE.findall(text)
    assert found, text[-3000:]
    return found[0]


def memory(home: Home, sessions: int = 3, notes: int = 1500) -> None:
    """Months of memory, everything in the main file (no WAL), the worker stopped."""
    home.start_worker()
    grow(home, notes)
    for i in range(sessions):
        run_session(home, f"old-{i}", tools=3)
    home.flush()
    home.stop_worker()
    checkpoint(home)


def checkpoint(home: Home) -> None:
    conn = home.db()
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def cut(db: str, fraction: float) -> int:
    """Cut the file at a byte inside a page (not on a boundary), as a crash or a full copy would."""
    at = int(os.path.getsize(db) * fraction) + 1234
    os.truncate(db, at)
    return at


def titles(db: str) -> dict[int, str]:
    conn = sqlite3.connect(db)
    try:
        return {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, title FROM observations")}
    finally:
        conn.close()


@contextlib.contextmanager
def no_worker(home: Home) -> Iterator[None]:
    """No worker can run: another process listens on its port (a worker would not even be spawned)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the stopped worker's port may be in TIME_WAIT
    s.bind(("127.0.0.1", home.port))
    s.listen(1)
    try:
        yield
    finally:
        s.close()


def mcp_search(home: Home, query: str) -> str:
    from tests.mcp.mcp_helpers import run_client, text_of

    async def go(c: Any) -> str:
        return text_of(await c.call_tool("search_memory", {"query": query}))

    return run_client(go, env={**home.env}, cwd=str(home.project))


# --------------------------------------------------------------------------- told the same way

def test_a_cut_file_with_no_worker_is_told_by_the_hook_as_by_the_cli_and_mcp(home: Home) -> None:
    memory(home)
    cut(home.paths.db, 0.6)
    with no_worker(home):
        t = time.monotonic()
        r = home.hook("SessionStart", session_start(str(home.project), "after-cut"))
        took = time.monotonic() - t
        assert r.returncode == 0 and r.stderr == b"", r.stderr[-2000:]
        out = hook_json(r)  # valid JSON, never silence
        assert out is not None and took < FAST_S, (r.stdout, took)
        hook_line = damage_line(out["hookSpecificOutput"]["additionalContext"])
        assert "no memory of project" not in out["hookSpecificOutput"]["additionalContext"]
        status = home.kenning("status")
        context = home.kenning("context", "--cwd", str(home.project))
        mcp = mcp_search(home, "parser tabs")
    assert damage_line(status.stdout + status.stderr) == hook_line
    assert damage_line(context.stdout + context.stderr) == hook_line
    assert damage_line(mcp) == hook_line
    assert "Traceback" not in status.stderr + context.stderr


def test_damage_the_worker_found_is_told_by_its_status_api_the_hook_and_mcp(home: Home) -> None:
    """Damage deep in the file: the intact pages still read, so only the worker's integrity check
    finds it; from then on every surface gives its line, also where what it read was intact."""
    memory(home)
    corrupt(home.paths.db)
    info = home.start_worker()
    wait_until(lambda: "corrupt" in json.dumps(http(info["port"], "GET", "/api/status",
                                                     token=read_token(home.paths)).json()), 20, "damage found")
    api = http(info["port"], "GET", "/api/status", token=read_token(home.paths)).json()
    line = damage_line(api["db_error"])
    assert api["db_ok"] is False
    health = http(info["port"], "GET", "/api/health").json()
    assert damage_line(health["db_error"]) == line
    meta = http(info["port"], "GET", "/api/viewer/meta", token=read_token(home.paths)).json()
    assert damage_line(meta["damage"]) == line  # the viewer's banner
    feed = http(info["port"], "GET", "/api/viewer/feed", token=read_token(home.paths))
    assert feed.status == 200 or (feed.status == 503 and damage_line(feed.json()["error"]) == line), feed
    ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "told")))
    assert damage_line(ctx) == line
    assert damage_line(mcp_search(home, "History note")) == line
    home.stop_worker()
    # With no worker, the hook reading intact pages itself still says it (the note beside the file).
    with no_worker(home):
        ctx = context_of(home.hook("SessionStart", session_start(str(home.project), "told-again")))
    assert damage_line(ctx) == line and "History note" in ctx  # what it read, and that it may be incomplete


# --------------------------------------------------------------------------- a file cut short

def test_repair_salvages_the_rows_before_the_cut_page_by_page(home: Home) -> None:
    home.env["KENNING_BACKUPS_KEEP"] = "0"  # no backup: what comes back comes from the cut file alone
    memory(home)
    whole = titles(home.paths.db)
    cut(home.paths.db, 0.6)
    r = home.kenning("repair", "--no-start", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "page by page" in r.stdout, r.stdout
    got = int(re.search(r"(\d+) observations", r.stdout).group(1))  # type: ignore[union-attr]
    assert len(whole) // 3 < got < len(whole), r.stdout  # what was before the cut, not what was after
    assert re.search(r"the file ends after page \d+ of the \d+ its header counts", r.stdout), r.stdout
    assert "No backup to restore the rest from" in r.stdout, r.stdout
    back = titles(home.paths.db)
    assert len(back) == got and all(whole[i] == t for i, t in back.items())  # every row as it was
    conn = sqlite3.connect(home.paths.db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # the search index was refilled from the rows
        hits = conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'History'").fetchone()
    finally:
        conn.close()
    assert hits[0] > 0


def test_repair_of_a_file_cut_inside_its_schema_says_exactly_what_it_cannot(home: Home) -> None:
    home.env["KENNING_BACKUPS_KEEP"] = "0"
    memory(home, notes=300)
    os.truncate(home.paths.db, 3000)  # inside the first page
    r = home.kenning("repair", "--no-start", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Nothing could be read back from the damaged file" in r.stdout, r.stdout
    assert "not even its first page" in r.stdout, r.stdout
    assert "No backup to restore the rest from" in r.stdout, r.stdout
    assert list(home.data.glob("kenning.db.damaged-*"))


# --------------------------------------------------------------------------- backups

def backups_of(home: Home) -> list[Path]:
    return sorted((home.data / "backups").glob("kenning-*.db"))


def test_the_worker_backs_up_privately_and_keeps_the_newest(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps({"backups_keep": 2}))
    home.start_worker()
    run_session(home, "b-1")
    home.flush()
    wait_until(lambda: backups_of(home), 30, "the worker's first backup")
    folder = home.data / "backups"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    first = backups_of(home)
    assert len(first) == 1 and stat.S_IMODE(first[0].stat().st_mode) == 0o600
    conn = sqlite3.connect(f"file:{first[0]}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file, no -wal beside it
    finally:
        conn.close()
    assert not backup.due(home.paths)  # taken today: the next is a day away
    for i in range(3):  # later days
        backup.take(home.paths, 2, now=time.time() + (i + 1) * 86400)
    kept = backups_of(home)
    assert len(kept) == 2 and first[0] not in kept, kept
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in kept)
    assert not [n for n in os.listdir(folder) if n.endswith((".partial", "-wal", "-shm", "-journal"))]
    later = time.time() + 9 * 86400
    backup.take(home.paths, 2, now=later)
    second = backup.take(home.paths, 2, now=later)  # within the same second: the newest still comes first
    assert second is not None and backup.listed(home.paths)[0].path == second.path


def test_repair_restores_from_the_newest_backup_what_the_cut_took(home: Home) -> None:
    memory(home)
    whole = titles(home.paths.db)
    made = backup.take(home.paths, 3)
    assert made is not None
    older = backup.take(home.paths, 3, now=time.time() - 86400)  # an older one: not the one used
    assert older is not None
    cut(home.paths.db, 0.5)
    r = home.kenning("repair", "--no-start", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Restored from the backup of" in r.stdout and os.path.basename(made.path) in r.stdout, r.stdout
    restored = int(re.search(r"rows the damaged file lost: .*?(\d+) observations", r.stdout).group(1))  # type: ignore[union-attr]
    got = int(re.search(r"(\d+) observations", r.stdout).group(1))  # type: ignore[union-attr]
    assert got > 0 and restored > 0, r.stdout  # some from the cut file, the rest from the backup
    assert titles(home.paths.db) == whole  # every row back, each as it was


def test_after_a_forget_no_backup_holds_the_forgotten_text(home: Home) -> None:
    word = "zebracanary"
    home.start_worker()
    proj = str(home.project)
    from tests.security import prompt, session_end, stop

    for payload in (prompt(proj, "f-1", f"Always deploy the {word} service with the blue pipeline"),
                    stop(proj, "f-1", "Noted."), session_end(proj, "f-1")):
        assert home.hook(str(payload["hook_event_name"]), payload).returncode == 0
    run_session(home, "f-2")
    home.flush()
    backup.take(home.paths, 3, now=time.time() - 2 * 86400)  # one from before, too
    wait_until(lambda: len(backups_of(home)) >= 2, 30, "the worker's backup")
    assert files_containing(tree_bytes(home.data / "backups"), word), "the test tests nothing"
    r = home.kenning("forget", "--query", word, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    left = backups_of(home)
    assert len(left) == 1, left  # forgetting resets the backups: one fresh copy, taken after the forget
    assert not files_containing(tree_bytes(home.data / "backups"), word)
    conn = sqlite3.connect(f"file:{left[0]}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] > 0  # the rest is still backed up
    finally:
        conn.close()
    assert CANARY  # (the other sessions' memory: the backup is not simply empty)
    shutil.rmtree(home.data / "backups")
