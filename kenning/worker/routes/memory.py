"""HTTP routes to forget, export and import memory (behind the guard: token, Host, Origin).

``POST /api/forget``  JSON {ids, query, project, since, until, dry_run} → the selection and counts;
                      ``dry_run`` defaults to true: deleting takes an explicit ``"dry_run": false``.
``GET /api/export``   ?project=&since=&until=&include_sensitive=1 → JSON Lines, streamed.
``POST /api/import``  a JSON Lines body (size-limited) → counts; one bad line and nothing is written.
``POST /api/observations/supersede``  JSON {ids, by} → which ids are now superseded by ``by`` (same project).
``POST /api/observations/restore``    JSON {ids} → which superseded or retracted ids are current again.
``POST /api/observations/pin``        JSON {id, project?} → the memory is a standing rule (its group too).
``POST /api/observations/unpin``      JSON {id, project?} → the rule is an ordinary memory again.
``POST /api/observations/unarchive``  JSON {id, project?} → archived routine work is a key memory again.
                                      These three answer 404 (no such id), 400 (another project, bad
                                      body) or 409 (already so: pinned, not a rule, not archived, inactive).

Each request opens its own connection; the pipeline's writer and these wait for each other
through SQLite's busy timeout (see kenning/commands/memory.py for why that is enough).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections.abc import Iterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from kenning import settings as settings_mod
from kenning.memory_service import MemoryService
from kenning.privacy import ingress
from kenning.store import decisions, projects, supersede, transfer
from kenning.store import forget as fg
from kenning.store.db import connect
from kenning.worker.routes import BadRequest

MAX_FORGET_BODY = 1024 * 1024
MAX_IMPORT_BODY = 64 * 1024 * 1024
FORGET_FIELDS = ("ids", "query", "project", "since", "until", "dry_run")
EXPORT_PARAMS = ("project", "since", "until", "include_sensitive")
FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False, "": False}


def routes(state: Any) -> list[Route]:
    paths = state.paths

    async def forget(request: Request) -> Response:
        try:
            body = json.loads(await read_body(request, MAX_FORGET_BODY) or b"null")
        except BadRequest as e:
            return _error(e)
        except (ValueError, RecursionError):
            return _error(BadRequest("the body must be a JSON object"))
        try:
            filters, dry_run = forget_request(body)
        except ValueError as e:
            return _error(BadRequest(str(e)))
        # Events still in the spool belong to what the user wants gone: ingest them first.
        await run_in_threadpool(state.thread.flush, 5.0)

        def run() -> dict[str, Any]:
            conn = connect(paths.db)
            try:
                wanted = dataclasses.replace(filters, project=projects.one(conn, filters.project)) \
                    if filters.project else filters
                return MemoryService(conn, "http").forget(paths.db, wanted, dry_run=dry_run)
            finally:
                conn.close()

        try:
            return JSONResponse(await run_in_threadpool(run))
        except projects.AmbiguousProject as e:
            return _error(BadRequest(str(e)))
        except sqlite3.OperationalError as e:
            return _error(BadRequest(f"the database is busy ({e}); nothing was forgotten, try again", 503))

    async def export(request: Request) -> Response:
        try:
            kwargs = export_request(dict(request.query_params), [k for k, _v in request.query_params.multi_items()])
        except ValueError as e:
            return _error(BadRequest(str(e)))

        def key(named: str) -> str:
            conn = connect(paths.db, readonly=True)
            try:
                return projects.one(conn, named)
            finally:
                conn.close()

        if kwargs["project"]:
            try:
                kwargs["project"] = await run_in_threadpool(key, kwargs["project"])
            except projects.AmbiguousProject as e:
                return _error(BadRequest(str(e)))

        def lines() -> Iterator[str]:
            conn = connect(paths.db, readonly=True)
            try:
                yield from transfer.export_lines(transfer.export(conn, **kwargs))
            finally:
                conn.close()

        return StreamingResponse(lines(), media_type="application/x-ndjson",
                                 headers={"Content-Disposition": 'attachment; filename="kenning-export.jsonl"'})

    async def import_(request: Request) -> Response:
        try:
            raw = await read_body(request, MAX_IMPORT_BODY)
        except BadRequest as e:
            return _error(e)

        clean = ingress.cleaner(settings_mod.load(paths)[0]).text  # the user's settings as they are now

        def run() -> dict[str, int]:
            conn = connect(paths.db)
            try:
                return MemoryService(conn, "http").import_records(transfer.read_jsonl(raw.split(b"\n")), clean)
            finally:
                conn.close()

        try:
            added = await run_in_threadpool(run)
            _embed_soon()
        except transfer.BadRecord as e:
            return _error(BadRequest(f"nothing imported: {e}"))
        except sqlite3.OperationalError as e:
            return _error(BadRequest(f"nothing imported: the database is busy ({e}); try again", 503))
        return JSONResponse({"added": added})

    async def supersede_route(request: Request) -> Response:
        try:
            body = json.loads(await read_body(request, MAX_FORGET_BODY) or b"null")
            ids, by = ids_request(body, ("ids", "by"))
        except BadRequest as e:
            return _error(e)
        except (ValueError, RecursionError) as e:
            return _error(BadRequest(str(e) if isinstance(e, ValueError) and str(e) else "the body must be JSON"))
        if isinstance(by, bool) or not isinstance(by, int) or not 0 < by < 2**63:
            return _error(BadRequest("by must be the id of the observation that replaces them"))

        def run() -> dict[str, Any]:
            conn = connect(paths.db)
            try:
                return MemoryService(conn, "http").supersede(ids, by).as_dict()
            finally:
                conn.close()

        try:
            return JSONResponse(await run_in_threadpool(run))
        except supersede.SupersedeError as e:
            return _error(BadRequest(str(e)))
        except sqlite3.OperationalError as e:
            return _error(BadRequest(f"the database is busy ({e}); nothing changed, try again", 503))

    async def restore_route(request: Request) -> Response:
        try:
            body = json.loads(await read_body(request, MAX_FORGET_BODY) or b"null")
            ids, _ = ids_request(body, ("ids",))
        except BadRequest as e:
            return _error(e)
        except (ValueError, RecursionError) as e:
            return _error(BadRequest(str(e) if isinstance(e, ValueError) and str(e) else "the body must be JSON"))

        def run() -> dict[str, Any]:
            conn = connect(paths.db)
            try:
                done = MemoryService(conn, "http").restore(ids)
            finally:
                conn.close()
            return {"restored": done, "unchanged": [i for i in ids if i not in done]}

        try:
            return JSONResponse(await run_in_threadpool(run))
        except sqlite3.OperationalError as e:
            return _error(BadRequest(f"the database is busy ({e}); nothing changed, try again", 503))

    def decision_route(action: str) -> Any:
        async def route(request: Request) -> Response:
            try:
                body = json.loads(await read_body(request, MAX_FORGET_BODY) or b"null")
                oid, project = decision_request(body)
            except BadRequest as e:
                return _error(e)
            except (ValueError, RecursionError) as e:
                return _error(BadRequest(str(e) if isinstance(e, ValueError) and str(e) else "the body must be JSON"))

            def run() -> dict[str, Any]:
                conn = connect(paths.db)
                try:
                    if action == "unarchive":
                        days = int(getattr(state.memory.settings, "archive_after_days", 0) or 0)
                        return MemoryService(conn, "http").unarchive(oid, archive_after_days=days, project=project)
                    door = MemoryService(conn, "http")
                    act = {"pin": door.pin, "unpin": door.unpin, "confirm": door.confirm}[action]
                    return act(oid, project=project)
                finally:
                    conn.close()

            try:
                return JSONResponse(await run_in_threadpool(run))
            except decisions.DecisionError as e:
                return _error(BadRequest(str(e), DECISION_STATUS[e.kind]))
            except sqlite3.OperationalError as e:
                return _error(BadRequest(f"the database is busy ({e}); nothing changed, try again", 503))
        return route

    return [
        Route("/api/observations/pin", decision_route("pin"), methods=["POST"]),
        Route("/api/observations/unpin", decision_route("unpin"), methods=["POST"]),
        Route("/api/observations/unarchive", decision_route("unarchive"), methods=["POST"]),
        Route("/api/observations/confirm", decision_route("confirm"), methods=["POST"]),
        Route("/api/observations/supersede", supersede_route, methods=["POST"]),
        Route("/api/observations/restore", restore_route, methods=["POST"]),
        Route("/api/forget", forget, methods=["POST"]),
        Route("/api/export", export, methods=["GET"]),
        Route("/api/import", import_, methods=["POST"]),
    ]


def ids_request(body: Any, fields: tuple[str, ...]) -> tuple[list[int], Any]:
    """``{"ids": [...], "by": n}``-shaped bodies: the ids (1-1000 positive integers) and ``by``."""
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object like {\"ids\": [12]" + (', "by": 31}' if "by" in fields
                                                                                  else "}"))
    unknown = sorted(k for k in body if k not in fields)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(fields)}")
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids or len(ids) > 1000 or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 < i < 2**63 for i in ids):
        raise ValueError("ids must be a list of 1 to 1000 observation ids")
    return ids, body.get("by")


DECISION_STATUS = {"not_found": 404, "wrong_project": 400, "conflict": 409}


def decision_request(body: Any) -> tuple[int, str | None]:
    """``{"id": 12, "project": "..."}`` (project optional: when given, the memory must be of it)."""
    if not isinstance(body, dict):
        raise ValueError('the body must be a JSON object like {"id": 12}')
    unknown = sorted(k for k in body if k not in ("id", "project"))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: id, project")
    oid = body.get("id")
    if isinstance(oid, bool) or not isinstance(oid, int) or not 0 < oid < 2**63:
        raise ValueError("id must be the id of an observation (a positive integer)")
    project = body.get("project")
    if project is not None and (not isinstance(project, str) or not project.strip() or len(project) > 512):
        raise ValueError("project must be a project's key or name (at most 512 characters)")
    return oid, project


def forget_request(body: Any) -> tuple[fg.Filters, bool]:
    """Validate a forget body; ValueError says which field is wrong and how."""
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    unknown = sorted(k for k in body if k not in FORGET_FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(FORGET_FIELDS)}")
    ids = body.get("ids", [])
    if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise ValueError("ids must be a list of integers")
    query, project = body.get("query", ""), body.get("project", "")
    if not isinstance(query, str):
        raise ValueError("query must be a string")
    if not isinstance(project, str) or len(project) > 512:
        raise ValueError("project must be a string of at most 512 characters")
    dry_run = body.get("dry_run", True)
    if not isinstance(dry_run, bool):
        raise ValueError("dry_run must be true or false")
    since = _when(body.get("since"), "since", end=False)
    until = _when(body.get("until"), "until", end=True)
    filters = fg.Filters(ids=tuple(ids), query=query, project=project, since=since, until=until)
    filters.check()
    return filters, dry_run


def export_request(params: dict[str, str], keys: list[str]) -> dict[str, Any]:
    """Validate export query parameters into ``transfer.export`` keyword arguments."""
    unknown = sorted({k for k in keys if k not in EXPORT_PARAMS})
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(EXPORT_PARAMS)}")
    if len(keys) != len(set(keys)):
        raise ValueError("each parameter may be given once")
    flag = params.get("include_sensitive", "").strip().lower()
    if flag not in FLAGS:
        raise ValueError("include_sensitive must be 1 or 0")
    project = params.get("project", "")
    if len(project) > 512:
        raise ValueError("project must be at most 512 characters")
    since = _when(params.get("since") or None, "since", end=False)
    until = _when(params.get("until") or None, "until", end=True)
    if since is not None and until is not None and since >= until:
        raise ValueError("since must be before until")
    return {"project": project or None, "since": since, "until": until, "include_sensitive": FLAGS[flag]}


def _when(value: Any, name: str, *, end: bool) -> float | None:
    """An ISO date/datetime string (local time) or epoch seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{name} must be an ISO date, datetime or epoch seconds")
    if isinstance(value, str):
        if len(value) > 64:
            raise ValueError(f"{name} is too long for a date")
        try:
            value = float(value)
        except ValueError:
            try:
                return fg.parse_date(value, end=end)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
    if not math.isfinite(value) or not 0 <= value < 1e11:
        raise ValueError(f"{name} is out of range")
    return float(value)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes before reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BadRequest("invalid Content-Length")
        if int(declared) > limit:
            raise BadRequest(f"the body is larger than {limit} bytes", 413)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(f"the body is larger than {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def json_object(request: Request, limit: int, example: str) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the error answer to send: too large (413), not JSON, not an object
    (400, naming ``example``, the shape expected)."""
    import json

    try:
        body = json.loads(await read_body(request, limit) or b"null")
    except BadRequest as e:
        return _error(e)
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        return JSONResponse({"error": f"the body must be a JSON object like {example}"}, status_code=400)
    return body


def _error(e: BadRequest) -> JSONResponse:
    return JSONResponse({"error": str(e)}, status_code=e.status)


def _embed_soon() -> None:
    """New rows were written here, not by the pipeline: wake the embedder."""
    from kenning.search.runtime import current

    runtime = current()
    if runtime is not None:
        runtime.notify()
