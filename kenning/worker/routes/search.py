"""HTTP routes of search (behind the guard: token, Host, Origin).

``GET /api/search``               query params mirror :func:`kenning.search.service.search`
                                  (``query``, ``project``, ``types``, ``concepts``, ``files``, ``since``,
                                  ``until``, ``session``, ``kinds``, ``order``, ``limit``, ``offset``,
                                  ``include_inactive``); lists repeat or are comma-separated
                                  (``files`` only repeat); dates are epoch seconds or ISO 8601.
``GET /api/search/status``        FTS, trigram, fusion weights, the embedding back-end's state
                                  (``?fresh=1``: count the rows still without a vector now).
``POST /api/search/reindex``      ``{"force": false}``: prune vectors of deleted rows (all, with force)
                                  and let the background embedder fill in what is missing.
``GET /api/timeline``             ``anchor`` (an observation id) or ``query``; ``before``, ``after``, ``project``.
``POST /api/observations/batch``  JSON ``{"ids": [...], "project": "..."}`` → full records in that order.

Any query text gives results or an empty list; bad parameters give 400, unknown anchors 404,
a database busy beyond the timeout 503.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kenning.search import known
from kenning.search.runtime import SearchRuntime, WouldWait
from kenning.search.service import SearchInfo
from kenning.store import projects
from kenning.threads import LazyPool
from kenning.worker.routes import BadRequest

MAX_BODY = 256 * 1024
MAX_PARAM_CHARS = 20_000
FLAGS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False,
         "": False}


def _text(qp: QueryParams, *names: str) -> str | None:
    for n in names:
        v = qp.get(n)
        if v is not None:
            if len(v) > MAX_PARAM_CHARS:
                raise BadRequest(f"{n} is longer than {MAX_PARAM_CHARS} characters")
            return v
    return None


def _list(qp: QueryParams, *names: str, split: bool = True) -> list[str] | None:
    out: list[str] = []
    for n in names:
        for v in qp.getlist(n):
            out.extend(v.split(",") if split else [v])
    return [v.strip() for v in out if v.strip()] or None


def _int(qp: QueryParams, name: str, default: int | None = None) -> int | None:
    v = qp.get(name)
    if v is None or v == "":
        return default
    try:
        n = int(v)
    except ValueError:
        raise BadRequest(f"{name} must be an integer") from None
    if abs(n) >= 2**63:
        raise BadRequest(f"{name} is out of range")
    return n


def parse_time(value: str, name: str) -> float:
    """Epoch seconds, or an ISO 8601 date / date-time (UTC when no offset is given)."""
    v = value.strip()
    try:
        return float(v)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{name} must be epoch seconds or an ISO 8601 date") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _flag(qp: QueryParams, name: str) -> bool:
    v = (qp.get(name) or "").strip().lower()
    if v not in FLAGS:
        raise BadRequest(f"{name} must be true or false")
    return FLAGS[v]


def search_params(qp: QueryParams) -> dict[str, Any]:
    """Keyword arguments of ``search()`` from query parameters; BadRequest on bad values."""
    kw: dict[str, Any] = {
        "project": _text(qp, "project") or None,
        "types": _list(qp, "types", "type"),
        "concepts": _list(qp, "concepts", "concept"),
        "files": _list(qp, "files", "file", split=False),
        "session": _int(qp, "session"),
        "agent": _text(qp, "agent") or None,
        "order": _text(qp, "order") or "relevance",
        "limit": _int(qp, "limit", 20),
        "offset": _int(qp, "offset", 0),
        "include_inactive": _flag(qp, "include_inactive"),
    }
    kinds = _list(qp, "kinds", "kind")
    if kinds:
        kw["kinds"] = kinds
    for name in ("since", "until"):
        v = _text(qp, name)
        if v:
            kw[name] = parse_time(v, name)
    return kw


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _call(fn: Callable[[], Any]) -> Any:
    return await run_in_threadpool(fn)


SEARCH_THREADS = 4  # more searches at once than cores only contend for them (and the GIL)
_searchers = LazyPool(SEARCH_THREADS, "kenning-search")


async def _search_call(fn: Callable[[], Any]) -> Any:
    """``fn`` on a thread kept for searches: asyncio's executor hop costs the event loop ~0.1 ms
    less than anyio's (no capacity limiter, cancel scope or task lookups), a search request's only
    hop. Threads are started on first use."""
    return await asyncio.get_running_loop().run_in_executor(_searchers.get(), fn)


def project_key(runtime: SearchRuntime, text: str | None, wait: bool = True) -> str | None:
    """The key of the project a request names (a key, a path or a display name); BadRequest when
    several projects share the name given. Read on one of the worker's pooled connections."""
    if not text:
        return None
    with runtime.reading(wait) as conn:
        if conn is None:
            return text
        try:
            return projects.one(conn, text)
        except projects.AmbiguousProject as e:
            raise BadRequest(str(e)) from None


