"""``kenning import-history`` reads folders that are not ours: what is no transcript costs only itself.

A FIFO without a writer, a symlink to ``/dev/zero``, a symlink loop (a file and a folder), a file we
may not read, a line nested 100,000 deep, a line of 17 MiB and a payload nested 500 deep sit next to
good sessions. Through the real CLI in its own process group (a hang fails the test, it does not hang
the suite): the good sessions are imported, every other path and line is named in the report with
why, the run ends within seconds and its memory stays bounded.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from kenning.history.source import DEEP_MARK
from tests.conftest import Home
from tests.support.imports import agent_homes
from tests.support.transcripts import ClaudeSession, CodexSession, CopilotSession

# Runs the CLI and prints the peak RSS of its children (the CLI), so the test's own children do not count.
RSS = ("import resource, subprocess, sys\n"
       "r = subprocess.run(sys.argv[1:])\n"
       "print('maxrss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
       "sys.exit(r.returncode)\n")
DEPTH = 100_000


def _run(home: Home, *args: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """(the run, seconds, peak RSS in MiB); killed with its whole group when it overstays ``timeout``."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", RSS, sys.executable, "-m", "kenning", *args], env=home.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"import-history still running after {timeout} s: it hangs\n{out}\n{err}") from None
    took = time.monotonic() - started
    m = re.search(r"maxrss_kb (\d+)", err)
    assert m, err[-2000:]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took, int(m.group(1)) // 1024


def _deep_line(kind: str) -> str:
    """A line that passes every prefilter and is nested ``DEPTH`` deep."""
    if kind == "claude":
        return ('{"type":"user","timestamp":"2026-11-20T10:00:30.000Z","uuid":"deep-1","message":{"role":"user",'
                '"content":' + "[" * DEPTH + "]" * DEPTH + "}}\n")
    if kind == "copilot":
        return ('{"type":"user.message","timestamp":"2026-11-20T12:00:30.000Z","id":"deep-2","data":{"content":'
                + "[" * DEPTH + "]" * DEPTH + "}}\n")
    return ('{"timestamp":"2026-11-20T11:00:30.000Z","type":"response_item","payload":{"type":"message",'
            '"role":"user","content":' + "[" * DEPTH + "]" * DEPTH + "}}\n")


def _insert(path: Path, after: int, lines: list[str]) -> None:
    """``lines`` after the ``after``-th line of ``path``, its mtime kept (a finished session)."""
    st = os.stat(path)
    have = path.read_text().splitlines(keepends=True)
    path.write_text("".join(have[:after] + lines + have[after:]))
    os.utime(path, (st.st_atime, st.st_mtime))


def _nested(depth: int) -> object:
    value: object = {"leaf": "the bottom"}
    for _ in range(depth):
        value = {"deeper": value}
    return value


