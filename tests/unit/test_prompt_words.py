"""The prompt context's words: synonyms of the table (kenning/search/synonyms.py) both ways, and
CJK sentences (their table words and character pairs). Real database, real keyword search, the
default relevance threshold: a synonym finds the memory it names and lets nothing unrelated through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.context import prompt as pc
from kenning.search import synonyms
from kenning.search.query import recall_terms
from tests.unit.test_prompt_context import T0, Memory, ids

THRESHOLD = 0.6  # prompt_context_min_relevance's default (60)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path)
    for i in range(30):  # background: word statistics of a memory
        m.observe(f"Ran the test suite for module {i}", f"The tests in file {i} pass after the change.",
                  session=f"bg{i % 5}", at=T0 - 3600 - i)
    yield m
    m.conn.close()


def given(mem: Memory, text: str) -> list[int]:
    return ids(mem.build(text, min_relevance=THRESHOLD)[1])


def test_the_table_is_symmetric_and_knows_plurals() -> None:
    for group in synonyms.GROUPS:
        for w in group:
            assert all(w in synonyms.alternatives(x) for x in group if x != w), (w, group)
    assert "kubernetes" in synonyms.alternatives("K8s") and "k8s" in synonyms.alternatives("Kubernetes")
    assert "database" in synonyms.alternatives("DBs") and "db" in synonyms.alternatives("databases")
    assert "dependency" in synonyms.alternatives("dependencies") and synonyms.alternatives("ingress") == ()
    assert synonyms.in_run("把数据库迁移到新服务器") == [(1, "数据库"), (4, "迁移"), (8, "服务器")]


def test_a_k8s_prompt_gets_the_kubernetes_memory_and_back(mem: Memory) -> None:
    kube = mem.observe("Kubernetes namespaces are named after the team that owns the service")
    short = mem.observe("k8s upgrades happen every quarter")
    # Without the table neither passes: the word the memory uses weighs most, and is missing.
    assert given(mem, "How should I name the new k8s namespace for the search team?") == [kube]
    assert given(mem, "How often do we upgrade Kubernetes?") == [short]
    assert given(mem, "DB pool exhausted again") == []  # nothing about it


def test_a_synonym_does_not_let_an_unrelated_memory_through(mem: Memory) -> None:
    related = mem.observe("The database connection pool is capped at 20 connections in production")
    unrelated = [mem.observe("The database of country codes is vendored from ISO 3166"),
                 mem.observe("Kubernetes namespaces are named after the owning team"),
                 mem.observe("Repository pattern: one repository class per aggregate root")]
    prompt = "Why is the DB connection pool exhausted in prod?"
    assert given(mem, prompt) == [related]
    rel = pc.Relevance(mem.conn, prompt)
    cov = rel.coverage(pc.texts_of(mem.conn, [related, *unrelated]))
    assert cov[related] >= THRESHOLD and all(cov[u] < THRESHOLD for u in unrelated)
    # The word alone, in another sense: the memory naming it is not relevant to this prompt.
    assert given(mem, "Write a small k8s operator in Rust just for fun") == []
    assert given(mem, "Rename the repo folder on my laptop") == []


def test_a_chinese_prompt_finds_chinese_and_english_memories(mem: Memory) -> None:
    zh = mem.observe("周五上线之前必须跑完整的回归测试")
    backup = mem.observe("数据库备份每天凌晨三点执行")
    migrations = mem.observe("Database migrations run with alembic upgrade head")
    assert [t.text for t in recall_terms("数据库迁移失败了怎么办")][:2] == ["数据库", "迁移"]
    assert given(mem, "周五可以上线吗？") == [zh]               # the pairs of the sentence
    assert given(mem, "数据库备份什么时候跑") == [backup]
    assert given(mem, "数据库迁移失败了怎么办") == [migrations]  # 数据库: database, 迁移: migration
    # "backups" has no other word in the table: the English question does not reach the Chinese note.
    assert backup not in given(mem, "when do the database backups run?")


def test_a_short_cjk_prompt_is_worth_asking() -> None:
    assert pc.worth_asking("周五下午可以上线吗？", 20)   # 10 characters, 9 of them CJK
    assert not pc.worth_asking("上线吗？", 20)
    assert not pc.worth_asking("deploy on friday?", 20)  # English as before: 17 characters
    assert not pc.worth_asking("<task-notification>上线</task-notification>", 5)


def test_korean_particles_are_no_obstacle(mem: Memory) -> None:
    oid = mem.observe("데이터베이스 마이그레이션은 배포 전에 실행한다")
    assert given(mem, "데이터베이스를 배포하기 전에 마이그레이션을 해야 하나요?") == [oid]


def test_words_of_several_words_are_one_term_both_ways() -> None:
    assert synonyms.phrases("Pourquoi la Base de Données est lente ?") == (
        ["base de données"], "Pourquoi la   est lente ?")
    assert [(t.text, "e2e" in t.alts) for t in recall_terms("the end-to-end suite")] == [
        ("end-to-end", True), ("suite", False)]
    assert synonyms.phrases("a database base; de données") == ([], "a database base; de données")


def test_a_french_prompt_names_the_database_as_the_memory_does_not(mem: Memory) -> None:
    english = mem.observe("DB config is read from settings.toml at start-up, never from the environment")
    french = mem.observe("Le mot de passe de la base de données tourne chaque mois")
    unrelated = mem.observe("La configuration du linter vient de pyproject.toml")
    assert given(mem, "Où se trouve la configuration de la base de données ?") == [english]
    assert given(mem, "Qui change le password de la DB ?") == [french]
    assert unrelated not in given(mem, "Où se trouve la configuration de la base de données ?")


def test_a_german_abbreviation_finds_the_long_word(mem: Memory) -> None:
    pool = mem.observe("Der Datenbank-Pool ist in Produktion auf 20 Verbindungen begrenzt")
    assert given(mem, "Warum ist der DB-Pool in prod erschöpft?") == [pool]
    # Sharing "warum ist der" and "Pool" is not being about the same pool: function words do not count.
    assert given(mem, "Warum ist der Thread-Pool erschöpft?") == []


def test_function_words_of_other_languages_are_not_code_words() -> None:
    from kenning.search.query import STOPWORDS
    assert {"der", "und", "les", "dans", "para", "della"} <= STOPWORDS
    assert not {"die", "du", "del", "os", "su", "em", "di", "non", "comment", "mit"} & STOPWORDS
    assert [t.text for t in recall_terms("why does the worker die after du -sh")] == ["worker", "die", "du", "sh"]
