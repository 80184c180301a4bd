"""Decisions on many memories at once, with undo (the viewer's bulk actions; behind the guard).

``POST /api/observations/bulk``  ``{"action": "pin" | "unpin", "ids": [...], "project"?: "…"}`` → ``{"done",
    "failed": [{"id", "error"}], "previous": [{"id", "layer", "user_layer"}]}``: each memory decided on its
    own (one refused is reported, the others go ahead); ``previous`` is what undoes it:
    ``{"action": "undo", "previous": [...]}`` puts each back as it was. Every change goes through the
    memory service (one operation-log row per memory, surface ``viewer``).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kenning.memory_service import MemoryService
from kenning.store import decisions
from kenning.store.db import connect
from kenning.worker.routes import BadRequest
from kenning.worker.routes.memory import read_body

MAX_IDS = 500
ACTIONS = ("pin", "unpin", "undo")


def parse(body: Any) -> tuple[str, list[dict[str, Any]], str | None]:
    """(action, the items to act on as {"id", "layer"?, "user_layer"?}, project); ValueError says what is wrong."""
    if not isinstance(body, dict) or body.get("action") not in ACTIONS:
        raise ValueError('the body must be a JSON object like {"action": "unpin", "ids": [12, 15]} '
                         f"(action: {', '.join(ACTIONS)})")
    project = body.get("project")
    if project is not None and (not isinstance(project, str) or len(project) > 512):
        raise ValueError("project must be a project's key or name")
    if body["action"] == "undo":
        prev = body.get("previous")
        if not isinstance(prev, list) or not 0 < len(prev) <= MAX_IDS or not all(
                isinstance(p, dict) and isinstance(p.get("id"), int) and not isinstance(p.get("id"), bool)
                and isinstance(p.get("layer"), str)
                and (p.get("user_layer") is None or isinstance(p["user_layer"], str)) for p in prev):
            raise ValueError(f"previous must be the list the action answered (1 to {MAX_IDS} items)")
        return "undo", prev, project
    ids = body.get("ids")
    if not isinstance(ids, list) or not 0 < len(ids) <= MAX_IDS or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 < i < 2**63 for i in ids):
        raise ValueError(f"ids must be a list of 1 to {MAX_IDS} observation ids")
    return body["action"], [{"id": i} for i in dict.fromkeys(ids)], project


def routes(state: Any) -> list[Route]:
    paths = state.paths

    async def bulk(request: Request) -> Response:
        try:
            action, items, project = parse(json.loads(await read_body(request, 256 * 1024) or b"null"))
        except BadRequest as e:
            return JSONResponse({"error": str(e)}, status_code=e.status)
        except (ValueError, RecursionError) as e:
            return JSONResponse({"error": str(e) if isinstance(e, ValueError) and str(e) else "the body must be JSON"},
                                status_code=400)

        def run() -> dict[str, Any]:
            conn = connect(paths.db)
            door = MemoryService(conn, "viewer")
            done: list[int] = []
            failed: list[dict[str, Any]] = []
            previous: list[dict[str, Any]] = []
            try:
                for it in items:
                    oid = int(it["id"])
                    before = conn.execute("SELECT layer, user_layer FROM observations WHERE id = ?", (oid,)).fetchone()
                    try:
                        if action == "undo":
                            door.put_back(oid, layer=it["layer"], user_layer=it.get("user_layer"), project=project)
                        else:
                            (door.pin if action == "pin" else door.unpin)(oid, project=project)
                    except decisions.DecisionError as e:
                        failed.append({"id": oid, "error": str(e)})
                        continue
                    done.append(oid)
                    if before is not None:
                        previous.append({"id": oid, "layer": before[0], "user_layer": before[1]})
            finally:
                conn.close()
            return {"action": action, "done": done, "failed": failed, "previous": previous}

        try:
            return JSONResponse(await run_in_threadpool(run))
        except sqlite3.OperationalError as e:
            return JSONResponse({"error": f"the database is busy ({e}); try again"}, status_code=503)

    return [Route("/api/observations/bulk", bulk, methods=["POST"])]
