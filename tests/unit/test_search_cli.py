"""`kenning search`, `kenning timeline` and `kenning reindex` without a worker (real CLI processes)."""

from __future__ import annotations

import json

from tests.conftest import Home
from tests.support.search_rows import NOW, Rows


def fill(home: Home) -> dict[str, int]:
    home.data.mkdir(parents=True, exist_ok=True)
    rows = Rows(home.paths.db)
    made = {"a": rows.obs("Fixed the timezone bug in invoice dates", type="bugfix", at=NOW),
            "b": rows.obs("getUserById caches nothing", at=NOW + 60),
            "c": rows.obs("Old approach to dates", status="superseded", at=NOW + 120)}
    rows.conn.close()
    return made


def test_search_json_and_text(home: Home) -> None:
    made = fill(home)
    r = home.kenning("search", "timezone", "bug", "--json")
    assert r.returncode == 0, r.stderr
    body = json.loads(r.stdout)
    assert [h["id"] for h in body["results"]] == [made["a"]] and body["semantic"] is False
    r = home.kenning("search", "dates", "--all")
    assert f"#{made['c']}" in r.stdout and "[superseded]" in r.stdout
    r = home.kenning("search", "zebra-quokka")  # no word of it is in memory
    assert r.returncode == 0 and "No memory matches" in r.stdout
    r = home.kenning("search", "x", "--since", "not a date")
    assert r.returncode != 0 and "ISO date" in r.stderr
    r = home.kenning("search", '"(NEAR*', "-")
    assert r.returncode == 0, r.stderr


def test_timeline_cli(home: Home) -> None:
    made = fill(home)
    r = home.kenning("timeline", str(made["a"]), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["after"][0]["id"] == made["b"]
    r = home.kenning("timeline", "--query", "getUserById")
    assert r.returncode == 0 and f"> #{made['b']}" in r.stdout
    assert home.kenning("timeline", "999999").returncode == 1
    assert home.kenning("timeline").returncode == 2


def test_reindex_text_and_trigram(home: Home) -> None:
    made = fill(home)
    assert json.loads(home.kenning("search", "UserById", "--json").stdout)["results"] == []
    home.env["KENNING_SEARCH_TRIGRAM"] = "true"
    r = home.kenning("reindex", "--no-vectors")
    assert r.returncode == 0, r.stderr
    assert "trigram index: rebuilt" in r.stdout and "full-text index: " in r.stderr  # plain progress lines
    hits = json.loads(home.kenning("search", "UserById", "--json").stdout)["results"]
    assert [h["id"] for h in hits] == [made["b"]] and hits[0]["match"] == "substring"
    home.env["KENNING_SEARCH_TRIGRAM"] = "false"
    r = home.kenning("reindex", "--no-vectors")
    assert "trigram index: dropped" in r.stdout
    assert home.db().execute("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%trigram%'").fetchone()[0] == 0
