"""``kenning doctor`` lines about the observer: which provider and why, back-off, budget, replies."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from kenning.paths import Paths
from kenning.settings import Settings

Check = tuple[str, str, str]


def checks(paths: Paths, settings: Settings, health: dict[str, Any] | None) -> list[Check]:
    from kenning.observer.registry import resolve

    out: list[Check] = []
    provider, why = resolve(settings, paths=paths)  # from this shell's environment
    told = _waiting(paths)
    live = (health or {}).get("observer") or {}
    running = str(live.get("why") or "")
    if running:  # the worker's own choice, made from its environment: what observes now
        llm = not running.startswith("rules")
        line = f"the worker uses {running}"
        if _label(running) != _label(why):
            line += f"; a worker started now from this shell would use {why}"
        out.append(("warn" if running.startswith("rules: provider") else "ok", "observer", line))
    else:
        llm = provider is not None
        fell_back = provider is None and settings.provider not in ("auto", "rules")
        out.append(("warn" if fell_back else "ok", "observer", f"no worker is running; a new one would use {why}"))
    if told:  # recorded by the worker (kenning/observer/trouble.py): true even when no worker runs now
        out.append(("warn", "observer waits", told))
    if not llm and not live.get("backoff"):
        return out
    backoff = live.get("backoff") or {}
    if backoff.get("active"):
        out.append(("warn", "observer back-off",
                    f"{backoff.get('kind')} failure x{backoff.get('failures')}: no call for "
                    f"{backoff.get('retry_in_s')} s, events wait (nothing is lost): {backoff.get('last_error')}"))
    elif backoff.get("total_failures"):
        out.append(("ok", "observer back-off", f"not backing off ({backoff['total_failures']} failure(s) since start, "
                                               f"last: {backoff.get('last_error') or '-'})"))
    out.append(_budget(paths, settings))
    replies = live.get("replies") or {}
    conv = live.get("conversations") or {}
    if replies or conv:
        prose = int(replies.get("prose") or 0)
        out.append(("warn" if prose and prose * 5 > int(replies.get("calls") or 1) else "ok", "observer replies",
                    f"{replies.get('calls', 0)} call(s): {replies.get('observations', 0)} observation(s) "
                    f"({replies.get('corrected', 0)} corrected against the events), "
                    f"{replies.get('empty', 0)} empty, {prose} prose (dropped); conversations "
                    f"{conv.get('live', 0)} live of {conv.get('limit', '?')} (peak {conv.get('peak', 0)})"))
    return out


def _waiting(paths: Paths) -> str:
    """Why events wait for the observer, as the worker recorded it, in the words every surface uses."""
    from kenning import spool
    from kenning.observer import trouble

    rec = trouble.read(paths)
    if rec is None or rec.get("kind") == "budget":  # (a spent budget: the budget line says it)
        return ""
    waiting = spool.depth(paths)
    if os.path.exists(paths.db):
        from kenning.store.db import connect
        from kenning.store.repo import pending_count

        try:
            conn = connect(paths.db, readonly=True)
            try:
                waiting += pending_count(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            pass
    import time

    return trouble.line(rec, waiting, time.time(), doctor=False)


def _label(why: str) -> str:
    """The provider and model of an observer's reason line ("openai (gpt-4o-mini): picked by auto; ...")."""
    return why.split(":", 1)[0].strip()


def _budget(paths: Paths, settings: Settings) -> Check:
    budget = settings.daily_token_budget
    spent = spent_today(paths)
    if not budget:
        return ("ok", "observer budget", f"no daily limit; {spent:,.0f} token(s) spent today")
    if spent >= budget:
        return ("warn", "observer budget", f"daily token budget reached ({spent:,.0f} of {budget:,}): the rules "
                                           "observer takes over until midnight")
    return ("ok", "observer budget", f"{spent:,.0f} of {budget:,} token(s) spent today ({spent * 100 / budget:.1f}%)")


def spent_today(paths: Paths) -> float:
    if not os.path.exists(paths.db):
        return 0.0
    from kenning.store.db import connect
    from kenning.store.usage import spent_today as spent

    try:
        conn = connect(paths.db, readonly=True)
    except sqlite3.Error:
        return 0.0
    try:
        return spent(conn)
    except sqlite3.Error:
        return 0.0
    finally:
        conn.close()
