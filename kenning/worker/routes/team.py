"""The viewer's Team tab (behind the guard: token, Host, Origin): the memories waiting for review on the team
hub, and a reviewer's decision. Both go through kenning/team/review.py, the path ``kenning team review`` takes.

``GET /api/team/review``   ``{"team", "user", "pending": [{"gid", "author", "created_at", "layer", "title",
                           "body", "replaces": [{"gid", "title", "body", "title_diff", "body_diff"}], "yours"}]}``
                           (a diff: ``[[op, text], …]``, op ``=`` kept, ``-`` removed, ``+`` added); ``team`` null
                           when this machine joined none; 503 with why when the hub cannot be reached.
``POST /api/team/review``  ``{"gid", "decision": "approved" | "rejected", "title"?, "text"?}`` → ``{"gid",
                           "review", "edited"}`` (title and text: approve with the reviewer's wording); 400 with
                           the hub's reason (your own memory, not in your teams, holds a secret, too long).
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
        from kenning.team import config, review

        if config.load(paths) is None:
            return {"team": None, "user": None, "pending": []}
        # Hub text is shown as captured text is stored (review.shown: secrets redacted, hidden characters dropped,
        # bounded), the diffs computed on that.
        cfg, waiting = review.waiting(paths)
        return {"team": cfg.team, "user": cfg.user, "pending": [{**m, "yours": m["author"] == cfg.user}
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

        # An edit is at most 4,000 characters of text: up to 4 bytes each once encoded, and JSON escapes.
        body = await json_object(request, 65_536, '{"gid": "…", "decision": "approved"}')
        if isinstance(body, JSONResponse):
            return body
        gid, decision = body.get("gid"), body.get("decision")
        title, text = body.get("title"), body.get("text")
        if not isinstance(gid, str) or not GID.match(gid) or decision not in review.DECISIONS:
            return JSONResponse({"error": 'give {"gid": "<device>:<id>", "decision": "approved" or "rejected"}'},
                                status_code=400)
        if not all(v is None or isinstance(v, str) for v in (title, text)):
            return JSONResponse({"error": "title and text are strings"}, status_code=400)
        try:
            done = await run_in_threadpool(lambda: review.decide(paths, gid, decision, title=title, text=text))
        except TeamError as e:
            status = 503 if "cannot reach" in str(e) else 400
            return JSONResponse({"error": str(e)}, status_code=status)
        return JSONResponse({"gid": gid, "review": done, "edited": title is not None or text is not None})

    return [Route("/api/team/review", get, methods=["GET"]), Route("/api/team/review", post, methods=["POST"])]
