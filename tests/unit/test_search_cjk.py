"""Words inside Chinese, Japanese and Korean text (kenning/search/cjk.py, migration 0026): the
index's expansion in SQL equals the Python one, a word inside a run is found by the default
search, English is indexed and found exactly as before, the indexes and their statistics stay
exact through every write, and a database from before the change gets all of it on upgrade."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from kenning.search import cjk
from kenning.search.query import parse, phrase_of
from kenning.search.service import search
from kenning.store.db import migrate, open_db
from kenning.store.forget import fts_phrase_query
from tests.unit.test_search_terms import kept, truth

ZH = "我们把数据库迁移到了新的服务器"
ZH2 = "周五上线之前要跑完整的回归测试"
JA = "データベースを新しいサーバーに移行した"
KO = "데이터베이스를 새 서버로 옮겼다"
ENGLISH = ["Fixed the timezone bug in invoice dates", "getUserById caches nothing — see src/db.py",
           "Running the VAT tests: naïve Café ÜBER runs", "parse_config_file reads ~/.claude/settings.json"]


def add(conn: sqlite3.Connection, title: str, narrative: str = "", project: str = "p", sid: int = 1) -> int:
    conn.execute("INSERT OR IGNORE INTO sessions (id, agent_session_id, project, started_at) VALUES (?, ?, ?, 1.0)",
                 (sid, f"s{sid}", project))
    cur = conn.execute("INSERT INTO observations (session_id, project, type, title, narrative, facts, created_at, "
                       "recorded_at, content_hash) VALUES (?, ?, 'discovery', ?, ?, '[]', 5.0, 5.0, ?)",
                       (sid, project, title, narrative, f"h{random.random()}"))
    return int(cur.lastrowid or 0)


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    c = open_db(str(tmp_path / "k.db"))
    for text in (ZH, ZH2, JA, KO, *ENGLISH):
        add(c, text)
    return c


def found(conn: sqlite3.Connection, query: str) -> list[str]:
    return [h.title for h in search(conn, query)]


def test_the_sql_expansion_equals_the_python_one() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (x TEXT)")
    rng = random.Random(7)
    alphabet = [*"ab Z.-é—😀\n\t上线数据库데이터ーテスト々、。「」", "\u3000", "\x00", "ｶ", "Ａ"]
    texts = [ZH, JA, KO, *ENGLISH, "", "上", "x上", "上x", "ab", "人々", None]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    conn.executemany("INSERT INTO t VALUES (?)", [(t,) for t in texts])
    got = [r[0] for r in conn.execute(f"SELECT {cjk.sql('x')} FROM t")]
    assert got == [None if t is None else cjk.expand(t) for t in texts]
    assert cjk.expand("数据库迁移") == " 数据 据库 库迁 迁移 移 "
    assert cjk.expand("api接口 v2") == "api 接口 口  v2"
    assert all(cjk.expand(t) == t for t in ENGLISH)  # English is indexed as it is


def test_a_word_inside_a_cjk_run_is_found(conn: sqlite3.Connection) -> None:
    assert found(conn, "数据库") == [ZH]    # three characters inside the run
    assert found(conn, "上线") == [ZH2]     # two: too short for a trigram index
    assert found(conn, "回归测试") == [ZH2]  # at the end of the run
    assert found(conn, "我们") == [ZH]      # at its start
    assert found(conn, "库") == [ZH]        # one character: a prefix of the pairs
    assert found(conn, "データベース") == [JA] and found(conn, "移行") == [JA]
    assert found(conn, "데이터베이스") == [KO]  # a particle joined to the word (데이터베이스를)
    assert found(conn, "서버") == [KO]
    assert set(found(conn, "服务器 上线")) == {ZH, ZH2}  # neither holds both: each holds one
    assert found(conn, "据迁") == [] and found(conn, "库服") == []  # not in the text as written
    # A run typed without spaces that says several words: its words, wherever they are in a row.
    assert found(conn, "服务器数据库") == [ZH] and search(conn, "服务器数据库")[0].match == "all"
    assert found(conn, "回归测试跑完了吗")[0] == ZH2
    assert search(conn, "数据库")[0].match == "all"


def test_english_is_indexed_and_found_as_before(conn: sqlite3.Connection, tmp_path: Path) -> None:
    # The tokens of an English row are exactly unicode61's of its text.
    plain = sqlite3.connect(":memory:")
    plain.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'porter unicode61')")
    plain.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab (main, observations_fts, 'instance')")
    for oid, title in conn.execute("SELECT id, title FROM observations").fetchall():
        plain.execute("DELETE FROM t")
        plain.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (title,))
        want = [r[0] for r in plain.execute("SELECT term FROM v ORDER BY offset")]
        got = [r[0] for r in conn.execute("SELECT term FROM temp.v WHERE doc = ? AND col = 'title' ORDER BY offset",
                                          (oid,))]
        assert (got == want) == (title in ENGLISH), title
    assert found(conn, "timezone bug") == [ENGLISH[0]]
    assert found(conn, "cafe") == [ENGLISH[2]] and found(conn, "settings.json") == [ENGLISH[3]]


def test_indexes_and_statistics_stay_exact_through_writes(conn: sqlite3.Connection) -> None:
    oid = add(conn, "旧的标题", "缓存失效导致接口超时", project="q", sid=2)
    conn.execute("UPDATE observations SET title = '新的标题 with English', narrative = '' WHERE id = ?", (oid,))
    conn.execute("UPDATE observations SET project = 'p' WHERE id = ?", (oid,))
    conn.execute("UPDATE observations SET status = 'superseded' WHERE id = ?", (oid,))  # no text: no change
    conn.execute("INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at) "
                 "VALUES (2, 1, '帮我看看数据库迁移', 6.0)")
    conn.execute("INSERT INTO session_summaries (session_id, project, request, learned, created_at, recorded_at) "
                 "VALUES (1, 'p', '把数据库迁移到新服务器', '上线前跑回归测试', 7.0, 7.0)")
    conn.execute("DELETE FROM observations WHERE title = ?", (ZH2,))
    assert kept(conn) == truth(conn)
    assert kept(conn)[("observation", "数据", "p")] == 1 and ("observation", "上线", "p") not in kept(conn)
    assert kept(conn)[("prompt", "迁移", "q")] == 1
    for fts in ("observations_fts", "session_summaries_fts", "user_prompts_fts"):
        conn.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")  # index = content view
    assert [h.title for h in search(conn, "新的标题", include_inactive=True)] == ["新的标题 with English"]
    assert [h.kind for h in search(conn, "上线")] == ["summary"] and found(conn, "缓存") == []
    assert [h.kind for h in search(conn, "回归测试")] == ["summary"]
    conn.execute("DELETE FROM sessions WHERE id = 2")  # the prompt goes with its session
    assert kept(conn) == truth(conn)


def test_query_words_cut_at_scripts_and_forget_asks_for_pairs(conn: sqlite3.Connection) -> None:
    assert [t.text for t in parse("用redis缓存，迁移失败").terms] == ["redis", "缓存", "迁移失败"]
    assert [t.text for t in parse("数据库迁移失败").terms] == ["数据库", "迁移", "失败"]  # several words
    assert phrase_of("数据库") == ("数据 据库", False) and phrase_of("库") == ("库", True)
    assert phrase_of("数据库.py") == ("数据 据库 库 .py", False)  # the run's last character, as indexed
    match = fts_phrase_query("数据库")
    assert conn.execute("SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?",
                        (match,)).fetchone()[0] == 1


def test_a_database_from_before_gets_the_new_behaviour_on_upgrade(tmp_path: Path) -> None:
    path = str(tmp_path / "old.db")
    old = sqlite3.connect(path, isolation_level=None)
    migrate(old, target=25)  # the schema before migration 0026, rows written by its triggers
    for text in (ZH, ZH2, JA, KO, *ENGLISH):
        add(old, text)
    add(old, "the ledger worker", "数据库 in narrative", project="other", sid=3)
    match = "SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?"
    assert old.execute(match, ('"上线"',)).fetchone()[0] == 0  # the whole run was one token
    english = ("timezone bug", "invoice", "cafe", "getUserById", "src/db.py")
    before = {q: [h.id for h in search(old, q)] for q in english}
    old.close()

    upgraded = open_db(path)
    assert found(upgraded, "上线") == [ZH2] and set(found(upgraded, "数据库")) == {ZH, "the ledger worker"}
    assert found(upgraded, "데이터베이스") == [KO] and found(upgraded, "移行") == [JA]
    assert {q: [h.id for h in search(upgraded, q)] for q in before} == before  # English: the same hits
    assert kept(upgraded) == truth(upgraded)
    assert upgraded.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
