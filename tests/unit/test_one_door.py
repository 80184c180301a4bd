"""One door for every write: outside kenning/store and kenning/memory_service.py no module writes memory.

Two ways a module could: call a store function that writes (found through whatever name it imported
the store module or function by), or hold SQL that writes a memory table. Both are read from the source
(AST), so a new surface that writes past the service fails here before it ships.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import oplog
from kenning.store.db import open_db

KENNING = Path(__file__).resolve().parents[2] / "kenning"
ALLOWED = ("store/", "memory_service.py")

# The store functions that change memory, by module of kenning.store.
WRITES: dict[str, set[str]] = {
    "repo": {"store_outcome", "insert_observation", "upsert_summary", "upsert_session", "add_prompt", "end_session",
             "insert_event", "prune_events", "prune_payloads", "insert"},
    "manual": {"save"},
    "forget": {"apply", "forget", "rewrite_summaries"},
    "erase": {"apply_successors", "rewrite_summaries", "scrub_files"},
    "supersede": {"by_hand", "restore", "mark", "automatic", "among", "named"},
    "decisions": {"pin", "unpin", "unarchive", "confirm", "put_back"},
    "transfer": {"import_records"},
    "edits": {"apply"},
    "oplog": {"record", "prune"},
    "memory_index": {"rebuild", "index", "assign_all", "assign", "inherit", "spread_decisions", "rebuild_groups"},
    "checkouts": {"join_checkouts", "add_evidence", "forget_evidence"},
    "projects": {"attach", "alias", "merge"},
}
# The canonical rows. Tables derived from them by triggers (the search indexes, observation_files,
# observation_concepts) may be refilled from scratch by `kenning reindex` (kenning/search/reindex.py).
MEMORY_TABLES = ("observations", "session_summaries", "user_prompts", "sessions", "events", "memory_log", "projects",
                 "project_aliases", "checkout_evidence")
WRITE_SQL = re.compile(r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+[\"`]?(?:main\.)?("
                       + "|".join(MEMORY_TABLES) + r")\b", re.IGNORECASE)


def violations(source: str, name: str = "<module>") -> list[str]:
    """Where ``source`` writes memory without the service: ``name:line what``."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # local name → kenning.store module
    functions: dict[str, str] = {}  # local name → "module.function" of a write imported by name
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "kenning.store":
                for a in node.names:
                    modules[a.asname or a.name] = a.name
            elif node.module.startswith("kenning.store."):
                mod = node.module.rsplit(".", 1)[1]
                for a in node.names:
                    if a.name in WRITES.get(mod, ()):
                        functions[a.asname or a.name] = f"{mod}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kenning.store.") and a.asname:
                    modules[a.asname] = a.name.rsplit(".", 1)[1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            mod = modules[node.value.id]
            if node.attr in WRITES.get(mod, ()):
                found.append(f"{name}:{node.lineno} calls kenning.store.{mod}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in functions and isinstance(node.ctx, ast.Load):
            found.append(f"{name}:{node.lineno} calls kenning.store.{functions[node.id]}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = WRITE_SQL.search(node.value)
            if m:
                found.append(f"{name}:{node.lineno} writes {m.group(1)} in SQL")
    return found


def test_no_module_outside_the_service_and_the_store_writes_memory() -> None:
    found: list[str] = []
    for path in sorted(KENNING.rglob("*.py")):
        rel = path.relative_to(KENNING).as_posix()
        if rel.startswith(ALLOWED):
            continue
        found += violations(path.read_text(encoding="utf-8"), rel)
    assert not found, "these write memory past kenning/memory_service.py:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "from kenning.store import supersede\nsupersede.by_hand(conn, [1], 2)\n",
    "from kenning.store import forget as fg\nfg.apply(conn, sel)\n",
    "from kenning.store.manual import save\nsave(conn, draft, project='p')\n",
    "import kenning.store.decisions as d\nd.pin(conn, 3)\n",
    "conn.execute('UPDATE observations SET title = ? WHERE id = ?', ('x', 1))\n",
    "conn.execute(\"insert or replace into user_prompts (id) values (1)\")\n",
    "conn.execute(f'DELETE FROM session_summaries WHERE id IN ({marks})')\n",
])
def test_the_scan_finds_each_way_of_writing_past_the_door(source: str) -> None:
    assert violations(source), source


def test_reads_are_not_writes() -> None:
    src = ("from kenning.store import repo, forget as fg\nrepo.get_observation(conn, 1)\nfg.select(conn, f)\n"
           "conn.execute('SELECT title FROM observations WHERE id = ?')\n")
    assert violations(src) == []


# ------------------------------------------------------------------------------- the log it keeps

def _draft(text: str) -> ObservationDraft:
    return ObservationDraft(type="discovery", title=text, narrative=text, created_at=1_700_000_000.0)


def test_each_change_through_the_door_is_logged_with_its_surface_and_no_text(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    try:
        door = MemoryService(conn, "mcp")
        a = door.save(_draft("Use tabs in the parser"), project="shop")
        b = door.save(_draft("Use spaces in the parser"), project="shop")
        again = door.save(_draft("Use tabs in the parser"), project="shop")
        assert not again.created
        cli = MemoryService(conn, "cli")
        assert cli.supersede([a.id], b.id).superseded == [a.id]
        assert cli.restore([a.id]) == [a.id]
        cli.pin(b.id)
        from kenning.store import forget as fg

        MemoryService(conn, "http").forget(str(tmp_path / "k.db"), fg.Filters(ids=(a.id,)), dry_run=False)
        log = list(reversed(oplog.recent(conn)))
        assert [(r["surface"], r["op"], r["ids"]) for r in log] == [
            ("mcp", "saved", [a.id]), ("mcp", "saved", [b.id]), ("cli", "superseded", sorted([a.id, b.id])),
            ("cli", "restored", [a.id]), ("cli", "pinned", [b.id]), ("http", "forgotten", [a.id])]
        assert {r["project"] for r in log[:5]} == {"shop"}
        rows = " ".join(str(r) for r in conn.execute("SELECT * FROM memory_log"))
        assert "tabs" not in rows and "parser" not in rows  # ids only, never a memory's words
    finally:
        conn.close()


def test_a_change_that_fails_leaves_no_log_row(tmp_path: Path) -> None:
    from kenning.store import supersede

    conn = open_db(str(tmp_path / "k.db"))
    try:
        door = MemoryService(conn, "cli")
        a = door.save(_draft("Deploy on Tuesdays"), project="shop")
        before = len(oplog.recent(conn))
        with pytest.raises(supersede.SupersedeError):
            door.supersede([a.id], 999)
        assert len(oplog.recent(conn)) == before
        assert not conn.in_transaction
    finally:
        conn.close()


def test_an_unknown_surface_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    with pytest.raises(ValueError):
        MemoryService(conn, "somewhere")
