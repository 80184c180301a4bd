"""The web viewer: its static page and its API under /api/viewer (contract: docs/viewer-api.md).

The page (``/`` and ``/static/...``) holds no memory and needs no token; every API route is
behind the guard like the rest (token, Host, same-origin writes). Every response carries a
Content-Security-Policy without inline script, so text from memory can never run as code.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from kenning import settings as settings_mod
from kenning import spool
from kenning.hook.client import connection_owner
from kenning.memory_service import MemoryService
from kenning.observer import trouble
from kenning.observer.modes import available_modes, load_mode
from kenning.paths import read_token
from kenning.privacy import ingress
from kenning.project import identify
from kenning.search.query import parse as parse_query
from kenning.store import forget as fg
from kenning.store import repo
from kenning.store.compaction import Compactor
from kenning.store.db import connect
from kenning.store.decisions import archive_cutoff
from kenning.viewer import detail, items, settings_form, stats
from kenning.worker.routes import BadRequest
from kenning.worker.routes.memory import read_body
from kenning.worker.routes.search import parse_time
from kenning.worker.security import SESSION_TTL_S, new_session

log = logging.getLogger("kenning.viewer")

STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "viewer", "static")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
                 ".ico": "image/x-icon", ".json": "application/json"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
# Routes of the page itself: public (they hold no memory), everything under /api/ is not.
PAGE_PATHS = ("/", "/static/{name}")
MAX_BODY = 256 * 1024
MAX_PARAM = 2000
MAX_QUERY = 16_000  # a pasted log is searched by its head (search.query.MAX_INPUT_CHARS), not refused
# Parameters as a user knows them: an error names what they typed into, never the wire name.
LABELS = {"q": "the search text", "query": "the search text", "since": "the From date", "until": "the To date",
          "project": "the project", "type": "the type", "concept": "the concept", "before": "the page cursor",
          "kinds": "kinds", "memory": "the memory view", "tz": "the time zone", "limit": "limit", "offset": "offset",
          "days": "days"}
STATUS_EVERY_S = 5.0
HEARTBEAT_S = 15.0
POLL_S = 1.0
META_TTL_S = 30.0  # also catches rows other processes write (MCP save_memory, import)


def _json(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=SECURITY_HEADERS)


def _error(message: str, status: int = 400, **extra: Any) -> JSONResponse:
    return _json({"error": message, **extra}, status)


def _label(name: str) -> str:
    return LABELS.get(name, name)


def _param(request: Request, name: str, limit: int = MAX_PARAM) -> str | None:
    v = request.query_params.get(name)
    if v is None or v.strip() == "":
        return None
    if len(v) > limit:
        raise BadRequest(f"{_label(name)} is too long (at most {limit:,} characters)")
    if "\x00" in v:
        raise BadRequest(f"{_label(name)} holds a NUL character")
    return v.strip()


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    v = _param(request, name)
    if v is None:
        return default
    try:
        n = int(v)
    except ValueError:
        raise BadRequest(f"{_label(name)} must be a whole number") from None
    if not lo <= n <= hi:
        raise BadRequest(f"{_label(name)} must be between {lo} and {hi}")
    return n


def _path_id(request: Request, name: str) -> int:
    raw = request.path_params[name]
    if not raw.isdigit() or len(raw) > 18 or int(raw) == 0:
        raise BadRequest(f"{name} must be a positive integer")
    return int(raw)


def feed_filter(request: Request, archive_after_days: int = 0) -> items.FeedFilter:
    """The feed's and search's filters from query parameters; BadRequest on bad values."""
    types: list[str] = []
    for v in request.query_params.getlist("type") + request.query_params.getlist("types"):
        if len(v) > MAX_PARAM:
            raise BadRequest("type is too long")
        types += [t.strip() for t in v.split(",") if t.strip()]
    kinds_raw = _param(request, "kinds")
    kinds = tuple(k.strip() for k in kinds_raw.split(",") if k.strip()) if kinds_raw else items.KINDS
    bad = [k for k in kinds if k not in items.KINDS]
    if bad or not kinds:
        raise BadRequest(f"kinds must be a comma list of {', '.join(items.KINDS)}")
    since, until = _param(request, "since"), _param(request, "until")
    inactive = (_param(request, "include_inactive") or "1").lower()
    if inactive not in ("0", "1", "true", "false", "yes", "no"):
        raise BadRequest("include_inactive must be 1 or 0")
    memory = _param(request, "memory") or ""
    if memory not in items.MEMORY_VIEWS:
        raise BadRequest("the memory view must be one of: rule, key, log, archived, superseded (or none)")
    since_at = parse_time(since, _label("since")) if since else None
    until_at = parse_time(until, _label("until")) if until else None
    if since_at is not None and until_at is not None and since_at >= until_at:
        raise BadRequest("the From date is after the To date: swap them, or clear one")
    return items.FeedFilter(
        project=_param(request, "project"), types=tuple(dict.fromkeys(types)), concept=_param(request, "concept"),
        since=since_at, until=until_at, kinds=kinds, include_inactive=inactive in ("1", "true", "yes"),
        memory=memory, archive_before=archive_cutoff(archive_after_days))


def time_zone(request: Request) -> tzinfo | None:
    """The page's IANA time zone (for day groups), None when not asked; BadRequest when unknown."""
    name = _param(request, "tz", 64)
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadRequest(f"unknown time zone {name!r}") from None


