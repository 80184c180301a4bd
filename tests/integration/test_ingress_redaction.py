"""Every way text gets into memory is cleaned by the same function with the user's settings.

Hooks are covered by test_redaction_settings.py and tests/security; ``save_memory`` by
tests/mcp/test_mcp_save_redaction.py. Here: ``kenning import`` (a real CLI process), the HTTP
import of a real worker, and an edit in the viewer (PATCH over HTTP). Each gets an export
written elsewhere that carries secrets of several kinds, a ``<private>`` block and a shape
only the user's own ``redact_custom`` pattern knows; the raw database bytes must hold none.
"""

from __future__ import annotations

import http.client
import json
import os
import time
from pathlib import Path
from typing import Any

from kenning.paths import read_token
from kenning.privacy.ingress import Cleaner
from kenning.privacy.redact import Redactor
from tests.conftest import Home
from tests.security.corpus import password, rnd

PW = password("ingress-pw")
TOKEN = rnd("ingress-token", 40)
GH = "ghp_" + rnd("ingress-gh", 36)
TICKET = "TICKET-48213"
SECRETS = (PW, TOKEN, GH, TICKET, "the vault path")
SETTINGS = {"redact_custom": ["ticket=TICKET-\\d{5}"]}


def export_lines(session_id: str) -> bytes:
    """An export from another machine (the shape ``kenning export`` writes) that carries secrets."""
    key = {"platform": "claude-code", "agent_session_id": session_id}
    at = time.time() - 3600
    records: list[dict[str, Any]] = [
        {"kind": "header", "format": 1, "exported_at": at},
        {"kind": "session", **key, "project": "shop", "project_root": "/home/dev/shop", "cwd": "/home/dev/shop",
         "started_at": at, "ended_at": at + 60, "end_reason": "other", "status": "completed", "prompt_count": 1},
        {"kind": "prompt", "session": key, "prompt_number": 1, "created_at": at,
         "prompt_text": f"deploy with DB_PASSWORD={PW} for {TICKET} <private>the vault path</private>"},
        {"kind": "observation", "session": key, "type": "decision", "title": f"Deploy uses {GH}",
         "subtitle": f"ticket {TICKET}", "facts": [f"api_key: {TOKEN}"], "narrative": f"the db password is {PW}",
         "concepts": [TICKET], "files_read": [], "files_modified": [], "prompt_number": 1, "tokens_spent": 0,
         "source_tokens": 10, "created_at": at, "agent_id": None, "agent_type": None, "observer": "rules",
         "status": "active"},
        {"kind": "summary", "session": key, "request": f"deploy {TICKET}", "investigated": "",
         "learned": f"export API_TOKEN={TOKEN}", "completed": "", "next_steps": "", "notes": f"pw {PW}",
         "files_read": [], "files_modified": [], "prompt_number": 1, "tokens_spent": 0, "source_tokens": 0,
         "created_at": at, "observer": "rules"},
    ]
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def raw_db(home: Home) -> bytes:
    out = b""
    for p in (home.paths.db, home.paths.db + "-wal"):
        if os.path.exists(p):
            out += Path(p).read_bytes()
    return out


def assert_clean(home: Home) -> None:
    raw = raw_db(home)
    assert raw, "nothing was stored"
    for s in SECRETS:
        assert s.encode() not in raw, s
    for marker in (b"[REDACTED:ticket]", b"[REDACTED:password_assignment]", b"[REDACTED:github_token]"):
        assert marker in raw, marker


def call(home: Home, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", home.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Authorization": f"Bearer {read_token(home.paths)}",
                                                       "Content-Type": "application/json"})
        res = conn.getresponse()
        data = res.read()
        return res.status, json.loads(data) if data else None
    finally:
        conn.close()


def test_kenning_import_cleans_what_it_imports_with_the_users_settings(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps(SETTINGS))
    f = home.root / "export.jsonl"
    f.write_bytes(export_lines("s-cli"))
    r = home.kenning("import", str(f))
    assert r.returncode == 0, r.stderr
    assert "1 observations" in r.stdout or "1 observation" in r.stdout, r.stdout
    assert_clean(home)
    again = home.kenning("import", str(f))  # cleaning is deterministic: re-importing stays idempotent
    assert again.returncode == 0 and "Imported 0 sessions, 0 prompts, 0 observations" in again.stdout, again.stdout


def test_http_import_and_a_viewer_edit_are_cleaned_by_the_worker(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps(SETTINGS))
    home.start_worker()
    status, data = call(home, "POST", "/api/import", export_lines("s-http"))
    assert status == 200 and data["added"]["observations"] == 1, data
    assert_clean(home)
    conn = home.db()
    try:
        oid = conn.execute("SELECT id FROM observations").fetchone()[0]
    finally:
        conn.close()
    status, data = call(home, "PATCH", f"/api/viewer/observations/{oid}",
                        json.dumps({"title": f"Rotate {GH} after {TICKET}"}).encode())
    assert status == 200, data
    title = data["observation"]["title"]
    assert GH not in title and TICKET not in title and "[REDACTED:github_token]" in title, title
    status, data = call(home, "PATCH", f"/api/viewer/observations/{oid}",
                        json.dumps({"title": "<private>only private</private>"}).encode())
    assert status == 400 and "private" in data["error"], data
    home.stop_worker()
    assert_clean(home)


def test_observer_output_is_cleaned_before_it_is_stored() -> None:
    from kenning.observer.base import ObservationDraft, Outcome, SummaryDraft

    outcome = Outcome(observations=[ObservationDraft(type="decision", title=f"use {GH}", created_at=1.0,
                                                     facts=[f"password: {PW}"], narrative=f"token={TOKEN}")],
                      summary=SummaryDraft(created_at=1.0, learned=f"DB_PASSWORD={PW}"))
    Cleaner(Redactor()).outcome(outcome)
    text = json.dumps([outcome.observations[0].__dict__, outcome.summary.__dict__])
    assert GH not in text and PW not in text and TOKEN not in text
