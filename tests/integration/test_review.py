"""`kenning review` through the real CLI with scripted answers on stdin: confirm or demote standing
rules, forget a memory never used, let the newer of two memories about the same file supersede the
older; every change through the memory service, logged as the CLI's. And the ledger's HTTP routes."""

from __future__ import annotations

import json
import time

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import injections
from kenning.store.db import open_db
from tests.conftest import Home


def setup(home: Home) -> dict[str, int]:
    home.paths.ensure()
    conn = open_db(home.paths.db)
    try:
        door = MemoryService(conn, "cli")

        def save(title: str, at: float, type: str = "decision") -> int:
            return door.save(ObservationDraft(type=type, title=title, narrative=title, created_at=at),
                             project=home.key).id

        now = time.time()
        ids = {
            "older_cache": save("Decided: the cache lives in src/cache/store.py, keyed by tenant", now - 500),
            "newer_cache": save("Decided: the cache key includes the locale in src/cache/store.py", now - 400),
            "stale": save("Old note about the billing report layout", now - 200 * 86400, "discovery"),
            "rule_old": save("Always answer in English", now - 300),
            "rule_new": save("Run the linter before every commit", now - 200),
        }
        for key in ("rule_old", "rule_new"):  # a rule by what it says, or pinned one
            if conn.execute("SELECT layer FROM observations WHERE id = ?", (ids[key],)).fetchone()[0] != "rule":
                door.pin(ids[key])
        return ids
    finally:
        conn.close()


def test_review_walks_rules_never_used_and_contradictions(home: Home) -> None:
    ids = setup(home)
    # Rules newest first: confirm the linter rule, demote the English one; forget the stale note;
    # the newer cache memory supersedes the older.
    r = home.kenning("review", input="c\nd\nf\nn\n")
    assert r.returncode == 0, r.stderr
    assert "Review done: 4 change(s)" in r.stdout, r.stdout
    conn = home.db()
    try:
        rows = {int(x["id"]): dict(x) for x in conn.execute("SELECT id, layer, user_layer, status, superseded_by "
                                                            "FROM observations")}
        ops = [(x[0], x[1]) for x in conn.execute("SELECT surface, op FROM memory_log ORDER BY id")][-4:]
    finally:
        conn.close()
    assert rows[ids["rule_new"]]["layer"] == "rule" and rows[ids["rule_new"]]["user_layer"] == "rule"
    assert rows[ids["rule_old"]]["layer"] != "rule"
    assert ids["stale"] not in rows
    assert rows[ids["older_cache"]]["status"] == "superseded"
    assert rows[ids["older_cache"]]["superseded_by"] == ids["newer_cache"]
    assert ops == [("cli", "confirmed"), ("cli", "unpinned"), ("cli", "forgotten"), ("cli", "superseded")]


def test_review_skips_stops_and_ends_at_end_of_input(home: Home) -> None:
    ids = setup(home)
    r = home.kenning("review", input="x\n\nq\n")  # an unknown answer is asked again; empty skips; q stops
    assert r.returncode == 0, r.stderr
    assert "answer one of c, d, f" in r.stdout and "Review done: 0 change(s)." in r.stdout
    r = home.kenning("review", input="")  # no input at all: nothing changes
    assert r.returncode == 0 and "Review done: 0 change(s)." in r.stdout
    conn = home.db()
    try:
        assert conn.execute("SELECT COUNT(*) FROM observations WHERE status = 'active'").fetchone()[0] == len(ids)
    finally:
        conn.close()