def archive_days(state: Any) -> int:
    """archive_after_days as the worker's settings say now (the viewer saves them live)."""
    return int(getattr(state.memory.settings, "archive_after_days", 0) or 0)


def _mode(state: Any) -> dict[str, Any]:
    return load_mode(state.memory.settings.mode, state.paths.modes)


def _types(mode: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in mode.get("observation_types") or [] if isinstance(t, dict) and "id" in t]


def routes(state: Any) -> list[Route]:
    paths = state.paths
    compactor = Compactor(paths.db, os.path.join(paths.root, "compaction.pending"))
    state.compactor = compactor
    compactor.resume()

    def read() -> sqlite3.Connection | None:
        return connect(paths.db, readonly=True) if os.path.exists(paths.db) else None

    async def with_read(fn: Callable[[sqlite3.Connection], Any], empty: Any) -> Any:
        def run() -> Any:
            conn = read()
            if conn is None:
                return empty
            try:
                return fn(conn)
            finally:
                conn.close()
        return await run_in_threadpool(run)

    async def guarded(fn: Callable[[], Any]) -> Response:
        """Runs a handler body, turning the usual failures into clear JSON errors."""
        try:
            return await fn()
        except BadRequest as e:
            return _error(str(e), e.status)
        except detail.NotFound as e:
            return _error(str(e), 404)
        except ValueError as e:
            return _error(str(e))
        except sqlite3.OperationalError as e:
            return _error(f"the database is busy ({e}); try again", 503)
        except sqlite3.DatabaseError as e:  # damaged: the line every surface gives (kenning.store.health)
            return _error(f"Kenning's memory is unavailable: {_damaged(e)}", 503)

    def _damaged(e: BaseException) -> str:
        from kenning.store import health

        kind, message = health.classify(paths.db, e)
        if kind == health.CORRUPT:
            health.note_damage(paths.db, message)
        return message

    # ------------------------------------------------------------------ static page
    async def index(request: Request) -> Response:
        return _static("index.html")

    async def static(request: Request) -> Response:
        return _static(request.path_params["name"])

    # ------------------------------------------------------------------------- sign-in
    async def code(request: Request) -> Response:
        # Only the holder of the raw token (``kenning open``) mints codes, not a viewer session.
        if request.scope.get("kenning.auth") != "token":
            return _error("a one-time code needs the API token itself", 403)
        return _json({"code": state.codes.issue(), "expires_in": int(state.codes.ttl)})

    async def sign_in(request: Request) -> Response:
        """A one-time code (or the token, pasted) for a viewer session; the page keeps only that."""
        async def go() -> Response:
            body = await _body(request)
            if not isinstance(body, dict):
                raise BadRequest('the body must be {"code": "..."} or {"token": "..."}')
            token = read_token(paths)
            given_code, given_token = body.get("code"), body.get("token")
            if isinstance(given_code, str) and given_code:
                if not _same_user(request, state.port):
                    log.warning("a one-time code was presented from another user's connection; refused")
                    return _error("this connection belongs to another user", 403)
                if not state.codes.redeem(given_code.strip()):
                    return _error("this sign-in code was already used or has expired: run `kenning open` again",
                                  401)
            elif isinstance(given_token, str) and given_token:
                if not token or not hmac.compare_digest(given_token.strip().encode(), token.encode()):
                    return _error("wrong token: read it from the token file in the data dir", 401)
            else:
                raise BadRequest('give "code" (from `kenning open`) or "token" (from the token file)')
            if not token:
                return _error("the worker has no token yet", 503)
            return _json({"session": new_session(token), "expires_in": int(SESSION_TTL_S)})
        return await guarded(go)

    # ------------------------------------------------------------------------- API
    meta_cache: dict[str, Any] = {}

    async def meta(request: Request) -> Response:
        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            # Projects and concepts are aggregates over every observation (~25 ms at 100k): reuse
            # them while no observation or session was added and no concept tag removed (~1 ms to
            # check), for at most META_TTL_S; the viewer's own deletes drop the cache at once.
            mark = conn.execute("SELECT (SELECT MAX(id) FROM observations), (SELECT COUNT(*) FROM "
                                "observation_concepts), (SELECT MAX(id) FROM sessions)").fetchone()
            key = (tuple(mark), state.memory.settings.mode)
            if meta_cache.get("key") != key or time.monotonic() - meta_cache.get("at", 0.0) > META_TTL_S:
                concepts = [r[0] for r in conn.execute(
                    "SELECT concept FROM observation_concepts GROUP BY concept ORDER BY COUNT(*) DESC, concept "
                    "LIMIT 100")]
                meta_cache.update(key=key, at=time.monotonic(),
                                  body={"projects": repo.projects(conn), "concepts": concepts})
            return dict(meta_cache["body"])

        async def go() -> Response:
            from kenning.store.health import noted_damage

            damage = ""
            try:
                body = await with_read(run, {"projects": [], "concepts": []})
            except sqlite3.OperationalError:
                raise
            except sqlite3.DatabaseError as e:  # the page still loads, and says why its lists are empty
                body, damage = {"projects": [], "concepts": []}, _damaged(e)
            mode = _mode(state)  # read once: the types and the concepts come from the same file
            # A damaged database, in the words every other surface uses (kenning.store.health).
            body["damage"] = state.thread.pipeline.stats.db_error or damage or noted_damage(paths.db)
            # Events captured but not yet memory, and why (an observer that cannot work), in one line.
            waiting = await with_read(repo.pending_count, 0) + spool.depth(paths) if trouble.read(paths) else 0
            told = trouble.summary(paths, waiting)
            body["waiting"] = told["line"] if told else ""
            body.update(version=_version(), data_dir=paths.root, token_file=paths.token,
                        provider=state.thread.pipeline.observer.name, types=_types(mode),
                        known_concepts=list(mode.get("observation_concepts") or mode.get("concepts") or []))
            return _json(body)
        return await guarded(go)

    async def feed(request: Request) -> Response:
        async def go() -> Response:
            f = feed_filter(request, archive_days(state))
            limit = _int(request, "limit", 50, 1, items.MAX_LIMIT)
            before = _param(request, "before")
            if before is not None:
                items.Cursor.decode(before)  # a bad cursor is the client's error, before any query
            tz = time_zone(request)
            page = await with_read(lambda c: items.feed(c, f, before=before, limit=limit, tz=tz), items.Page())
            body: dict[str, Any] = {"items": page.items, "next": page.next}
            if tz is not None:
                body["counts"] = page.counts or {"days": {}, "sessions": {}}
            return _json(body)
        return await guarded(go)

    async def search(request: Request) -> Response:
        async def go() -> Response:
            q = _param(request, "q", MAX_QUERY) or _param(request, "query", MAX_QUERY)
            if not q:
                raise BadRequest("type something to search for")
            f = feed_filter(request, archive_days(state))
            terms = [t.text for t in parse_query(q).terms]
            if not terms:
                # An emoji, "*" or "-" alone: no word to look up. Saying so beats listing the newest
                # items as if they matched.
                return _json({"items": [], "terms": [], "no_words": True, "semantic": False, "next_offset": None,
                              "total": 0, "more": False})
            limit = _int(request, "limit", 30, 1, 100)
            offset = _int(request, "offset", 0, 0, 10_000)
            from kenning.search.runtime import current

            runtime = current()
            if runtime is None:
                return _error("search is not running in this worker", 503)
            kw: dict[str, Any] = {"project": f.project, "types": list(f.types) or None,
                                  "concepts": [f.concept] if f.concept else None,
                                  "include_inactive": f.include_inactive,
                                  "kinds": list(f.wanted())}
            if f.since is not None:
                kw["since"] = f.since
            if f.until is not None:
                kw["until"] = f.until
            from kenning.search.service import SearchInfo
            from kenning.viewer import found as found_mod

            sort = _param(request, "sort") or "relevance"
            if sort not in found_mod.SORTS:
                raise BadRequest(f"sort must be one of {', '.join(found_mod.SORTS)}")
            info = SearchInfo()
            # One ranking read in one call, as deep as this page needs (the same depth for every page inside it, so
            # pages neither skip nor repeat rows): what this view shows (superseded ones hidden unless asked for),
            # one per memory (near-duplicates and repeated prompts once), counted (a lower bound when the engine
            # has more), then sorted and paged. Newest or oldest first sort the best SORT_DEPTH hits.
            depth = found_mod.depth(offset + limit, sort)
            hits = await run_in_threadpool(functools.partial(runtime.search, q, info=info, offset=0, limit=depth,
                                                             max_limit=depth, **kw))
            rows = await with_read(functools.partial(items.hydrate, keys=[(h.kind, h.id) for h in hits],
                                                     archive_before=f.archive_before), [])
            listed = found_mod.collect(hits, rows, lambda it: items.in_view(it, f), sort, more=len(hits) >= depth)
            page = listed.items[offset:offset + limit]
            next_offset = offset + limit if offset + limit < len(listed.items) else None
            return _json({"items": page, "terms": terms, "no_words": False, "semantic": info.meaning,
                          "note": info.note, "next_offset": next_offset, "total": len(listed.items),
                          "more": listed.more, "merged": listed.merged, "sort": sort})
        return await guarded(go)

    async def observation(request: Request) -> Response:
        async def go() -> Response:
            oid = _path_id(request, "oid")
            if request.method == "GET":
                cutoff = archive_cutoff(archive_days(state))
                body = await with_read(lambda c: detail.observation(c, oid, cutoff), None)
                if body is None:  # no database yet
                    raise detail.NotFound(f"no observation {oid}")
                return _json(body)
            if request.method == "DELETE":
                return await delete(oid)
            body = await _body(request)
            changes = detail.check_edit(body, [t["id"] for t in _types(_mode(state))])
            # An edit is text getting in: cleaned as the hooks clean captures (<private>, secrets).
            clean = ingress.cleaner(state.memory.settings).text
            for name in ("title", "subtitle", "narrative"):
                if name in changes:
                    changes[name] = clean(changes[name]).strip()
            for name in ("facts", "concepts", "files_read", "files_modified"):
                if name in changes:
                    changes[name] = [c for c in (clean(v).strip() for v in changes[name]) if c]
            if "title" in changes and not changes["title"]:
                raise ValueError("nothing is left of the title once <private> content is removed")

            def run() -> dict[str, Any]:
                conn = connect(paths.db)
                try:
                    return detail.edit(conn, oid, changes)
                finally:
                    conn.close()
            obs = await run_in_threadpool(run)
            from kenning.search.runtime import current

            runtime = current()
            if runtime is not None:
                runtime.notify()  # the edit dropped its vector: embed the new text now
            return _json({"observation": obs})
        return await guarded(go)

    async def delete(oid: int) -> Response:
        """Rows go in one quick transaction; reclaiming the space follows in the background."""
        def run() -> int:
            if not os.path.exists(paths.db):
                return 0
            conn = connect(paths.db)
            try:
                sel = fg.select(conn, fg.Filters(ids=(oid,)))
                return 0 if sel.empty else MemoryService(conn, "viewer").forget_selected(sel).get("observations", 0)
            finally:
                conn.close()
        gone = await run_in_threadpool(run)
        meta_cache.clear()  # a project may have lost its last observation
        if not gone:
            raise detail.NotFound(f"no observation {oid}")
        return _json({"deleted": gone, "compaction": compactor.request(gone)})

    async def compaction(request: Request) -> Response:
        return _json(compactor.status())

    async def session(request: Request) -> Response:
        async def go() -> Response:
            sid = _path_id(request, "sid")
            cutoff = archive_cutoff(archive_days(state))
            body = await with_read(lambda c: detail.session(c, sid, cutoff), None)
            if body is None:
                raise detail.NotFound(f"no session {sid}")
            return _json(body)
        return await guarded(go)

    async def preview(request: Request) -> Response:
        async def go() -> Response:
            project = _param(request, "project")
            if not project:
                raise BadRequest("give project")
            root = await with_read(lambda c: _latest_root(c, project), "")
            # What SessionStart would see: the events still in the spool land first, as it does.
            await run_in_threadpool(state.thread.flush, 0.8)
            if root and os.path.isdir(root) and identify(root).key == project:
                body = await run_in_threadpool(state.memory.context, root, "")
            else:
                body = await run_in_threadpool(state.memory.context, "", project)
            return _json(body)
        return await guarded(go)

    async def stats_route(request: Request) -> Response:
        async def go() -> Response:
            n = _int(request, "days", 30, 1, stats.MAX_DAYS)
            project = _param(request, "project")
            # A chosen range (the Stats page's From/To, e.g. back to imported history), else the last n days.
            last = stats.parse_day(_param(request, "to") or "", "to") if _param(request, "to") else \
                time.strftime("%Y-%m-%d", time.gmtime())
            first = stats.parse_day(_param(request, "from") or "", "from") if _param(request, "from") else \
                time.strftime("%Y-%m-%d", time.gmtime(time.time() - (n - 1) * 86400))
            if first > last:
                raise BadRequest(f"from ({first}) is after to ({last})")
            if stats.span(first, last) > stats.MAX_RANGE_DAYS:
                raise BadRequest(f"a range is at most {stats.MAX_RANGE_DAYS} days")

            def run(conn: sqlite3.Connection) -> dict[str, Any]:
                return {"days": stats.between(conn, first, last, project), "from": first, "to": last,
                        "first_day": stats.first_day(conn, project),
                        "totals": stats.totals(conn, project), "project": project,
                        "savings": stats.savings(conn, project, state.memory.settings, paths.modes),
                        "pending_events": repo.pending_count(conn)}
            body = await with_read(run, {"days": [], "totals": {}, "savings": {}, "pending_events": 0})
            body["db_bytes"] = fg.file_bytes(paths.db) if os.path.exists(paths.db) else 0
            body["spool_depth"] = spool.depth(paths)
            body["spool_corrupt"] = spool.corrupt_count(paths)
            from kenning.worker.app import observer_status

            body["observer"] = observer_status(state)
            from kenning.search.runtime import current

            runtime = current()
            body["embedding"] = runtime.status()["embeddings"] if runtime is not None else {"state": "off"}
            return _json(body)
        return await guarded(go)

    async def settings_route(request: Request) -> Response:
        async def go() -> Response:
            modes = available_modes(paths.modes)
            if request.method == "GET":
                return _json({"file": paths.settings, "sections": settings_form.sections(),
                              "settings": settings_form.describe(state.memory.settings, modes=modes)})
            body = await _body(request)
            changes = body.get("changes") if isinstance(body, dict) else None
            if not isinstance(changes, dict) or not changes:
                raise BadRequest('the body must be a JSON object like {"changes": {"context_observations": 40}}')
            errors = settings_form.check_mode(changes, modes)
            if not errors:
                _saved, errors = await run_in_threadpool(settings_mod.save, paths, changes)
            if errors:
                problems = settings_form.problems_by_name(errors)
                return _error("not saved: " + "; ".join(f"{k}: {v}" if k != "_" else v for k, v in problems.items()),
                              400, problems=problems)
            apply_settings(state)
            restart = sorted(k for k in changes if k in settings_form.RESTART)
            return _json({"saved": {k: _saved.get(k) for k in changes}, "restart_needed": restart,
                          "sections": settings_form.sections(),
                          "settings": settings_form.describe(state.memory.settings, modes=modes)})
        return await guarded(go)

    async def stream(request: Request) -> Response:
        wake = asyncio.Event()
        loop = asyncio.get_running_loop()

        def listener(event: dict[str, Any]) -> None:  # called on the pipeline thread
            loop.call_soon_threadsafe(wake.set)

        start = items.Mark.decode(request.headers.get("last-event-id", "") or request.query_params.get("after", ""))
        return StreamingResponse(_events(state, read, start, wake, listener, request), media_type="text/event-stream",
                                 headers={**SECURITY_HEADERS, "X-Accel-Buffering": "no"})

    return [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/viewer/code", code, methods=["POST"]),
        Route("/api/viewer/session", sign_in, methods=["POST"]),
        Route("/api/viewer/meta", meta),
        Route("/api/viewer/feed", feed),
        Route("/api/viewer/search", search),
        Route("/api/viewer/observations/{oid}", observation, methods=["GET", "PATCH", "DELETE"]),
        Route("/api/viewer/sessions/{sid}", session),
        Route("/api/viewer/preview", preview),
        Route("/api/viewer/stats", stats_route),
        Route("/api/viewer/settings", settings_route, methods=["GET", "PUT"]),
        Route("/api/viewer/stream", stream),
        Route("/api/viewer/compaction", compaction),
    ]


