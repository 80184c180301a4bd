"""Embedding back-ends: the OpenAI-compatible client against a fake server, failing fast, threads."""

from __future__ import annotations

import importlib.util
import os
import socket
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kenning.paths import Paths
from kenning.search import embedders
from kenning.search.embedders import FastEmbed, OpenAICompatible, Unavailable, make, online
from kenning.search.semantic import Semantic
from tests.support.fake_embeddings_api import FakeEmbeddingsAPI
from tests.support.search_rows import Rows


def test_openai_compatible_round_trip() -> None:
    with FakeEmbeddingsAPI(api_key="k1") as api:
        api.shuffle = True
        e = OpenAICompatible("fake-model", api.url, api_key="k1")
        e.load()
        assert e.dim == 64
        v = e.embed(["the car", "some cash", "the automobile"])
        assert v.shape == (3, 64) and v.dtype == np.float32
        assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
        assert v[0] @ v[2] > 0.99 and v[0] @ v[1] < 0.5  # order kept although the server shuffled
        assert api.requests[-1] == {"model": "fake-model", "input": ["the car", "some cash", "the automobile"]}


@pytest.mark.parametrize("case", ["wrong key", "server error", "down", "not found"])
def test_openai_compatible_failures_are_unavailable(case: str) -> None:
    with FakeEmbeddingsAPI(api_key="k1", fail_status=500 if case == "server error" else 0) as api:
        url = api.url
        if case == "down":
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
            s.close()
        elif case == "not found":
            url = url[:-3] + "/nope"
        e = OpenAICompatible("m", url, api_key="k1" if case != "wrong key" else "bad")
        t0 = time.monotonic()
        with pytest.raises(Unavailable):
            e.load()
        assert time.monotonic() - t0 < 5


def test_hub_offline_flag_means_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.monotonic()
    assert online() is False
    assert time.monotonic() - t0 < 0.1


def test_unreachable_host_is_offline_within_the_probe_timeout() -> None:
    t0 = time.monotonic()
    assert online("nonexistent.invalid", timeout=0.5) is False
    assert time.monotonic() - t0 < 3


def test_fastembed_fails_fast_without_package_or_cached_model(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "online", lambda *a, **k: False)
    e = FastEmbed("", cache_dir=str(tmp_path / "models"))
    t0 = time.monotonic()
    with pytest.raises(Unavailable) as info:
        e.load()
    assert time.monotonic() - t0 < 5
    if importlib.util.find_spec("fastembed") is None:
        assert "not installed" in str(info.value)
    else:
        assert "offline" in str(info.value)


def test_make_picks_the_backend(tmp_path: Path) -> None:
    s = SimpleNamespace(embedding_backend="openai", embedding_model="", embedding_url="http://x/v1")
    e = make(s, str(tmp_path))
    assert isinstance(e, OpenAICompatible) and e.model == "text-embedding-3-small" and e.url == "http://x/v1"
    f = make(SimpleNamespace(embedding_backend="fastembed", embedding_model=""), str(tmp_path))
    assert isinstance(f, FastEmbed) and f.model == "BAAI/bge-small-en-v1.5"
    assert f.cache_dir == os.path.join(str(tmp_path), "models", "fastembed")
    assert make(SimpleNamespace(embedding_backend="none"), "").backend == "none"


def test_single_thread_env_is_set() -> None:
    embedders.single_thread()
    assert os.environ["OMP_NUM_THREADS"] and os.environ["OPENBLAS_NUM_THREADS"]


def test_background_embedder_over_the_fake_api(tmp_path: Path) -> None:
    """The worker's embedding thread against the wire protocol: backlog, then new rows, then queries."""
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    rows = Rows(paths.db)
    rows.obs("automobile engine stalls")
    with FakeEmbeddingsAPI() as api:
        settings = SimpleNamespace(embedding_backend="openai", embedding_model="fake", embedding_url=api.url)
        sem = Semantic(paths, settings)
        sem.start()
        try:
            assert sem.wait_ready(20), sem.status()
            assert sem.status()["vectors"] == 1 or sem.index is not None
            rows.obs("cash register drawer")
            sem.poke()
            deadline = time.monotonic() + 10
            while sem.status(fresh=True)["missing"] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert sem.index is not None
            hits = sem.index.nearest("vehicle", k=5)
            assert hits and hits[0][0] == "observation"
        finally:
            sem.stop()
            sem.join(5)


def test_background_embedder_failure_leaves_state(tmp_path: Path) -> None:
    paths = Paths(str(tmp_path / "data"))
    paths.ensure()
    Rows(paths.db)
    settings = SimpleNamespace(embedding_backend="openai", embedding_model="m", embedding_url="http://127.0.0.1:9/v1")
    sem = Semantic(paths, settings)
    t0 = time.monotonic()
    sem.start()
    try:
        assert sem.wait_ready(15) is False
        assert sem.state == "failed" and "embeddings" in sem.detail and time.monotonic() - t0 < 10
        assert sem.index_if_ready() is None and sem.embed_query("x") is None
    finally:
        sem.stop()
        sem.join(5)
