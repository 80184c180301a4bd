"""Observer modes: JSON files defining observation types, concepts and prompt sections.

Bundled modes live beside this module; a user's own modes in ``<data dir>/modes`` win over
them. A mode whose id is ``parent--child`` (or that names a ``parent``) is merged over
its parent, key by key. Standard library only: the context builder uses the type icons.
"""

from __future__ import annotations

import json
import os
from typing import Any

FALLBACK_ICON = "•"


_BUNDLED_TEXT: dict[str, str | None] = {}
_HERE = os.path.dirname(os.path.abspath(__file__))


def _bundled(mode_id: str) -> dict[str, Any] | None:
    # The package's own files do not change while it runs: read each once (every session-start
    # context needs it), parse a fresh copy every time. A plain file read: importlib.resources
    # costs ~7 ms to import and ~0.5 ms a call.
    if mode_id not in _BUNDLED_TEXT:
        try:
            with open(os.path.join(_HERE, f"{mode_id}.json"), encoding="utf-8") as fh:
                _BUNDLED_TEXT[mode_id] = fh.read()
        except OSError:
            _BUNDLED_TEXT[mode_id] = None
    text = _BUNDLED_TEXT[mode_id]
    if text is None:
        return None
    data = json.loads(text)
    return data if isinstance(data, dict) else None


def _safe_id(mode_id: str) -> bool:
    """A mode id names a file in a modes folder: never a path (``../x``, ``/etc/x``) nor a NUL."""
    return bool(mode_id) and not mode_id.startswith(".") and not any(c in mode_id for c in "/\\\0")


def _user(mode_id: str, user_dir: str | None) -> dict[str, Any] | None:
    if not user_dir or not _safe_id(mode_id):
        return None
    try:
        with open(os.path.join(user_dir, f"{mode_id}.json"), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def available_modes(user_dir: str | None = None) -> list[str]:
    """Ids of the modes that exist: bundled ones, then the user's own (``<data dir>/modes/*.json``)."""
    found = sorted(n[:-5] for n in os.listdir(_HERE) if n.endswith(".json"))
    try:
        names = os.listdir(user_dir) if user_dir else []
    except OSError:
        names = []
    found += [n[:-5] for n in names if n.endswith(".json") and _safe_id(n[:-5]) and _user(n[:-5], user_dir)]
    return sorted(dict.fromkeys(found), key=lambda m: (m != "code", m))


def load_mode(mode_id: str = "code", user_dir: str | None = None, _depth: int = 0) -> dict[str, Any]:
    """The merged mode; unknown ids (and ids that are paths) fall back to ``code``."""
    data = (_user(mode_id, user_dir) or _bundled(mode_id)) if _safe_id(mode_id) else None
    if data is None:
        return load_mode("code", None, _depth + 1) if mode_id != "code" else {"id": "code"}
    parent = data.get("parent")
    if not parent and "--" in mode_id:
        parent = mode_id.split("--", 1)[0]
    if parent and parent != mode_id and _depth < 3:
        return _merge(load_mode(str(parent), user_dir, _depth + 1), data)
    return data


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in child.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def type_icons(mode: dict[str, Any]) -> dict[str, str]:
    """type id -> emoji."""
    icons: dict[str, str] = {}
    for t in mode.get("observation_types") or []:
        if isinstance(t, dict) and isinstance(t.get("id"), str):
            icons[t["id"]] = str(t.get("emoji") or FALLBACK_ICON)
    return icons


def type_ids(mode: dict[str, Any]) -> list[str]:
    return list(type_icons(mode))


def concept_ids(mode: dict[str, Any]) -> list[str]:
    return [c["id"] for c in mode.get("observation_concepts") or []
            if isinstance(c, dict) and isinstance(c.get("id"), str)]
