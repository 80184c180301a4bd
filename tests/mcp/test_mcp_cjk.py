"""search_memory through a real `kenning mcp` process (the SDK's stdio client) finds a word inside
Chinese, Japanese and Korean text, in a database written before migration 0026 (the server
brings it up to date when no worker runs)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from mcp_helpers import run_client, scratch_dir, text_of

from kenning.store.db import migrate

ROWS = {1: "我们把数据库迁移到了新的服务器", 2: "周五上线之前要跑完整的回归测试",
        3: "データベースを新しいサーバーに移行した", 4: "데이터베이스를 새 서버로 옮겼다",
        5: "Fixed the timezone bug in invoice dates"}


def old_database(data: Path) -> None:
    data.mkdir(mode=0o700)
    conn = sqlite3.connect(str(data / "kenning.db"), isolation_level=None)
    migrate(conn, target=25)
    conn.execute("INSERT INTO sessions (id, agent_session_id, project, started_at) VALUES (1, 's1', 'shop', 1.0)")
    for oid, title in ROWS.items():
        conn.execute("INSERT INTO observations (id, session_id, project, type, title, created_at, recorded_at, "
                     "content_hash) VALUES (?, 1, 'shop', 'discovery', ?, 2.0, 2.0, ?)", (oid, title, f"h{oid}"))
    conn.close()


def test_search_memory_finds_words_inside_cjk_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old_database(data)

    async def go(c: Any) -> dict[str, str]:
        out = {}
        for q in ("上线", "数据库", "データベース", "移行", "데이터베이스", "timezone bug", "据迁"):
            out[q] = text_of(await c.call_tool("search_memory", {"query": q, "project": "*"}))
        return out

    got = run_client(go, env={"KENNING_DATA_DIR": str(data)}, cwd=scratch_dir(tmp_path))

    def rows(text: str) -> list[int]:
        return [oid for oid in ROWS if f"#{oid} " in text]

    assert rows(got["上线"]) == [2] and ROWS[2] in got["上线"]
    assert rows(got["数据库"]) == [1]
    assert rows(got["データベース"]) == [3] and rows(got["移行"]) == [3]
    assert rows(got["데이터베이스"]) == [4]
    assert rows(got["timezone bug"]) == [5]
    assert rows(got["据迁"]) == [] and got["据迁"].startswith("No memory")