def named_filters(runtime: SearchRuntime, query: str, kw: dict[str, Any], wait: bool = True) -> None:
    """BadRequest when a filter names no known project, type or agent, or the query has no words."""
    if query.strip() and not known.has_words(query):
        raise BadRequest(known.no_words(query))
    valid = known.observation_types(runtime.settings, runtime.paths) if kw.get("types") else None
    try:
        known.check(None, types=kw.get("types"), valid_types=valid, agent=kw.get("agent"))
        if kw.get("project"):  # only a named project needs the database
            with runtime.reading(wait) as conn:
                known.check(conn, project=kw["project"])
    except known.UnknownName as e:
        raise BadRequest(str(e)) from None


def json_bytes(content: Any) -> bytes:
    """``content`` encoded exactly as Starlette's JSONResponse encodes it."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode()


def routes(state: Any) -> list[Route]:
    runtime = SearchRuntime(state.paths, state.memory.settings, pool=getattr(state.memory, "pool", None)).install()
    try:
        state.thread.pipeline.stats.listeners.append(runtime.notify)  # embed new rows in the background
    except AttributeError:
        pass

    def search_body(qp: QueryParams, wait: bool = True) -> bytes:
        """The whole answer, built and encoded in one call: on a search thread, or inline with
        ``wait=False`` (WouldWait rather than block the event loop on a lock or an open)."""
        query = _text(qp, "query", "q") or ""
        kw = search_params(qp)
        named_filters(runtime, query, kw, wait)
        kw["project"] = project_key(runtime, kw["project"], wait)
        info = SearchInfo()
        hits = runtime.search(query, wait=wait, info=info, **kw)
        # Which paths answered, truthfully: meaning only when the query was embedded and compared.
        return json_bytes({"query": query, "count": len(hits), "semantic": info.meaning, "paths": info.paths(),
                           "note": info.note, "complete": info.complete, "results": [h.as_dict() for h in hits]})

    requests = getattr(state, "requests", None)  # kenning.worker.load.Requests

    def inline() -> bool:
        """Answer on the event loop itself: only a keyword search (no query to embed, so a few
        milliseconds) and only when no other request waits for the loop. The hop to a thread and
        back costs ~0.7 ms on a 2-vCPU machine (a wake-up on the other core, the GIL passed
        twice), an eighth of such a search; with company, the loop stays free and the pool runs it.
        Inline, nothing waits: a lock or a missing connection sends the search to the pool."""
        return requests is not None and requests.alone() and runtime.pool is not None \
            and runtime.vectors() is None

    async def answer(qp: QueryParams) -> bytes:
        if inline():
            try:
                return search_body(qp, wait=False)
            except WouldWait:
                pass
        return await _search_call(lambda: search_body(qp))

    async def search(request: Request) -> Response:
        qp = request.query_params
        try:
            body = await answer(qp)
        except BadRequest as e:
            return _error(str(e))
        except ValueError as e:  # unknown order or kind
            return _error(str(e))
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)
        return Response(body, media_type="application/json")

    async def status(request: Request) -> JSONResponse:
        fresh = request.query_params.get("fresh", "") in ("1", "true", "yes")
        return JSONResponse(await _call(lambda: runtime.status(fresh=fresh)))

    async def reindex(request: Request) -> JSONResponse:
        raw = await request.body() if int(request.headers.get("content-length") or 0) <= MAX_BODY else b""
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("force", False), bool):
            return _error("the body must be a JSON object like {\"force\": false}")
        try:
            return JSONResponse(await _call(lambda: runtime.reindex_vectors(bool(body.get("force")))))
        except ValueError as e:
            return _error(str(e), 409)
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)

    async def timeline(request: Request) -> JSONResponse:
        qp = request.query_params
        try:
            anchor = _int(qp, "anchor")
            if anchor is None:
                anchor = _int(qp, "id")
            kw = {"anchor": anchor, "query": _text(qp, "query", "q"), "before": _int(qp, "before", 3),
                  "after": _int(qp, "after", 3), "project": _text(qp, "project") or None,
                  "include_inactive": _flag(qp, "include_inactive")}
            if anchor is None and not kw["query"]:
                return _error("give anchor (an observation id) or query")
            named = kw["project"]
            await _call(lambda: named_filters(runtime, str(kw["query"] or ""), {"project": named}))
            kw["project"] = await _call(lambda: project_key(runtime, str(named) if named else None))
        except BadRequest as e:
            return _error(str(e))
        try:
            body = await _call(lambda: runtime.timeline(**kw))
        except ValueError as e:
            return _error(str(e), 404)
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)
        return JSONResponse(body)

    async def batch(request: Request) -> JSONResponse:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                return _error(f"the body is larger than {MAX_BODY} bytes", 413)
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            return _error("the body must be a JSON object like {\"ids\": [1, 2]}")
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return _error("ids must be a list of integers")
        if len(ids) > 500:
            return _error("at most 500 ids at once")
        project = body.get("project")
        if project is not None and not isinstance(project, str):
            return _error("project must be a string")
        try:
            key = await _call(lambda: project_key(runtime, project))
            records = await _call(lambda: runtime.get_observations(ids, key))
        except BadRequest as e:
            return _error(str(e))
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)
        return JSONResponse({"count": len(records), "observations": records})

    return [
        Route("/api/search", search),
        Route("/api/search/status", status),
        Route("/api/search/reindex", reindex, methods=["POST"]),
        Route("/api/timeline", timeline),
        Route("/api/observations/batch", batch, methods=["POST"]),
    ]
