"""Query building: user text never reaches FTS5 MATCH raw."""

from __future__ import annotations

import sqlite3

import pytest

from kenning.search.cjk import expand
from kenning.search.query import MAX_TERMS, is_identifier, parse, terms

HOSTILE = [
    'settings.json', '"unbalanced', "((a OR b", "a)", "*", "foo*", "NEAR(a b)", "a NEAR b", "-x", "a - b",
    "NOT", "AND OR NOT", "col:value", "title:foo", "^start", "a + b", "{x y}", "'single'", '""""',
    "\x00", "a\x00b", "ümlaut café", "数据库迁移失败", "検索インデックス", "emoji 🎉 party", "___", "\\", "%_",
    "x" * 10_000, "word " * 3000, "\u202e\u200b", "a\nb\tc\r", "SELECT * FROM observations; --",
]


def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (a, tokenize = 'porter unicode61')")
    text = "parse_config_file reads ~/.claude/settings.json in 数据库迁移失败"
    conn.execute("INSERT INTO t VALUES (?)", (expand(text),))  # as the index holds it
    return conn


@pytest.mark.parametrize("synonyms", [False, True])
@pytest.mark.parametrize("text", [*HOSTILE, "k8s db 数据库 上线 pull request", "(数据库 OR \"db\")"])
def test_hostile_text_gives_valid_fts_expressions(text: str, synonyms: bool) -> None:
    q = parse(text, synonyms)
    conn = fts()
    if q.empty:
        return
    for expr in (q.all_terms(), q.any_term()):
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)).fetchall()


def test_every_term_is_quoted() -> None:
    q = parse('settings.json NEAR "xx" -yy (zz')
    assert q.all_terms() == '"settings.json" * AND "NEAR" AND "xx" AND "yy" AND "zz"'


def test_stopwords_dropped_unless_nothing_else() -> None:
    assert [t.text for t in terms("how does the timezone bug happen")] == ["timezone", "bug", "happen"]
    assert [t.text for t in terms("how does this work")] == ["work"]
    assert [t.text for t in terms("what is it")] == ["what", "is", "it"]


def test_identifiers_are_prefix_matched_and_cjk_words_are_phrases_of_pairs() -> None:
    by_text = {t.text: t.prefix for t in terms("parse_conf getUser src/db.py v2 plain 数据库 settings.json")}
    assert by_text == {"parse_conf": True, "getUser": True, "src/db.py": False, "v2": False, "plain": False,
                       "数据库": False, "settings.json": True}
    assert [(t.text, t.phrase()) for t in terms("数据库")] == [("数据库", '"数据 据库"')]
    assert [(t.text, t.phrase()) for t in terms("败")] == [("败", '"败" *')]  # one character: a prefix
    assert [t.text for t in terms("把 数据库")] == ["数据库"]  # ... and, next to other words, mostly a particle
    assert [t.text for t in terms("用redis缓存，迁移")] == ["redis", "缓存", "迁移"]  # cut at script and punctuation
    conn = fts()
    for q in ("parse_conf", "数据库", "迁移", "移失", "败", "失败"):  # inside the run, its end, one character
        assert conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (parse(q).all_terms(),)).fetchone()[0], q
    for q in ("库数", "迁失", "数据库迁移成功"):
        assert not conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (parse(q).all_terms(),)).fetchone()[0], q


def test_duplicates_and_size_are_bounded() -> None:
    assert len(terms("a1 A1 a1")) == 1
    assert len(terms(" ".join(f"w{i}" for i in range(200)))) == MAX_TERMS


def test_identifier_shapes() -> None:
    assert is_identifier("getUserById") and is_identifier("user_repo") and is_identifier("x.py")
    assert not is_identifier("Timezone") and not is_identifier("bug")


def test_hyphenated_words_are_their_words_and_stay_a_phrase() -> None:
    # unicode61 indexes "dairy-free" as two tokens: the query asks for each, and the pair as a phrase.
    q = parse("dessert recipes that are dairy-free")
    assert [t.text for t in q.terms] == ["dessert", "recipes", "dairy", "free"]
    assert [(a.text, b.text) for a, b in q.pairs] == [("dessert", "recipes"), ("dairy", "free")]
    # Identifiers, paths and words with digits stay whole.
    assert [t.text for t in terms("utf-8 src/my-app.py")] == ["utf-8", "src/my-app.py"]


def test_function_words_and_category_fillers_are_dropped() -> None:
    assert [t.text for t in terms("What kind of art does she make?")] == ["art", "make"]
    assert [t.text for t in terms("which cities did he show us")] == ["cities"]
    assert [t.text for t in terms("the kind reviewer")] == ["kind", "reviewer"]  # not before "of": a word
    # A word dropped between two breaks the phrase: only words written side by side pair up.
    assert parse("art of painting").pairs == ()