def test_stats_health_over_a_date_range_and_the_ledger_routes(home: Home) -> None:
    ids = setup(home)
    conn = open_db(home.paths.db)
    try:
        t = time.time() - 3 * 86400
        injections.record(conn, via="session_start", session="sess-a", agent="claude-code", project=home.key,
                          items=[injections.Given(ids["rule_new"], "standing rule", 60),
                                 injections.Given(ids["newer_cache"], "key rank 1", 20)], at=t)
        injections.use(conn, observation_ids=[ids["rule_new"]], kind="ran", session="sess-a", detail="ruff", at=t + 5)
        conn.commit()
    finally:
        conn.close()
    h = json.loads(home.kenning("stats", "--json").stdout)["health"]
    assert h["injections"]["given"] == 2 and h["injections"]["hit_rate"] == 0.5
    assert h["injections"]["used_token_share"] == 0.75 and h["never_used"] == 1  # the stale note
    assert h["by_layer"]["rule"] == 2 and h["by_type"]["decision"] == 4
    recent = json.loads(home.kenning("stats", "--json", "--since", "2d").stdout)["health"]
    assert recent["injections"]["given"] == 0 and recent["verdict"] == "no handings recorded"
    text = home.kenning("stats").stdout
    assert "50.0% hit rate: fair" in text and "never used, older than 180 days: 1" in text
    bad = home.kenning("stats", "--since", "not a date")
    assert bad.returncode == 2 and "since" in bad.stderr
    # The same answers over HTTP (the viewer's).
    home.start_worker()
    from kenning.hook.client import read_pid_file, request
    from kenning.paths import read_token

    port, token = read_pid_file(home.paths)["port"], read_token(home.paths)

    def get(path: str) -> tuple[int, dict]:
        res = request(port, "GET", path, token=token, timeout=10)
        assert res is not None
        return res[0], json.loads(res[1])

    status, body = get("/api/ledger/session?session=sess-a")
    assert status == 200 and [(x["id"], x["used"]) for x in body["injections"]] == [
        (ids["rule_new"], True), (ids["newer_cache"], False)]
    assert get("/api/ledger/session?session=nobody") == (200, {"session": "nobody", "given": 0, "used": 0,
                                                            "contradicted": 0, "tokens": 0, "injections": [],
                                                            "uses": []})
    status, body = get(f"/api/ledger/memory/{ids['rule_new']}")
    assert status == 200 and (body["given"], body["used"]) == (1, 1)
    status, body = get("/api/ledger/health?since=2d")
    assert status == 200 and body["injections"]["given"] == 0
    assert get("/api/ledger/health?since=nonsense")[0] == 400
    # The viewer's check-up: the same list `kenning review` walks, and its answers through the service.
    status, body = get("/api/ledger/review")
    assert status == 200
    assert [r["id"] for r in body["rules"]] == [ids["rule_new"], ids["rule_old"]]
    assert [(r["given"], r["used"]) for r in body["rules"]] == [(1, 1), (0, 0)]
    assert [m["id"] for m in body["never_used"]] == [ids["stale"]] and body["never_used_total"] >= 1
    assert [(p["older"]["id"], p["newer"]["id"]) for p in body["contradictions"]] == [
        (ids["older_cache"], ids["newer_cache"])]
    assert get("/api/ledger/review?older_than=soon")[0] == 400
    assert get("/api/ledger/memory/" + str(ids["rule_new"]))[1]["injections"][0]["session_id"] is None  # no row

    def post(path: str, body: dict) -> tuple[int, dict]:
        res = request(port, "POST", path, body=json.dumps(body).encode(), token=token, timeout=10)
        assert res is not None
        return res[0], json.loads(res[1])

    assert post("/api/observations/confirm", {"id": ids["rule_new"]})[0] == 200
    assert post("/api/observations/confirm", {"id": ids["stale"]})[0] == 409  # not a standing rule
    conn = home.db()
    try:
        assert conn.execute("SELECT user_layer FROM observations WHERE id = ?", (ids["rule_new"],)).fetchone()[0] \
            == "rule"
        assert tuple(conn.execute("SELECT surface, op FROM memory_log ORDER BY id DESC LIMIT 1").fetchone()) == (
            "http", "confirmed")
    finally:
        conn.close()


def test_bulk_decisions_report_each_refusal_and_undo_puts_back(home: Home) -> None:
    ids = setup(home)
    home.start_worker()
    from kenning.hook.client import read_pid_file, request
    from kenning.paths import read_token

    port, token = read_pid_file(home.paths)["port"], read_token(home.paths)

    def post(body: object) -> tuple[int, dict]:
        res = request(port, "POST", "/api/observations/bulk", body=json.dumps(body).encode(), token=token,
                      timeout=10)
        assert res is not None
        return res[0], json.loads(res[1])

    assert post({"action": "forget", "ids": [1]})[0] == 400
    assert post({"action": "unpin", "ids": []})[0] == 400
    assert post({"action": "undo", "previous": [{"id": "x"}]})[0] == 400
    status, res = post({"action": "unpin", "ids": [ids["rule_old"], ids["stale"], ids["rule_new"]]})
    assert status == 200 and res["done"] == [ids["rule_old"], ids["rule_new"]]
    assert [f["id"] for f in res["failed"]] == [ids["stale"]] and "not a standing rule" in res["failed"][0]["error"]
    status, undone = post({"action": "undo", "previous": res["previous"]})
    assert status == 200 and undone["done"] == [ids["rule_old"], ids["rule_new"]]
    conn = home.db()
    try:
        layers = {int(r[0]): r[1] for r in conn.execute("SELECT id, layer FROM observations")}
    finally:
        conn.close()
    assert layers[ids["rule_old"]] == layers[ids["rule_new"]] == "rule"
