"""`kenning forget | export | import` and their HTTP twins, end to end.

Memory is made the real way (hook processes → spool → worker → rules observer), commands run
as real `kenning` processes, HTTP goes over loopback with the token from the data dir.
"""

from __future__ import annotations

import http.client
import json
import os
import pty
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kenning.paths import read_token
from kenning.project import canonical
from tests.conftest import Home
from tests.support.erasure import assert_erased, assert_present

SECRET_WORD = "zanzibarquokka7731"  # appears nowhere else: greppable in the raw database bytes


# ------------------------------------------------------------------------------- helpers

def hook(home: Home, event: str, sid: str, cwd: str, **fields: Any) -> None:
    payload = {"session_id": sid, "transcript_path": f"/tmp/t/{sid}.jsonl", "cwd": cwd, "hook_event_name": event,
               **fields}
    r = home.hook(event, payload)
    assert r.returncode == 0 and not r.stderr, r.stderr


def session(home: Home, sid: str, prompts: list[str], cwd: str | None = None) -> None:
    """One agent session through real hook processes: per prompt a tool call and a Stop."""
    cwd = cwd or str(home.project)
    for i, prompt in enumerate(prompts):
        hook(home, "UserPromptSubmit", sid, cwd, prompt=prompt, prompt_id=f"p{i}")
        hook(home, "PostToolUse", sid, cwd, tool_name="Bash", tool_use_id=f"toolu_{sid}_{i}",
             tool_input={"command": "ls"}, tool_response={"stdout": f"output for: {prompt}", "stderr": ""})
        hook(home, "Stop", sid, cwd, stop_hook_active=False, last_assistant_message="Done.")
    hook(home, "SessionEnd", sid, cwd, reason="other")


def other_project(home: Home, name: str = "client-b") -> str:
    d = home.root / name
    (d / ".git").mkdir(parents=True, exist_ok=True)
    return str(d)


def observations(home: Home) -> list[dict[str, Any]]:
    conn = home.db()
    try:
        return [dict(r) for r in conn.execute("SELECT id, project, type, title FROM observations ORDER BY id")]
    finally:
        conn.close()


