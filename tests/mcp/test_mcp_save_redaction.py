"""``save_memory`` through the MCP SDK's own stdio client cleans text with the user's settings.

The hook applies ``redact_custom`` and ``redact_disabled``; the MCP tool must store nothing the
hook would not: the same custom patterns, the same structural detectors, ``<private>`` blocks
gone, settings read as they are at the time of the save (not when the server started).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from mcp_helpers import run_client, text_of

from tests.conftest import Home
from tests.security.corpus import password, rnd


def stored(home: Home) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"file:{home.paths.db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT title, narrative, concepts FROM observations ORDER BY id").fetchall()
    finally:
        conn.close()


def test_save_memory_applies_the_users_redaction_settings(home: Home) -> None:
    home.paths.ensure()
    (home.data / "settings.json").write_text(json.dumps({"redact_custom": ["ticket=TICKET-\\d{5}"]}))
    pw, tok, gh = password("mcp-save"), rnd("mcp-save-key", 40), "ghp_" + rnd("mcp-save-gh", 36)
    text = (f"Prod deploy (TICKET-48213): the db password is {pw}; config has {{\"api_key\": \"{tok}\"}} and "
            f"CI uses {gh}. <private>the vault path is secret/ops</private>")

    async def save(c: Any) -> tuple[str, str]:
        first = await c.call_tool("save_memory", {"text": text, "title": "Deploy notes for TICKET-48213"})
        # The user adds a pattern while the server runs: the next save honours it.
        (home.data / "settings.json").write_text(json.dumps({"redact_custom": ["ticket=TICKET-\\d{5}",
                                                                               "codename=Project [A-Z][a-z]+"]}))
        second = await c.call_tool("save_memory", {"text": "Project Falcon ships on Friday, see TICKET-99120"})
        assert not first.is_error and not second.is_error
        return text_of(first), text_of(second)

    first, _second = run_client(save, env={"KENNING_DATA_DIR": str(home.data)}, cwd=str(home.project))
    assert first.startswith("Saved as #") and "TICKET-48213" not in first
    rows = stored(home)
    assert len(rows) == 2
    everything = " ".join(f"{r['title']} {r['narrative']} {r['concepts']}" for r in rows)
    for leaked in (pw, tok, gh, "TICKET-48213", "TICKET-99120", "vault path", "Falcon"):
        assert leaked not in everything, leaked
    for marker in ("[REDACTED:ticket]", "[REDACTED:password_assignment]", "[REDACTED:github_token]",
                   "[REDACTED:codename]"):
        assert marker in everything, marker
