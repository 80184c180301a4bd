"""Is a forgotten text gone from every byte Kenning keeps? A search of the whole data dir.

Every file under the data dir is read whole (the database, its ``-wal`` and ``-shm``, the spool
and its quarantine, logs, ``backups/``, exports and caches kept there, anything a later feature
adds): nothing is skipped by name. Each text is looked for as UTF-8, case-folded (the file's
bytes lowered against the lowered text: FTS stores terms lowered), UTF-16 (LE and BE: SQLite
can store text so), and JSON-escaped (``\\u00e9`` in a payload). Every forget test calls
:func:`assert_erased` after the forget.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def forms(text: str) -> dict[str, bytes]:
    """The byte strings a copy of ``text`` could be stored as."""
    out = {"utf-8": text.encode("utf-8"), "utf-16-le": text.encode("utf-16-le"),
           "utf-16-be": text.encode("utf-16-be")}
    escaped = json.dumps(text)[1:-1].encode("ascii", "backslashreplace")
    if escaped != out["utf-8"]:
        out["json"] = escaped
    return out


def hits(data_dir: str | os.PathLike[str], texts: Iterable[str]) -> list[str]:
    """``path: form of text`` for every copy found; [] when none of the texts is anywhere."""
    wanted = [t for t in texts if t]
    assert wanted and all(len(t.encode()) >= 6 for t in wanted), "search for distinctive texts (6+ bytes)"
    found: list[str] = []
    root = Path(data_dir)
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()]
    assert files, f"nothing to search under {root}"
    for p in files:
        try:
            raw = p.read_bytes()
        except OSError as e:  # a socket or a file gone between listing and reading
            if p.exists() and p.is_file():
                raise AssertionError(f"cannot read {p}: {e}") from None
            continue
        low = raw.lower()
        for text in wanted:
            for name, needle in forms(text).items():
                if needle in raw:
                    found.append(f"{p.relative_to(root)}: {name} of {text!r}")
                elif name in ("utf-8", "json") and needle.lower() in low:
                    found.append(f"{p.relative_to(root)}: {name}, case-folded, of {text!r}")
    return found


def wait_for_compaction(home: Any, timeout: float = 60) -> None:
    """Wait until the worker's background compaction (after a viewer delete) has run: only then are
    the deleted rows' bytes gone from free pages and the WAL."""
    from kenning.hook.client import request
    from kenning.paths import read_token

    deadline = time.monotonic() + timeout
    body: Any = None
    while time.monotonic() < deadline:
        res = request(home.port, "GET", "/api/viewer/compaction", token=read_token(home.paths), timeout=15)
        assert res is not None and res[0] == 200, res
        body = json.loads(res[1])
        if body["state"] in ("idle", "done") and body.get("runs", 0) >= 1 and not body.get("pending_deletes"):
            return
        time.sleep(0.2)
    raise AssertionError(f"compaction did not finish: {body}")


def assert_erased(data_dir: str | os.PathLike[str], *texts: str) -> None:
    found = hits(data_dir, texts)
    assert not found, "forgotten text still on disk:\n  " + "\n  ".join(found)


def assert_present(data_dir: str | os.PathLike[str], *texts: str) -> None:
    """The search's own control: what was not forgotten is found (so a miss means something)."""
    for t in texts:
        assert hits(data_dir, [t]), f"{t!r} should be on disk"
