"""Forgetting a memory erases every copy of its text (issue 26 items 1 and 9; SECURITY.md "forget").

Memory is made the real way (hook processes → spool → worker → rules observer) with the trigram
index on; the forget goes through each real surface (the CLI, the worker's HTTP API, the MCP
server driven by the MCP SDK's client, the viewer's delete); then every byte of the data dir is
searched (tests/support/erasure.py), and `kenning context` and `kenning search` are asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from kenning.paths import read_token
from tests.conftest import Home
from tests.integration.test_memory_commands import call, call_json, hook, observations, scalar, session
from tests.support.erasure import assert_erased, assert_present, wait_for_compaction

WORD = "quillfeathervex"  # in no other text: every byte of it on disk is a copy of the forgotten memory
RULE = f"Always deploy with {WORD} from now on"
KEPT = "We use uv, not pip"
CJK_WORD = "蜻蜓部署"  # the CJK shadow tables (search/cjk.py) hold their own copy of CJK text


@pytest.fixture
def remembered(home: Home) -> Home:
    home.env["KENNING_SEARCH_TRIGRAM"] = "1"
    home.start_worker()
    r = home.kenning("reindex")  # creates the trigram tables (search_trigram is on)
    assert r.returncode == 0, r.stdout + r.stderr
    session(home, "s-one", [f"{RULE}.", f"{KEPT}."])
    session(home, "s-two", ["Never touch the public API in api.py."])
    home.flush()
    assert scalar(home, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%trigram%'") > 0, "trigram index on"
    assert any(o["title"] == RULE for o in observations(home))
    assert_present(home.data, WORD, KEPT)
    return home


def _rule_id(home: Home) -> int:
    return int(next(o["id"] for o in observations(home) if o["title"] == RULE))


def forget_via(surface: str, home: Home, oid: int, *, in_summary: bool = True) -> None:
    if surface == "cli":
        r = home.kenning("forget", "--id", str(oid), "--yes")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "prompt" in r.stdout and ("summary" in r.stdout) is in_summary, r.stdout  # the copies are named
    elif surface == "http":
        status, body = call_json(home, "POST", "/api/forget", {"ids": [oid], "dry_run": False})
        assert status == 200 and body["deleted"]["observations"] == 1, body
        assert body["deleted"]["summaries_rewritten"] == 1 and body["deleted"]["prompts"] == 1, body
    elif surface == "mcp":
        from tests.mcp.mcp_helpers import run_client, text_of

        async def go(c: Any) -> Any:
            return await c.call_tool("forget_memory", {"ids": [oid]})

        env = {k: v for k, v in home.env.items() if k in ("KENNING_DATA_DIR", "KENNING_PORT", "PATH", "HOME")}
        res = run_client(go, env=env, cwd=str(home.project))
        assert not res.is_error and f"#{oid}" in text_of(res), text_of(res)
    elif surface == "viewer":
        status, body = call_json(home, "DELETE", f"/api/viewer/observations/{oid}")
        assert status == 200 and body["deleted"] == 1, body
        wait_for_compaction(home)
    else:
        raise AssertionError(surface)


@pytest.mark.parametrize("surface", ["cli", "http", "mcp", "viewer"])
def test_forget_by_id_leaves_no_copy_of_the_memory_anywhere(remembered: Home, surface: str) -> None:
    home = remembered
    oid = _rule_id(home)
    forget_via(surface, home, oid)
    assert_erased(home.data, WORD, RULE)
    # Nothing gives it back: the session-start context, search (prompts and summaries included).
    ctx = home.kenning("context", "--cwd", str(home.project))
    assert ctx.returncode == 0 and WORD not in ctx.stdout, ctx.stdout
    found = home.kenning("search", WORD, "--all", "--json", "-p", ".", cwd=str(home.project))
    assert found.returncode == 0 and json.loads(found.stdout)["results"] == [], found.stdout
    status, body = call(home, "GET", f"/api/search?q={WORD}")
    assert status == 200 and body.count(WORD.encode()) <= 1, body  # the query echoed back, no result
    # What was not forgotten is untouched: the other memory of the same session, its prompt, and the
    # summary, rewritten without the forgotten piece.
    assert any(o["title"] == KEPT for o in observations(home))
    assert scalar(home, "SELECT request FROM session_summaries WHERE session_id = "
                        "(SELECT id FROM sessions WHERE agent_session_id = 's-one')") == KEPT
    assert scalar(home, "SELECT prompt_text FROM user_prompts WHERE prompt_number = 1 AND session_id = "
                        "(SELECT id FROM sessions WHERE agent_session_id = 's-one')") == "[forgotten]"
    assert_present(home.data, KEPT)
    assert scalar(home, "PRAGMA integrity_check") == "ok"
    # The session goes on: its next summary is not rebuilt from the forgotten prompt.
    hook(home, "UserPromptSubmit", "s-one", str(home.project), prompt="Add a ruff check to CI.", prompt_id="p9")
    hook(home, "Stop", "s-one", str(home.project), stop_hook_active=False, last_assistant_message="Added it.")
    home.flush()
    assert_erased(home.data, WORD)


def test_forget_of_a_cjk_memory_empties_the_cjk_shadow_rows(home: Home) -> None:
    home.start_worker()
    session(home, "s-cjk", [f"以后总是用{CJK_WORD}的方式上线。", f"{KEPT}."])
    home.flush()
    conn = home.db()
    try:
        row = conn.execute("SELECT id FROM observations WHERE title LIKE ?", (f"%{CJK_WORD}%",)).fetchone()
    finally:
        conn.close()
    if row is None:
        pytest.skip("the rules observer kept no memory of this CJK prompt")
    assert_present(home.data, CJK_WORD)
    forget_via("cli", home, int(row[0]))  # the CJK prompt is the session summary's gist: rewritten without it
    assert_erased(home.data, CJK_WORD)
    assert scalar(home, "SELECT COUNT(*) FROM user_prompts_cjk") == 0 or \
        CJK_WORD not in str(scalar(home, "SELECT group_concat(prompt_text) FROM user_prompts_cjk"))


def tox_then_nox(home: Home) -> tuple[int, int]:
    """Two sessions: a rule (tox), then the user's correction (nox); their observation ids."""
    home.start_worker()
    session(home, "s-old", ["Always run the tests with tox from now on."])
    session(home, "s-new", ["Always run the tests with nox from now on, not tox."])
    home.flush()
    obs = {o["title"]: o["id"] for o in observations(home)}
    old = next(i for t, i in obs.items() if "tox" in t and "nox" not in t)
    new = next(i for t, i in obs.items() if "nox" in t)
    return old, new