def _same_user(request: Request, port: int) -> bool:
    """Whether the client end of this connection belongs to the worker's user (True when unknown)."""
    client = request.scope.get("client")
    if not client:
        return True
    owner = connection_owner(int(client[1]), port)
    return owner is None or owner == os.getuid()


def apply_settings(state: Any) -> None:
    """Swap in the saved settings where the worker reads them per request (see settings_form)."""
    new, problems = settings_mod.load(state.paths)
    state.memory.settings = new
    state.settings_problems = problems
    from kenning.search.config import SearchConfig
    from kenning.search.runtime import current

    runtime = current()
    if runtime is not None:
        trigram = runtime.config.trigram  # the trigram index is built at start: that one waits for a restart
        runtime.settings = new
        runtime.config = SearchConfig.from_settings(new.replace(search_trigram=trigram))


# Operations of the log (kenning/store/oplog.py) that change memories already shown; new ones come as items.
CHANGE_OPS = ("superseded", "restored", "pinned", "unpinned", "unarchived", "edited", "forgotten", "confirmed",
              "undone")


def _changes(conn: sqlite3.Connection, after: int | None) -> tuple[list[dict[str, Any]], int | None]:
    """The operations logged since row ``after`` (None: from now on), as ``changed`` events."""
    try:
        if after is None:
            return [], int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM memory_log").fetchone()[0])
        rows = conn.execute("SELECT id, op, surface, ids FROM memory_log WHERE id > ? ORDER BY id LIMIT 500",
                            (after,)).fetchall()
    except sqlite3.OperationalError:  # a database from before the log (migration 0030)
        return [], after
    out = [{"op": str(r[1]), "surface": str(r[2]), "ids": json.loads(r[3] or "[]")} for r in rows
           if str(r[1]) in CHANGE_OPS]
    return out, int(rows[-1][0]) if rows else after


