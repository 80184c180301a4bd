"""HTTP routes of the context hooks (behind the guard: token, Host, Origin).

``POST /api/context/prompt``  JSON ``{"prompt", "cwd" | "project", "session_id", "limit", "min_relevance",
                              "min_similarity", "semantic_ms"}`` → ``{"context": text or "", "results":
                              [...], "semantic": "off" | "answered" | "timed out" | "failed"}``: the
                              memories relevant to a prompt (UserPromptSubmit). Optional fields
                              default to the worker's settings; thresholds are percents.
``GET /api/context/file``     ``path``, ``cwd`` (or ``project`` and ``root``), ``limit`` →
                              ``{"context": text or "", "results": [...], "stale": bool}``: a file's
                              history, as the Read hook computes it (without its per-session memory).

Both answer quickly or with an error, never hang: each opens its own read-only connection.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kenning.context import file_history, prompt
from kenning.project import identify, is_excluded, resolve_key
from kenning.store import projects
from kenning.worker import given as ledger
from kenning.worker.routes import BadRequest

MAX_BODY = 256 * 1024
MAX_PROMPT_CHARS = 20_000
MAX_PATH_CHARS = 4096


# The prompt context fuses its keyword and meaning lists by weighted reciprocal rank (FTS weight,
# vector weight, k), tuned with its relevance gates (kenning/context/prompt.py); search_memory's
# fusion (kenning/search/config.py) is tuned on its own.
PROMPT_FUSION = (1.0, 0.5, 20)

def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _str(body: dict[str, Any], key: str, limit: int, default: str = "") -> str:
    v = body.get(key, default)
    if v is None:
        return default
    if not isinstance(v, str) or len(v) > limit or "\x00" in v:
        raise BadRequest(f"{key} must be a string of at most {limit} characters")
    try:
        v.encode("utf-8")  # a lone surrogate ("\udcff" in JSON) can be neither stored nor echoed
    except UnicodeEncodeError:
        raise BadRequest(f"{key} is not valid Unicode text") from None
    return v


def _int(raw: Any, key: str, default: int, lo: int, hi: int) -> int:
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        raise BadRequest(f"{key} must be an integer")
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise BadRequest(f"{key} must be an integer") from None
    if not lo <= v <= hi:
        raise BadRequest(f"{key} must be between {lo} and {hi}")
    return v


def _project(cwd: str, project: str, globs: tuple[str, ...]) -> tuple[str, str, str, bool]:
    """(name, root, key, excluded) of the project a request is about (the key before its aliases)."""
    if project:
        return project, "", project, is_excluded(project, "", "", globs)
    p = identify(cwd)
    return p.name, p.root, p.key, is_excluded(p.name, p.root, cwd, globs)


def _key(conn: sqlite3.Connection, key: str, named: bool) -> str:
    """The key rows are filed under: a project given by name is looked up, a computed key resolved."""
    if not named:
        return resolve_key(conn, key)
    try:
        return projects.one(conn, key)
    except projects.AmbiguousProject as e:
        raise BadRequest(str(e)) from None


def routes(state: Any) -> list[Route]:
    paths = state.paths
    given = prompt.Given()  # per agent session: ids already put next to one of its prompts
    icons_cache: dict[str, dict[str, str]] = {}

    def icons() -> dict[str, str]:
        if "v" not in icons_cache:
            icons_cache["v"] = file_history.icons_for(state.memory.settings, paths.modes)
        return icons_cache["v"]

    @contextmanager
    def read() -> Iterator[sqlite3.Connection | None]:
        if not os.path.exists(paths.db):
            yield None
            return
        with state.memory.reading() as conn:  # the worker's pool of read connections
            yield conn

    def searchers() -> tuple[Any, Any, tuple[float, float, int]]:
        """(keyword search without vectors, the vector index or None, fusion weights)."""
        from kenning.search.runtime import current
        from kenning.search.service import search

        runtime = current()
        if runtime is not None:
            def keywords(query: str, **kw: Any) -> list[Any]:
                return list(runtime.search(query, vectors=None, **kw))

            return keywords, runtime.vectors(), PROMPT_FUSION

        def fts_only(query: str, **kw: Any) -> list[Any]:  # no search runtime (tests): keywords alone
            with read() as conn:
                return search(conn, query, **kw) if conn is not None else []

        return fts_only, None, PROMPT_FUSION

    def prompt_context(body: dict[str, Any]) -> dict[str, Any]:
        settings = state.memory.settings  # per request: the viewer may have saved new ones
        text = _str(body, "prompt", MAX_PROMPT_CHARS)
        cwd = _str(body, "cwd", MAX_PATH_CHARS)
        project_name = _str(body, "project", 512)
        session = _str(body, "session_id", 512)
        agent = _str(body, "agent", 40) or "claude-code"
        if not cwd and not project_name:
            raise BadRequest("give cwd or project")
        limit = _int(body.get("limit"), "limit", settings.prompt_context_limit, 1, 20)
        min_rel = _int(body.get("min_relevance"), "min_relevance", settings.prompt_context_min_relevance, 0, 100)
        min_sim = _int(body.get("min_similarity"), "min_similarity", settings.prompt_context_min_similarity, 0, 100)
        semantic_ms = _int(body.get("semantic_ms"), "semantic_ms", settings.prompt_context_semantic_ms, 0, 1500)
        name, root, key, excluded = _project(cwd, project_name, settings.excluded_projects)
        if excluded or not text.strip():
            return {"project": name, "context": "", "results": [], "excluded": excluded}
        with read() as conn:
            if conn is None:
                return {"project": name, "context": "", "results": [], "excluded": False}
            keywords, vectors, weights = searchers()
            meaning = prompt.Meaning(vectors if semantic_ms else None, semantic_ms / 1000)
            resolved = _key(conn, key, bool(project_name))
            out, picks = prompt.build(conn, text, resolved, keyword_search=keywords,
                                      limit=limit, min_relevance=min_rel / 100, min_similarity=min_sim / 100,
                                      agent_session_id=session, start_count=settings.context_observations,
                                      given=given if session else None, icons=icons(), weights=weights,
                                      meaning=meaning, agent=agent, settings=settings, root=root if cwd else "")
        results = [p.as_dict() for p in picks]
        if session and out:  # the ledger, written by the pipeline thread (kenning/worker/given.py)
            state.thread.pipeline.handed.put(ledger.Note("prompt", session, agent, resolved, ledger.from_rows(
                out, ledger.prompt_reasons(results)), prompt=text))
        return {"project": name, "context": out, "results": results, "excluded": False,
                "semantic": meaning.state}

    def file_context(qp: Any) -> dict[str, Any]:
        settings = state.memory.settings  # per request: the viewer may have saved new ones
        path = qp.get("path") or ""
        cwd = qp.get("cwd") or ""
        if not path or len(path) > MAX_PATH_CHARS or len(cwd) > MAX_PATH_CHARS or "\x00" in path + cwd:
            raise BadRequest("give path (and cwd), each at most 4096 characters")
        limit = _int(qp.get("limit"), "limit", settings.file_context_limit, 1, 50)
        named = qp.get("project") or ""
        name, root, key, excluded = _project(cwd or path, named, settings.excluded_projects)
        root = qp.get("root") or root
        abs_path = file_history.resolve(path, cwd or root or "/")
        if excluded:
            return {"project": name, "path": abs_path, "context": "", "results": [], "excluded": True}
        with read() as conn:
            if conn is None:
                return {"project": name, "path": abs_path, "context": "", "results": [], "excluded": False}
            history = file_history.lookup(conn, settings.replace(file_context_limit=limit), abs_path,
                                          _key(conn, key, bool(named)), root)
        try:
            mtime: float | None = os.stat(abs_path).st_mtime
        except OSError:
            mtime = None
        stale = mtime is not None and history.stale(mtime)
        return {"project": name, "path": abs_path, "shown_path": history.shown_path,
                "context": "" if stale else history.text(icons()), "stale": stale, "sessions": history.sessions,
                "results": [t.as_dict() for t in history.picked], "excluded": False}

    async def prompt_route(request: Request) -> JSONResponse:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                return _error(f"the body is larger than {MAX_BODY} bytes", 413)
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            return _error('the body must be a JSON object like {"prompt": "...", "cwd": "..."}')
        if not isinstance(body, dict):
            return _error('the body must be a JSON object like {"prompt": "...", "cwd": "..."}')
        try:
            return JSONResponse(await run_in_threadpool(prompt_context, body))
        except BadRequest as e:
            return _error(str(e))
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)

    async def file_route(request: Request) -> JSONResponse:
        try:
            return JSONResponse(await run_in_threadpool(file_context, request.query_params))
        except BadRequest as e:
            return _error(str(e))
        except sqlite3.Error as e:
            return _error(f"the database is busy ({e}); try again", 503)

    return [
        Route("/api/context/prompt", prompt_route, methods=["POST"]),
        Route("/api/context/file", file_route),
    ]
