"""Checking and converting tool arguments. Every problem is a ``ToolInputError`` whose
message tells the model what was wrong and what to send instead."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta

from kenning.search import known

MAX_QUERY_CHARS = 4_000
MAX_LIMIT = 100
MAX_OFFSET = 10_000
MAX_IDS = 20
MAX_FORGET_IDS = 100
MAX_WINDOW = 20
MAX_NAME_CHARS = 500
ALL_PROJECTS = ("*", "all")

_RELATIVE = re.compile(r"^(\d{1,5})\s*(m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)(?:\s+ago)?$")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_ID = re.compile(r"^(#|[Ss])?(\d{1,18})$")


class ToolInputError(ValueError):
    """A bad argument; the message is shown to the model as the tool's error."""


def query_text(query: str | None, *, required: bool) -> str:
    q = (query or "").strip()
    if len(q) > MAX_QUERY_CHARS:
        raise ToolInputError(f"query is too long ({len(q):,} characters; at most {MAX_QUERY_CHARS:,}): "
                             "use a few distinctive words")
    if required and not q:
        raise ToolInputError("query is empty: give words to look for (e.g. 'timezone bug'), "
                             "or a filter such as type or since")
    if q and not known.has_words(q):
        raise ToolInputError(known.no_words(q) + ": give words to look for, or leave query empty with a filter")
    return q


def bounded(value: int | None, name: str, *, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolInputError(f"{name} must be a whole number")
    if not low <= value <= high:
        raise ToolInputError(f"{name} must be between {low} and {high} (got {value})")
    return value


def parse_time(text: str | None, name: str, *, end: bool = False, now: float | None = None) -> float | None:
    """A date or time as epoch seconds (local time zone when none is given).

    Accepts ``2026-11-30`` (a whole day: its start, or its end for ``until``), ISO date-times
    (``2026-11-30T14:05``, ``…Z``, ``…+02:00``), ``today``, ``yesterday`` and relative ages
    (``90m``, ``12h``, ``7d``, ``2w``, ``3 days ago``).
    """
    if text is None or not str(text).strip():
        return None
    s = str(text).strip().lower()
    now = time.time() if now is None else now
    if s in ("now",):
        return now
    if s in ("today", "yesterday"):
        day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
        if s == "yesterday":
            day -= timedelta(days=1)
        return (day + timedelta(days=1)).timestamp() if end else day.timestamp()
    m = _RELATIVE.match(s)
    if m:
        return now - int(m.group(1)) * _UNIT_SECONDS[m.group(2)[0]]
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            day = datetime.fromisoformat(s)
            return (day + timedelta(days=1)).timestamp() if end else day.timestamp()
        dt = datetime.fromisoformat(str(text).strip())  # 3.11: also "…Z" and "2026-11-30 14:05"
    except ValueError:
        raise ToolInputError(f"{name} {text!r} is not a date: use YYYY-MM-DD, an ISO date-time "
                             "(2026-11-30T14:05), 'today', 'yesterday' or an age like 7d or 12h") from None
    return dt.timestamp()


def time_range(since: str | None, until: str | None, *, now: float | None = None) -> tuple[float | None, float | None]:
    lo = parse_time(since, "since", now=now)
    hi = parse_time(until, "until", end=True, now=now)
    if lo is not None and hi is not None and lo >= hi:
        raise ToolInputError(f"since ({since}) must be before until ({until})")
    return lo, hi


def name_text(value: str | None, name: str) -> str:
    v = (value or "").strip()
    if len(v) > MAX_NAME_CHARS:
        raise ToolInputError(f"{name} is too long ({len(v):,} characters; at most {MAX_NAME_CHARS})")
    return v


def project_text(value: str | None) -> str:
    """A project as a tool names it: a name, an absolute path (or ``~/…``), ``*``; never a relative path,
    which would be read against the MCP server's own directory, not the session's."""
    v = name_text(value, "project")
    if v in (".", "..") or (("/" in v or "\\" in v) and not (v.startswith(("/", "~")) or _WINDOWS_ABS.match(v))):
        raise ToolInputError(f"project {v[:80]!r} is a relative path: give the project's name or its absolute "
                             "path, or leave project empty for the current one")
    return v


_WINDOWS_ABS = re.compile(r"^[A-Za-z]:[\\/]")


def types_list(value: str | list[str] | None, valid: list[str]) -> list[str] | None:
    """``'bugfix,decision'`` or a list → validated type ids (None: any type)."""
    if value is None:
        return None
    raw = value.split(",") if isinstance(value, str) else list(value)
    out = [str(t).strip().lower() for t in raw if str(t).strip()]
    if not out:
        return None
    unknown = [t for t in out if valid and t not in valid]
    if unknown:
        raise ToolInputError(f"unknown type {', '.join(map(repr, unknown))}{known.suggestion(unknown[0], valid)}; "
                             f"types are: {', '.join(valid)}")
    return out


def parse_id(value: int | str, name: str = "id") -> tuple[str, int]:
    """``12``, ``'12'``, ``'#12'`` → ('observation', 12); ``'S3'`` → ('summary', 3)."""
    if isinstance(value, bool):
        raise ToolInputError(f"{name} must be an observation id like 12 or #12")
    if isinstance(value, int):
        if not 0 < value < 2**63:  # SQLite integers are 64-bit: larger ones are no id of ours
            raise ToolInputError(f"{name} must be a positive id like 12 (got {str(value)[:30]})")
        return "observation", value
    m = _ID.match(str(value).strip())
    if not m:
        raise ToolInputError(f"{name} {str(value)[:40]!r} is not an id: use the number shown by search_memory, "
                             "like 12 or #12 (S3 for a session summary)")
    kind = "summary" if (m.group(1) or "").lower() == "s" else "observation"
    n = int(m.group(2))
    if not 0 < n < 2**63:  # as for an int above: beyond SQLite's integers is no id of ours
        raise ToolInputError(f"{name} must be a positive id like 12 (got {str(value)[:30]})")
    return kind, n


def parse_ids(values: list[int | str] | int | str | None, *, most: int, allow_summaries: bool) -> list[tuple[str, int]]:
    if values is None or values == [] or values == "":
        raise ToolInputError("ids is empty: pass the ids shown by search_memory, e.g. [12, 15]")
    if isinstance(values, str):
        values = [v for v in re.split(r"[\s,]+", values) if v]
    elif isinstance(values, int):
        values = [values]
    if len(values) > most:
        raise ToolInputError(f"too many ids ({len(values)}; at most {most} per call): ask for the few that matter")
    out: list[tuple[str, int]] = []
    for v in values:
        kind, n = parse_id(v)
        if kind == "summary" and not allow_summaries:
            raise ToolInputError(f"{v} is a session summary; this tool takes observation ids only")
        if (kind, n) not in out:
            out.append((kind, n))
    return out
