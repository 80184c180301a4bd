"""The LLM observer: one long-lived conversation per agent session, never blocking the pipeline.

The pipeline thread calls :meth:`LLMObserver.observe` for each session with pending events,
as for any observer. Here that call never waits for a model: it

1. collects the reply of the session's finished call, if any, and turns it into drafts
   (the pipeline stores them and marks those events done in one transaction);
2. settles trivial events, and, when no call of this session is in flight, sends the
   session's next batch as one more user turn of its conversation, on a bounded pool.

While a call is in flight the session's new events wait; the next turn carries all of
them. Which events are in flight is only known in memory: after a crash they are simply
pending again and go to a fresh conversation (content hashes stop duplicate rows).
Quota, rate-limit, auth and transient failures leave the events pending and back off.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kenning.observer import evidence, prompts
from kenning.observer.base import Observer
from kenning.observer.llm import batch as batching
from kenning.observer.llm.backoff import Backoff
from kenning.observer.llm.base import ChatProvider, Conversation, ProviderError, Usage
from kenning.observer.llm.outcome import observation_drafts, summary_draft
from kenning.observer.llm.slots import Pool, Slots
from kenning.observer.modes import type_ids
from kenning.observer.parse import parse_reply
from kenning.observer.providers.rules import state_notes, with_state
from kenning.observer.summary import Notes
from kenning.records import Event, Outcome, SessionInfo, tokens_of
from kenning.store.usage import CACHE_READ_WEIGHT

log = logging.getLogger("kenning.observer")

EVICT_MIN_IDLE_S = 5.0  # an idle conversation younger than this is not evicted for another session...
STARVE_S = 30.0  # ...unless that session has waited this long for a slot
FORGET_STATE_S = 3600.0
FATAL_LIMIT = 3  # consecutive unusable calls after which a session is left to the rules observer


FILE_TOOLS = evidence.WRITE_TOOLS | evidence.READ_TOOLS
SEEN_CAP = 300
SAID_KINDS = ("UserPromptSubmit", "Stop")
SAID_CAP = 60  # earlier prompts and turn ends a memory's sentence may be quoted from
MEMORIES_PER_TURN = 40  # current memories listed in one turn (each once per conversation)


@dataclass
class LLMOutcome(Outcome):
    """An Outcome that also says who produced it and what the call cost in detail."""

    provider: str = ""
    cache_read: int = 0
    cache_write: int = 0
    calls: int = 0
    reply_kind: str = ""


@dataclass
class Config:
    model: str
    cheap_model: str = ""
    max_concurrent: int = 2
    idle_timeout_s: float = 180.0
    max_conversation_chars: int = 200_000
    max_output_tokens: int = 4096
    daily_token_budget: int = 0
    prompt_wait_s: float = 600.0
    endpoint: str = ""  # the base URL when not the provider's own (said when it cannot be reached)
    key_var: str = ""  # where the worker took its API key (said when the key is rejected)


@dataclass
class Job:
    events: list[Event]
    text: str
    model: str
    summary: bool
    ends_session: bool
    system: str | None  # set: open a fresh conversation first
    retire: Conversation | None = None  # a conversation past its size bound, closed first
    memory_ids: set[int] = field(default_factory=set)  # memories listed in this turn


@dataclass
class Result:
    job: Job
    text: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: ProviderError | None = None


@dataclass
class SessionState:
    conversation: Conversation | None = None
    holds_slot: bool = False
    in_flight: Job | None = None
    result: Result | None = None
    last_used: float = 0.0
    waiting_since: float = 0.0
    work_since_summary: bool = False
    chars_since_summary: int = 0
    unusable: int = 0
    rules_only: bool = False
    seen: list[Event] = field(default_factory=list)  # file-touching events already sent, for evidence
    shown: set[int] = field(default_factory=set)  # memories this conversation was shown (may be superseded)
    said: list[Event] = field(default_factory=list)  # prompts and turn ends this conversation was shown (quotes)
    forgotten_at: float | None = None  # the session's forgotten_at when last observed (None: not yet)
    standing: list[Notes] = field(default_factory=list)  # what turns since the last summary did to the repository


@dataclass
class Counters:
    calls: int = 0
    observations: int = 0
    summaries: int = 0
    empty: int = 0
    prose: int = 0
    corrected: int = 0  # observations whose kind, scope, tentative or why the events did not bear out
    failures: int = 0
    settled_trivial: int = 0
    conversations_opened: int = 0
    conversations_closed: int = 0
    fallback_batches: int = 0
    last_prose: str = ""


class LLMObserver:
    """Observer provider backed by a :class:`ChatProvider` (anthropic, openai, claude)."""

    def __init__(self, provider: ChatProvider, config: Config, mode: dict[str, Any], fallback: Observer,
                 *, clock: Callable[[], float] = time.time) -> None:
        self.provider = provider
        self.name = provider.name
        self.config = config
        self.mode = mode
        self.fallback = fallback
        self.types = type_ids(mode) or ["discovery"]
        self.clock = clock
        self.backoff = Backoff(clock)
        self.slots = Slots(config.max_concurrent)
        self.counters = Counters()
        self._lock = threading.RLock()
        self._sessions: dict[int, SessionState] = {}
        self._pool = Pool(self.slots.limit)
        self._wake: Callable[[], None] = lambda: None
        self._spent_loader: Callable[[], float] | None = None
        self._spent_day = ""
        self._spent = 0.0
        self._closed = False
        self._trouble: dict[str, Any] | None = None  # the current failure streak (kenning.observer.trouble)

    # ----------------------------------------------------------------- pipeline hooks
    def bind(self, wake: Callable[[], None], spent_today: Callable[[], float] | None = None) -> None:
        """``wake`` asks the pipeline for a cycle (a reply is ready); ``spent_today`` reads the day's usage."""
        self._wake = wake
        self._spent_loader = spent_today

    def wants(self, session_id: int) -> bool:
        """False while there is nothing to do for the session: saves the pipeline reading its events."""
        with self._lock:
            st = self._sessions.get(session_id)
            if st is not None and st.result is not None:
                return True
            if st is not None and st.in_flight is not None:
                return False
        return not self.backoff.paused() or self.over_budget()

    def observe(self, session: SessionInfo, events: list[Event], *, now: float) -> Outcome:
        with self._lock:
            st = self._sessions.setdefault(session.id, SessionState(last_used=now))
            result, st.result = st.result, None
            in_flight = st.in_flight
            self._after_forget(st, session)
        out = LLMOutcome(provider=self.name)
        if result is not None:
            self._harvest(st, session, result, out)
        taken = {e.id for e in (in_flight.events if in_flight else [])} | set(out.done)
        if result is not None:
            taken |= {e.id for e in result.job.events}  # failed ones wait for the back-off
        available = [e for e in events if e.id not in taken]
        if in_flight is not None or not available or self._closed:
            return out
        if st.rules_only or self.over_budget():
            if out.done or out.observations or out.summary:
                self._wake()  # store this reply first; the rules observer takes the rest next cycle
                return out
            self.counters.fallback_batches += 1
            rules = self.fallback.observe(session, available, now=now)
            return LLMOutcome(observations=rules.observations, summary=rules.summary, done=rules.done,
                              provider=self.fallback.name)
        self._submit(st, session, available, now, out)
        return out

    def _after_forget(self, st: SessionState, session: SessionInfo) -> None:
        """Start afresh when a memory of this session was forgotten since the last call
        (``sessions.forgotten_at`` moved): the conversation still holds the forgotten text and could
        write the memory again. The events of its turn are gone from the ledger, so the new
        conversation never sees them. Under the lock; a conversation busy with a call is retired
        at the next one."""
        if st.forgotten_at is None:
            st.forgotten_at = session.forgotten_at  # a new state: no conversation has seen the old text
        if session.forgotten_at == st.forgotten_at or st.in_flight is not None:
            return
        log.info("a memory of session %s was forgotten: its observer conversation starts afresh", session.id)
        self._retire(st)
        st.seen.clear()
        st.said.clear()
        st.shown.clear()
        st.forgotten_at = session.forgotten_at

    def maintain(self, now: float) -> None:
        """Close conversations idle past the timeout; forget long-idle sessions."""
        with self._lock:
            for sid, st in list(self._sessions.items()):
                idle = now - st.last_used
                if st.in_flight is not None or st.result is not None:
                    continue
                if st.conversation is not None and idle >= self.config.idle_timeout_s:
                    log.debug("observer conversation of session %s idle for %.0f s: closing", sid, idle)
                    self._retire(st)
                elif st.conversation is None and not st.holds_slot and idle >= FORGET_STATE_S:
                    del self._sessions[sid]

    def close(self) -> None:
        """Close every conversation (no orphan process, ever) and stop the pool."""
        with self._lock:
            self._closed = True
            convs = [st.conversation for st in self._sessions.values() if st.conversation is not None]
            for st in self._sessions.values():
                st.conversation = None
        for c in convs:
            _close_quietly(c)
        self._pool.shutdown()

    # ---------------------------------------------------------------------- budget
    def over_budget(self, *, load: bool = True) -> bool:
        budget = self.config.daily_token_budget
        return bool(budget) and self.spent_today(load=load) >= budget

    def spent_today(self, *, load: bool = True) -> float:
        """Budget tokens spent today. ``load=False`` (other threads) never touches the database."""
        day = time.strftime("%Y-%m-%d", time.localtime(self.clock()))
        if day != self._spent_day and not load:
            return 0.0
        if day != self._spent_day:
            self._spent_day = day
            self._spent = 0.0
            if self._spent_loader is not None:
                try:
                    self._spent = float(self._spent_loader())
                except Exception:  # a reader problem must not stop observation
                    log.exception("could not read today's observer usage")
        return self._spent

    # -------------------------------------------------------------------- sending
    def _submit(self, st: SessionState, session: SessionInfo, available: list[Event], now: float,
                out: LLMOutcome) -> None:
        p = batching.plan(available, now=now, prompt_wait_s=self.config.prompt_wait_s)
        out.done.extend(p.settle)
        self.counters.settled_trivial += len(p.settle)
        if not p.send or self.backoff.paused():
            return
        tools = any(e.kind in batching.TOOL_EVENTS for e in p.send)
        prompt = any(e.kind == "UserPromptSubmit" for e in p.send)
        if tools:
            st.work_since_summary = True
        did_work = st.work_since_summary or (session.prior_summary is None and bool(session.prior_observations))
        summary = p.closes_turn and did_work
        if not tools and not prompt and not summary:
            out.done.extend(e.id for e in p.send)  # a Stop / SessionEnd with nothing new to say
            if p.ends_session:
                with self._lock:
                    self._retire(st)
            return
        with self._lock:
            retire: Conversation | None = None
            if st.conversation is not None and st.conversation.size_chars > self.config.max_conversation_chars:
                retire, st.conversation = st.conversation, None  # its slot passes to the fresh one
            if st.conversation is None and not st.holds_slot and not self._reserve(st, now):
                return
            system = prompts.system_prompt(self.mode, session) if st.conversation is None else None
            if system is not None:
                st.shown = set()  # a fresh conversation has been shown nothing yet
                st.said = []
            model = self.config.cheap_model if p.read_only and self.config.cheap_model else self.config.model
            listed = [m for m in session.memories if int(m["id"]) not in st.shown][:MEMORIES_PER_TURN]
            job = Job(events=p.send, text=prompts.batch_turn(self.mode, p.send, summary=summary, memories=listed),
                      model=model, summary=summary, ends_session=p.ends_session, system=system, retire=retire,
                      memory_ids={int(m["id"]) for m in listed})
            st.in_flight = job
            st.waiting_since = 0.0
            st.chars_since_summary += sum(e.size_chars for e in p.send)
        self._pool.submit(self._run, st, job)

    def _reserve(self, st: SessionState, now: float) -> bool:
        """Take a slot for ``st`` (caller holds the lock); when full, evict an idle conversation."""
        if self.slots.try_take():
            st.holds_slot = True
            return True
        st.waiting_since = st.waiting_since or now
        starving = now - st.waiting_since >= STARVE_S
        idle = [s for s in self._sessions.values() if s.conversation is not None and s.in_flight is None
                and s.result is None and (starving or now - s.last_used >= EVICT_MIN_IDLE_S)]
        if idle:
            self._retire(min(idle, key=lambda s: s.last_used))  # its slot frees once it is closed
        return False

    def _retire(self, st: SessionState) -> None:
        """Close the session's conversation in the background; the slot is freed when it is gone."""
        conv, st.conversation = st.conversation, None
        if not st.holds_slot:
            return
        st.holds_slot = False
        if conv is None:
            self.slots.give_back()
            return

        def close() -> None:
            _close_quietly(conv)
            self.counters.conversations_closed += 1
            self.slots.give_back()
            self._wake()  # a waiting session may take the slot now

        try:
            self._pool.submit(close)
        except RuntimeError:  # pool already shut down
            close()

    def _run(self, st: SessionState, job: Job) -> None:
        """On a pool thread: (re)open the conversation if needed, send the turn, hand back the result."""
        result = Result(job)
        try:
            if job.retire is not None:
                _close_quietly(job.retire)
                self.counters.conversations_closed += 1
            conv = st.conversation
            if conv is None:
                conv = self.provider.open(job.system or "")
                self.counters.conversations_opened += 1
                with self._lock:
                    st.conversation = conv
            result.text, result.usage = conv.send(job.text, model=job.model, max_tokens=self.config.max_output_tokens)
        except ProviderError as e:
            result.error = e
        except Exception as e:  # an SDK bug or a dropped connection: the events wait, nothing is lost
            log.exception("observer call failed")
            result.error = ProviderError("transient", f"{type(e).__name__}: {e}")
        with self._lock:
            if st.conversation is None and st.holds_slot and result.error is not None:
                st.holds_slot = False  # opening failed: give the reservation back
                self.slots.give_back()
            st.result = result
            st.in_flight = None
            st.last_used = self.clock()
        self._wake()

    # -------------------------------------------------------------------- replies
    def _harvest(self, st: SessionState, session: SessionInfo, res: Result, out: LLMOutcome) -> None:
        job = res.job
        self.counters.calls += 1
        if res.error is not None:
            e = res.error
            self._failed(st, e.kind, str(e), e.retry_after, cause=e.cause, unreachable=e.unreachable)
            return
        u = res.usage
        out.calls = 1
        out.model = job.model
        out.tokens_in = u.tokens_in + u.cache_read + u.cache_write
        out.tokens_out = u.tokens_out
        out.cache_read, out.cache_write = u.cache_read, u.cache_write
        self._spend(u)
        reply = parse_reply(res.text or "", self.types)
        out.reply_kind = reply.kind
        if reply.kind in ("quota", "auth"):
            # The provider answered with a refusal instead of notes: same as an error, and the
            # refusal must not stay in the history.
            self._failed(st, reply.kind, reply.preview, None)
            with self._lock:
                self._retire(st)
            out.tokens_in = out.tokens_out = 0  # nothing stored for it; usage still counts in the budget
            return
        self.backoff.succeed()
        with self._lock:
            self._trouble = None
        st.unusable = 0
        st.shown |= job.memory_ids  # the turn is in the conversation now
        out.done.extend(e.id for e in job.events)
        if reply.kind == "prose":
            self.counters.prose += 1
            self.counters.last_prose = reply.preview
            log.warning("observer replied in prose for session %s (%d events dropped, not retried): %s",
                        session.id, len(job.events), reply.preview)
        elif reply.kind == "empty":
            self.counters.empty += 1
        total = u.tokens_in + u.cache_read + u.cache_write + u.tokens_out
        shares = len(reply.observations) + (1 if reply.summary else 0)
        per = total // max(1, shares)
        turns = {e.prompt_number for e in job.events}
        earlier = [e for e in st.seen if e.prompt_number in turns]
        out.observations = observation_drafts(reply, job.events, session, tokens=per * len(reply.observations),
                                              earlier=earlier, shown=st.shown, said=st.said,
                                              judge=f"{self.name} observer ({job.model})")
        st.seen = [*st.seen, *(e for e in job.events if e.tool_name in FILE_TOOLS)][-SEEN_CAP:]
        st.said = [*st.said, *(e for e in job.events if e.kind in SAID_KINDS)][-SAID_CAP:]
        self.counters.observations += len(out.observations)
        self.counters.corrected += sum(1 for d in out.observations if "corrected:" in str(d.why.get("how") or ""))
        # Where the repository stands is proven by the commands, not told by the model: every batch's turns
        # count, also those of batches that wrote no summary.
        st.standing += state_notes(session, job.events)
        if reply.summary is not None and job.summary:
            prior = int((session.prior_summary or {}).get("source_tokens") or 0)
            out.summary = summary_draft(reply, job.events, session, out.observations, tokens=per,
                                        source_tokens=prior + tokens_of(st.chars_since_summary))
            if out.summary is not None:
                out.summary.notes = with_state(out.summary.notes, str((session.prior_summary or {}).get("notes")
                                                                      or ""), st.standing)
                st.standing = []
            st.work_since_summary = False
            st.chars_since_summary = 0
            self.counters.summaries += 1
        if job.ends_session:
            with self._lock:
                self._retire(st)

    def _failed(self, st: SessionState, kind: str, message: str, retry_after: float | None, *, cause: str = "",
                unreachable: bool = False) -> None:
        self.counters.failures += 1
        delay = self.backoff.fail(kind, message, retry_after)
        self._note_trouble("unreachable" if unreachable else kind, message, cause, delay)
        log.warning("observer %s: %s failure, events kept, next call in %.0f s: %s", self.name, kind, delay,
                    message[:200])
        if kind == "fatal":
            st.unusable += 1
            with self._lock:
                self._retire(st)  # a request the API refuses may be the history's fault: start afresh
            if st.unusable >= FATAL_LIMIT:
                st.rules_only = True
                log.warning("observer: %d unusable calls in a row; the rules observer takes this session", st.unusable)

    def _note_trouble(self, kind: str, message: str, cause: str, delay: float) -> None:
        """Keep the failure for the surfaces that tell the user (the pipeline writes it to the data dir)."""
        from kenning.privacy.redact import Redactor

        now = self.clock()
        with self._lock:
            prior = self._trouble or {}
            self._trouble = {
                "kind": kind, "provider": self.name, "model": self.config.model, "endpoint": self.config.endpoint,
                "key_var": self.config.key_var, "cause": cause, "message": Redactor().text(message)[:300],
                "since": prior.get("since", now) if prior.get("kind") == kind else now, "at": now,
                "failures": int(prior.get("failures", 0)) + 1 if prior.get("kind") == kind else 1,
                "retry_at": now + delay}

    def carry(self, prior: dict[str, Any]) -> bool:
        """Take over the trouble an earlier worker recorded when it was met with this very provider,
        endpoint and key variable (it is most likely still true); the first call's outcome replaces it."""
        same = (prior.get("provider"), prior.get("endpoint"), prior.get("key_var")) == (
            self.name, self.config.endpoint, self.config.key_var)
        if not same or prior.get("kind") == "budget":
            return False
        with self._lock:
            self._trouble = dict(prior)
        return True

    def trouble(self) -> dict[str, Any] | None:
        """Why events are not turned into memory by the model now (kenning.observer.trouble), or None."""
        if self.over_budget(load=False):
            return {"kind": "budget", "provider": self.name, "model": self.config.model,
                    "budget": self.config.daily_token_budget, "since": 0, "at": 0}
        with self._lock:
            return dict(self._trouble) if self._trouble else None

    def _spend(self, u: Usage) -> None:
        self.spent_today()  # roll the day over first
        self._spent += u.tokens_in + u.cache_write + u.tokens_out + u.cache_read * CACHE_READ_WEIGHT

    # ---------------------------------------------------------------------- status
    def snapshot(self) -> dict[str, Any]:
        """What doctor and /api/health show."""
        with self._lock:
            live = sum(1 for s in self._sessions.values() if s.conversation is not None)
            in_flight = sum(1 for s in self._sessions.values() if s.in_flight is not None)
            rules_only = sum(1 for s in self._sessions.values() if s.rules_only)
        c = self.counters
        budget = self.config.daily_token_budget
        return {
            "provider": self.name, "model": self.config.model, "cheap_model": self.config.cheap_model or None,
            "conversations": {"live": live, "slots_held": self.slots.held, "limit": self.slots.limit,
                              "peak": self.slots.peak, "in_flight": in_flight, "opened": c.conversations_opened,
                              "closed": c.conversations_closed},
            "replies": {"calls": c.calls, "observations": c.observations, "summaries": c.summaries,
                        "empty": c.empty, "prose": c.prose, "corrected": c.corrected, "failures": c.failures,
                        "last_prose": c.last_prose},
            "settled_trivial": c.settled_trivial,
            "backoff": self.backoff.snapshot(),
            "budget": {"daily": budget, "spent_today": round(self.spent_today(load=False)),
                       "exhausted": self.over_budget(load=False), "fallback_batches": c.fallback_batches},
            "rules_only_sessions": rules_only,
        }


def _close_quietly(conv: Conversation) -> None:
    try:
        conv.close()
    except Exception:
        log.exception("closing an observer conversation failed")