async def _events(state: Any, read: Callable[[], sqlite3.Connection | None], start: items.Mark | None,
                  wake: asyncio.Event, listener: Callable[[dict[str, Any]], None],
                  request: Request) -> AsyncIterator[str]:
    """The SSE body: new items as they are stored, changes to memories from any surface, the queue's
    state, heartbeats."""
    listeners = state.thread.pipeline.stats.listeners
    listeners.append(listener)
    conn: sqlite3.Connection | None = None
    try:
        yield "retry: 1000\n\n"
        mark = start
        logged: int | None = None  # the last operation-log row looked at: changes made by any surface
        last_status: dict[str, Any] | None = None
        last_status_at = last_beat = 0.0
        while True:
            if conn is None:
                conn = await run_in_threadpool(read)
            if conn is not None:
                if mark is None:
                    mark = await run_in_threadpool(items.high_water, conn)
                    yield f"id: {mark.encode()}\nevent: ready\ndata: {{}}\n\n"
                new, after = await run_in_threadpool(items.since_mark, conn, mark)
                seen = items.Mark(mark.observation, mark.prompt, mark.summary)
                for it in new:
                    # Each event's id covers what was sent up to it: a reconnect mid-batch resumes there.
                    setattr(seen, it["kind"], max(getattr(seen, it["kind"]), it["id"]))
                    yield f"id: {seen.encode()}\nevent: item\ndata: {json.dumps(it, ensure_ascii=False)}\n\n"
                mark = after
                changes, logged = await run_in_threadpool(_changes, conn, logged)
                for ch in changes:  # pinned, superseded, edited, forgotten… by the CLI, MCP, the observer, a page
                    yield f"event: changed\ndata: {json.dumps(ch)}\n\n"
            now = time.monotonic()
            status = await run_in_threadpool(_queue_status, state, conn)
            changed = {k: v for k, v in status.items() if k != "at"} != (
                {k: v for k, v in last_status.items() if k != "at"} if last_status else None)
            if changed or now - last_status_at >= STATUS_EVERY_S:
                yield f"event: status\ndata: {json.dumps(status)}\n\n"
                last_status, last_status_at, last_beat = status, now, now
            elif now - last_beat >= HEARTBEAT_S:
                yield ": keep-alive\n\n"
                last_beat = now
            if await request.is_disconnected():
                return
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), POLL_S)
            except TimeoutError:
                pass
    finally:
        try:
            listeners.remove(listener)
        except ValueError:
            pass
        if conn is not None:
            conn.close()


