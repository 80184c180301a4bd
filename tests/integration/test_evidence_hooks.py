"""Memory that checks itself against the code, through real SessionStart hook processes.

A memory about code names what it rests on (files, identifiers, make targets); the next session
start checks them in the working tree the agent is in, and a memory whose evidence is gone is
marked (kenning/context/evidence_marks.py). Each test runs both ways the hook builds context:
from the database file itself (no worker) and through a real worker.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kenning.records import ObservationDraft
from kenning.store import repo
from kenning.store.db import open_db
from tests.conftest import Home, load_fixture
from tests.integration.test_context_hooks import context_of, prompt_context_on

GONE = "possibly stale"


def remember(home: Home, title: str, *, kind: str = "decision", files: list[str] | None = None,
             modified: list[str] | None = None, narrative: str = "", session: str = "past",
             age: float = 600) -> int:
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        with repo.transaction(conn):
            sid = repo.upsert_session(conn, platform="claude-code", agent_session_id=session, project=home.key,
                                      project_root=os.path.realpath(home.project), cwd=str(home.project),
                                      at=time.time() - age - 60)
            oid = repo.insert_observation(conn, sid, home.key, ObservationDraft(
                type="decision", title=title, narrative=narrative or title,
                created_at=time.time() - age, files_read=files or [], files_modified=modified or [],
                kind=kind), "rules")
        assert oid is not None
        return oid
    finally:
        conn.close()


def start(home: Home, session: str = "new-session") -> str:
    p = load_fixture("print-mode/events/SessionStart.json", cwd=str(home.project))
    p["session_id"] = session
    return context_of(home.hook("SessionStart", p), "SessionStart")


def line_of(text: str, oid: int) -> str:
    return next((ln for ln in text.splitlines() if ln.startswith(f"#{oid} ")), "")


def write(home: Home, rel: str, text: str) -> Path:
    path = home.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture(params=["file", "worker"])
def via(request: pytest.FixtureRequest, home: Home) -> str:
    if request.param == "worker":
        home.start_worker()
    return str(request.param)


def test_a_renamed_file_marks_its_memory_and_restoring_it_clears_the_mark(home: Home, via: str) -> None:
    src = write(home, "src/invoice_api/totals.py", "def line_vat(line):\n    return round(line.vat, 2)\n")
    oid = remember(home, "`line_vat()` in src/invoice_api/totals.py rounds each line's VAT with Decimal",
                   modified=["src/invoice_api/totals.py"])
    text = start(home)
    assert line_of(text, oid) and GONE not in line_of(text, oid)
    src.rename(src.with_name("amounts.py"))  # renamed: the memory's path is gone
    line = line_of(start(home, "s2"), oid)
    assert GONE in line and "`src/invoice_api/totals.py` no longer exists" in line
    src.with_name("amounts.py").rename(src)  # restored: plain again
    line = line_of(start(home, "s3"), oid)
    assert line and GONE not in line


def test_a_deleted_function_marks_the_memory_that_names_it(home: Home, via: str) -> None:
    write(home, "app/billing.py", "def charge_card(amount):\n    return amount\n\ndef refund(x):\n    return x\n")
    oid = remember(home, "Fixed the rounding in `charge_card` in app/billing.py", kind="fix",
                   modified=["app/billing.py"])
    other = remember(home, "`refund()` in app/billing.py returns the amount as is", session="other")
    assert GONE not in line_of(start(home), oid)
    write(home, "app/billing.py", "def refund(x):\n    return x\n")  # charge_card deleted
    text = start(home, "s2")
    assert "`charge_card` not found in `app/billing.py`" in line_of(text, oid)
    assert line_of(text, other) and GONE not in line_of(text, other)  # its function is still there


def test_a_removed_make_target_puts_a_note_on_the_rule_that_names_it(home: Home, via: str) -> None:
    write(home, "Makefile", ".PHONY: proto lint\nproto:\n\tprotoc --python_out=app proto/pay.proto\n"
                            "lint:\n\truff check .\n")
    rule = remember(home, "Never edit app/payment_pb2.py by hand: run `make proto` to regenerate it", kind="rule")
    lint = remember(home, "Always run `make lint` before committing", kind="rule", session="r2")
    write(home, "app/payment_pb2.py", "# generated\n")
    text = start(home)
    assert "Standing rules" in text and line_of(text, rule) and GONE not in line_of(text, rule)
    write(home, "Makefile", ".PHONY: lint\nlint:\n\truff check .\n")  # the proto target is gone
    text = start(home, "s2")
    line = line_of(text, rule)
    assert "`make proto`: no such target in Makefile" in line  # kept (the user's rule), with the note
    assert line_of(text, lint) and GONE not in line_of(text, lint)


def test_identifiers_in_a_chinese_memory_are_checked_the_same_way(home: Home, via: str) -> None:
    write(home, "src/totals.py", "def line_vat(line):\n    return line\n\nKENNING_ROUNDING = 'line'\n")
    oid = remember(home, "src/totals.py 里的 line_vat() 函数按行四舍五入增值税，由 KENNING_ROUNDING 控制")
    assert GONE not in line_of(start(home), oid)
    write(home, "src/totals.py", "def invoice_vat(lines):\n    return lines\n\nKENNING_ROUNDING = 'line'\n")
    line = line_of(start(home, "s2"), oid)
    assert "`line_vat` not found in `src/totals.py`" in line and "KENNING_ROUNDING" not in line.split(GONE)[1]


def test_a_key_memory_whose_file_is_gone_gives_way_to_one_that_verifies(home: Home) -> None:
    write(home, "src/kept.py", "def kept():\n    pass\n")
    gone = remember(home, "Gotcha: src/old_module.py caches the tax table per process " + "x" * 150,
                    kind="gotcha", modified=["src/old_module.py"], age=60)
    topics = ["invoices are numbered per year", "refunds post a negative line", "currencies stay ISO codes"]
    kept = [remember(home, f"Decision: in src/kept.py {t}, see `kept` " + "y" * 140, modified=["src/kept.py"],
                     session=f"k{i}", age=6000 + i) for i, t in enumerate(topics)]
    # A key layer with room for about three lines: the one whose file is gone goes last, and out.
    home.env["KENNING_CONTEXT_KEY_CHARS"] = "700"  # the hook's, and the worker's it starts
    text = start(home)
    assert all(line_of(text, k) for k in kept), text
    assert not line_of(text, gone)
    write(home, "src/old_module.py", "TABLE = {}\n")  # back: it is the newest key memory again
    text = start(home, "n2")
    assert line_of(text, gone) and GONE not in line_of(text, gone)


def test_the_check_can_be_switched_off(home: Home) -> None:
    home.env["KENNING_EVIDENCE_CHECK"] = "false"  # the hook's, and the worker's it starts
    oid = remember(home, "src/missing.py holds the VAT table", modified=["src/missing.py"])
    for session in ("a", "b"):  # from the file, then (most likely) from the worker the first one started
        line = line_of(start(home, session), oid)
        assert line and GONE not in line


def test_sessions_that_find_evidence_gone_propose_the_memory_for_review(home: Home) -> None:
    home.start_worker()
    oid = remember(home, "src/vanished.py parses the bank export", modified=["src/vanished.py"])
    fine = remember(home, "Nothing cited here at all", session="x")
    for i in range(3):
        start(home, f"s{i}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # recorded off the answer's path
        r = home.kenning("stale", "--json")
        assert r.returncode == 0, r.stderr
        rows = json.loads(r.stdout)
        if rows and rows[0]["sessions"] >= 3:
            break
        time.sleep(0.2)
    assert [x["id"] for x in rows] == [oid] and fine not in [x["id"] for x in rows]
    assert "`src/vanished.py` no longer exists" in rows[0]["notes"]
    shown = home.kenning("show", str(oid))
    assert "Evidence gone since" in shown.stdout
    write(home, "src/vanished.py", "def parse():\n    pass\n")
    start(home, "s9")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and json.loads(home.kenning("stale", "--json").stdout):
        time.sleep(0.2)
    assert json.loads(home.kenning("stale", "--json").stdout) == []


def test_evidence_that_cannot_be_read_never_breaks_the_hook(home: Home) -> None:
    root = home.project
    os.mkfifo(root / "pipe.py")
    (root / "loop.py").symlink_to(root / "loop.py")
    locked = write(home, "locked.py", "def secret_fn():\n    pass\n")
    locked.chmod(0)
    write(home, "huge.py", "x = 1\n" * 200_000 + "def late_fn():\n    pass\n")
    (root / "blob.py").write_bytes(b"\x00\x01binary\x00" * 1000)
    ids = [remember(home, f"`{fn}` lives in {rel}", modified=[rel], session=f"s{i}")
           for i, (fn, rel) in enumerate([("pipe_fn", "pipe.py"), ("loop_fn", "loop.py"),
                                          ("secret_fn", "locked.py"), ("late_fn", "huge.py"),
                                          ("blob_fn", "blob.py")])]
    started = time.monotonic()
    text = start(home)
    assert time.monotonic() - started < 10
    for oid in ids:  # none can be judged: listed, and not marked
        assert line_of(text, oid) and GONE not in line_of(text, oid), line_of(text, oid)


# ------------------------------------------------------------------ file history, prompt recall, MCP

def test_a_files_history_notes_a_function_deleted_from_it(home: Home) -> None:
    body = "def invoice_vat(lines):\n    return lines\n" + "# padding\n" * 300
    path = write(home, "src/totals.py", "def line_vat(line):\n    return line\n" + body)
    oid = remember(home, "`line_vat()` in src/totals.py rounds each line", modified=["src/totals.py"], age=60)
    old = time.time() - 3600  # older than the memory: its notes are current
    os.utime(path, (old, old))
    p = load_fixture("print-mode/events/PreToolUse.Read.json", cwd=str(home.project))
    p["tool_input"] = {"file_path": str(path)}
    text = context_of(home.hook("PreToolUse", {**p, "session_id": "r1"}), "PreToolUse")
    assert line_of(text, oid) and GONE not in text
    path.write_text(body)  # line_vat deleted
    os.utime(path, (old, old))
    text = context_of(home.hook("PreToolUse", {**p, "session_id": "r2"}), "PreToolUse")
    assert "`line_vat` not found in `src/totals.py`" in line_of(text, oid)


def test_prompt_recall_notes_a_memory_whose_file_is_gone(home: Home) -> None:
    prompt_context_on(home)
    home.start_worker()
    oid = remember(home, "Invoice totals round the VAT per line in src/invoice_api/totals.py", age=3600,
                   modified=["src/invoice_api/totals.py"])
    for i in range(50):  # newer notes fill the session-start index: the old one is news next to the prompt
        remember(home, f"Changed build step {i} of the deploy pipeline", session="filler", age=1800 - i)
    p = load_fixture("print-mode/events/UserPromptSubmit.json", cwd=str(home.project))
    p.update(session_id="asker", prompt="How do the invoice totals round the VAT per line?")
    text = context_of(home.hook("UserPromptSubmit", p), "UserPromptSubmit")
    assert "`src/invoice_api/totals.py` no longer exists" in line_of(text, oid)


def test_mcp_answers_carry_the_note(home: Home) -> None:
    from kenning.mcp.tools import MemoryTools
    from kenning.paths import Paths
    from kenning.settings import Settings

    write(home, "src/kept.py", "def kept():\n    pass\n")
    gone = remember(home, "Refund rounding lives in src/refunds.py", modified=["src/refunds.py"])
    fine = remember(home, "Refund currency codes live in src/kept.py", modified=["src/kept.py"], session="x")
    tools = MemoryTools(Paths(str(home.data)), Settings())
    found = tools.search("refund", cwd=str(home.project))
    assert f"#{gone} " in found and "`src/refunds.py` no longer exists" in found
    assert GONE not in next(ln for ln in found.splitlines() if f"#{fine} " in ln)
    assert "`src/refunds.py` no longer exists" in tools.get([gone], cwd=str(home.project))


def test_evidence_gone_longer_than_the_setting_leaves_the_memory_out_but_not_a_rule(home: Home) -> None:
    from kenning.memory_service import MemoryService
    from kenning.store.db import connect

    home.env["KENNING_EVIDENCE_KEEP_DAYS"] = "7"  # the hook's, and the worker's it starts
    old = remember(home, "src/legacy.py holds the old tax table", modified=["src/legacy.py"])
    recent = remember(home, "src/interim.py holds the interim tax table", modified=["src/interim.py"], session="i")
    rule = remember(home, "Always run `make legacy` before a release", kind="rule", session="r")
    write(home, "Makefile", "lint:\n\ttrue\n")
    conn = connect(str(home.paths.db))
    try:  # found gone ten days ago, and three days ago (as the worker records it)
        door = MemoryService(conn, "http")
        door.evidence_checked(home.key, [old, rule], {old: ["gone"], rule: ["gone"]}, time.time() - 10 * 86400)
        door.evidence_checked(home.key, [recent], {recent: ["gone"]}, time.time() - 3 * 86400)
    finally:
        conn.close()
    for session in ("a", "b"):  # from the file, then (most likely) from the worker the first one started
        text = start(home, session)
        assert not line_of(text, old)  # gone for longer than 7 days: left out (still in memory)
        assert GONE in line_of(text, recent)
        assert "`make legacy`: no such target in Makefile" in line_of(text, rule)  # a rule stays, noted
    assert "legacy.py" in home.kenning("show", str(old)).stdout


def test_forgetting_a_memory_forgets_its_evidence_record(home: Home) -> None:
    from kenning.memory_service import MemoryService
    from kenning.store.db import connect

    oid = remember(home, "src/gone_for_good.py parses the export", modified=["src/gone_for_good.py"])
    conn = connect(str(home.paths.db))
    try:
        MemoryService(conn, "http").evidence_checked(home.key, [oid], {oid: ["`src/gone_for_good.py` gone"]})
        assert conn.execute("SELECT COUNT(*) FROM evidence_gone").fetchone()[0] == 1
    finally:
        conn.close()
    r = home.kenning("forget", "--id", str(oid), "--yes")
    assert r.returncode == 0, r.stderr
    conn = connect(str(home.paths.db))
    try:
        assert conn.execute("SELECT COUNT(*) FROM evidence_gone").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_teammates_memory_is_checked_against_my_working_tree(home: Home) -> None:
    remote = "git@example.com:acme/invoices.git"
    write(home, "src/kept.py", "def kept():\n    pass\n")
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        with repo.transaction(conn):
            mine = repo.upsert_session(conn, platform="claude-code", agent_session_id="mine", project=home.key,
                                       project_root=os.path.realpath(home.project), cwd=str(home.project),
                                       at=time.time() - 900, remote=remote)
            repo.insert_observation(conn, mine, home.key, ObservationDraft(
                type="change", title="Local note", created_at=time.time() - 800), "rules")
            team = repo.upsert_session(conn, platform="claude-code", agent_session_id="hub", project="team:" + remote,
                                       project_root="", cwd="", at=time.time() - 900)
            ids = [repo.insert_observation(conn, team, "team:" + remote, ObservationDraft(
                type="decision", title=title, created_at=time.time() - 700, files_modified=[path]), "rules")
                for title, path in (("Tax tables live in src/tax_tables.py", "src/tax_tables.py"),
                                    ("Currency codes live in src/kept.py", "src/kept.py"))]
            for i, oid in enumerate(ids):  # pulled from the hub, approved by a reviewer
                conn.execute("INSERT INTO team_links (observation_id, gid, team, origin, author, reviewer) "
                             "VALUES (?, ?, 'acme', 'hub', 'ana', 'bo')", (oid, f"dev-{i}"))
    finally:
        conn.close()
    text = start(home)
    team_lines = [ln for ln in text.splitlines() if ln.startswith("- [")]
    gone = next(ln for ln in team_lines if "tax_tables" in ln)
    kept = next(ln for ln in team_lines if "Currency codes" in ln)
    assert "`src/tax_tables.py` no longer exists" in gone and "(from ana," in gone
    assert GONE not in kept
