"""What each MCP tool does, over one data directory. No MCP import: tests call it directly.

Search (and a timeline found by query) asks the worker first when it runs: it holds the
embedding model, so its results are hybrid (keywords + meaning). Otherwise, and for every
other read, a short-lived read-only connection per call (WAL: it never waits on the worker's
writer, and the worker need not run). Writes (save, forget) open a normal
connection for one transaction. Every method returns the text the model reads, or raises
``ToolInputError`` (the model's mistake: it gets the message) — anything else is a bug the
server logs and reports as a generic failure.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from kenning.mcp import inputs, render
from kenning.mcp.inputs import ToolInputError
from kenning.observer.modes import load_mode, type_ids
from kenning.paths import Paths
from kenning.privacy import ingress
from kenning.project import identify, is_excluded, resolve_key
from kenning.search import known
from kenning.settings import Settings, load
from kenning.store import projects
from kenning.store.db import connect, current_version, migration_files, open_db

# The write side (store.forget, store.manual), the local search core and logging are imported
# where they are used: the MCP server loads this module while the client's first call may wait.


def _log() -> Any:
    import logging

    return logging.getLogger("kenning.mcp")


def _query_string(params: dict[str, Any]) -> str:
    from kenning.hook.client import quote  # urllib.parse costs ~3 ms to import

    return "&".join(f"{k}={quote(str(v))}" for k, v in params.items() if v is not None)

SEARCH_DEFAULT_LIMIT = 20
WORKER_TIMEOUT = 3.0  # the worker's hybrid search answers in ms; past this, keywords here are as good
WINDOW_DEFAULT = 3
EXTRA_TYPES = ("summary", "prompt")  # search can also be narrowed to session summaries or prompts

GUIDE = """\
Kenning is the long-term memory of past coding sessions: what was built, fixed, decided and \
learned, per project (a project = its git repository). It is filled automatically from \
every session; you can add to it with save_memory.

Work in three steps, cheapest first:
1. search_memory(query) -> compact index rows, about 50-100 tokens each:
   `#ID DATE TYPE TITLE (~N tokens)`. #12 is an observation, S3 a session summary, P7 a prompt
   the user typed. Filters: type (bugfix, feature, refactor, change, discovery, decision,
   security_alert, security_note, summary, prompt; comma-separated), since/until
   (2026-11-30, 7d, 12h, yesterday), file (a path the work touched), project ('*' = every
   project; default: the current one), limit/offset. An empty query with a filter lists the
   newest matches.
2. memory_timeline(id=12) or memory_timeline(query=...) -> what happened just before and
   after one observation (about 7 rows), to see the context of a change or a bug.
3. get_observations(ids=[12, 15, "S3"]) -> full records (narrative, facts, files,
   concepts). Each costs about the ~N tokens its row showed; fetch only the few you need
   (at most 20 per call).

save_memory(text, title?, type?) stores a fact, decision or gotcha worth knowing in later
sessions (default type: discovery). It is searchable at once and listed at the start of
the next session in this project. Secrets and <private> blocks are removed before storing.
A rule you save ("always ...") is your proposal: the user makes it a standing rule.
memory_ledger(id=12) says how often a memory was given to sessions, why, and whether it was used;
memory_ledger(session=...) what a session was told; with neither, the project's memory health.
supersede_memory(ids, by) marks memories as no longer true, replaced by a newer one (by its id):
they stop being injected and stay searchable; a standing rule only the user replaces.
forget_memory(ids) deletes observations by id for good: only when the user asks for it.
Writes act on the current project only.

