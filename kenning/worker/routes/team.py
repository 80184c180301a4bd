"""The viewer's Team tab (behind the guard: token, Host, Origin): the memories waiting for review on the team
hub, and a reviewer's decision. Both go through kenning/team/review.py, the path ``kenning team review`` takes.

``GET /api/team/review``   ``{"team", "user", "pending": [{"gid", "author", "created_at", "layer", "title",
                           "body", "replaces", "yours"}]}``; ``team`` null when this machine joined none; 503
                           with why when the hub cannot be reached.
``POST /api/team/review``  ``{"gid", "decision": "approved" | "rejected"}`` → ``{"gid", "review"}``; 400 with
                           the hub's reason (your own memory, not in your teams, holds a secret).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kenning.worker.routes.memory import json_object

GID = re.compile(r"^[0-9a-f]{8,32}:[0-9]{1,19}$")


def routes(state: Any) -> list[Route]:
    paths = state.paths

    def listing() -> dict[str, Any]:
        from kenning.team import config, hub, review
        from kenning.team.sync import bounded

        if config.load(paths) is None:
            return {"team": None, "user": None, "pending": []}
        cfg, waiting = review.waiting(paths)
        # Hub text is shown as captured text is stored: secrets redacted, hidden characters dropped, bounded.
        return {"team": cfg.team, "user": cfg.user, "pending": [
            {**m, "title": bounded(m["title"], hub.MAX_TITLE), "body": bounded(m["body"], hub.MAX_TEXT),
             "replaces": [bounded(t, hub.MAX_TITLE) for t in m["replaces"]], "yours": m["author"] == cfg.user}
            for m in waiting]}

    async def get(request: Request) -> Response:
        from kenning.team import config
        from kenning.team.config import TeamError

        if request.query_params.get("peek"):  # whether this machine joined a team: never asks the hub
            cfg = await run_in_threadpool(config.load, paths)
            return JSONResponse({"team": cfg.team if cfg is not None else None})
        try:
            return JSONResponse(await run_in_threadpool(listing))
        except TeamError as e:
            return JSONResponse({"error": str(e)}, status_code=503)

    async def post(request: Request) -> Response:
        from kenning.team import review
        from kenning.team.config import TeamError

        body = await json_object(request, 4096, '{"gid": "…", "decision": "approved"}')
        if isinstance(body, JSONResponse):
            return body
        gid, decision = body.get("gid"), body.get("decision")
        if not isinstance(gid, str) or not GID.match(gid) or decision not in review.DECISIONS:
            return JSONResponse({"error": 'give {"gid": "<device>:<id>", "decision": "approved" or "rejected"}'},
                                status_code=400)
        try:
            done = await run_in_threadpool(review.decide, paths, gid, decision)
        except TeamError as e:
            status = 503 if "cannot reach" in str(e) else 400
            return JSONResponse({"error": str(e)}, status_code=status)
        return JSONResponse({"gid": gid, "review": done})

    return [Route("/api/team/review", get, methods=["GET"]), Route("/api/team/review", post, methods=["POST"])]