def test_forgetting_what_superseded_a_rule_makes_the_rule_current_again(home: Home) -> None:
    old, new = tox_then_nox(home)
    if scalar(home, f"SELECT status FROM observations WHERE id = {old}") != "superseded":
        r = home.kenning("supersede", str(old), "--by", str(new))
        assert r.returncode == 0, r.stderr
    assert "with tox" not in home.kenning("context", "--cwd", str(home.project)).stdout
    r = home.kenning("forget", "--id", str(new), "--yes")
    assert r.returncode == 0, r.stderr
    assert "current again" in r.stdout, r.stdout
    assert scalar(home, f"SELECT status FROM observations WHERE id = {old}") == "active"
    assert "with tox" in home.kenning("context", "--cwd", str(home.project)).stdout


def test_a_rule_the_user_retracted_stays_retracted_when_its_successor_is_forgotten(home: Home) -> None:
    old, new = tox_then_nox(home)
    conn = home.db()
    try:
        with conn:
            conn.execute("UPDATE observations SET status = 'retracted', superseded_by = ? WHERE id = ?", (new, old))
    finally:
        conn.close()
    r = home.kenning("forget", "--id", str(new), "--yes")
    assert r.returncode == 0, r.stderr
    assert scalar(home, f"SELECT status FROM observations WHERE id = {old}") == "retracted"


def test_a_forgotten_id_is_never_given_to_a_new_memory(remembered: Home) -> None:
    home = remembered
    newest = max(o["id"] for o in observations(home))
    r = home.kenning("forget", "--id", str(newest), "--yes")
    assert r.returncode == 0, r.stderr
    session(home, "s-three", ["Always run ruff before committing."])
    home.flush()
    fresh = next(o["id"] for o in observations(home) if o["title"] == "Always run ruff before committing")
    assert fresh > newest
    r = home.kenning("show", str(newest))
    assert r.returncode != 0 and "ruff" not in r.stdout


