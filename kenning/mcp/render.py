"""Plain-text renderings of memory for the model: compact rows first, full records on demand.

Text, not JSON: a row like ``#12 2026-11-30 bugfix Fixed VAT rounding (~85 tokens)`` costs a
fraction of the tokens of its JSON, and the model reads it just as well.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

TITLE_CHARS = 160
PREFIX = {"observation": "#", "summary": "S", "prompt": "P"}
KIND_LABEL = {"summary": "session", "prompt": "prompt"}


def as_dict(item: Any) -> dict[str, Any]:
    """A search hit (``Hit`` with ``as_dict()``) or a plain mapping, as a dict."""
    if hasattr(item, "as_dict"):
        return dict(item.as_dict())
    if isinstance(item, Mapping):
        return dict(item)
    return dict(vars(item))


def clean(text: object, limit: int = TITLE_CHARS) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def day(ts: object) -> str:
    try:
        return time.strftime("%Y-%m-%d", time.localtime(float(ts)))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return "????-??-??"


def minute(ts: object) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(float(ts)))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return "????-??-?? ??:??"


def ref(hit: Mapping[str, Any]) -> str:
    """``#12`` (observation), ``S3`` (session summary), ``P7`` (prompt)."""
    return f"{PREFIX.get(str(hit.get('kind') or 'observation'), '#')}{hit.get('id')}"


def row(hit: Mapping[str, Any], *, with_project: bool = False, with_time: bool = False) -> str:
    """One compact index row: ``#id date type title (~N tokens)``."""
    kind = str(hit.get("kind") or "observation")
    label = hit.get("type") if kind == "observation" else KIND_LABEL.get(kind, kind)
    when = minute(hit.get("created_at")) if with_time else day(hit.get("created_at"))
    parts = [ref(hit), when, str(label or "?"), clean(hit.get("title")) or "(untitled)"]
    if with_project and hit.get("project"):
        parts.append(f"[{hit['project']}]")
    tokens = hit.get("tokens")
    if isinstance(tokens, int | float) and tokens > 0:
        parts.append(f"(~{int(tokens):,} tokens)")
    return " ".join(parts)


def matched_by(paths: Iterable[str], note: str = "") -> str:
    """What answered a search, truthfully: ``(matched by keywords and meaning)``, or keywords
    alone and why meaning did not answer."""
    got = set(paths)
    if {"keywords", "meaning"} <= got:
        out = "matched by keywords and meaning"
    elif "meaning" in got:
        out = "matched by meaning"
    elif "keywords" in got:
        out = "matched by keywords only"
    else:
        return ""
    return f" ({out}; {clean(note, 200)})" if note else f" ({out})"


def search_result(hits: Iterable[Any], *, query: str, scope: str, offset: int, limit: int,
                  paths: Iterable[str] = ("keywords",), note: str = "") -> str:
    rows = [as_dict(h) for h in hits]
    what = f" for {query!r}" if query else ""
    if not rows:
        more = " (no more results past this offset)" if offset else ""
        return (f"No memory of {scope}{what}{more}. Try other or fewer words, a wider date range, "
                "or project='*' to search every project.")
    many = len({r.get("project") for r in rows}) > 1
    head = f"{len(rows)} result(s) from the memory of {scope}{what}, {'best' if query else 'newest'} first"
    if query:
        head += matched_by(paths, note)
    if offset:
        head += f" (from result {offset + 1})"
    lines = [head + ":"]
    lines += [row(r, with_project=many) for r in rows]
    hint = ("Next: get_observations(ids=[...]) for full records (each costs about the tokens shown), "
            "memory_timeline(id=...) for what happened around one.")
    if len(rows) >= limit:
        hint += f" More may match: offset={offset + len(rows)}."
    lines.append(hint)
    return "\n".join(lines)


def timeline(result: Mapping[str, Any], *, detail_chars: int = 400) -> str:
    anchor = as_dict(result.get("anchor") or {})
    before = [as_dict(x) for x in result.get("before") or []]
    after = [as_dict(x) for x in result.get("after") or []]
    lines = [f"Timeline of {anchor.get('project') or 'the project'} around {ref(anchor)} "
             f"({len(before)} before, {len(after)} after), oldest first:"]
    lines += ["  " + row(x, with_time=True) for x in before]
    lines.append("▶ " + row(anchor, with_time=True))
    detail = clean(anchor.get("subtitle") or anchor.get("narrative") or "", detail_chars)
    if detail and detail != clean(anchor.get("title")):
        lines.append(f"    {detail}")
    lines += ["  " + row(x, with_time=True) for x in after]
    lines.append("Full records: get_observations(ids=[...]).")
    return "\n".join(lines)


def _list(label: str, values: object) -> list[str]:
    if isinstance(values, list) and values:
        return [f"{label}: {', '.join(str(v) for v in values)}"]
    return []


def observation(obs: Mapping[str, Any]) -> str:
    lines = [f"#{obs.get('id')} [{obs.get('type')}] {clean(obs.get('title'), 500)}"]
    meta = [str(obs.get("project") or ""), minute(obs.get("created_at"))]
    if obs.get("agent_session_id"):
        meta.append(f"session {obs['agent_session_id']}")
    if obs.get("prompt_number"):
        meta.append(f"prompt {obs['prompt_number']}")
    if obs.get("status") and obs.get("status") != "active":
        meta.append(str(obs["status"]) + (f" by #{obs['superseded_by']}" if obs.get("superseded_by") else ""))
    lines.append(" · ".join(m for m in meta if m))
    if obs.get("subtitle"):
        lines.append(str(obs["subtitle"]))
    if obs.get("narrative"):
        lines += ["", str(obs["narrative"])]
    facts = obs.get("facts")
    if isinstance(facts, list) and facts:
        lines += ["", "Facts:", *(f"  - {f}" for f in facts)]
    extra = [*_list("Modified", obs.get("files_modified")), *_list("Read", obs.get("files_read")),
             *_list("Concepts", obs.get("concepts"))]
    if extra:
        lines += ["", *extra]
    return "\n".join(lines)


def summary(s: Mapping[str, Any]) -> str:
    lines = [f"S{s.get('id')} [session summary] {clean(s.get('request'), 300)}",
             " · ".join(x for x in (str(s.get("project") or ""), minute(s.get("created_at"))) if x)]
    for key, label in (("investigated", "Investigated"), ("learned", "Learned"), ("completed", "Completed"),
                       ("next_steps", "Next steps"), ("notes", "Notes")):
        if s.get(key):
            lines.append(f"{label}: {s[key]}")
    lines += _list("Modified", s.get("files_modified")) + _list("Read", s.get("files_read"))
    return "\n".join(lines)


def records(found: list[str], missing: list[str]) -> str:
    out = "\n\n---\n\n".join(found)
    if missing:
        out += ("\n\n" if out else "") + f"Not found (forgotten, or not an id of this memory): {', '.join(missing)}"
    return out
