"""HTTP routes of the injection ledger (behind the guard: token, Host, Origin). Read only.

``GET /api/ledger/session?session=ID``  what one agent session was told, why, and what it used
                                        (``kenning why``); nothing recorded: ``given`` 0.
``GET /api/ledger/memory/{id}``         one memory's handings and uses: given N times, used M times.
``GET /api/ledger/health``              ``?since=&until=&project=``: the memory's dashboard (``kenning stats``).
``GET /api/ledger/review``              ``?project=&older_than=&limit=``: a check-up's list (``kenning review``):
                                        rules to confirm or demote, never-used memories, contradictions.
``POST /api/ledger/handed``             ``{"ids", "reason", "project", "fetched"}``: what the MCP server handed
                                        over (it only reads the database): noted, recorded by the pipeline.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kenning.worker.routes import BadRequest


def routes(state: Any) -> list[Route]:
    paths = state.paths

    def read(fn: Any) -> Any:
        if not os.path.exists(paths.db):
            raise BadRequest("no memory yet", 404)
        with state.memory.reading() as conn:
            return fn(conn)

    async def answer(fn: Any) -> JSONResponse:
        try:
            return JSONResponse(await run_in_threadpool(read, fn))
        except BadRequest as e:
            return JSONResponse({"error": str(e)}, status_code=e.status)
        except sqlite3.Error as e:
            return JSONResponse({"error": f"the database is busy ({e}); try again"}, status_code=503)

    async def session(request: Request) -> JSONResponse:
        from kenning.commands.audit import session_report

        wanted = request.query_params.get("session", "").strip()
        if not wanted or len(wanted) > 512:
            return JSONResponse({"error": "give session (an agent session id)"}, status_code=400)

        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            rep = session_report(conn, wanted)
            if rep is None:  # not an error: a session told nothing, or by a hook without the worker
                return {"session": wanted, "given": 0, "used": 0, "contradicted": 0, "tokens": 0, "injections": [],
                        "uses": []}
            return rep

        return await answer(run)

    async def memory(request: Request) -> JSONResponse:
        from kenning.store import injections

        raw = request.path_params["oid"]
        if not raw.isdigit() or len(raw) > 18:
            return JSONResponse({"error": "observation id must be a positive integer"}, status_code=400)
        return await answer(lambda conn: injections.for_memory(conn, int(raw)))

    async def health(request: Request) -> JSONResponse:
        from kenning.commands.stats import health as dashboard
        from kenning.mcp.inputs import ToolInputError, time_range
        from kenning.store import projects

        qp = request.query_params
        try:
            since, until = time_range(qp.get("since") or None, qp.get("until") or None)
        except ToolInputError as e:
            return JSONResponse({"error": str(e)}, status_code=400)

        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            try:
                project = projects.one(conn, qp["project"]) if qp.get("project") else None
            except projects.AmbiguousProject as e:
                raise BadRequest(str(e)) from None
            return dashboard(conn, project=project, since=since, until=until, settings=state.memory.settings)

        return await answer(run)

    async def review(request: Request) -> JSONResponse:
        from kenning.commands.audit import REVIEW_AFTER_DAYS, checkup
        from kenning.store import projects

        qp = request.query_params
        try:
            older = int(qp.get("older_than") or REVIEW_AFTER_DAYS)
            limit = int(qp.get("limit") or 50)
        except ValueError:
            return JSONResponse({"error": "older_than (days) and limit must be whole numbers"}, status_code=400)
        if not (0 <= older <= 36500 and 1 <= limit <= 500):
            return JSONResponse({"error": "older_than is 0 to 36500 days, limit 1 to 500"}, status_code=400)

        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            try:
                project = projects.one(conn, qp["project"]) if qp.get("project") else None
            except projects.AmbiguousProject as e:
                raise BadRequest(str(e)) from None
            return checkup(conn, project, limit, older)

        return await answer(run)

    async def handed(request: Request) -> JSONResponse:

        from kenning.store.injections import Given
        from kenning.worker.given import Note
        from kenning.worker.routes.memory import json_object

        body = await json_object(request, 64 * 1024, '{"ids": [12], "reason": "..."}')
        if isinstance(body, JSONResponse):
            return body
        ids, reason, project = body.get("ids"), body.get("reason", ""), body.get("project", "")
        chars, fetched = body.get("chars", 0), body.get("fetched", False)
        if not (isinstance(ids, list) and 0 < len(ids) <= 100
                and all(isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**63 for i in ids)):
            return JSONResponse({"error": "ids must be a list of 1 to 100 observation ids"}, status_code=400)
        if not (isinstance(reason, str) and len(reason) <= 200 and isinstance(project, str) and len(project) <= 4096
                and isinstance(chars, int) and not isinstance(chars, bool) and 0 <= chars < 10**7
                and isinstance(fetched, bool)):
            return JSONResponse({"error": "reason (at most 200 characters), project, chars (a count) and fetched "
                                          "(true or false) have the wrong type"}, status_code=400)
        state.thread.pipeline.handed.put(Note("mcp", "", "", project, [Given(i, reason, chars) for i in ids],
                                              fetched=fetched))
        state.thread.poke()
        return JSONResponse({"noted": len(ids)}, status_code=202)

    return [
        Route("/api/ledger/handed", handed, methods=["POST"]),
        Route("/api/ledger/session", session),
        Route("/api/ledger/memory/{oid}", memory),
        Route("/api/ledger/health", health),
        Route("/api/ledger/review", review),
    ]