def test_concurrent_forgets_from_clis_and_http_all_succeed(home: Home) -> None:
    """Issue 26 item 9: 10-20 % of concurrent forgets failed with "no such table: observations"
    (another forget's VACUUM changed the schema under a transaction: kenning/store/repo.py)."""
    import threading

    home.start_worker()
    session(home, "s-many", [f"Always deploy with word{i}zz from now on." for i in range(12)])
    home.flush()
    ids = [o["id"] for o in observations(home)]
    assert len(ids) == 12
    failures: list[str] = []

    def over_http(oid: int) -> None:
        status, body = call_json(home, "POST", "/api/forget", {"ids": [oid], "dry_run": False})
        if status != 200:
            failures.append(f"http #{oid}: {status} {body}")

    procs = [(oid, subprocess.Popen([sys.executable, "-m", "kenning", "forget", "--id", str(oid), "--yes"],
                                    env=home.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
             for oid in ids[::2]]
    threads = [threading.Thread(target=over_http, args=(oid,)) for oid in ids[1::2]]
    for t in threads:
        t.start()
    for oid, p in procs:
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            failures.append(f"cli #{oid}: {out} {err}")
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    assert observations(home) == []
    assert_erased(home.data, "word3zz", "word10zz")


@pytest.mark.parametrize("args", [["supersede", "1", "--by", str(2**63)], ["supersede", str(2**64), "--by", "1"],
                                  ["restore", "0"], ["pin", str(2**63)], ["unpin", "-1"], ["unarchive", str(10**30)]])
def test_cli_supersede_and_pin_range_check_ids(home: Home, args: list[str]) -> None:
    r = home.kenning(*args)
    assert r.returncode == 2 and "is not an id (1 to" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "OverflowError" not in r.stderr


def test_http_and_mcp_supersede_and_pin_range_check_ids(remembered: Home) -> None:
    home = remembered
    for path, body in (("/api/observations/supersede", {"ids": [1], "by": 2**63}),
                       ("/api/observations/supersede", {"ids": [2**63], "by": 1}),
                       ("/api/observations/pin", {"id": 2**63}), ("/api/observations/unpin", {"id": 0})):
        status, data = call(home, "POST", path, json.dumps(body).encode())
        assert status == 400, (path, body, status, data)
        assert b"id" in data and b"Overflow" not in data
    from tests.mcp.mcp_helpers import run_client, text_of

    async def go(c: Any) -> list[tuple[bool, str]]:
        out = []
        for args in ({"ids": [1], "by": f"#{2**63}"}, {"ids": [f"#{2**64}"], "by": 1}, {"ids": [1], "by": 2**63}):
            r = await c.call_tool("supersede_memory", args)
            out.append((r.is_error, text_of(r)))
        return out

    env = {k: v for k, v in home.env.items() if k in ("KENNING_DATA_DIR", "KENNING_PORT", "PATH", "HOME")}
    for is_error, text in run_client(go, env=env, cwd=str(home.project)):
        assert is_error and "id" in text and "Overflow" not in text, text
    assert read_token(home.paths)


def test_quarantined_spool_files_go_and_damaged_copies_are_named(remembered: Home) -> None:
    """Copies outside the database: a spool file quarantined as unparsable (never ingested) that holds
    the memory is deleted; a damaged database `kenning repair` set aside cannot be rewritten, so
    forget names it (exit 1, a warning) instead of claiming the text is gone."""
    home = remembered
    corrupt = home.data / "spool" / "corrupt"
    corrupt.mkdir(parents=True, exist_ok=True)
    broken = corrupt / "1796420000-broken.json"
    broken.write_text('{"hook_event_name": "UserPromptSubmit", "prompt": "' + RULE + '", "cwd": ')
    other = corrupt / "1796420001-other.json"
    other.write_text('{"prompt": "something else entirely, never a memory", ')
    damaged = home.data / "kenning.db.damaged-20261204-0101"
    damaged.write_bytes(b"SQLite format 3\x00" + RULE.encode() + b"\x00" * 64)
    r = home.kenning("forget", "--id", str(_rule_id(home)), "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Forgot 1 observations" in r.stdout and str(damaged) in r.stderr and "kenning repair" in r.stderr
    assert not broken.exists() and other.exists()
    from tests.support.erasure import hits

    assert [h.split(":")[0] for h in hits(home.data, [WORD])] == [damaged.name] * len(hits(home.data, [WORD]))
    damaged.unlink()  # what the warning asks the user to do
    assert_erased(home.data, WORD, RULE)