Search words are matched as words (any punctuation is safe); rows holding every word come
first. Prefer 2-4 distinctive words (a function, file or error name) over sentences.
"""


class MemoryTools:
    """The tools over one data directory (``Paths()``: KENNING_DATA_DIR or ~/.kenning)."""

    def __init__(self, paths: Paths | None = None, settings: Settings | None = None) -> None:
        self.paths = paths or Paths()
        self.settings = settings if settings is not None else load(self.paths)[0]
        self._settings_mtime = _mtime(self.paths.settings)
        self.types = type_ids(load_mode(self.settings.mode, self.paths.modes))
        self._schema_checked = False

    # ------------------------------------------------------------------------- helpers

    def project_of(self, cwd: str) -> tuple[str, str]:
        """(project key, display name) of a working directory."""
        _root, key, name = self.project(None, cwd, allow_all=False)
        return key or "", name

    def scope(self, project: str | None, cwd: str) -> tuple[str | None, str]:
        """The project filter (its key; None = every project) and how to name it to the model."""
        _root, key, name = self.project(project, cwd)
        named = (project or "").strip()
        if key is not None and named and not ("/" in named or named.startswith("~")):
            with self.reading() as conn:  # a name that is no project's: say so, with the nearest names
                try:
                    if conn is not None:
                        known.check_project(conn, named)
                except known.UnknownName as e:
                    raise ToolInputError(str(e)) from None
        return (None, "every project") if key is None else (key, f"project {name}")

    def project(self, project: str | None, cwd: str, *, allow_all: bool = True) -> tuple[str, str | None, str]:
        """(root, key, display name) of the project named (a name, a path, '*') or of ``cwd``."""
        p = inputs.project_text(project)
        if p.lower() in inputs.ALL_PROJECTS:
            if not allow_all:
                raise ToolInputError("a memory belongs to one project: name it, or leave project empty for the "
                                     "current one")
            return "", None, "every project"
        named = bool(p) and not ("/" in p or p.startswith("~"))
        if named:
            name, root, key = p, "", p
        else:
            ident = identify(os.path.expanduser(p) if p else cwd)
            name, root, key = ident.name, ident.root, ident.key
        if is_excluded(name, root, cwd if not p else root, self.settings.excluded_projects):
            raise ToolInputError(f"project {name} is excluded from Kenning's memory (setting excluded_projects)")
        with self.reading() as conn:
            if conn is None:
                return root, key, name
            try:
                key = projects.one(conn, key) if named else resolve_key(conn, key)
            except projects.AmbiguousProject as e:
                raise ToolInputError(str(e)) from None
            return root, key, projects.display(conn, key, name)

    def named(self, rows: Iterable[Any]) -> list[dict[str, Any]]:
        """Rows (hits, records) with their project key replaced by the project's display name."""
        out = [render.as_dict(r) for r in rows]
        keys = list({str(r.get("project")) for r in out if r.get("project")})
        if not keys:
            return out
        with self.reading() as conn:
            shown = projects.names(conn, keys) if conn is not None else {}
        for r in out:
            if r.get("project"):
                r["project"] = shown.get(str(r["project"]), r["project"])
        return out

    def checked(self, rows: list[dict[str, Any]], cwd: str, *, records: bool = False) -> list[dict[str, Any]]:
        """``rows`` whose evidence is gone from the working tree of ``cwd`` carry the note (docs/memory.md)."""
        if not self.settings.evidence_check or not cwd:
            return rows
        from kenning.context.evidence_marks import mark_dicts
        from kenning.project import identify

        with self.reading() as conn:
            if conn is not None:
                mark_dicts(conn, identify(cwd).root, rows, records=records)
        return rows

    def named_timeline(self, result: dict[str, Any]) -> dict[str, Any]:
        anchor, before, after = (self.named([result["anchor"]])[0],
                                 self.named(result.get("before") or []), self.named(result.get("after") or []))
        return {**result, "anchor": anchor, "before": before, "after": after}

    def _ensure_schema(self) -> None:
        """Bring an old database up to date once (the worker normally does; it may be down)."""
        if self._schema_checked:
            return
        self._schema_checked = True
        try:
            conn = connect(self.paths.db, readonly=True)
            try:
                behind = current_version(conn) < migration_files()[-1][0]
            finally:
                conn.close()
            if behind:
                open_db(self.paths.db).close()
        except sqlite3.Error as e:
            _log().warning("schema check failed: %s", e)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection, or None when no memory exists yet."""
        if not os.path.exists(self.paths.db):
            yield None
            return
        self._ensure_schema()
        conn = connect(self.paths.db, readonly=True)
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        self.paths.ensure()
        conn = open_db(self.paths.db)
        try:
            yield conn
        finally:
            conn.close()

    def ask_worker(self, path: str) -> tuple[int, Any] | None:
        """(status, JSON body) from the running worker, or None when it does not answer."""
        from kenning.hook import client  # stdlib only

        info = client.read_pid_file(self.paths)
        if not info:
            return None
        res = client.authed(self.paths, info["port"], "GET", path, timeout=WORKER_TIMEOUT)
        if res is None:
            return None
        try:
            return res[0], json.loads(res[1] or b"null")
        except ValueError:
            return None

    # --------------------------------------------------------------------------- tools

    def search(self, query: str | None = None, *, cwd: str, project: str | None = None,
               type: str | list[str] | None = None, since: str | None = None, until: str | None = None,
               file: str | None = None, limit: int | None = None, offset: int | None = None) -> str:
        types = inputs.types_list(type, [*self.types, *EXTRA_TYPES])
        lo, hi = inputs.time_range(since, until)
        files = [file.strip()] if file and file.strip() else None
        if files and len(files[0]) > 1000:
            raise ToolInputError("file is too long (at most 1,000 characters)")
        q = inputs.query_text(query, required=not (types or lo is not None or hi is not None or files))
        n = inputs.bounded(limit, "limit", default=SEARCH_DEFAULT_LIMIT, low=1, high=inputs.MAX_LIMIT)
        skip = inputs.bounded(offset, "offset", default=0, low=0, high=inputs.MAX_OFFSET)
        name, label = self.scope(project, cwd)
        if not os.path.exists(self.paths.db):
            return f"No memory yet: Kenning has not recorded any session (data dir {self.paths.root})."
        order = "relevance" if q else "date"
        params = {"query": q, "project": name, "types": ",".join(types) if types else None, "since": lo,
                  "until": hi, "files": files[0] if files else None, "order": order, "limit": n, "offset": skip}
        res = self.ask_worker("/api/search?" + _query_string(params))
        if res is not None and res[0] == 200 and isinstance(res[1], dict) and isinstance(res[1].get("results"), list):
            body = res[1]
            paths = body.get("paths")
            self._searched(body["results"], name)
            return render.search_result(self.checked(self.named(body["results"]), cwd), query=q, scope=label,
                                        offset=skip, limit=n,
                                        paths=[str(p) for p in paths] if isinstance(paths, list) else ["keywords"],
                                        note=str(body.get("note") or ""))
        if res is not None and res[0] == 400 and isinstance(res[1], dict):
            raise ToolInputError(str(res[1].get("error") or "bad search"))
        from kenning.search import service  # the worker did not answer: keywords here

        with self.reading() as conn:
            if conn is None:
                return f"No memory yet: Kenning has not recorded any session (data dir {self.paths.root})."
            try:
                hits = service.search(conn, q, project=name, types=types, since=lo, until=hi, files=files,
                                      order=order, limit=n, offset=skip)
            except ValueError as e:
                raise ToolInputError(str(e)) from None
        self._searched(hits, name)
        return render.search_result(self.checked(self.named(hits), cwd), query=q, scope=label, offset=skip, limit=n,
                                    paths=["keywords"],
                                    note="the Kenning worker is not running, so nothing is matched by meaning"
                                    if self.settings.embedding_backend != "none" else "")

    def timeline(self, id: int | str | None = None, query: str | None = None, *, cwd: str,
                 project: str | None = None, before: int | None = None, after: int | None = None) -> str:
        from kenning.search import service

        if id is None and not (query or "").strip():
            raise ToolInputError("give id (an observation id from search_memory, like 12) or query")
        anchor = None
        if id is not None:
            kind, anchor = inputs.parse_id(id)
            if kind != "observation":
                raise ToolInputError(f"{id} is a session summary: the timeline is anchored on an observation "
                                     "(#id); use get_observations to read the summary")
        q = inputs.query_text(query, required=False) if anchor is None else None
        b = inputs.bounded(before, "before", default=WINDOW_DEFAULT, low=0, high=inputs.MAX_WINDOW)
        a = inputs.bounded(after, "after", default=WINDOW_DEFAULT, low=0, high=inputs.MAX_WINDOW)
        # With an explicit id the anchor's own project is used; a query searches the current one.
        name = self.scope(project, cwd)[0] if anchor is None or project else None
        if not os.path.exists(self.paths.db):
            raise ToolInputError("there is no memory yet, so no timeline")
        if anchor is None:  # the best match for a query: the worker's search is hybrid
            params = {"query": q, "before": b, "after": a, "project": name}
            res = self.ask_worker("/api/timeline?" + _query_string(params))
            if res is not None and res[0] == 200 and isinstance(res[1], dict) and res[1].get("anchor"):
                return render.timeline(self.named_timeline(res[1]))
            if res is not None and res[0] in (400, 404) and isinstance(res[1], dict):
                raise ToolInputError(f"{res[1].get('error')} (use search_memory to find ids)")
        with self.reading() as conn:
            if conn is None:
                raise ToolInputError("there is no memory yet, so no timeline")
            try:
                result = service.timeline(conn, anchor=anchor, query=q, before=b, after=a, project=name)
            except ValueError as e:
                raise ToolInputError(f"{e} (use search_memory to find ids)") from None
        return render.timeline(self.named_timeline(result))

    def get(self, ids: list[int | str] | int | str | None, *, cwd: str) -> str:
        from kenning.search import service

        wanted = inputs.parse_ids(ids, most=inputs.MAX_IDS, allow_summaries=True)
        here = self.project_of(cwd)[0]
        with self.reading() as conn:
            if conn is None:
                raise ToolInputError("there is no memory yet")
            obs = {int(o["id"]): o for o in self.checked(self.named(service.get_observations(
                conn, [n for k, n in wanted if k == "observation"], project=here)), cwd, records=True)}
            sums = {int(s["id"]): s for s in self.named(_summaries(conn, [n for k, n in wanted if k == "summary"]))}
        found: list[str] = []
        missing: list[str] = []
        for kind, n in wanted:
            if kind == "observation" and n in obs:
                found.append(render.observation(obs[n]))
            elif kind == "summary" and n in sums:
                found.append(render.summary(sums[n]))
            else:
                missing.append(f"#{n}" if kind == "observation" else f"S{n}")
        if not found:
            raise ToolInputError(f"no memory with id {', '.join(missing)}; use search_memory to find ids")
        text = render.records(found, missing)
        # A full record fetched: a use of whatever was handed over recently, and a handing of its own.
        self._ledger(sorted(obs), "fetched in full (get_observations)", here, fetched=True,
                     chars=len(text) // max(1, len(found)))
        return text

    def ledger(self, id: int | str | None = None, session: str | None = None, *, cwd: str) -> str:
        """The injection ledger as ``kenning show`` / ``kenning why`` / ``kenning stats`` tell it."""
        from kenning.commands.audit import render_session, session_report
        from kenning.commands.show import ledger_lines
        from kenning.commands.stats import health, render_health
        from kenning.store import injections

        with self.reading() as conn:
            if conn is None:
                raise ToolInputError("there is no memory yet")
            try:
                if id is not None:
                    kind, oid = inputs.parse_id(id)
                    if kind != "observation":
                        raise ToolInputError(f"{id} is not an observation id (like 12 or '#12')")
                    if conn.execute("SELECT 1 FROM observations WHERE id = ?", (oid,)).fetchone() is None:
                        raise ToolInputError(f"no memory #{oid}; use search_memory to find ids")
                    return f"#{oid}" + "\n".join(ledger_lines(injections.for_memory(conn, oid, limit=10)))
                if session is not None and session.strip():
                    rep = session_report(conn, inputs.name_text(session, "session"))
                    if rep is None:
                        return (f"Nothing is recorded as given to session {session.strip()[:80]} (what a hook built "
                                "without the worker is not recorded).")
                    return render_session(rep)
                key = self.project_of(cwd)[0] or None
                return "\n".join(render_health(health(conn, project=key, settings=self.settings)))
            except sqlite3.OperationalError as e:
                if "no such table" in str(e):
                    return "No ledger yet: the worker records it once it runs this version of Kenning."
                raise

    def _searched(self, hits: Iterable[Any], project: str | None) -> None:
        """Search results handed over: observations only (``#id`` rows; summaries and prompts are not memories)."""
        ids = []
        for h in hits:
            kind, oid = (h.get("kind"), h.get("id")) if isinstance(h, dict) else (getattr(h, "kind", None),
                                                                                   getattr(h, "id", None))
            if kind == "observation" and isinstance(oid, int):
                ids.append(oid)
        self._ledger(ids, "search result (search_memory)", project or "")

    def _ledger(self, ids: list[int], reason: str, project: str, *, fetched: bool = False, chars: int = 0) -> None:
        """The injection ledger (kenning/store/injections.py): the worker records what this server handed
        over (this server only reads the database); with the worker down it is not recorded. Best effort,
        never in the way of the answer. The MCP server does not know the agent's session id."""
        if not ids:
            return
        from kenning.hook import client

        info = client.read_pid_file(self.paths)
        if not info:
            return
        body = json.dumps({"ids": ids[:100], "reason": reason, "project": project, "chars": chars,
                           "fetched": fetched}).encode()
        import threading

        # Sent beside the answer, never before it; not a daemon, so a server told to exit still sends it.
        threading.Thread(target=client.authed, args=(self.paths, info["port"], "POST", "/api/ledger/handed"),
                         kwargs={"body": body, "timeout": 2.0}, name="kenning-ledger").start()

    def current_settings(self) -> Settings:
        """The settings as they are now: a long-lived server re-reads them when settings.json changes
        (what it saves must be redacted with the patterns the user has just added)."""
        mtime = _mtime(self.paths.settings)
        if mtime != self._settings_mtime:
            self.settings, self._settings_mtime = load(self.paths)[0], mtime
        return self.settings

    def written(self, project: str | None, cwd: str, tool: str) -> tuple[str, str, str]:
        """(root, key, name) of the project a write acts on: the calling session's own (``cwd``, resolved
        as the hooks resolve it). Another project only when the user allowed it (setting
        ``mcp_cross_project_writes``): an agent in one repository never writes into another's memory."""
        root, key, name = self.project(None, cwd, allow_all=False)
        assert key is not None  # allow_all=False
        if not (project or "").strip():
            return root, key, name
        other_root, other, other_name = self.project(project, cwd, allow_all=False)
        assert other is not None
        if other != key and not self.current_settings().mcp_cross_project_writes:
            raise ToolInputError(f"{tool} acts on this session's project ({name}) only, not on {other_name}: "
                                 "leave project empty (writing into another project needs the user's setting "
                                 "mcp_cross_project_writes)")
        return other_root, other, other_name

    def _in_scope(self, conn: sqlite3.Connection, ids: Iterable[int], cwd: str, tool: str) -> None:
        """Refuse (nothing changes) when any of ``ids`` belongs to a project other than the session's."""
        if self.current_settings().mcp_cross_project_writes:
            return
        key, name = self.project_of(cwd)
        wanted = sorted(set(ids))
        marks = ",".join("?" * len(wanted))
        foreign = [(int(r[0]), str(r[1])) for r in conn.execute(
            f"SELECT id, project FROM observations WHERE id IN ({marks}) AND project != ?", (*wanted, key))]
        if foreign:
            shown = projects.names(conn, [p for _i, p in foreign])
            which = ", ".join(f"#{i} ({shown.get(p, p)})" for i, p in foreign)
            raise ToolInputError(f"{tool} acts on this session's project ({name}) only; {which} "
                                 f"{'belongs' if len(foreign) == 1 else 'belong'} to another project: nothing was "
                                 "changed (the user can do it with the kenning CLI or the viewer)")

    def save(self, text: str, *, cwd: str, title: str | None = None, type: str | None = None,
             project: str | None = None) -> str:
        from kenning.memory_service import MemoryService
        from kenning.store import manual

        draft = manual.prepare(text, title=title, type=type, valid_types=self.types,
                               clean=ingress.cleaner(self.current_settings()).text)
        proposed = manual.by_the_agent(draft)  # a rule the agent states is its proposal, not a standing rule
        root, key, name = self.written(project, cwd, "save_memory")
        with self.writing() as conn:
            saved = MemoryService(conn, "mcp").save(draft, project=key, project_root=root,
                                                    cwd=cwd if not project else root, name=name)
        if saved.created:
            from kenning.hook import client

            client.poke_embedder(self.paths)  # the worker embeds it now, not on its next round
        if not saved.created:
            return (f"Already in memory as #{saved.id} ({saved.type}) in project {saved.project}: "
                    f"{render.clean(saved.title)}")
        out = f"Saved as #{saved.id} ({saved.type}) in project {saved.project}: {render.clean(saved.title)}\n"
        if proposed:
            return out + ("It reads as a standing rule, which only the user makes: it is kept as a rule you "
                          "proposed, not confirmed, and is not given to sessions as a rule until the user pins "
                          f"it (`kenning pin {saved.id}`, or Pin in the viewer).")
        return out + "It is searchable now and will be listed at the start of the next session in this project."

    def forget(self, ids: list[int | str] | int | str | None, *, cwd: str) -> str:
        from kenning.memory_service import MemoryService
        from kenning.store import forget

        wanted = [n for _k, n in inputs.parse_ids(ids, most=inputs.MAX_FORGET_IDS, allow_summaries=False)]
        if not os.path.exists(self.paths.db):
            raise ToolInputError("there is no memory yet")
        with self.writing() as conn:
            self._in_scope(conn, wanted, cwd, "forget_memory")
            # Explicit ids only (never a query): what the model names is exactly what goes.
            result = MemoryService(conn, "mcp").forget(self.paths.db, forget.Filters(ids=tuple(wanted)), dry_run=False)
        sel = result["selection"]
        gone = [f"#{o['id']}" for o in sel["observations"]]
        missing = [f"#{n}" for n in sel["missing_ids"]]
        if not gone:
            raise ToolInputError(f"no observation with id {', '.join(missing)}; use search_memory to find ids")
        out = f"Forgot {', '.join(gone)} for good (with the raw captured events of their prompt turns)."
        if missing:
            out += f" Not found: {', '.join(missing)}."
        if result.get("warning"):
            out += f" Note: {result['warning']}."
        return out

    def supersede(self, ids: list[int | str] | int | str | None, by: int | str | None, *, cwd: str) -> str:
        """Mark memories as no longer true, replaced by a newer one of the same project (undone with restore)."""
        from kenning.memory_service import MemoryService
        from kenning.store import supersede

        old = [n for _k, n in inputs.parse_ids(ids, most=inputs.MAX_FORGET_IDS, allow_summaries=False)]
        if by is None:
            raise ToolInputError("give by: the id of the observation that replaces them (save_memory the new "
                                 "fact first if it is not in memory yet)")
        new = inputs.parse_ids([by], most=1, allow_summaries=False)[0][1]
        if not os.path.exists(self.paths.db):
            raise ToolInputError("there is no memory yet")
        with self.writing() as conn:
            self._in_scope(conn, [*old, new], cwd, "supersede_memory")
            try:
                res = MemoryService(conn, "mcp").supersede(old, new, agent=True)
            except supersede.SupersedeError as e:
                raise ToolInputError(str(e)) from None
        if not res.superseded:
            why = "; ".join(f"#{k}: {v}" for k, v in res.skipped.items())
            raise ToolInputError(f"nothing superseded ({why})")
        out = (f"Marked {', '.join(f'#{i}' for i in res.superseded)} as superseded by #{new}: no longer injected, "
               "still searchable (flagged).")
        if res.skipped:
            out += " Not changed: " + "; ".join(f"#{k} ({v})" for k, v in res.skipped.items()) + "."
        return out

    def guide(self) -> str:
        return GUIDE


def _summaries(conn: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """Full session-summary rows (the search core returns observations only)."""
    if not ids:
        return []
    import json

    marks = ",".join("?" * len(ids))
    out = []
    for r in conn.execute(f"SELECT * FROM session_summaries WHERE id IN ({marks})", ids):
        d = dict(r)
        for k in ("files_read", "files_modified"):
            try:
                v = json.loads(d.get(k) or "[]")
            except ValueError:
                v = []
            d[k] = v if isinstance(v, list) else []
        out.append(d)
    return out


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
