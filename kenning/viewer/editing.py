"""Every field of a memory a person may correct from the viewer, checked before it goes through the door
(kenning/memory_service.py ``edit``): what each field may hold, and a message a user can act on."""

from __future__ import annotations

from typing import Any

from kenning.viewer.items import one_line

EDITABLE_STATUS = ("active", "retracted")
MAX_TITLE = 300
MAX_SUBTITLE = 300
MAX_NARRATIVE = 20_000
MAX_ITEM = 2_000      # one fact, one file path, one concept
MAX_ITEMS = 200       # facts, files or concepts in one memory
LISTS = ("facts", "concepts", "files_read", "files_modified")
FIELDS = ("title", "subtitle", "type", "status", "narrative", *LISTS, "importance")
EXAMPLE = '{"title": "…", "type": "bugfix", "narrative": "…", "facts": ["…"], "files_modified": ["src/a.py"], ' \
          '"importance": 7}'


def _text(name: str, value: Any, limit: int, *, line: bool, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    text = one_line(value, 10**6) if line else value.replace("\r\n", "\n").strip()
    if not text and not empty:
        raise ValueError(f"{name} must not be empty")
    if len(text) > limit:
        raise ValueError(f"{name} must be at most {limit:,} characters")
    if "\x00" in text:
        raise ValueError(f"{name} must not contain NUL")
    return text


def _list(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise ValueError(f"{name} must be a list of at most {MAX_ITEMS} strings")
    out: list[str] = []
    for v in value:
        item = _text(f"each of {name}", v, MAX_ITEM, line=name != "facts")
        if item and item not in out:  # blank lines and repeats are dropped, not stored
            out.append(item)
    return out


def check(body: Any, types: list[str]) -> dict[str, Any]:
    """The validated changes of a PATCH body; ValueError with a message a user can act on."""
    if not isinstance(body, dict) or not body:
        raise ValueError(f"the body must be a JSON object like {EXAMPLE}")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise ValueError(f"{', '.join(unknown)} cannot be edited; the fields are {', '.join(FIELDS)}")
    out: dict[str, Any] = {}
    if "title" in body:
        out["title"] = _text("title", body["title"], MAX_TITLE, line=True, empty=False)
    if "subtitle" in body:
        out["subtitle"] = _text("subtitle", body["subtitle"], MAX_SUBTITLE, line=True)
    if "narrative" in body:
        out["narrative"] = _text("narrative", body["narrative"], MAX_NARRATIVE, line=False)
    for name in LISTS:
        if name in body:
            out[name] = _list(name, body[name])
    if "type" in body:
        if body["type"] not in types:
            raise ValueError(f"type must be one of: {', '.join(types)}")
        out["type"] = body["type"]
    if "status" in body:
        if body["status"] not in EDITABLE_STATUS:
            raise ValueError("status must be active or retracted (no longer true)")
        out["status"] = body["status"]
    if "importance" in body:
        v = body["importance"]
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 10):
            raise ValueError("importance must be a whole number from 0 to 10, or null (as the memory index judges)")
        out["importance"] = v
    return out
