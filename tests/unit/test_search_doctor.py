"""`kenning doctor`'s search lines: a back-end whose package is missing says so (never "starting")."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kenning.paths import Paths
from kenning.search import doctor, embedders
from kenning.search.semantic import Semantic


def _status(state: str) -> dict[str, Any]:
    return {"embeddings": {"backend": "fastembed", "model": "BAAI/bge-small-en-v1.5", "state": state,
                           "detail": "", "vectors": 0, "missing": -1}}


@pytest.mark.parametrize("worker_state", [None, "starting", "loading"])
def test_missing_package_is_reported_whatever_the_worker_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              worker_state: str | None) -> None:
    monkeypatch.setattr(embedders, "missing_package", lambda backend: "fastembed" if backend == "fastembed" else None)
    monkeypatch.setattr(doctor, "_worker_status", lambda paths, health: _status(worker_state or "starting"))
    health = {"port": 1} if worker_state else None
    [(level, name, text)] = doctor.checks(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="fastembed"),
                                          health)
    assert level == "warn" and name == "embeddings"
    assert "fastembed is not installed" in text and "keywords only" in text and "starting" not in text


def test_auto_names_the_backend_it_resolved_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "resolve", lambda b: "fastembed" if b == "auto" else b)
    monkeypatch.setattr(embedders, "missing_package", lambda backend: "fastembed")
    [(level, _name, text)] = doctor.checks(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="auto"), None)
    assert level == "warn" and text.startswith("fastembed (auto): fastembed is not installed")


def test_installed_backend_still_starting_says_keywords_serve_meanwhile(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "missing_package", lambda backend: None)
    monkeypatch.setattr(doctor, "_worker_status", lambda paths, health: _status("loading"))
    [(level, _name, text)] = doctor.checks(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="fastembed"),
                                           {"port": 1})
    assert level == "ok" and "loading" in text and "keywords serve meanwhile" in text


def test_backend_off(tmp_path: Path) -> None:
    [(level, name, text)] = doctor.checks(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="none"), None)
    assert (level, name) == ("ok", "search") and "embeddings are off" in text


def test_worker_embedder_with_a_missing_package_fails_at_once(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "missing_package", lambda backend: "fastembed")
    s = Semantic(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="fastembed", embedding_model=""))
    s.start()
    assert s.state == "failed" and "fastembed is not installed" in s.detail
    assert s.status()["state"] == "failed"
    s.stop()
    s.join(1)


def test_auto_with_no_backend_installed_is_keywords_and_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default install has no embedding package: that is a working setup, not a warning."""
    from kenning.search import minilm

    monkeypatch.setattr(minilm, "available", lambda: False)
    monkeypatch.setattr(embedders, "missing_package", lambda backend: backend)
    assert embedders.resolve("auto") == "none"
    [(level, name, text)] = doctor.checks(Paths(str(tmp_path)), SimpleNamespace(embedding_backend="auto"), None)
    assert (level, name) == ("ok", "search") and "kenning extras add embeddings" in text
