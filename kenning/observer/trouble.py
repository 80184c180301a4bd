"""Why the observer is not turning captured events into memory, kept where every surface reads it cheaply.

The worker writes ``<data>/observer.trouble`` (one small JSON object) when an LLM observer's call
fails (the API unreachable, a rate limit or quota, a rejected key, a server error) or its daily
token budget is spent, and removes it once a call succeeds again. The session-start context
(built by the worker, or by the hook itself from the file), ``kenning status`` and the viewer
read it and say, in one line with the fix, that events wait and why: "no memory yet" would be
false while they wait. Standard library only (the SessionStart hook reads it); reading costs one
``open`` of a file that is usually absent.

A record: ``kind`` (``unreachable`` ``quota`` ``auth`` ``transient`` ``fatal`` ``budget``),
``provider``, ``endpoint`` (the base URL, "" for the provider's own), ``cause`` (a short phrase:
"connection refused", "HTTP 429"), ``message`` (the API's words, secrets redacted, cut short),
``key_var`` (where the worker took its key), ``since`` and ``at`` (first and latest failure),
``failures``, ``retry_at`` (the next call), ``budget`` (the daily token budget, for ``budget``).
"""

from __future__ import annotations

from kenning import fastjson
from kenning.paths import Paths, join, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms at import; the hook cannot afford it
    from typing import Any

MAX_BYTES = 8192
KINDS = ("unreachable", "quota", "auth", "transient", "fatal", "budget")
LABELS = {"anthropic": "the Anthropic API", "openai": "the OpenAI-compatible API",
          "claude": "Claude Code (the claude-agent-sdk observer)"}
DOCTOR = "`kenning doctor` checks it."
BUDGET_SPENT = "Kenning's observer has spent today's token budget"


def path_of(paths: Paths) -> str:
    return join(paths.root, "observer.trouble")


def read(paths: Paths) -> dict[str, Any] | None:
    """The recorded trouble, or None (none recorded, or a file that is not ours to believe)."""
    try:
        with open(path_of(paths), "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_BYTES:
        return None
    try:
        rec = fastjson.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(rec, dict) or rec.get("kind") not in KINDS:
        return None
    return rec


def write(paths: Paths, rec: dict[str, Any]) -> None:
    write_private(path_of(paths), fastjson.dumps(rec, ensure_ascii=False).encode("utf-8"))


def clear(paths: Paths) -> bool:
    """Remove the record; True when there was one."""
    import os

    try:
        os.unlink(path_of(paths))
        return True
    except FileNotFoundError:
        return False


def _where(rec: dict[str, Any]) -> str:
    label = LABELS.get(str(rec.get("provider") or ""), f"the {rec.get('provider') or 'model'} API")
    endpoint = str(rec.get("endpoint") or "")
    return f"{label} at {endpoint}" if endpoint else label


def reason(rec: dict[str, Any], now: float, *, doctor: bool = True) -> tuple[str, str, str]:
    """(why the observer cannot work, when what waits will be processed, the fix), in plain words;
    ``doctor``: the fix may point to `kenning doctor` (not in doctor's own lines)."""
    kind = rec.get("kind")
    check = DOCTOR if doctor else ""
    where = _where(rec)
    cause = str(rec.get("cause") or "")
    paren = f" ({cause})" if cause else ""
    retry = float(rec.get("retry_at") or 0) - now
    later = f" (next try in {_duration(retry)})" if retry > 1 else ""
    if kind == "unreachable":
        return f"{where} is unreachable{paren}", "when it answers", check
    if kind == "quota":
        return (f"{where} refuses calls for now: rate limit or quota{paren}", f"once it takes calls again{later}",
                f"Check the account's limits and credit{'; ' + check if check else '.'}")
    if kind == "auth":
        var = str(rec.get("key_var") or "")
        fix = (f"Set a valid key in {var} where the worker starts, then run `kenning worker restart`." if var
               else "Log in again (or give the worker a valid key), then run `kenning worker restart`.")
        return f"{where} rejected the worker's credentials{paren}", "once it accepts them", fix
    if kind == "fatal":
        return (f"{where} refuses the observer's requests{paren}",
                "after a few retries, by the offline rules observer if the model still refuses",
                "`kenning worker logs` shows the error.")
    return f"{where} is failing{paren}", f"when it recovers{later}", check


def line(rec: dict[str, Any] | None, waiting: int, now: float, *, here: str = "", doctor: bool = True) -> str:
    """One line for the user: how many events wait, why, and the fix ("" when there is no trouble).

    ``waiting``: events captured but not yet turned into memory; ``here``: whose (" of this project")."""
    if not rec:
        return ""
    if rec.get("kind") == "budget":
        budget = int(rec.get("budget") or 0)
        return (f"{BUDGET_SPENT} (daily_token_budget {budget:,}): until "
                "midnight, notes come from the offline rules observer and are thinner; raise the setting "
                "(KENNING_DAILY_TOKEN_BUDGET, or in the viewer's Settings) to go on with the model.")
    why, when, fix = reason(rec, now, doctor=doctor)
    if waiting > 0:
        events = f"1 event{here} waits" if waiting == 1 else f"{waiting} events{here} wait"
        return f"{events} for the observer: {why}; they will be turned into memory {when}. {fix}".rstrip()
    return (f"Kenning's observer cannot work now: {why}; what is captured waits, and will be turned into memory "
            f"{when}. {fix}").rstrip()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def summary(paths: Paths, waiting: int, now: float | None = None) -> dict[str, Any] | None:
    """The record with ``waiting`` (events not yet memory, all projects) and its ``line``; None without trouble."""
    rec = read(paths)
    if rec is None:
        return None
    import time

    return {**rec, "waiting": waiting, "line": line(rec, waiting, time.time() if now is None else now)}