def _queue_status(state: Any, conn: sqlite3.Connection | None) -> dict[str, Any]:
    pending = repo.pending_count(conn) if conn is not None else 0
    compactor = getattr(state, "compactor", None)
    depth = spool.depth(state.paths)
    told = trouble.summary(state.paths, pending + depth)  # events wait for an observer that cannot work
    return {"spool_depth": depth, "pending_events": pending, "waiting": told["line"] if told else "",
            "observer_busy": state.thread.pipeline.stats.observer_busy,
            "provider": state.thread.pipeline.observer.name,
            "compaction": compactor.status() if compactor is not None else None, "at": time.time()}


def _latest_root(conn: sqlite3.Connection, project: str) -> str:
    r = conn.execute("SELECT project_root FROM sessions WHERE project = ? AND project_root != '' "
                     "ORDER BY started_at DESC LIMIT 1", (project,)).fetchone()
    return str(r[0]) if r else ""


async def _body(request: Request) -> Any:
    raw = await read_body(request, MAX_BODY)
    try:
        return json.loads(raw or b"null")
    except (ValueError, RecursionError):
        raise BadRequest("the body must be JSON") from None


def _static(name: str) -> Response:
    """A file of the page, by plain name only: no directories, no dot files, known types."""
    ext = os.path.splitext(name)[1]
    if "/" in name or "\\" in name or name.startswith(".") or ext not in CONTENT_TYPES:
        return Response("not found", status_code=404, headers=SECURITY_HEADERS)
    path = os.path.join(STATIC_DIR, name)
    if not os.path.isfile(path):
        return Response("not found", status_code=404, headers=SECURITY_HEADERS)
    return FileResponse(path, media_type=CONTENT_TYPES[ext], headers=SECURITY_HEADERS)


def _version() -> str:
    from kenning.worker.app import VERSION

    return VERSION
