"""The viewer's Team tab (behind the guard: token, Host, Origin): the memories waiting for review on each team hub
this machine is in, and a reviewer's decision. Both go through kenning/team/review.py, the path ``kenning team
review`` takes.

``GET /api/team/review``   ``{"team", "teams": [{"team", "user", "error", "pending": [{"gid", "author",
                           "created_at", "layer", "title", "body", "replaces": [{"gid", "title", "body",
                           "title_diff", "body_diff"}], "yours"}]}]}`` (a diff: ``[[op, text], …]``, op ``=`` kept,
                           ``-`` removed, ``+`` added); one entry per team, ``error`` (null, or why its hub could not
                           be read: the other teams are listed still); ``team`` the first team, null when this
                           machine joined none; 503 with why when no hub can be reached.
``POST /api/team/review``  ``{"gid", "decision": "approved" | "rejected", "team"?, "title"?, "text"?}`` → ``{"gid",
                           "review", "edited"}`` (title and text: approve with the reviewer's wording; team: the
                           team it waits in); 400 with the hub's reason (your own memory, not in your teams, holds a
                           secret, too long).
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
        from kenning.team import review
        from kenning.team.config import TeamError

        # Hub text is shown as captured text is stored (review.shown: secrets redacted, hidden characters dropped,
        # bounded), the diffs computed on that.
        each = review.waiting_each(paths)
        if each and all(isinstance(found, str) for _cfg, found in each):
            raise TeamError("; ".join(f"team {cfg.team}: {found}" for cfg, found in each))
        return {"team": each[0][0].team if each else None, "teams": [
            {"team": cfg.team, "user": cfg.user, "error": found if isinstance(found, str) else None,
             "pending": [] if isinstance(found, str) else [{**m, "yours": m["author"] == cfg.user} for m in found]}
            for cfg, found in each]}

    async def get(request: Request) -> Response:
        from kenning.team import config
        from kenning.team.config import TeamError

        if request.query_params.get("peek"):  # whether this machine joined a team: never asks a hub
            try:
                teams = await run_in_threadpool(config.load_all, paths)
            except TeamError:
                teams = []
            return JSONResponse({"team": teams[0].team if teams else None, "teams": [c.team for c in teams]})
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
        gid, decision, team = body.get("gid"), body.get("decision"), body.get("team")
        title, text = body.get("title"), body.get("text")
        if not isinstance(gid, str) or not GID.match(gid) or decision not in review.DECISIONS:
            return JSONResponse({"error": 'give {"gid": "<device>:<id>", "decision": "approved" or "rejected"}'},
                                status_code=400)
        if not all(v is None or isinstance(v, str) for v in (title, text, team)):
            return JSONResponse({"error": "team, title and text are strings"}, status_code=400)
        try:
            done = await run_in_threadpool(lambda: review.decide(paths, gid, decision, title=title, text=text,
                                                                         team=team or None))
        except TeamError as e:
            status = 503 if "cannot reach" in str(e) else 400
            return JSONResponse({"error": str(e)}, status_code=status)
        return JSONResponse({"gid": gid, "review": done, "edited": title is not None or text is not None})

    return [Route("/api/team/review", get, methods=["GET"]), Route("/api/team/review", post, methods=["POST"])]
