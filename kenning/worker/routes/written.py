"""A memory or standing rule written by hand in the viewer (behind the guard: token, Host, Origin).

``POST /api/observations/new``  ``{"project", "text", "title"?, "type"?, "rule"?: true}`` → ``{"id", "created",
    "layer", "project"}`` (201; 200 when the same memory exists already). Cleaned exactly as captured text is
    (private blocks stripped, secrets redacted), saved through the memory service (surface ``viewer``);
    ``rule``: the user's own standing rule, pinned. 400 with why for an empty or too long text, an unknown
    type or project.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kenning.memory_service import MemoryService
from kenning.store import decisions, projects
from kenning.store.db import connect
from kenning.worker.routes.memory import json_object


def routes(state: Any) -> list[Route]:
    paths = state.paths

    async def new(request: Request) -> Response:
        body = await json_object(request, 64 * 1024, '{"project": "…", "text": "…"}')
        if isinstance(body, JSONResponse):
            return body
        project, text, title, kind, rule = (body.get("project"), body.get("text"), body.get("title"),
                                            body.get("type"), body.get("rule", False))
        if not isinstance(project, str) or not project.strip() or len(project) > 4096:
            return JSONResponse({"error": "project: choose the project the memory belongs to"}, status_code=400)
        if not isinstance(rule, bool) or (title is not None and not isinstance(title, str)) or (
                kind is not None and not isinstance(kind, str)):
            return JSONResponse({"error": "title and type must be text, rule true or false"}, status_code=400)

        def run() -> tuple[int, dict[str, Any]]:
            from kenning.observer.modes import load_mode, type_ids
            from kenning.privacy import ingress
            from kenning.store import manual

            settings = state.memory.settings
            try:
                draft = manual.prepare(text if isinstance(text, str) else "", title=title or None, type=kind or None,
                                       valid_types=type_ids(load_mode(settings.mode, paths.modes)),
                                       clean=ingress.cleaner(settings).text)
            except manual.InvalidMemory as e:
                return 400, {"error": str(e)}
            conn = connect(paths.db)
            try:
                try:
                    key = projects.one(conn, project)
                except projects.AmbiguousProject as e:
                    return 400, {"error": str(e)}
                if conn.execute("SELECT 1 FROM sessions WHERE project = ? LIMIT 1", (key,)).fetchone() is None:
                    return 400, {"error": f"no project {project!r} in memory: choose one of the list"}
                door = MemoryService(conn, "viewer")
                saved = door.save(draft, project=key, name=projects.display(conn, key, project))
                layer = str(conn.execute("SELECT layer FROM observations WHERE id = ?", (saved.id,)).fetchone()[0])
                if rule and layer != "rule":
                    try:
                        layer = str(door.pin(saved.id)["layer"])
                    except decisions.DecisionError as e:
                        return 409, {"error": f"saved as #{saved.id}, but not made a rule: {e}", "id": saved.id}
            finally:
                conn.close()
            return (201 if saved.created else 200), {"id": saved.id, "created": saved.created, "layer": layer,
                                                     "project": key}

        try:
            status, out = await run_in_threadpool(run)
        except sqlite3.OperationalError as e:
            return JSONResponse({"error": f"the database is busy ({e}); nothing was saved, try again"},
                                status_code=503)
        if status in (200, 201):
            from kenning.hook import client

            client.poke_embedder(paths)  # searchable by meaning now, not at the next round
        return JSONResponse(out, status_code=status)

    return [Route("/api/observations/new", new, methods=["POST"])]
