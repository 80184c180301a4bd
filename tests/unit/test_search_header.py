"""The search header says which paths answered, and why meaning did not when it was asked to."""

from __future__ import annotations

from pathlib import Path

from kenning.mcp import render
from kenning.search.service import SearchInfo, search
from kenning.search.vectors import VectorIndex
from tests.support.search_rows import Rows

HIT = {"kind": "observation", "id": 3, "type": "bugfix", "title": "VAT rounding", "created_at": 0, "tokens": 20}


def test_the_header_names_the_paths_that_answered() -> None:
    both = render.search_result([HIT], query="vat", scope="project x", offset=0, limit=5,
                                paths=["keywords", "meaning"])
    assert "(matched by keywords and meaning)" in both.splitlines()[0]
    alone = render.search_result([HIT], query="vat", scope="project x", offset=0, limit=5, paths=["keywords"],
                                 note="the embedding model is still loading")
    assert "(matched by keywords only; the embedding model is still loading)" in alone.splitlines()[0]
    assert "meaning)" not in alone.splitlines()[0]


def test_search_info_reports_meaning_only_when_the_query_was_embedded(tmp_path: Path) -> None:
    rows = Rows(str(tmp_path / "kenning.db"))
    rows.obs("VAT rounding fixed")
    failing = VectorIndex(str(tmp_path / "kenning.db"), "m", lambda text: None)  # cannot embed the query
    info = SearchInfo()
    hits = search(rows.conn, "vat", vectors=failing, info=info)
    assert hits and info.paths() == ["keywords"] and not info.meaning and "embedded" in info.note
    info = SearchInfo()
    search(rows.conn, "vat", info=info)
    assert info.paths() == ["keywords"] and info.keyword_hits == 1
