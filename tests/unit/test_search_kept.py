"""Keywords alone: only the scored rows that ``_final`` can order become candidates
(``service._kept_of_kind``), and the hits, their scores and the counts stay what building a
candidate for every scored row gives."""

from __future__ import annotations

import random

import pytest

from kenning.search import service
from kenning.search.config import DEFAULT
from kenning.search.filters import make
from kenning.search.query import parse
from kenning.search.service import SearchInfo, search
from tests.support.search_rows import NOW, Rows

WORDS = ["ledger", "invoice", "rounding", "cache", "webhook", "retry", "parser", "schema", "token", "cursor"]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> Rows:
    rng = random.Random(7)
    r = Rows(str(tmp_path_factory.mktemp("kept") / "kenning.db"))
    # Far more rows per match tier than _kept(need) for the small limits below, in every kind,
    # with repeated texts (equal scores: ties broken by id) and spread over a year (recency).
    for i in range(400):
        title = " ".join(rng.sample(WORDS, rng.choice([1, 2, 3, 4])))
        text = title if i % 7 else "ledger invoice"  # exact repeats
        r.obs(text, project=rng.choice(["alpha", "beta"]), session=f"s{i % 30}", at=NOW - rng.random() * 3e7,
              narrative=" ".join(rng.choices(WORDS, k=rng.randint(0, 12))))
    for i in range(120):
        r.summary(" ".join(rng.sample(WORDS, 3)), session=f"t{i}", at=NOW - rng.random() * 3e7)
        r.prompt(" ".join(rng.sample(WORDS, 2)), session=f"t{i}", at=NOW - rng.random() * 3e7)
    r.conn.commit()
    return r


def _run(rows: Rows, query: str, **kw: object) -> tuple[list[tuple[str, int, float, str]], int]:
    info = SearchInfo()
    hits = search(rows.conn, query, now=NOW, info=info, **kw)  # type: ignore[arg-type]
    return [(h.kind, h.id, h.score, h.match) for h in hits], info.keyword_hits


@pytest.mark.parametrize("query", ["ledger invoice", "ledger invoice rounding cache", "webhook", "retry parser token"])
@pytest.mark.parametrize("limit,offset", [(1, 0), (5, 0), (5, 10), (20, 0), (20, 40)])
def test_the_kept_candidates_give_what_every_candidate_gives(rows: Rows, query: str, limit: int, offset: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for kw in ({}, {"project": "alpha"}):
        kept = _run(rows, query, limit=limit, offset=offset, **kw)
        with monkeypatch.context() as m:
            # Every scored row a candidate: what the search built before.
            m.setattr(service, "_kept_of_kind",
                      lambda r, kind, best, need: [(rid, s, "all" if r.holds_all(rid) else "some") for rid, s in best])
            every = _run(rows, query, limit=limit, offset=offset, **kw)
        assert kept == every
        assert kept[0], query


def test_rows_are_left_out_when_a_tier_holds_more_than_can_be_ordered(rows: Rows) -> None:
    info = SearchInfo()
    cands = service._keyword_candidates(rows.conn, parse("ledger invoice"), ["observation"], make(), 5, DEFAULT,
                                        info, fused=False)
    # Both tiers are cut to what _final orders; the count is still of every scored row.
    assert len(cands) <= 2 * service._kept(5) < info.keyword_hits
