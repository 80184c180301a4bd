"""Spool → events → observer → rows. Runs on one thread in the worker, with one connection.

Exactly once, even when killed at any instant:

1. *Ingest*: a batch of spool files becomes session / prompt / event rows in one
   transaction; each event has a unique key (``tool_use_id`` or the spool id), so a file
   replayed after a crash between COMMIT and unlink is recognised and only deleted.
   Files are unlinked only once their rows are *durable in the database file*: a COMMIT in
   WAL mode with ``synchronous=NORMAL`` lives in the ``-wal`` until a checkpoint (a crash can
   cut that file short), so the batch is checkpointed first (SQLite fsyncs the WAL before and
   the database after a complete checkpoint), and the file at the database path must still
   be the one this connection writes (deleted or replaced under the worker: the connection is
   dropped, the spool files stay and go into the file now at the path).
2. *Observe*: per session, the pending events go to the provider; its observations, the
   summary and the ``done`` marks of the events are committed together. An event is
   either pending (it will be fed again) or done with its rows stored, never in between.

An LLM observer never makes this thread wait for a model: ``observe`` hands the next batch
to its own bounded pool and returns at once; when a reply is ready it pokes this thread
(``bind``), and the next ``observe`` of that session returns the outcome, stored here, by
the only writer. Observers may also offer ``wants(session)`` (skip sessions whose call is
still in flight), ``maintain(now)`` (idle timeouts) and ``close()`` (no orphan conversation).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kenning import spool
from kenning.memory_service import MemoryService
from kenning.observer.base import Observer
from kenning.observer.transcript import TurnReader
from kenning.paths import Paths
from kenning.store import repo, segments, switch, usage
from kenning.store.db import BUSY_TIMEOUT_MS, open_db
from kenning.worker import given, uses
from kenning.worker.given import Handed

log = logging.getLogger("kenning.worker")
SWITCH_WAIT_MS = 200  # the old file's log emptied on a switch: how long a cycle waits for a read to end

INGEST_BATCH = 500
SETTLE_PATIENCE_S = 5.0  # after this, a checkpoint waits for readers instead of giving up
SETTLE_RETRIES_S = (0.005, 0.01, 0.02, 0.04, 0.08)
UNSETTLED_RETRY_S = 0.2
POKE_GAP_S = 0.25  # pokes start at most 4 cycles a second
PAYLOAD_RETENTION_S = 3 * 24 * 3600
EVENT_RETENTION_S = 30 * 24 * 3600  # the ledger row of a processed event (its payload is long gone)
BACKUP_CHECK_S = 600  # how often the worker asks whether a backup is due (one is taken a day)
BACKUP_FIRST_S = 5.0  # the first ask, after start: not in the first cycle, which a SessionStart may await
KNOWN_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd")


@dataclass
class Stats:
    ingested: int = 0
    duplicates: int = 0
    quarantined: int = 0
    observations: int = 0
    summaries: int = 0
    last_error: str = ""
    last_cycle_at: float = 0.0
    cycles: int = 0
    observer_busy: bool = False
    checkpoints: int = 0
    db_replaced: str = ""  # when and how the database file was deleted or replaced under the worker
    db_error: str = ""     # the database is damaged: nothing is written (the spool keeps every event)
    listeners: list[Any] = field(default_factory=list)


class Pipeline:
    """Owns the writer connection; call :meth:`cycle` from a single thread."""

    def __init__(self, paths: Paths, conn: sqlite3.Connection, observer: Observer,
                 turns: TurnReader | None = None) -> None:
        self.paths = paths
        self.conn = conn
        self.observer = observer
        # What the agent said during a turn (transcript), added to its Stop event for the observer.
        self._cleaner: tuple[int, Any] | None = None
        self.turns = turns if turns is not None else TurnReader(lambda text: self._settings_cleaner().text(text))
        self.stats = Stats()
        self.handed = Handed()  # what the context routes served, for the injection ledger (kenning/worker/given.py)
        self._last_prune = 0.0
        self._last_backup_check = time.time() - BACKUP_CHECK_S + BACKUP_FIRST_S
        self._file = file_id(paths.db)  # the database file this connection writes
        switch.hold(paths.db, self._file)  # the worker's other connections open only this one
        self._leaving = False  # the file at the path changed: letting go of the old one
        self._checked = False  # integrity of this file checked (first cycle)
        self._reopen_needed = False  # the file at the path changed and is not open yet
        # Spool files whose rows are committed but not yet durable in the database file, oldest first.
        self._unsettled: dict[str, float] = {}
        self.wake: Callable[[], None] = lambda: None  # set by PipelineThread: asks for a cycle
        # Why the observer does not work now, as last written to the data dir (kenning.observer.trouble).
        self._trouble: dict[str, Any] | None = {"kind": "unknown"}  # not known: written at the first cycle
        self._carry_trouble()
        bind = getattr(observer, "bind", None)
        if callable(bind):
            # spent_today reads with this (the pipeline's) connection: it is only called from observe().
            bind(lambda: self.wake(), lambda: usage.spent_today(self.conn))

    def _clean(self, outcome: Any) -> None:
        """Redact the observer's drafts with the user's settings (re-read when settings.json changes)."""
        self._settings_cleaner().outcome(outcome)

    def _settings_cleaner(self) -> Any:
        """The ingress cleaner for the user's current settings (rebuilt when settings.json changes)."""
        try:
            mtime = os.stat(self.paths.settings).st_mtime_ns
        except OSError:
            mtime = 0
        if self._cleaner is None or self._cleaner[0] != mtime:
            from kenning.privacy import ingress
            from kenning.settings import load

            self._cleaner = (mtime, ingress.cleaner(load(self.paths)[0]))
        return self._cleaner[1]

    # ------------------------------------------------------------------------- ingest
    def ingest(self, limit: int = INGEST_BATCH) -> int:
        """Move up to ``limit`` spool files into the database; returns how many were handled."""
        files = spool.pending(self.paths)
        if self._unsettled:
            files = [f for f in files if f not in self._unsettled]  # committed already: waiting to be durable
        files = files[:limit]
        if not files:
            return 0
        records: list[tuple[str, dict[str, Any]]] = []
        for path in files:
            try:
                rec = spool.read(path)
                _validate(rec)
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as e:
                dest = spool.quarantine(self.paths, path)
                self.stats.quarantined += 1
                log.warning("quarantined spool file %s: %s", dest, e)
                continue
            records.append((path, rec))
        if records:
            poison: list[tuple[str, Exception]] = []
            with repo.transaction(self.conn):
                for path, rec in records:
                    # One record the database refuses (e.g. a string SQLite cannot encode) must not
                    # roll back the batch and wedge the spool: undo just its rows and set it aside.
                    self.conn.execute("SAVEPOINT ingest_one")
                    try:
                        added = self._ingest_one(rec)
                    except sqlite3.OperationalError:
                        raise  # locked / busy: the whole batch is retried later
                    except (sqlite3.Error, ValueError, TypeError, KeyError) as e:
                        self.conn.execute("ROLLBACK TO ingest_one")
                        self.conn.execute("RELEASE ingest_one")
                        poison.append((path, e))
                        continue
                    self.conn.execute("RELEASE ingest_one")
                    if added:
                        self.stats.ingested += 1
                    else:
                        self.stats.duplicates += 1
            bad = {path for path, _err in poison}
            for path, err in poison:
                dest = spool.quarantine(self.paths, path)
                self.stats.quarantined += 1
                log.warning("quarantined spool file %s: %s: %s", dest, type(err).__name__, err)
            now = time.monotonic()
            for path, _rec in records:
                if path not in bad:
                    self._unsettled[path] = now
            if len(records) > len(bad):
                self._notify({"type": "ingested", "count": len(records) - len(bad)})  # prompts are new rows too
            self.settle()  # the files go once their rows are durable in the file at the database path
        return len(files)

    # ------------------------------------------------------------------------ durable
    def settle(self, force: bool = False) -> bool:
        """Delete the spool files of committed batches once their rows are in the database file.

        A passive checkpoint never waits; when readers keep it from completing for a while (or
        ``force``), a full one waits for them. True when nothing is left unsettled.
        """
        if not self._unsettled:
            return True
        if not self.check_file():
            return False
        oldest = min(self._unsettled.values())
        mode = "FULL" if force or time.monotonic() - oldest > SETTLE_PATIENCE_S else "PASSIVE"
        for pause in SETTLE_RETRIES_S:  # a reader on an older snapshot (a status poll) holds it up briefly
            busy, frames, done = self.conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            self.stats.checkpoints += 1
            if not busy and (frames < 0 or done >= frames):
                break
            time.sleep(pause)
        else:
            return False  # not all in the database file yet: the next cycle (soon) tries again
        if not self.check_file():  # deleted or replaced while we checkpointed into it
            return False
        for path in self._unsettled:
            spool.confirm(path)
        self._unsettled.clear()
        return True

    def _check_integrity(self) -> None:
        """Once per database file, before the first write: is it sound?"""
        try:
            row = self.conn.execute("PRAGMA quick_check").fetchone()
        except sqlite3.OperationalError:
            return  # busy: writes will tell
        except sqlite3.DatabaseError as e:
            self._damaged(e)
            return
        if row and row[0] != "ok":
            self._damaged(sqlite3.DatabaseError(f"integrity check: {row[0]}"))
        elif row:
            from kenning.store.health import clear_damage

            clear_damage(self.paths.db)  # sound: a note left about this file no longer holds

    def _damaged(self, err: BaseException) -> None:
        from kenning.store.health import corrupt_line, explain, note_damage

        message = explain(self.paths.db, err)
        if "corrupt" not in message:
            message = corrupt_line(self.paths.db, str(err))
        note_damage(self.paths.db, message)  # every surface says it from now on, hooks reading the file too
        if message != self.stats.db_error:
            log.error("%s; nothing is written until then, and the spool keeps every event", message)
        self.stats.db_error = message
        self._unsettled.clear()  # their rows may not be readable: the files stay for the repair

    def unsettled(self) -> int:
        return len(self._unsettled)

    def check_file(self) -> bool:
        """True when the file at the database path is the one this connection writes.

        Otherwise (deleted, or replaced by another file) writing on would go into a file nobody
        will open again: the connection is closed, and the file now at the path is opened (a new
        one if none); the spool files not yet settled stay, to be ingested into it. The old file's
        ``-wal`` is still at the path's ``-wal`` name meanwhile, and a connection opened to the new
        file would read it as its own: the worker's other connections let go first
        (kenning/store/switch.py), the log is emptied, and only then is this one closed.
        """
        if self._reopen_needed:
            return self._reopen()
        now_file = file_id(self.paths.db)
        if now_file is not None and now_file == self._file:
            return True
        if not self._leaving:
            what = "deleted" if now_file is None else "replaced by another file"
            when = time.strftime("%Y-%m-%d %H:%M:%S")
            log.error("the database %s was %s while the worker ran; writing into the file now at that path, and the "
                      "%d spool file(s) not yet saved there will be ingested again", self.paths.db, what,
                      len(self._unsettled))
            self.stats.db_replaced = (f"{when}: {self.paths.db} was {what} while the worker ran; "
                                      "a new database was opened")
            self._unsettled.clear()  # kept on disk: re-read into the new file
            self._leaving = True
        switch.switching(self.paths.db)  # the pool, the embedder, the recorder: their connections close
        if not self._emptied_log():
            # A read still under way on the old file: closing now would leave its log behind.
            self.stats.last_error = "cycle: waiting for a read of the old database to end"
            raise _Waiting(self.stats.last_error)
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        self._leaving = False
        self._reopen_needed = True
        return self._reopen()

    def _emptied_log(self) -> bool:
        """Checkpoint the old file's ``-wal`` into it and empty it: True when done (or impossible)."""
        try:
            # Not the busy timeout's 10 s: a read under way is waited for by the next cycles instead.
            self.conn.execute(f"PRAGMA busy_timeout = {SWITCH_WAIT_MS}")
            busy, _frames, _done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            return True  # e.g. the old file is unreadable: nothing better can be done
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy

    def _reopen(self) -> bool:
        """Open the file at the path once nothing of the old one is left beside it; False meanwhile."""
        wal = self.paths.db + "-wal"
        if os.path.exists(self.paths.db) and os.path.exists(wal) and os.path.getsize(wal) > 0:
            # Another process still holds the old file open (its -wal stays until it closes):
            # opening now would read that log into the new file. Wait for it; the spool keeps all.
            self.stats.last_error = "cycle: waiting for the old database's other connections to close"
            raise _Waiting(self.stats.last_error)
        # Nothing of the old file is left: the worker's connections may open the file now at the path
        # (created here when it was deleted, as connect() would: it opens only a held file meanwhile).
        with contextlib.suppress(FileExistsError):
            os.close(os.open(self.paths.db, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        switch.hold(self.paths.db, file_id(self.paths.db))
        self.conn = open_db(self.paths.db)  # raises (e.g. a foreign file): the cycle reports it and retries
        self._file = file_id(self.paths.db)
        switch.hold(self.paths.db, self._file)
        self._reopen_needed = False
        return False

    def _notify(self, event: dict[str, Any]) -> None:
        for listener in list(self.stats.listeners):  # a viewer's stream may (un)subscribe meanwhile
            try:
                listener(event)
            except Exception:
                log.exception("listener failed")

    def _ingest_one(self, rec: dict[str, Any]) -> bool:
        return MemoryService(self.conn, "observer").capture(rec)

    # ------------------------------------------------------------------------ observe
    def observe(self, now: float | None = None) -> int:
        """Run the observer over every session with pending events; returns rows stored."""
        now = time.time() if now is None else now
        stored = 0
        wants = getattr(self.observer, "wants", None)
        # An observer that acts on closed turns only (the rules) says after how long an open turn
        # counts as closed; its sessions are then picked in SQL, with no payload decoded for a
        # turn still open (500 pending events cost every cycle ~20 ms to decode otherwise).
        idle = getattr(self.observer, "closed_turns_after", None)
        sessions = repo.sessions_with_pending(self.conn) if idle is None \
            else repo.sessions_with_closed_turns(self.conn, now - idle)
        for sid in sessions:
            if wants is not None and not wants(sid):
                continue  # its call is still in flight: its new events go in the next turn
            events = repo.pending_events(self.conn, sid)
            if not events:
                continue
            for e in events:
                if e.kind == "Stop":
                    e.payload = self.turns.enrich(e.payload)
            info = repo.session_info(self.conn, sid)
            self.stats.observer_busy = True
            try:
                outcome = self.observer.observe(info, events, now=now)
            except Exception as e:  # a provider bug must not stop the others; events stay pending
                self.stats.last_error = f"observer {self.observer.name}: {type(e).__name__}: {e}"
                log.exception("observer failed on session %s", sid)
                continue
            finally:
                self.stats.observer_busy = False
            if not outcome.done and not outcome.observations and outcome.summary is None:
                continue
            producer = getattr(outcome, "provider", "") or self.observer.name
            self._clean(outcome)  # what an observer writes is cleaned like everything else that gets in
            with repo.transaction(self.conn):
                ids = MemoryService(self.conn, "observer").observed(sid, info.project, outcome, producer)
                if getattr(outcome, "calls", 0):
                    usage.record_call(self.conn, sid, provider=producer, model=outcome.model,
                                      tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out,
                                      cache_read=getattr(outcome, "cache_read", 0),
                                      cache_write=getattr(outcome, "cache_write", 0), observations=len(ids),
                                      reply_kind=getattr(outcome, "reply_kind", ""))
            stored += len(ids)
            self.stats.observations += len(ids)
            if outcome.summary is not None:
                self.stats.summaries += 1
            self._notify({"type": "stored", "session_id": sid, "observations": ids,
                          "summary": outcome.summary is not None})
        maintain = getattr(self.observer, "maintain", None)
        if maintain is not None:
            maintain(now)
        self.note_trouble()
        return stored

    def _carry_trouble(self) -> None:
        """A worker started on the same model as the one that met trouble (a reboot, a restart) keeps
        saying so until its own first call answers or fails: else the first session after a restart
        would hear "no memory yet" while the events still wait. Nothing waiting: nothing to carry."""
        from kenning.observer import trouble

        carry = getattr(self.observer, "carry", None)
        prior = trouble.read(self.paths)
        if prior is None or not callable(carry):
            return
        try:
            waiting = repo.pending_count(self.conn) + spool.depth(self.paths)
        except sqlite3.Error:
            return
        if waiting and carry(prior):
            self._trouble = prior

    def note_trouble(self) -> None:
        """Write (or remove) the observer's trouble where the context, status and the viewer read it."""
        from kenning.observer import trouble

        current = getattr(self.observer, "trouble", None)
        rec = current() if callable(current) else None
        if rec == self._trouble:
            return
        try:
            if rec is None:
                trouble.clear(self.paths)
            else:
                trouble.write(self.paths, rec)
        except OSError as e:  # a full disk: the surfaces then say less, nothing else is affected
            log.warning("could not record the observer's state: %s", e)
            return
        self._trouble = rec

    def close(self) -> None:
        """Settle what was committed and stop the observer's conversations (the pipeline thread ends)."""
        try:
            self.settle(force=True)
        except (sqlite3.Error, _Waiting) as e:  # the files stay and are ingested again (idempotent) next time
            log.warning("could not settle the last batch: %s", e)
        switch.forget(self.paths.db)
        close = getattr(self.observer, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                log.exception("closing the observer failed")

    def tidy(self) -> None:
        """Merge the search indexes' segments a bounded step (kenning.store.segments): the rows
        just stored left new ones. Optional work: a busy database defers it to a later cycle."""
        try:
            _steps, more = segments.tidy(self.conn)
        except sqlite3.OperationalError as e:
            log.debug("index merge deferred: %s", e)
            return
        if more:  # the next step in a moment (a cycle within POKE_GAP_S), not at the next 2 s tick
            self.wake()

    def ledger(self) -> None:
        """The injection ledger: what was handed to sessions since the last cycle, and the signs in the
        events just stored that it was used. Optional work: a busy database defers it."""
        try:
            given.record_pending(self.conn, self.handed, self.paths.root)
            uses.find_uses(self.conn)
        except sqlite3.OperationalError as e:
            log.debug("injection ledger deferred: %s", e)
        except (ValueError, TypeError, KeyError) as e:
            log.warning("injection ledger: %s: %s", type(e).__name__, e)

    def prune(self, now: float) -> None:
        if now - self._last_prune < 3600:
            return
        self._last_prune = now
        MemoryService(self.conn, "observer").prune(now, payloads_before=now - PAYLOAD_RETENTION_S,
                                                   events_before=now - EVENT_RETENTION_S)
        spool.clean_tmp(self.paths)

    def back_up(self, now: float) -> None:
        """The daily online backup (kenning/store/backup.py): checked at most every 10 minutes, taken
        when the newest is a day old, never from a damaged file (this cycle returned before, if so)."""
        if now - self._last_backup_check < BACKUP_CHECK_S:
            return
        self._last_backup_check = now
        from kenning.settings import load
        from kenning.store import backup

        keep = load(self.paths)[0].backups_keep
        if keep <= 0 or not backup.due(self.paths, now):
            if keep > 0:
                backup.rotate(self.paths, keep)  # a lowered setting takes effect without waiting a day
            return
        try:
            made = backup.take(self.paths, keep, now)
        except (sqlite3.Error, OSError) as e:
            log.warning("no backup taken: %s", e)
            return
        if made is not None:
            log.info("backup taken: %s", made.path)

    def cycle(self) -> None:
        """Drain the spool completely, then observe."""
        try:
            if not self.check_file():
                self.stats.db_error = ""  # a new file at the path (e.g. `kenning repair`): checked afresh
                self._checked = False
            if not self._checked:
                self._checked = True
                self._check_integrity()
            if self.stats.db_error:
                return  # damaged: writing on could make it worse; the spool keeps everything
            while self.ingest() >= INGEST_BATCH:
                pass
            self.settle()
            self.ledger()
            self.observe()
            self.prune(time.time())
            self.back_up(time.time())
            self.tidy()
            if self.stats.last_error.startswith("cycle"):
                self.stats.last_error = ""
        except _Waiting:
            pass
        except sqlite3.OperationalError as e:
            # e.g. the database is locked by another process beyond the busy timeout: retry later.
            self.stats.last_error = f"cycle: {e}"
            log.warning("cycle deferred: %s", e)
        except sqlite3.DatabaseError as e:  # malformed, not a database: stop writing, say how to repair
            self._damaged(e)
        except Exception as e:  # never let one bad cycle kill the pipeline thread for good
            self.stats.last_error = f"cycle: {type(e).__name__}: {e}"
            log.exception("cycle failed; retrying on the next poke")
        self.stats.cycles += 1
        self.stats.last_cycle_at = time.time()


class _Waiting(Exception):
    """The cycle cannot write yet (the old database file is still held open elsewhere)."""


file_id = switch.file_id


def _validate(rec: dict[str, Any]) -> None:
    p = rec["payload"]
    if rec["event"] not in KNOWN_EVENTS:
        raise ValueError(f"unknown event {rec['event']!r}")
    if not isinstance(p.get("session_id"), str) or not p["session_id"]:
        raise ValueError("payload has no session_id")
    if not isinstance(rec.get("id"), str):
        raise ValueError("record has no id")


class PipelineThread(threading.Thread):
    """Runs cycles when poked, and at least every ``interval`` seconds."""

    def __init__(self, pipeline: Pipeline, interval: float = 2.0) -> None:
        super().__init__(name="kenning-pipeline", daemon=True)
        self.pipeline = pipeline
        self.interval = interval
        self._wake = threading.Event()
        self._stopping = threading.Event()  # not `_stop`: that is a Thread method join() calls
        self._cycle_done = threading.Condition()
        self._generation = 0
        self._in_cycle = False
        self._urgent = threading.Event()  # a flush is waiting: no coalescing delay
        self._last_end = 0.0
        pipeline.wake = self.poke

    def poke(self) -> None:
        """Ask for a cycle soon. Pokes are coalesced: cycles start at most every ``POKE_GAP_S``, so a
        flood of wake-up datagrams (anyone on the machine may send them) costs a few cycles a second."""
        self._wake.set()

    @property
    def cycles_done(self) -> int:
        """Cycles finished since the worker started."""
        return self._generation

    def flush(self, timeout: float) -> bool:
        """Ask for a cycle and wait until one that started after this call has finished."""
        with self._cycle_done:
            # A cycle already running may have listed the spool before this call: wait for the next.
            target = self._generation + (2 if self._in_cycle else 1)
            self._urgent.set()
            self._wake.set()
            return self._cycle_done.wait_for(lambda: self._generation >= target, timeout=timeout)

    def stop(self) -> None:
        self._stopping.set()
        self._urgent.set()
        self._wake.set()

    def run(self) -> None:
        while not self._stopping.is_set():
            # Files whose rows are not yet in the database file are retried soon, not in 2 s.
            self._wake.wait(UNSETTLED_RETRY_S if self.pipeline.unsettled() else self.interval)
            self._wake.clear()
            if self._stopping.is_set():
                break
            gap = self._last_end + POKE_GAP_S - time.monotonic()
            if gap > 0 and not self._urgent.is_set():
                self._urgent.wait(gap)  # coalesce pokes; a flush (or stop) ends the wait at once
                self._wake.clear()
            if self._stopping.is_set():
                break
            self._urgent.clear()
            self._in_cycle = True
            try:
                self.pipeline.cycle()
            finally:
                self._in_cycle = False
                self._last_end = time.monotonic()
            with self._cycle_done:
                self._generation += 1
                self._cycle_done.notify_all()
        self.pipeline.close()
