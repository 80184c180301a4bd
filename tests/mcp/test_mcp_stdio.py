"""``kenning mcp`` driven by the MCP SDK's own stdio client, over a memory filled by the real
pipeline (the demo story replayed through the hook processes and the worker, then the worker
stopped): tool listing, every tool on real data, errors as tool errors, project resolution."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mcp_helpers import Story, db_rows, run_client, scratch_dir, text_of

from kenning import daemon
from kenning.paths import Paths
from tests.support.erasure import assert_erased

TOOLS = {"search_memory", "memory_timeline", "get_observations", "save_memory", "forget_memory", "memory_guide",
         "supersede_memory", "memory_ledger"}
ROW = re.compile(r"^(#|S|P)\d+ \d{4}-\d{2}-\d{2} \S+ .+ \(~[\d,]+ tokens\)$")


def rows_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^(#|S|P)\d+ ", line)]


def test_tools_are_listed_with_findable_names_descriptions_and_schemas(story: Story, tmp_path: Path) -> None:
    async def go(c: Any) -> tuple[Any, str | None]:
        return await c.list_tools(), c.instructions

    listed, instructions = run_client(go, env=story.env(), cwd=story.project)
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    for t in tools.values():
        # Claude Code defers schemas behind a tool search: name and description must say what it is.
        assert "memory" in t.name or "observations" in t.name
        assert "memory" in (t.description or "").lower() and len(t.description or "") > 120, t.name
        assert t.input_schema["type"] == "object"
    search = tools["search_memory"].input_schema
    assert set(search["properties"]) == {"query", "project", "type", "since", "until", "file", "limit", "offset"}
    assert not search.get("required")
    assert "past" in (tools["search_memory"].description or "") and "session" in (tools["search_memory"].description
                                                                                  or "")
    assert tools["get_observations"].input_schema["required"] == ["ids"]
    assert tools["save_memory"].input_schema["required"] == ["text"]
    assert tools["forget_memory"].input_schema["required"] == ["ids"]
    assert tools["memory_timeline"].input_schema.get("required") in (None, [])
    for name in ("search_memory", "memory_timeline", "get_observations", "memory_guide"):
        assert tools[name].annotations.read_only_hint is True, name
    assert tools["forget_memory"].annotations.destructive_hint is True
    assert tools["supersede_memory"].input_schema["required"] == ["ids", "by"]
    assert tools["supersede_memory"].annotations.destructive_hint is False
    assert instructions and "search_memory" in instructions


def test_search_timeline_and_records_on_the_replayed_story(story: Story, tmp_path: Path) -> None:
    assert daemon.running(Paths(story.data)) is None, "these tests prove the server works with the worker down"
    obs = {r["id"]: dict(r) for r in db_rows(story, "SELECT id, type, title, narrative FROM observations")}
    bugfix = next(o for o in obs.values() if o["type"] == "bugfix" and "test_export" in o["title"])
    decisions = {i for i, o in obs.items() if o["type"] == "decision"}
    uv = next(o for o in obs.values() if "uv" in o["title"] and o["type"] == "decision")

    async def go(c: Any) -> dict[str, str]:
        out = {}
        calls = {
            "vat": ("search_memory", {"query": "VAT rounding"}),
            "decisions": ("search_memory", {"type": "decision"}),
            "all_projects": ("search_memory", {"query": "uv pip", "project": "*"}),
            "other_project": ("search_memory", {"query": "VAT", "project": "some-other-project"}),
            "old_dates": ("search_memory", {"query": "VAT", "since": "2000-01-01", "until": "2001-01-01"}),
            "recent": ("search_memory", {"query": "VAT", "since": "7d", "limit": 2}),
            "by_file": ("search_memory", {"file": "export.py"}),
            "timeline": ("memory_timeline", {"id": bugfix["id"], "before": 2, "after": 2}),
            "timeline_q": ("memory_timeline", {"query": "CSV export"}),
            "records": ("get_observations", {"ids": [uv["id"], f"#{bugfix['id']}", "S1", 99999]}),
            "guide": ("memory_guide", {}),
        }
        for key, (tool, args) in calls.items():
            r = await c.call_tool(tool, args)
            assert r.is_error == (key == "other_project"), (key, text_of(r))  # a name no project has: an error
            out[key] = text_of(r)
        return out

    # The server runs somewhere unrelated; Claude Code's CLAUDE_PROJECT_DIR names the project.
    out = run_client(go, env=story.env(CLAUDE_PROJECT_DIR=story.project), cwd=scratch_dir(tmp_path))

    vat = rows_of(out["vat"])
    assert vat and all(ROW.match(r) for r in vat), out["vat"]
    assert "project invoice-api" in out["vat"]
    assert any(r.startswith("S") for r in vat) or any(r.startswith("#") for r in vat)
    assert all(len(r) < 260 for r in vat)  # compact: ~50-100 tokens a row at most
    assert "get_observations" in out["vat"]

    dec = rows_of(out["decisions"])
    assert {int(r.split()[0][1:]) for r in dec} == decisions
    assert all(r.split()[2] == "decision" for r in dec)

    assert f"#{uv['id']} " in out["all_projects"]
    assert "no such project 'some-other-project'" in out["other_project"] and "invoice-api" in out["other_project"]
    assert "No memory" in out["old_dates"]
    assert len(rows_of(out["recent"])) == 2 and "offset=2" in out["recent"]
    assert rows_of(out["by_file"]) and all("export" in r.lower() or r.startswith("S") for r in rows_of(out["by_file"]))

    tl = out["timeline"].splitlines()
    anchor = [line for line in tl if line.startswith("▶ ")]
    assert anchor == [line for line in tl if f"#{bugfix['id']} " in line and line.startswith("▶")]
    assert len(anchor) == 1
    assert sum(1 for line in tl if line.startswith("  ") and re.match(r"^  (#|S|P)\d+ ", line)) >= 2
    assert "▶ #" in out["timeline_q"]

    rec = out["records"]
    assert uv["narrative"][:60] in rec or uv["title"][:60] in rec
    assert f"#{bugfix['id']} [bugfix]" in rec
    assert "S1 [session summary]" in rec
    assert "Not found" in rec and "#99999" in rec
    assert "search_memory" in out["guide"] and "get_observations" in out["guide"]


FTS_HOSTILE = ['"unbalanced', "NEAR(vat rounding", "vat*", "-vat", "vat AND OR NOT", "(((", ")", "col:vat",
               "税金の丸め", "ünïcödé ✓", "'; DROP TABLE observations; --", "^vat", "{a b}", "vat + -"]


def test_bad_input_comes_back_as_a_tool_error_and_the_server_keeps_serving(story: Story) -> None:
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("search_memory", {"query": ""}, "query is empty"),
        ("search_memory", {"query": "   "}, "query is empty"),
        ("search_memory", {"query": "vat " * 3000}, "too long"),
        ("search_memory", {"query": "vat", "since": "last tuesday"}, "is not a date"),
        ("search_memory", {"query": "vat", "since": "2026-12-01", "until": "2026-11-01"}, "must be before"),
        ("search_memory", {"query": "vat", "limit": 0}, "limit must be between 1 and 100"),
        ("search_memory", {"query": "vat", "limit": 5000}, "limit must be between"),
        ("search_memory", {"query": "vat", "limit": "ten"}, "limit"),
        ("search_memory", {"query": "vat", "type": "poem"}, "unknown type 'poem'"),
        ("search_memory", {"query": "vat", "project": "x" * 5000}, "project is too long"),
        ("memory_timeline", {}, "give id"),
        ("memory_timeline", {"id": 99999}, "no observation 99999"),
        ("memory_timeline", {"id": "S1"}, "session summary"),
        ("memory_timeline", {"id": "twelve"}, "is not an id"),
        ("memory_timeline", {"id": 2**70}, "positive id"),
        ("memory_timeline", {"query": "zzzqqqxxx"}, "no observation matches"),
        ("get_observations", {"ids": []}, "ids is empty"),
        ("get_observations", {"ids": list(range(1, 30))}, "too many ids"),
        ("get_observations", {"ids": ["abc"]}, "is not an id"),
        ("get_observations", {"ids": [99998, 99999]}, "no memory with id #99998, #99999"),
        ("get_observations", {}, "ids"),
        ("save_memory", {"text": ""}, "text is empty"),
        ("save_memory", {"text": "x" * 30_000}, "too long"),
        ("save_memory", {"text": "fine", "type": "poem"}, "unknown type 'poem'"),
        ("save_memory", {"text": "fine", "project": "*"}, "belongs to one project"),
        ("save_memory", {"text": "<private>only this</private>"}, "nothing is left"),
        ("forget_memory", {"ids": []}, "ids is empty"),
        ("forget_memory", {"ids": [99999]}, "no observation with id #99999"),
        ("forget_memory", {"ids": ["S1"]}, "observation ids only"),
        ("no_such_tool", {}, "no_such_tool"),
    ]

    async def go(c: Any) -> tuple[list[tuple[str, str, bool]], list[tuple[str, bool, str]], str]:
        errors = []
        for tool, args, _want in bad:
            r = await c.call_tool(tool, args)
            errors.append((tool, text_of(r), r.is_error))
        hostile = []
        for q in FTS_HOSTILE:
            r = await c.call_tool("search_memory", {"query": q, "project": "*"})
            hostile.append((q, r.is_error, text_of(r)))
        last = await c.call_tool("search_memory", {"query": "VAT"})
        return errors, hostile, text_of(last)

    stored = db_rows(story, "SELECT COUNT(*) FROM observations")[0][0]
    errors, hostile, last = run_client(go, env=story.env(), cwd=story.project)
    for (tool, args, want), (_t, text, is_error) in zip(bad, errors, strict=True):
        assert is_error, (tool, args, text)
        assert want in text, (tool, args, text)
        assert "Traceback" not in text and "internal error" not in text, text
    for q, is_error, text in hostile:  # searched safely; one holding no word at all says so (issue 28)
        wordless = not any(ch.isalnum() for ch in q)
        assert is_error == wordless and (not wordless or "has no words to search for" in text), (q, text)
    assert rows_of(last), last  # still serving after all that
    assert db_rows(story, "SELECT COUNT(*) FROM observations")[0][0] == stored  # nothing was written by mistake


def test_default_project_comes_from_roots_then_claude_project_dir_then_cwd(story: Story, tmp_path: Path) -> None:
    from mcp_types import ListRootsResult, Root

    elsewhere = scratch_dir(tmp_path)

    async def roots(_ctx: Any) -> ListRootsResult:
        root = Root.model_validate({"uri": Path(story.project).as_uri(), "name": "invoice-api"})
        return ListRootsResult(roots=[root])

    async def search(c: Any) -> str:
        return text_of(await c.call_tool("search_memory", {"query": "VAT"}))

    # roots/list is a server-to-client request of the handshake era (Claude Code speaks 2025-11-25);
    # the 2026 protocol has no such back channel, so there the env / cwd fallbacks answer.
    by_roots = run_client(search, env=story.env(), cwd=elsewhere, list_roots_callback=roots, mode="legacy")
    by_env = run_client(search, env=story.env(CLAUDE_PROJECT_DIR=story.project), cwd=elsewhere)
    by_cwd = run_client(search, env=story.env(), cwd=story.project)
    nothing = run_client(search, env=story.env(), cwd=elsewhere)
    for text in (by_roots, by_env, by_cwd):
        assert "memory of project invoice-api" in text and rows_of(text), text
    assert "No memory of project elsewhere" in nothing


def test_save_memory_is_searchable_shown_at_session_start_and_forgettable(story: Story, tmp_path: Path) -> None:
    from kenning.context.session_start import build_for_cwd
    from kenning.settings import load

    secret = "sk-ant-api03-" + "Q" * 40
    text = (f"Release tags are signed with the team key (token {secret}); never push an unsigned tag. "
            "<private>the key lives in the vault</private>")

    async def save(c: Any) -> tuple[str, str, str]:
        first = await c.call_tool("save_memory", {"text": text, "title": "Sign every release tag",
                                                  "type": "decision"})
        again = await c.call_tool("save_memory", {"text": text, "title": "Sign every release tag",
                                                  "type": "decision"})
        found = await c.call_tool("search_memory", {"query": "unsigned release tag"})
        assert not first.is_error and not again.is_error and not found.is_error
        return text_of(first), text_of(again), text_of(found)

    first, again, found = run_client(save, env=story.env(), cwd=story.project)
    m = re.match(r"Saved as #(\d+) \(decision\) in project invoice-api", first)
    assert m, first
    oid = int(m.group(1))
    assert again.startswith(f"Already in memory as #{oid}")
    assert rows_of(found)[0].startswith(f"#{oid} ") and "Sign every release tag" in rows_of(found)[0]

    row = db_rows(story, "SELECT o.narrative, o.observer, o.type, s.platform, s.status FROM observations o "
                         "JOIN sessions s ON s.id = o.session_id WHERE o.id = ?", oid)[0]
    assert secret not in row["narrative"] and "[REDACTED:anthropic_key]" in row["narrative"]
    assert "vault" not in row["narrative"]
    assert (row["observer"], row["type"], row["platform"], row["status"]) == ("manual", "decision", "mcp",
                                                                              "completed")
    paths = Paths(story.data)
    context = build_for_cwd(paths, load(paths)[0], story.project)
    assert f"#{oid} " in context and "Sign every release tag" in context

    async def forget(c: Any) -> tuple[str, str]:
        gone = await c.call_tool("forget_memory", {"ids": [oid]})
        assert not gone.is_error, text_of(gone)
        after = await c.call_tool("search_memory", {"query": "unsigned release tag"})
        return text_of(gone), text_of(after)

    gone, after = run_client(forget, env=story.env(), cwd=story.project)
    assert gone.startswith(f"Forgot #{oid}")
    assert f"#{oid} " not in after
    assert not db_rows(story, "SELECT 1 FROM observations WHERE id = ?", oid)
    assert_erased(story.data, "never push an unsigned tag", "Sign every release tag")


def test_supersede_memory_takes_an_old_memory_out_of_the_next_sessions_context(story: Story) -> None:
    from kenning.context.session_start import build_for_cwd
    from kenning.settings import load

    async def go(c: Any) -> tuple[str, str, str, str]:
        old = text_of(await c.call_tool("save_memory", {"text": "Invoices are archived after 7 years.",
                                                        "type": "discovery"}))
        new = text_of(await c.call_tool("save_memory", {"text": "Invoices are archived after 10 years (new law).",
                                                        "type": "discovery"}))
        old_id, new_id = (int(re.match(r"Saved as #(\d+)", t).group(1)) for t in (old, new))  # type: ignore[union-attr]
        done = await c.call_tool("supersede_memory", {"ids": [old_id], "by": new_id})
        bad = await c.call_tool("supersede_memory", {"ids": [old_id], "by": 987654})
        assert not done.is_error and bad.is_error
        return str(old_id), str(new_id), text_of(done), text_of(bad)

    old_id, new_id, done, bad = run_client(go, env=story.env(), cwd=story.project)
    assert done.startswith(f"Marked #{old_id} as superseded by #{new_id}")
    assert "no observation #987654" in bad
    row = db_rows(story, "SELECT status, superseded_by FROM observations WHERE id = ?", int(old_id))[0]
    assert (row["status"], row["superseded_by"]) == ("superseded", int(new_id))
    paths = Paths(story.data)
    context = build_for_cwd(paths, load(paths)[0], story.project)
    assert f"#{new_id} " in context and f"#{old_id} " not in context and "7 years" not in context