def scalar(home: Home, sql: str) -> Any:
    conn = home.db()
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def call(home: Home, method: str, path: str, body: bytes | None = None, *, token: str | None = "auto",
         headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", home.port, timeout=60)
    h = dict(headers or {})
    if token == "auto":
        token = read_token(home.paths)
    if token:
        h["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=body, headers=h)
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def call_json(home: Home, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    raw = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    status, data = call(home, method, path, raw, **kw)
    return status, json.loads(data) if data else None


@pytest.fixture
def remembered(home: Home) -> Home:
    """A running worker and two projects' worth of memory (decisions from prompts, summaries)."""
    home.start_worker()
    session(home, "s-one", [f"Always deploy with {SECRET_WORD} from now on.", "We use uv, not pip."])
    session(home, "s-two", ["Never touch the public API in api.py."])
    session(home, "s-b", ["Always write the changelog by hand."], cwd=other_project(home))
    home.flush()
    titles = [o["title"] for o in observations(home)]
    assert f"Always deploy with {SECRET_WORD} from now on" in titles, titles
    return home


# -------------------------------------------------------------------------------- forget

def test_forget_dry_run_lists_ids_types_titles_and_changes_nothing(remembered: Home) -> None:
    home = remembered
    before = observations(home)
    target = next(o for o in before if SECRET_WORD in o["title"])
    r = home.kenning("forget", "--query", SECRET_WORD, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "Would forget:" in r.stdout
    assert f"#{target['id']}" in r.stdout and "decision" in r.stdout and SECRET_WORD in r.stdout
    assert "raw captured payloads" in r.stdout
    assert observations(home) == before


def test_forget_refuses_without_yes_when_stdin_is_not_a_terminal(remembered: Home) -> None:
    home = remembered
    before = observations(home)
    r = home.kenning("forget", "--query", SECRET_WORD, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    assert "--yes" in r.stderr and "Would forget:" in r.stdout
    assert observations(home) == before


@pytest.mark.parametrize(("answer", "forgotten"), [("n\n", False), ("y\n", True)])
def test_forget_asks_on_a_terminal(remembered: Home, answer: str, forgotten: bool) -> None:
    home = remembered
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "kenning", "forget", "--query", SECRET_WORD], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=home.env, text=True)
        os.write(master, answer.encode())
        out, err = p.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert "for good? [y/N]" in out
    assert p.returncode == (0 if forgotten else 1), err
    assert any(SECRET_WORD in o["title"] for o in observations(home)) is not forgotten
    if forgotten:
        assert_erased(home.data, SECRET_WORD)
    else:
        assert_present(home.data, SECRET_WORD)


def test_forgotten_text_is_gone_from_the_database_file_and_wal_while_the_worker_runs(remembered: Home) -> None:
    home = remembered
    assert_present(home.data, SECRET_WORD)  # rows, FTS terms, raw event payloads, WAL frames
    r = home.kenning("forget", "--query", SECRET_WORD, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Forgot " in r.stdout and "Database compacted" in r.stdout
    assert_erased(home.data, SECRET_WORD)  # every byte of the data dir: db, WAL, shm, spool, logs, backups
    # Everything else is intact and the worker carries on capturing.
    assert any(o["title"] == "We use uv, not pip" for o in observations(home))
    session(home, "s-three", ["Always run ruff before committing."])
    home.flush()
    assert any(o["title"] == "Always run ruff before committing" for o in observations(home))
    status, health = call_json(home, "GET", "/api/health")
    assert status == 200 and health["observer"]["last_error"] == "", health
    assert scalar(home, "PRAGMA integrity_check") == "ok"


def test_forget_by_id_reports_ids_that_do_not_exist(remembered: Home) -> None:
    home = remembered
    target = next(o for o in observations(home) if o["title"] == "We use uv, not pip")
    r = home.kenning("forget", "--id", str(target["id"]), "--id", "987654", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["selection"]["missing_ids"] == [987654]
    assert result["deleted"]["observations"] == 1 and result["reclaimed"] is True
    assert all(o["id"] != target["id"] for o in observations(home))
    assert_erased(home.data, "We use uv, not pip")
    r = home.kenning("forget", "--id", "987654", "--yes")
    assert r.returncode == 0 and "No observation #987654" in r.stdout and "Nothing matches" in r.stdout


def test_forget_a_whole_project_leaves_the_others(remembered: Home) -> None:
    home = remembered
    r = home.kenning("forget", "--project", "client-b", "--yes")
    assert r.returncode == 0, r.stderr
    assert "session s-b" in r.stdout and "Forgot " in r.stdout
    assert_erased(home.data, "Always write the changelog by hand")
    assert {o["project"] for o in observations(home)} == {home.key}  # rows carry project keys
    assert scalar(home, "SELECT COUNT(*) FROM sessions WHERE project LIKE '%client-b'") == 0
    assert scalar(home, "SELECT COUNT(*) FROM events e JOIN sessions s ON s.id = e.session_id") > 0


def test_forget_by_date_range(remembered: Home) -> None:
    home = remembered
    r = home.kenning("forget", "--since", "2000-01-01", "--until", "2000-12-31", "--yes")
    assert r.returncode == 0 and "Nothing matches" in r.stdout
    n = len(observations(home))
    r = home.kenning("forget", "--since", "2000-01-01", "--project", "project", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"]["observations"] == n - 1  # all of project, not client-b's
    assert [o["project"] for o in observations(home)] == [canonical(other_project(home))]
    assert_erased(home.data, SECRET_WORD, "Never touch the public API")
    assert_present(home.data, "Always write the changelog by hand")


@pytest.mark.parametrize(("args", "message"), [
    ([], "say what to forget"),
    (["--since", "yesterday"], "not an ISO date"),
    (["--until", "2024-02-30"], "not an ISO date"),
    (["--since", "2024-03-05", "--until", "2024-03-04"], "before"),
    (["--id", "0"], "is not an id"),
    (["--query", "* -- ("], "no words"),
])
def test_forget_rejects_bad_arguments_with_a_message(home: Home, args: list[str], message: str) -> None:
    r = home.kenning("forget", *args, "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr


def test_forget_id_must_be_a_number(home: Home) -> None:
    r = home.kenning("forget", "--id", "1; DROP TABLE observations")
    assert r.returncode == 2 and "is not a whole number" in r.stderr


@pytest.mark.parametrize("query", ['"a" OR 1=1 --', "NEAR(", "*", '"unbalanced', "') OR ('1'='1",
                                   "deploy*", "title:deploy", "x AND y OR NOT z"])
def test_hostile_queries_only_ever_match_their_words(remembered: Home, query: str) -> None:
    home = remembered
    before = observations(home)
    r = home.kenning("forget", "--query", query, "--dry-run", "--json")
    if r.returncode == 2:
        assert "no words" in r.stderr
        return
    assert r.returncode == 0, r.stderr
    sel = json.loads(r.stdout)["selection"]
    assert len(sel["observations"]) < len(before)
    assert observations(home) == before


def test_forget_without_a_database_says_so(home: Home) -> None:
    r = home.kenning("forget", "--query", "anything", "--yes")
    assert r.returncode == 0 and "no memory yet" in r.stdout


def test_a_database_that_is_not_one_gives_a_clear_error(home: Home) -> None:
    home.paths.ensure()
    Path(home.paths.db).write_bytes(b"this is not an SQLite database" * 100)
    f = home.root / "x.jsonl"
    f.write_text('{"kind": "header", "format": 1}\n')
    for args in (["forget", "--query", "x", "--yes"], ["export"], ["import", str(f)]):
        r = home.kenning(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "is not a Kenning database (not an SQLite file)" in r.stderr and "Traceback" not in r.stderr, \
            (args, r.stderr)


def test_forget_while_hooks_keep_capturing_loses_nothing(remembered: Home) -> None:
    home = remembered
    errors: list[str] = []

    def capture() -> None:
        try:
            session(home, "s-busy", [f"Always lint file {i} before review." for i in range(4)])
        except AssertionError as e:
            errors.append(str(e))

    t = threading.Thread(target=capture)
    t.start()
    r = home.kenning("forget", "--query", SECRET_WORD, "--yes")
    t.join(timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not errors, errors
    home.flush()
    assert_erased(home.data, SECRET_WORD)
    busy = scalar(home, "SELECT COUNT(*) FROM events e JOIN sessions s ON s.id = e.session_id "
                        "WHERE s.agent_session_id = 's-busy'")
    assert busy == 4 * 3 + 1  # every event of the concurrent session arrived, once
    assert sum(o["title"].startswith("Always lint file") for o in observations(home)) == 4


# ----------------------------------------------------------------------------- HTTP forget

def test_http_forget_needs_the_token_and_a_local_origin(remembered: Home) -> None:
    home = remembered
    body = json.dumps({"query": SECRET_WORD, "dry_run": False}).encode()
    assert call(home, "POST", "/api/forget", body, token=None)[0] == 401
    assert call(home, "POST", "/api/forget", body, token="0" * 48)[0] == 401
    assert call(home, "POST", "/api/forget", body, headers={"Origin": "https://evil.example"})[0] == 403
    assert call(home, "POST", "/api/forget", body, headers={"Host": "evil.example"})[0] == 403
    assert any(SECRET_WORD in o["title"] for o in observations(home))


@pytest.mark.parametrize(("body", "message"), [
    (b"not json", "JSON object"),
    (b"[1, 2]", "JSON object"),
    (b"", "JSON object"),
    (b'{"ids": "1"}', "ids must be a list"),
    (b'{"ids": [1, "2"]}', "ids must be a list of integers"),
    (b'{"ids": [true]}', "ids must be a list of integers"),
    (b'{"ids": [-1]}', "positive"),
    (b'{"ids": [99999999999999999999999]}', "positive"),
    (b'{"query": 5}', "query must be a string"),
    (b'{"query": "*"}', "no words"),
    (b'{"project": ["a"]}', "project must be a string"),
    (b'{"since": "last week"}', "since: not an ISO date"),
    (b'{"until": {"a": 1}}', "until must be"),
    (b'{"since": "2024-03-05", "until": "2024-03-04"}', "before"),
    (b'{"query": "x", "dry_run": "no"}', "dry_run must be true or false"),
    (b'{"query": "x", "drop": true}', "unknown field"),
    (b"{}", "say what to forget"),
    (b'{"query": "x", "since": 1e300}', "out of range"),
])
def test_http_forget_validates_every_field(home: Home, body: bytes, message: str) -> None:
    home.start_worker()
    status, data = call_json(home, "POST", "/api/forget", body)
    assert status == 400, data
    assert message in data["error"], data


def test_http_forget_is_a_dry_run_unless_told_otherwise(remembered: Home) -> None:
    home = remembered
    status, data = call_json(home, "POST", "/api/forget", {"query": SECRET_WORD})
    assert status == 200 and data["dry_run"] is True and data["deleted"] is None
    [item] = data["selection"]["observations"]
    assert item["type"] == "decision" and SECRET_WORD in item["title"]
    assert any(SECRET_WORD in o["title"] for o in observations(home))
    status, data = call_json(home, "POST", "/api/forget", {"ids": [item["id"], 424242], "dry_run": False})
    assert status == 200, data
    assert data["deleted"]["observations"] == 1 and data["selection"]["missing_ids"] == [424242]
    assert data["reclaimed"] is True
    assert not any(SECRET_WORD in o["title"] for o in observations(home))
    assert_erased(home.data, SECRET_WORD)


def test_http_forget_hostile_query_is_harmless(remembered: Home) -> None:
    home = remembered
    before = observations(home)
    for q in ['"a" OR 1=1 --', "NEAR(", '"', "x\x00y", "deploy*"]:
        status, data = call_json(home, "POST", "/api/forget", {"query": q})
        assert status in (200, 400), data
        if status == 200:
            assert len(data["selection"]["observations"]) < len(before)
    assert observations(home) == before


def test_http_forget_rejects_a_huge_body(home: Home) -> None:
    home.start_worker()
    status, data = call_json(home, "POST", "/api/forget", b"{" + b" " * (2 * 1024 * 1024) + b"}")
    assert status == 413, data


# ---------------------------------------------------------------------------- export/import

def import_sensitive(home: Home, project_dir: str, title: str) -> None:
    """A `sensitive` observation in the project of ``project_dir`` (written through `kenning import`)."""
    name = os.path.basename(project_dir)
    lines = [{"kind": "header", "format": 1},
             {"kind": "session", "agent_session_id": f"imp-{name}", "project": name, "project_root": project_dir,
              "cwd": project_dir, "started_at": 1_700_000_000.0, "status": "completed"},
             {"kind": "observation", "session": {"agent_session_id": f"imp-{name}"}, "type": "sensitive",
              "title": title, "created_at": 1_700_000_001.0}]
    f = home.root / f"sensitive-{name}.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = home.kenning("import", str(f))
    assert r.returncode == 0, r.stderr


def test_export_to_a_private_file_leaves_sensitive_out_unless_asked(remembered: Home) -> None:
    home = remembered
    import_sensitive(home, str(home.project), "Prod DB lives at 10.1.2.3")
    out = home.root / "export.jsonl"
    r = home.kenning("export", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "Exported 4 sessions" in r.stderr
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert recs[0]["kind"] == "header"
    assert "10.1.2.3" not in out.read_text()
    assert sum(r["kind"] == "observation" for r in recs) == len(observations(home)) - 1
    r = home.kenning("export", "--include-sensitive")
    assert r.returncode == 0 and "10.1.2.3" in r.stdout  # stdout without -o
    r = home.kenning("export", "--project", "client-b")
    sessions = [json.loads(x) for x in r.stdout.splitlines() if '"kind": "session"' in x]
    assert [(s["project"], s["project_name"]) for s in sessions] == [(canonical(other_project(home)), "client-b")]


def test_export_rejects_bad_dates(home: Home) -> None:
    r = home.kenning("export", "--since", "not-a-date")
    assert r.returncode == 2 and "not an ISO date" in r.stderr


def test_import_is_idempotent_and_reports_counts(remembered: Home, tmp_path: Path) -> None:
    src = remembered
    out = tmp_path / "mem.jsonl"
    assert src.kenning("export", "-o", str(out)).returncode == 0
    src.stop_worker()
    fresh = Home(tmp_path / "fresh")
    first = fresh.kenning("import", str(out))
    assert first.returncode == 0, first.stderr
    n = len(observations(src))
    assert f"Imported 3 sessions, 4 prompts, {n} observations, 3 summaries; 0 already present." in first.stdout
    second = fresh.kenning("import", str(out))
    assert second.returncode == 0
    assert "Imported 0 sessions, 0 prompts, 0 observations, 0 summaries;" in second.stdout
    assert [(o["project"], o["type"], o["title"]) for o in observations(fresh)] == \
        [(o["project"], o["type"], o["title"]) for o in observations(src)]
    # Imported memory is served like captured memory.
    ctx = fresh.kenning("context", "--cwd", str(src.project))
    assert "We use uv, not pip" in ctx.stdout


def test_import_with_a_bad_line_in_the_middle_imports_nothing(home: Home) -> None:
    lines = [json.dumps({"kind": "header", "format": 1}),
             json.dumps({"kind": "session", "agent_session_id": "x1", "project": "p", "started_at": 1.0}),
             json.dumps({"kind": "observation", "session": {"agent_session_id": "x1"}, "type": "decision",
                         "title": "kept?", "created_at": 2.0}),
             '{"kind": "observation", "session": {"agent_session_id": "x1"}, "type": "decision", "title": ',
             json.dumps({"kind": "observation", "session": {"agent_session_id": "x1"}, "type": "decision",
                         "title": "after", "created_at": 3.0})]
    f = home.root / "bad.jsonl"
    f.write_text("\n".join(lines) + "\n")
    r = home.kenning("import", str(f))
    assert r.returncode == 1
    assert "nothing imported: line 4: not JSON" in r.stderr
    assert not os.path.exists(home.paths.db) or scalar(home, "SELECT COUNT(*) FROM sessions") == 0


def test_import_of_a_missing_file_is_a_clear_error(home: Home) -> None:
    r = home.kenning("import", str(home.root / "nope.jsonl"))
    assert r.returncode == 1 and "cannot read" in r.stderr


def test_http_export_streams_jsonl_and_validates_parameters(remembered: Home) -> None:
    home = remembered
    import_sensitive(home, str(home.project), "VPN password is in 1Password")
    status, raw = call(home, "GET", "/api/export")
    assert status == 200
    recs = [json.loads(line) for line in raw.decode().splitlines()]
    assert recs[0]["kind"] == "header" and b"1Password" not in raw
    status, raw = call(home, "GET", "/api/export?include_sensitive=1&project=project")
    assert status == 200 and b"1Password" in raw and b"client-b" not in raw
    status, raw = call(home, "GET", "/api/export?since=2000-01-01&until=2000-01-02")
    assert status == 200 and [json.loads(x)["kind"] for x in raw.decode().splitlines()] == ["header"]
    for bad, message in (("?since=soon", "not an ISO date"), ("?include_sensitive=maybe", "include_sensitive"),
                         ("?format=csv", "unknown parameter"), ("?project=a&project=b", "once"),
                         ("?since=2024-02-02&until=2024-02-01", "before")):
        status, raw = call(home, "GET", "/api/export" + bad)
        assert status == 400 and message in json.loads(raw)["error"], (bad, raw)
    assert call(home, "GET", "/api/export", token=None)[0] == 401


def test_http_import_is_atomic_idempotent_and_guarded(remembered: Home) -> None:
    home = remembered
    _status, raw = call(home, "GET", "/api/export")
    body = raw.replace(b'"s-one"', b'"s-copy"')  # the same memory under another session: new rows
    status, data = call_json(home, "POST", "/api/import", body)
    assert status == 200 and data["added"]["sessions"] == 1 and data["added"]["observations"] == 2, data
    status, data = call_json(home, "POST", "/api/import", body)
    assert status == 200 and data["added"]["sessions"] == data["added"]["observations"] == 0, data
    lines = raw.replace(b'"s-one"', b'"s-bad"').split(b"\n")
    lines.insert(3, b'{"kind": "observation", "session": {"agent_session_id": "s-bad"}, "title": 7}')
    n = scalar(home, "SELECT COUNT(*) FROM sessions")
    status, data = call_json(home, "POST", "/api/import", b"\n".join(lines))
    assert status == 400 and data["error"].startswith("nothing imported: line 4: "), data
    assert scalar(home, "SELECT COUNT(*) FROM sessions") == n
    assert call(home, "POST", "/api/import", body, token=None)[0] == 401
    assert call(home, "POST", "/api/import", body, headers={"Origin": "http://evil.example"})[0] == 403
    status, data = call_json(home, "POST", "/api/import", b"x", headers={"Content-Length": str(65 * 1024 * 1024)})
    assert status == 413, data


# ------------------------------------------------------------------------- the sensitive type

def test_a_sensitive_observation_is_never_injected_into_another_project(remembered: Home) -> None:
    home = remembered
    b_dir = other_project(home)
    import_sensitive(home, str(home.project), "Client A staging password rotates Mondays")
    a = home.kenning("context", "--cwd", str(home.project))
    b = home.kenning("context", "--cwd", b_dir)
    assert "Client A staging password" in a.stdout  # its own project is told
    assert "Always write the changelog by hand" in b.stdout  # B gets its own memory …
    assert "Client A staging password" not in b.stdout  # … and never A's sensitive one
    # The SessionStart hook (worker answering, then the hook's own SQLite fallback) agrees.
    for stop in (False, True):
        if stop:
            home.stop_worker()
        r = home.hook("SessionStart", {"session_id": f"new-b-{stop}", "cwd": b_dir, "hook_event_name": "SessionStart",
                                       "source": "startup", "transcript_path": "/tmp/t/x.jsonl"})
        text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "changelog" in text and "Client A staging password" not in text


def test_sqlite_connection_of_the_cli_waits_instead_of_failing(remembered: Home) -> None:
    """Another process holding the write lock for a moment: forget waits for it (busy_timeout)."""
    home = remembered
    blocker = sqlite3.connect(home.paths.db, timeout=10)
    blocker.execute("BEGIN IMMEDIATE")
    p = subprocess.Popen([sys.executable, "-m", "kenning", "forget", "--query", SECRET_WORD, "--yes"], env=home.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    threading.Event().wait(1.5)
    blocker.rollback()
    blocker.close()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, out + err
    assert not any(SECRET_WORD in o["title"] for o in observations(home))


# ------------------------------------------------------------------------ supersede, restore

def test_supersede_and_restore_by_hand_from_the_cli_and_over_http(remembered: Home) -> None:
    home = remembered
    obs = {o["title"]: o for o in observations(home)}
    uv, api = obs["We use uv, not pip"]["id"], obs["Never touch the public API in api.py"]["id"]
    other = obs["Always write the changelog by hand"]["id"]  # project client-b
    r = home.kenning("supersede", str(uv), str(other), "--by", str(api))
    assert r.returncode == 0, r.stderr
    assert f"Superseded by #{api}: #{uv}" in r.stdout
    assert f"#{other} not changed: belongs to another project" in r.stderr
    assert scalar(home, f"SELECT status || ':' || superseded_by FROM observations WHERE id = {uv}") == \
        f"superseded:{api}"
    assert "We use uv, not pip" not in home.kenning("context", "--cwd", str(home.project)).stdout
    found = home.kenning("search", "--all", "uv", "pip").stdout
    assert f"#{uv}" in found and "[superseded]" in found  # still searchable, flagged
    r = home.kenning("restore", str(uv))
    assert r.returncode == 0 and f"Restored: #{uv}." in r.stdout
    assert "We use uv, not pip" in home.kenning("context", "--cwd", str(home.project)).stdout
    r = home.kenning("supersede", str(uv), "--by", "999999")
    assert r.returncode == 2 and "no observation #999999" in r.stderr

    status, body = call_json(home, "POST", "/api/observations/supersede", {"ids": [uv], "by": api})
    assert status == 200 and body["superseded"] == [uv]
    status, body = call_json(home, "POST", "/api/observations/restore", {"ids": [uv, 424242]})
    assert status == 200 and body == {"restored": [uv], "unchanged": [424242]}
    for bad in ({"ids": [uv]}, {"ids": [], "by": api}, {"ids": ["x"], "by": api}, {"ids": [uv], "by": api, "x": 1},
                [uv]):
        status, body = call_json(home, "POST", "/api/observations/supersede", bad)
        assert status == 400 and body["error"], bad
    status, _ = call(home, "POST", "/api/observations/supersede", b"{}", token=None)
    assert status == 401