def test_what_is_no_transcript_is_skipped_and_said_and_the_rest_imported(home: Home, tmp_path: Path) -> None:
    h = agent_homes(home, tmp_path)
    claude, codex = h.claude, h.codex  # type: ignore[attr-defined]
    cwd = str(h.project)

    good = ClaudeSession(cwd, "2026-11-20T09:00:00Z").prompt("rename the parser module to reader")
    good.bash("git mv parser.py reader.py").say("Renamed parser.py to reader.py.")
    good_path = good.write(claude)
    folder = good_path.parent
    # A subagent whose meta file is a FIFO, and one that is /dev/zero by a symlink.
    subs = folder / good.sid / "subagents"
    subs.mkdir(parents=True)
    (subs / "agent-a1.jsonl").write_text("")
    os.mkfifo(subs / "agent-a1.meta.json")
    os.symlink("/dev/zero", subs / "agent-b2.jsonl")

    # Good lines around one 100,000 deep, one of 17 MiB and a tool result nested 500 deep.
    mixed = ClaudeSession(cwd, "2026-11-20T10:00:00Z").prompt("why does the cache miss after a restart")
    mixed.tool("mcp__probe__inspect", {"what": "cache"}, "inspected", _nested(500))
    mixed.say("The cache key held the process id, so every restart missed.")
    mixed_path = mixed.write(claude)
    _insert(mixed_path, 1, [_deep_line("claude"),
                            '{"type":"assistant","message":"' + "x" * (17 * 1024 * 1024) + '"}\n'])

    os.mkfifo(folder / "fifo-no-writer.jsonl")
    os.symlink("/dev/zero", folder / "zero.jsonl")
    os.symlink(folder / "loop.jsonl", folder / "loop.jsonl")
    unreadable = folder / "unreadable.jsonl"
    unreadable.write_text("{}\n")
    unreadable.chmod(0)

    rollout = CodexSession(cwd, "2026-11-20T11:00:00Z").prompt("add a retry to the upload step")
    rollout.run("pytest tests/test_upload.py", "3 passed").answer("The upload retries twice now.")
    rollout_path = rollout.write(codex)
    _insert(rollout_path, 2, [_deep_line("codex")])
    os.mkfifo(rollout_path.parent / "rollout-fifo.jsonl")
    os.symlink("..", rollout_path.parent / "loop")  # a folder loop: sessions/2026/11/20/loop -> 2026/11

    log = CopilotSession(cwd, "2026-11-20T12:00:00Z").prompt("bump the lint action to v5")
    log.bash("make lint", "ok").say("The lint action runs v5 now.")
    log_path = log.write(h.copilot)  # type: ignore[attr-defined]
    _insert(log_path, 1, [_deep_line("copilot")])
    (h.copilot / "session-state" / "stuck").mkdir()  # type: ignore[attr-defined]
    os.mkfifo(h.copilot / "session-state" / "stuck" / "events.jsonl")  # type: ignore[attr-defined]

    r, took, rss = _run(h, "import-history", "--no-observe")
    out = r.stdout
    assert r.returncode == 0, out + r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    assert took < 45, f"took {took:.1f} s"
    assert rss < 400, f"peak RSS {rss} MiB"

    # Every path that is no transcript is named, with why.
    assert re.search(r"fifo-no-writer\.jsonl: a FIFO", out), out
    assert re.search(r"zero\.jsonl: a character device \(by a symlink\)", out), out
    assert re.search(r"agent-b2\.jsonl: a character device \(by a symlink\)", out), out
    assert re.search(r"loop\.jsonl: a symlink loop", out), out
    assert re.search(r"rollout-fifo\.jsonl: a FIFO", out), out
    assert re.search(r"stuck/events\.jsonl: a FIFO", out), out
    if os.geteuid() != 0:  # root reads a file of mode 000
        assert re.search(r"unreadable\.jsonl: permission denied", out), out
    # The lines: the two deep ones and the long one, counted by why.
    m = re.search(r"Unreadable lines skipped: (\d+) \((.*)\)", out)
    assert m, out
    assert "3 nested too deeply to parse" in m.group(2) and "1 longer than 16 MiB" in m.group(2), out
    assert "Cut: 1 line(s) nested deeper" in out, out

    # The good sessions, the one around the bad lines included, are in memory (each once).
    conn = sqlite3.connect(h.paths.db)
    try:
        prompts = sorted(t for (t,) in conn.execute("SELECT prompt_text FROM user_prompts"))
        payloads = [json.loads(p) for (p,) in conn.execute(
            "SELECT payload FROM events WHERE tool_name = 'mcp__probe__inspect'")]
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    finally:
        conn.close()
    assert prompts == ["add a retry to the upload step", "bump the lint action to v5",
                       "rename the parser module to reader", "why does the cache miss after a restart"], prompts
    assert sessions == 4
    # The 500-deep result is kept to the depth we keep, the rest marked as left out.
    assert len(payloads) == 1 and DEEP_MARK in json.dumps(payloads[0]), payloads

    # A second run reads nothing new, and still returns at once.
    r2, took2, _ = _run(h, "import-history", "--no-observe")
    assert r2.returncode == 0 and took2 < 45, r2.stdout + r2.stderr[-2000:]
    assert "Imported 0 session(s)" in r2.stdout and "fifo-no-writer.jsonl: a FIFO" in r2.stdout, r2.stdout
