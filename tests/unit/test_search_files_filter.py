"""The file filter of observations is served by observation_files, with the same matches as
the JSON columns gave (equal paths, or one a path suffix of the other)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.search import filters
from kenning.search.service import search
from tests.support.search_rows import Rows

WANTED = ["src/db.py", "db.py", "/src/alpha/src/db.py", "/home/me/alpha/src/db.py", "README.md", "docs/README.md",
          "/abs/only.txt", "only.txt", "x/only.txt", "src", "nope.py", "./src/db.py", "src\\db.py"]


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> Rows:
    r = Rows(str(Path(tmp_path_factory.mktemp("files")) / "kenning.db"))
    r.obs("edit db", files_modified=["src/db.py"], at=1)
    r.obs("read db absolute", files_read=["/src/alpha/src/db.py"], at=2)
    r.obs("other db", files_read=["lib/db.py"], at=3)
    r.obs("readme", files_read=["README.md"], project="beta", at=4)
    r.obs("docs readme", files_read=["docs/README.md", "src/db.py"], at=5)
    r.obs("outside", files_modified=["/abs/only.txt"], at=6)
    r.obs("nothing", at=7)
    r.obs("retired", files_read=["src/db.py"], status="superseded", at=8)
    r.summary("summary of db work", files_modified=["src/db.py"])
    return r


def _json_clause(files: tuple[str, ...], params: list[object]) -> str:
    return filters._files_clause("o", files, params)


@pytest.mark.parametrize("wanted", WANTED)
@pytest.mark.parametrize("query", ["", "db"])
def test_same_results_as_the_json_columns(rows: Rows, wanted: str, query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> list[tuple[str, int]]:
        out = []
        for project in (None, "alpha"):
            for inactive in (False, True):
                out += [(h.kind, h.id) for h in search(rows.conn, query, files=[wanted], project=project,
                                                         include_inactive=inactive, limit=50)]
        return out

    table = run()
    monkeypatch.setattr(filters, "_observation_files_clause", _json_clause)
    assert table == run()


def test_several_files_and_the_clause_uses_the_table(rows: Rows) -> None:
    params: list[object] = []
    sql = filters.where("observation", filters.make(files=["src/db.py", "/abs/only.txt"]), params)
    assert "observation_files" in sql and "json_each" not in sql
    hits = search(rows.conn, "", files=["src/db.py", "/abs/only.txt"], kinds=["observation"], limit=50)
    assert {h.title for h in hits} == {"edit db", "read db absolute", "docs readme", "outside"}


def test_malformed_json_column_is_no_error(rows: Rows) -> None:
    oid = rows.obs("broken files", files_read=["bad.py"])
    rows.conn.execute("UPDATE observations SET files_modified = 'not json' WHERE id = ?", (oid,))
    assert [h.id for h in search(rows.conn, "", files=["bad.py"], kinds=["observation"])] == [oid]
