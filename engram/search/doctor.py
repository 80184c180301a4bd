"""``engram doctor`` lines about search: the embedding back-end's state and the trigram index."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

from engram.paths import Paths, read_token

Check = tuple[str, str, str]

PACKAGES = {"fastembed": "fastembed", "sentence-transformers": "sentence_transformers", "openai": "numpy"}


def checks(paths: Paths, settings: Any, health: dict[str, Any] | None) -> list[Check]:
    backend = getattr(settings, "embedding_backend", "none")
    if backend == "none":
        return [("ok", "search", "keywords (FTS5 BM25); embeddings are off (embedding_backend is none)")]
    status = _worker_status(paths, health) if health else None
    if status is None:
        module = PACKAGES.get(backend, "")
        if module and importlib.util.find_spec(module) is None:
            return [("warn", "embeddings", f"{backend}: the package {module} is not installed; search uses "
                                           "keywords only")]
        return [("ok", "embeddings", f"{backend}: loaded by the worker when it runs")]
    emb = status.get("embeddings", {})
    state = emb.get("state", "?")
    if state == "failed":
        return [("warn", "embeddings", f"{backend}: {emb.get('detail')}; search uses keywords only")]
    detail = f"{emb.get('backend')} {emb.get('model')}: {state}, {emb.get('vectors', 0)} vectors"
    if emb.get("missing", 0) > 0:
        detail += f", {emb['missing']} rows still to embed"
    return [("ok", "embeddings", detail)]


def _worker_status(paths: Paths, health: dict[str, Any]) -> dict[str, Any] | None:
    from engram.hook.client import request

    res = request(int(health["port"]), "GET", "/api/search/status", token=read_token(paths), timeout=2.0)
    if res is None or res[0] != 200:
        return None
    try:
        body = json.loads(res[1])
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
