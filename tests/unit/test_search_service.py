"""search(): keyword ranking, AND-then-OR, filters, sensitive rows, ordering, paging."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.search.service import Hit, search
from tests.support.search_rows import NOW, Rows, ids


@pytest.fixture
def rows(tmp_path: Path) -> Rows:
    return Rows(str(tmp_path / "kenning.db"))


def test_all_terms_rank_before_some_terms(rows: Rows) -> None:
    only_tz = rows.obs("Timezone handling in reports", narrative="timezone conversion everywhere timezone")
    both = rows.obs("Fixed a bug in invoice dates", narrative="the timezone was dropped")
    only_bug = rows.obs("Bug in the cache")
    hits = search(rows.conn, "timezone bug")
    assert ids(hits)[0] == both
    assert set(ids(hits)) == {both, only_tz, only_bug}
    assert hits[0].match == "all" and {h.match for h in hits[1:]} == {"some"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_title_weighs_more_than_narrative(rows: Rows) -> None:
    in_narrative = rows.obs("Refactor of the exporter", narrative="mentions webhook once among many other words")
    in_title = rows.obs("Webhook retries", narrative="mentions the retry policy and many other words")
    assert ids(search(rows.conn, "webhook"))[:2] == [in_title, in_narrative]


def test_stemming_and_prefix(rows: Rows) -> None:
    a = rows.obs("Running the migrations twice corrupts nothing")
    b = rows.obs("parse_config_file ignores comments")
    assert ids(search(rows.conn, "run migration")) == [a]
    assert ids(search(rows.conn, "parse_conf")) == [b]


def test_hit_fields(rows: Rows) -> None:
    oid = rows.obs("A title\nwith a newline " + "x" * 300, narrative="n" * 400, type="bugfix")
    (h,) = search(rows.conn, "title")
    assert isinstance(h, Hit)
    assert (h.kind, h.id, h.type, h.project) == ("observation", oid, "bugfix", "alpha")
    assert "\n" not in h.title and len(h.title) <= 160 and h.title.endswith("…")
    assert h.created_at == NOW and h.score > 0 and h.tokens > 175
    assert set(h.as_dict()) >= {"kind", "id", "type", "title", "project", "session_id", "created_at", "score",
                                "tokens"}


def test_summaries_and_prompts_are_found(rows: Rows) -> None:
    o = rows.obs("Decimal rounding for VAT")
    s = rows.summary("Fix VAT rounding in totals", learned="round half up")
    p = rows.prompt("why is the VAT off by a cent?")
    hits = search(rows.conn, "VAT")
    assert {(h.kind, h.id) for h in hits} == {("observation", o), ("summary", s), ("prompt", p)}
    assert {h.type for h in hits} == {"discovery", "summary", "prompt"}
    assert [h.kind for h in search(rows.conn, "VAT", kinds=["prompt"])] == ["prompt"]
    with pytest.raises(ValueError):
        search(rows.conn, "VAT", kinds=["nope"])


def test_filters(rows: Rows) -> None:
    a = rows.obs("cache warmup", type="feature", concepts=["pattern"], files_modified=["/src/alpha/app/cache.py"],
                 at=NOW - 10 * 86400)
    b = rows.obs("cache eviction", type="bugfix", concepts=["gotcha"], files_read=["app/evict.py"], at=NOW)
    c = rows.obs("cache in beta", project="beta", session="b1")
    rows.obs("cache later session", session="s2")
    assert set(ids(search(rows.conn, "cache", project="beta"))) == {c}
    assert ids(search(rows.conn, "cache", types=["feature"])) == [a]
    assert ids(search(rows.conn, "cache", concepts=["gotcha"])) == [b]
    assert ids(search(rows.conn, "cache", files=["app/cache.py"])) == [a]          # relative finds absolute
    assert ids(search(rows.conn, "cache", files=["/src/alpha/app/evict.py"])) == [b]  # absolute finds relative
    assert ids(search(rows.conn, "cache", files=["./app/cache.py"])) == [a]
    assert ids(search(rows.conn, "cache", files=["cache.py"])) == [a]
    assert ids(search(rows.conn, "cache", files=["ache.py"])) == []
    assert set(ids(search(rows.conn, "cache", since=NOW - 86400, project="alpha"))) >= {b}
    assert a not in ids(search(rows.conn, "cache", since=NOW - 86400))
    assert ids(search(rows.conn, "cache", until=NOW - 86400)) == [a]
    assert set(ids(search(rows.conn, "cache", session=rows.session("alpha", "s1")))) == {a, b}
    assert ids(search(rows.conn, "cache", types=["summary"])) == []


def test_types_summary_and_prompt_select_kinds(rows: Rows) -> None:
    rows.obs("deploy script")
    s = rows.summary("deploy to staging")
    assert [(h.kind, h.id) for h in search(rows.conn, "deploy", types=["summary"])] == [("summary", s)]


def test_inactive_hidden_unless_asked(rows: Rows) -> None:
    a = rows.obs("old retry policy", status="superseded")
    b = rows.obs("retry policy is exponential")
    c = rows.obs("retry policy was wrong", status="retracted")
    assert ids(search(rows.conn, "retry policy")) == [b]
    hits = search(rows.conn, "retry policy", include_inactive=True)
    assert {h.id: h.status for h in hits} == {a: "superseded", b: "active", c: "retracted"}


def test_sensitive_only_within_its_project(rows: Rows) -> None:
    s = rows.obs("production database host name", type="sensitive")
    rows.obs("database migrations", project="beta", session="b1")
    assert s not in ids(search(rows.conn, "database"))
    assert s not in ids(search(rows.conn, "database", project="beta"))
    assert s in ids(search(rows.conn, "database", project="alpha"))
    assert s not in ids(search(rows.conn, "", types=["sensitive"]))
    assert ids(search(rows.conn, "", types=["sensitive"], project="alpha")) == [s]


def test_order_by_date_and_empty_query_lists_newest(rows: Rows) -> None:
    old = rows.obs("queue worker crash", at=NOW - 1000)
    new = rows.obs("queue worker", at=NOW)
    mid = rows.obs("queue worker crash crash crash", at=NOW - 500)
    assert ids(search(rows.conn, "queue crash", order="date")) == [mid, old]
    assert ids(search(rows.conn, "", kinds=["observation"])) == [new, mid, old]
    with pytest.raises(ValueError):
        search(rows.conn, "queue", order="sideways")


def test_limit_and_offset(rows: Rows) -> None:
    made = [rows.obs(f"widget number {i}", at=NOW - i) for i in range(30)]
    first = search(rows.conn, "widget", limit=10)
    second = search(rows.conn, "widget", limit=10, offset=10)
    assert len(first) == 10 and len(second) == 10 and not set(ids(first)) & set(ids(second))
    assert ids(search(rows.conn, "", limit=5, offset=2, kinds=["observation"])) == made[2:7]
    assert len(search(rows.conn, "widget", limit=10_000)) == 30
    assert search(rows.conn, "widget", limit=-3)  # clamped to at least one


def test_mild_recency(rows: Rows) -> None:
    old = rows.obs("flaky login test", at=NOW - 400 * 86400)
    new = rows.obs("flaky login test in CI", at=NOW)
    assert ids(search(rows.conn, "flaky login", now=NOW))[0] == new
    strong_old = rows.obs("flaky login flaky login flaky", at=NOW - 400 * 86400)
    assert ids(search(rows.conn, "flaky login", now=NOW))[0] == strong_old
    assert old in ids(search(rows.conn, "flaky login", now=NOW))


def test_no_words_and_no_rows(rows: Rows) -> None:
    assert search(rows.conn, "anything at all") == []
    assert search(rows.conn, "***") == []


def test_a_hit_as_a_dict_is_what_dataclasses_asdict_gives(rows: Rows) -> None:
    from dataclasses import asdict

    rows.obs("Webhook retries", narrative="the retry policy")
    hits = search(rows.conn, "webhook retries")
    assert hits and all(h.as_dict() == asdict(h) for h in [*hits, Hit("prompt", 1, "prompt", "t", "p", 1, 0.0, 0.0, 1,
                                                                        similarity=0.5)])
    d = hits[0].as_dict()
    d["title"] = "changed"
    assert hits[0].title == "Webhook retries"  # a copy, not the hit's own dict
