"""Hostile query text: results or an empty list, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.search.service import search, timeline
from tests.support.search_rows import Rows
from tests.unit.test_search_query import HOSTILE


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> Rows:
    r = Rows(str(Path(tmp_path_factory.mktemp("hostile")) / "kenning.db"))
    r.obs("parse_config_file reads ~/.claude/settings.json", narrative="NEAR the end, a - b (x) * y")
    r.obs("数据库迁移失败：表 observations 缺少索引")
    r.obs("ümlaut café handling", narrative="emoji 🎉 party")
    r.summary("settings.json was broken")
    r.prompt("fix settings.json (again)")
    return r


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("order", ["relevance", "date"])
def test_search_never_raises(rows: Rows, text: str, order: str) -> None:
    hits = search(rows.conn, text, order=order)
    assert isinstance(hits, list)
    assert isinstance(search(rows.conn, "settings", project=text, types=[text], files=[text], concepts=[text]), list)


@pytest.mark.parametrize("text", HOSTILE)
def test_timeline_query_raises_only_value_error(rows: Rows, text: str) -> None:
    try:
        timeline(rows.conn, query=text)
    except ValueError:
        pass


def test_quoted_file_names_and_cjk_find_their_rows(rows: Rows) -> None:
    assert search(rows.conn, "settings.json")
    assert search(rows.conn, '"settings.json"')
    assert search(rows.conn, "数据库")
    assert search(rows.conn, "café")
    assert search(rows.conn, "NEAR(parse_config_file)")
