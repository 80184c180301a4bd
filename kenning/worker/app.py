"""HTTP routes of the worker: a thin surface over the service layer."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kenning import spool
from kenning.hook.client import health_proof
from kenning.paths import Paths, read_token
from kenning.service import Memory
from kenning.worker.load import InFlight, Requests
from kenning.worker.pipeline import PipelineThread
from kenning.worker.security import Guard, OneTimeCodes

VERSION = "0.1.0"


@dataclass
class WorkerState:
    paths: Paths
    memory: Memory
    thread: PipelineThread
    port: int
    start_token: str
    started_at: float
    observer_note: str
    settings_problems: list[str]
    ready: bool = False
    codes: OneTimeCodes = field(default_factory=OneTimeCodes)  # `kenning open`'s one-time codes
    compactor: Any = None  # kenning.store.compaction.Compactor, set by the viewer's routes
    requests: Requests = field(default_factory=Requests)  # in flight now (kenning.worker.load)


def observer_status(state: WorkerState) -> dict[str, Any]:
    """The observer's provider, why it was chosen, whether it works now, its last error, and an LLM
    observer's conversations, replies, back-off and budget (health and the viewer's stats)."""
    pipeline = state.thread.pipeline
    out: dict[str, Any] = {"provider": pipeline.observer.name, "why": state.observer_note,
                           "busy": pipeline.stats.observer_busy, "last_error": pipeline.stats.last_error}
    snapshot = getattr(pipeline.observer, "snapshot", None)
    if snapshot is not None:
        out.update(snapshot())
    return out


def _nonce_ok(challenge: str) -> bool:
    return 16 <= len(challenge) <= 128 and all(c in "0123456789abcdef" for c in challenge)


def create_app(state: WorkerState) -> Any:
    """The ASGI app, wrapped in the security guard and the in-flight counter."""

    async def health(request: Request) -> JSONResponse:
        # Public, so it says nothing that proves identity: a client that wants to know whether this
        # is the worker of its pid file sends a nonce, and only the holder of the start token can
        # answer with its HMAC (kenning.hook.client.worker_health).
        stats = state.thread.pipeline.stats
        body: dict[str, Any] = {
            "service": "kenning", "status": "ok" if not stats.last_error else "degraded",
            "version": VERSION, "pid": os.getpid(), "port": state.port,
            "uptime_s": round(time.time() - state.started_at, 1), "ready": state.ready,
            "observer": observer_status(state),
        }
        if stats.db_replaced:
            body["db_replaced"] = stats.db_replaced
        if stats.db_error:
            body["status"], body["db_error"] = "degraded", stats.db_error
        challenge = request.query_params.get("challenge", "")
        if challenge:
            if not _nonce_ok(challenge):
                return JSONResponse({"error": "challenge must be 16-128 lower-case hex digits"}, status_code=400)
            body["proof"] = health_proof(state.start_token, challenge)
        return JSONResponse(body)

    async def readiness(request: Request) -> JSONResponse:
        return JSONResponse({"ready": state.ready}, status_code=200 if state.ready else 503)

    async def poke(request: Request) -> JSONResponse:
        state.thread.poke()
        return JSONResponse({"queued": spool.depth(state.paths)}, status_code=202)

    async def context(request: Request) -> JSONResponse:
        cwd = request.query_params.get("cwd", "")
        project = request.query_params.get("project", "")
        agent = request.query_params.get("agent", "") or "claude-code"
        if len(cwd) > 4096 or len(project) > 512 or len(agent) > 40 or "\x00" in cwd + project:
            return JSONResponse({"error": "cwd or project too long or invalid"}, status_code=400)
        if not cwd and not project:
            return JSONResponse({"error": "give cwd or project"}, status_code=400)
        challenge = request.query_params.get("challenge", "")
        if challenge and not _nonce_ok(challenge):
            return JSONResponse({"error": "challenge must be 16-128 lower-case hex digits"}, status_code=400)
        # Answer from what is committed: events still in the spool are not waited for. A cycle
        # cost the hook tens of milliseconds; what it adds is what was captured since the last
        # cycle (a poke starts one within POKE_GAP_S), the lag a model observer has anyway.
        # Only a new worker's first cycle is awaited: the spool may then hold everything
        # captured while no worker ran.
        if not state.thread.cycles_done:
            await run_in_threadpool(state.thread.flush, 0.8)
        body = await run_in_threadpool(state.memory.context, cwd, project, None, agent)
        session = request.query_params.get("session", "")
        if session and body.get("context") and len(session) <= 512:  # the ledger, written by the pipeline thread
            from kenning.worker.given import Note, from_index

            state.thread.pipeline.handed.put(Note("session_start", session, agent, str(body.get("key") or ""),
                                                  from_index(body["context"])))
        damaged = state.thread.pipeline.stats.db_error
        if damaged and body.get("context") and damaged not in body["context"]:
            from kenning.context.session_start import damage_note, with_notes

            body["context"] = with_notes(body["context"], [damage_note(damaged)])
        if challenge:  # one round trip for the hook: this answer also proves it is the worker of the pid file
            body["proof"], body["port"] = health_proof(state.start_token, challenge), state.port
        return JSONResponse(body)

    async def status(request: Request) -> JSONResponse:
        body = await run_in_threadpool(state.memory.status)
        s = state.thread.pipeline.stats
        if s.db_error:  # what the worker found, in the words every other surface uses
            body.update(db_ok=False, db_error=s.db_error)
        body["worker"] = {"pid": os.getpid(), "port": state.port, "uptime_s": round(time.time() - state.started_at, 1),
                          "ingested": s.ingested, "duplicates": s.duplicates, "quarantined": s.quarantined,
                          "observations_stored": s.observations, "cycles": s.cycles, "last_error": s.last_error,
                          "observer": state.thread.pipeline.observer.name, "observer_note": state.observer_note,
                          "db_replaced": s.db_replaced, "unsettled": state.thread.pipeline.unsettled()}
        kept = getattr(state.memory, "selections", None)
        if kept is not None:  # the session-start selections kept (kenning/context/cache.py)
            body["worker"]["context_cache"] = {"hits": kept.hits, "misses": kept.misses,
                                               "texts_reused": kept.texts_reused, "warmed": kept.warmed}
        body["settings_problems"] = state.settings_problems
        return JSONResponse(body)

    async def observation(request: Request) -> JSONResponse:
        raw = request.path_params["oid"]
        if not raw.isdigit() or len(raw) > 18:
            return JSONResponse({"error": "observation id must be a positive integer"}, status_code=400)
        obs = await run_in_threadpool(state.memory.observation, int(raw))
        if obs is None:
            return JSONResponse({"error": f"no observation {raw}"}, status_code=404)
        return JSONResponse(obs)

    async def worker_settings(request: Request) -> JSONResponse:
        """The settings this worker runs with, and which of them its environment set (names only):
        ``kenning doctor`` compares them with what a worker started from the caller's shell would get."""
        from kenning.settings import ENV_PREFIX, NON_SETTING_ENV, SPECS

        env = sorted(k for k in os.environ if k.startswith(ENV_PREFIX) and k not in NON_SETTING_ENV
                     and k[len(ENV_PREFIX):].lower() in SPECS)
        return JSONResponse({"settings": state.memory.settings.as_dict(), "env": env})

    async def flush(request: Request) -> JSONResponse:
        done = await run_in_threadpool(state.thread.flush, 10.0)
        return JSONResponse({"flushed": done, "spool_depth": spool.depth(state.paths)})

    routes = [
        Route("/api/health", health),
        Route("/api/readiness", readiness),
        Route("/api/spool/poke", poke, methods=["POST"]),
        Route("/api/flush", flush, methods=["POST"]),
        Route("/api/context", context),
        Route("/api/status", status),
        Route("/api/worker/settings", worker_settings),
        Route("/api/observations/{oid}", observation),
    ]
    from kenning.worker.routes import feature_routes

    routes += feature_routes(state)
    # Rows stored: the session-start selections they changed are read again off the answer path.
    from kenning.context.cache import Warmer

    warmer = Warmer(state.memory.warm_contexts)

    def stored(event: dict[str, Any]) -> None:
        if event.get("type") == "stored":
            warmer.poke()

    state.thread.pipeline.stats.listeners.append(stored)
    app = Starlette(routes=routes)
    return InFlight(Guard(app, state.port, lambda: read_token(state.paths)), state.requests)
