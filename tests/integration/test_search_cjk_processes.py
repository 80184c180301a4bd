"""Words inside Chinese, Japanese and Korean text through the real processes: a database written
before migration 0026 is upgraded by the worker, then `kenning search` (through the worker and
without it), the HTTP search route and the viewer's search find a word inside a run, and the
viewer is told the word to mark."""

from __future__ import annotations

import json
import os
import time

import httpx

from kenning.paths import read_token
from kenning.store import repo
from kenning.store.db import connect, migrate
from tests.conftest import Home

ZH = "我们把数据库迁移到了新的服务器"
ZH2 = "周五上线之前要跑完整的回归测试"
JA = "データベースを新しいサーバーに移行した"
KO = "데이터베이스를 새 서버로 옮겼다"
EN = "Fixed the timezone bug in invoice dates"


def old_memory(home: Home) -> dict[str, int]:
    """Rows stored by the schema before migration 0026 (its triggers indexed each CJK run whole)."""
    home.paths.ensure()
    conn = connect(home.paths.db)
    migrate(conn, target=25)
    made: dict[str, int] = {}
    with repo.transaction(conn):
        sid = repo.upsert_session(conn, platform="claude-code", agent_session_id="old", project=home.key,
                                  project_root=os.path.realpath(home.project), cwd=str(home.project),
                                  at=time.time() - 7200)
        for name, title in (("zh", ZH), ("zh2", ZH2), ("ja", JA), ("ko", KO), ("en", EN)):
            # by hand, as the code of that time wrote them (today's insert names later columns)
            at = time.time() - 3600
            cur = conn.execute(
                "INSERT INTO observations (session_id, project, type, title, created_at, recorded_at, content_hash, "
                "observer) VALUES (?, ?, 'discovery', ?, ?, ?, ?, 'rules')", (sid, home.key, title, at, at, name))
            assert cur.lastrowid
            made[name] = int(cur.lastrowid)
    conn.close()
    return made


def cli_ids(home: Home, *words: str) -> list[int]:
    r = home.kenning("search", *words, "--json")
    assert r.returncode == 0, r.stderr
    return [h["id"] for h in json.loads(r.stdout)["results"]]


def test_kenning_search_without_a_worker_upgrades_an_old_database_first(home: Home) -> None:
    made = old_memory(home)
    assert cli_ids(home, "上线") == [made["zh2"]] and cli_ids(home, "데이터베이스") == [made["ko"]]
    assert home.db().execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] >= 25
    assert cli_ids(home, "timezone", "bug") == [made["en"]]


def test_an_old_database_finds_words_inside_cjk_runs_after_the_upgrade(home: Home) -> None:
    made = old_memory(home)
    home.start_worker()  # opens the database: migration 0026 runs
    assert home.db().execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] >= 25
    # `kenning search` asks the running worker.
    assert cli_ids(home, "上线") == [made["zh2"]]
    assert cli_ids(home, "数据库") == [made["zh"]]
    assert cli_ids(home, "データベース") == [made["ja"]] and cli_ids(home, "移行") == [made["ja"]]
    assert cli_ids(home, "데이터베이스") == [made["ko"]]
    assert cli_ids(home, "timezone", "bug") == [made["en"]]
    client = httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=20,
                          headers={"Authorization": f"Bearer {read_token(home.paths)}"})
    try:
        res = client.get("/api/search", params={"query": "回归测试"})
        assert res.status_code == 200 and [h["id"] for h in res.json()["results"]] == [made["zh2"]]
        # The viewer's search: the item, and the word it marks inside the run (kenning/viewer/static/dom.js).
        body = client.get("/api/viewer/search", params={"q": "数据库"}).json()
        assert [it["id"] for it in body["items"]] == [made["zh"]] and body["terms"] == ["数据库"]
    finally:
        client.close()
    home.stop_worker()
    # Without a worker: the CLI reads the upgraded file itself.
    assert cli_ids(home, "上线") == [made["zh2"]] and cli_ids(home, "서버") == [made["ko"]]
    assert cli_ids(home, "据迁") == []  # not a word of any text as written
