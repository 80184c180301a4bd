"""The agent's MCP tools stay in their session's project and never overrule the user (issue 26, rows 3-4).

Driven by the MCP SDK's own stdio client against ``python -I -m kenning mcp``, over the demo story
replayed through the real hooks and worker (project invoice-api, where the user said "we use uv, not
pip" and "use Decimal, never float"), and a second repository whose memory an agent in invoice-api
must not touch: it cannot save into it, forget or supersede its memories (nothing changes, the error
says why), name a relative path as project, make a standing rule by saving one, or replace the user's
rule. Reads may still search every project; the user can allow writes elsewhere
(``mcp_cross_project_writes``) and confirm a proposed rule (``kenning pin``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import Story, db_rows, run_client, text_of

from kenning.paths import Paths


def context(story: Story) -> str:
    from kenning.context.session_start import build_for_cwd
    from kenning.settings import load

    paths = Paths(story.data)
    return build_for_cwd(paths, load(paths)[0], story.project)


def saved_id(text: str) -> int:
    m = re.match(r"Saved as #(\d+)", text)
    assert m, text
    return int(m.group(1))


@pytest.fixture(scope="module")
def other(story: Story, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """A second repository with one memory of its own, saved by an agent working there."""
    repo = tmp_path_factory.mktemp("other") / "billing-worker"
    (repo / ".git").mkdir(parents=True)

    async def save(c: Any) -> str:
        return text_of(await c.call_tool("save_memory", {"text": "Billing jobs retry three times, then page."}))

    return str(repo), saved_id(run_client(save, env=story.env(), cwd=str(repo)))


def call(story: Story, calls: list[tuple[str, dict[str, Any]]], env: dict[str, str] | None = None) -> list[Any]:
    async def go(c: Any) -> list[Any]:
        return [await c.call_tool(name, args) for name, args in calls]

    return run_client(go, env=env or story.env(), cwd=story.project)


def test_writes_and_forgets_stay_in_the_sessions_project(story: Story, other: tuple[str, int]) -> None:
    repo, theirs = other
    before = db_rows(story, "SELECT COUNT(*) FROM observations")[0][0]
    ours = saved_id(text_of(call(story, [("save_memory", {"text": "Invoice numbers never repeat."})])[0]))
    results = call(story, [
        ("save_memory", {"text": "Planted into the other project by name.", "project": "billing-worker"}),
        ("save_memory", {"text": "Planted into the other project by path.", "project": repo}),
        ("save_memory", {"text": "Planted by a relative path.", "project": "../billing-worker"}),
        ("save_memory", {"text": "Planted by a dot.", "project": "."}),
        ("forget_memory", {"ids": [theirs]}),
        ("forget_memory", {"ids": [ours, theirs]}),
        ("supersede_memory", {"ids": [theirs], "by": ours}),
        ("supersede_memory", {"ids": [ours], "by": theirs}),
        ("search_memory", {"query": "billing retry", "project": "billing-worker"}),  # reads still reach it
        ("save_memory", {"text": "Totals are computed per line.", "project": "invoice-api"}),  # its own, by name
    ])
    texts = [text_of(r) for r in results]
    assert all(r.is_error for r in results[:8]), texts
    for t in texts[:2]:
        assert "acts on this session's project (invoice-api) only, not on billing-worker" in t, t
        assert "mcp_cross_project_writes" in t
    for t in texts[2:4]:
        assert "is a relative path" in t, t
    for t in texts[4:8]:
        assert f"#{theirs} (billing-worker)" in t and "nothing was changed" in t, t
    assert f"#{theirs} " in texts[8] and not results[8].is_error
    assert texts[9].startswith("Saved as #") and "in project invoice-api" in texts[9]
    # Nothing changed in either project: no plant, both memories there and active.
    assert not db_rows(story, "SELECT 1 FROM observations WHERE title LIKE 'Planted%'")
    assert db_rows(story, "SELECT COUNT(*) FROM observations")[0][0] == before + 2
    state = {r["id"]: r["status"] for r in db_rows(story, "SELECT id, status FROM observations WHERE id IN (?, ?)",
                                                 ours, theirs)}
    assert state == {ours: "active", theirs: "active"}


def test_the_user_can_allow_writes_to_other_projects(story: Story, other: tuple[str, int]) -> None:
    repo, _theirs = other
    data = Path(story.data) / "settings.json"
    kept = data.read_text() if data.exists() else None
    mine = saved_id(text_of(call(story, [("save_memory", {"text": "A note to forget later, here."})])[0]))
    try:
        data.write_text(json.dumps({**(json.loads(kept) if kept else {}), "mcp_cross_project_writes": True}))
        results = call(story, [("save_memory", {"text": "Written into the other project on purpose.",
                                                "project": repo})])
        text = text_of(results[0])
        assert text.startswith("Saved as #") and "in project billing-worker" in text, text
        planted = saved_id(text)
        gone = call(story, [("forget_memory", {"ids": [planted]})], env=story.env())[0]
        assert not gone.is_error and text_of(gone).startswith(f"Forgot #{planted}")
    finally:
        if kept is None:
            data.unlink()
        else:
            data.write_text(kept)
    # Back to the default: a forget in its own project still works.
    assert text_of(call(story, [("forget_memory", {"ids": [mine]})])[0]).startswith(f"Forgot #{mine}")


def test_a_rule_the_agent_saves_is_a_proposal_until_the_user_pins_it(story: Story) -> None:
    text = text_of(call(story, [("save_memory", {"text": "Always run ruff format before every commit.",
                                                 "type": "decision"})])[0])
    oid = saved_id(text)
    assert "only the user makes" in text and f"kenning pin {oid}" in text, text
    row = db_rows(story, "SELECT layer, kind, why FROM observations WHERE id = ?", oid)[0]
    assert row["layer"] == "key" and row["kind"] == "proposed" and json.loads(row["why"])["by"] == "agent"
    ctx = context(story)
    rules = ctx.split("## Standing rules and preferences", 1)[1].split("\n## ", 1)[0]
    assert f"#{oid} " not in rules, rules
    line = next(ln for ln in ctx.splitlines() if ln.startswith(f"#{oid} "))
    assert line.endswith("(proposed by the agent, not confirmed)"), line
    env = {"KENNING_DATA_DIR": story.data, "PATH": "/usr/bin:/bin"}
    shown = subprocess.run([sys.executable, "-m", "kenning", "show", str(oid)], env=env, capture_output=True,
                           text=True, timeout=60)
    assert f"Proposed by the agent, not confirmed: `kenning pin {oid}`" in shown.stdout, shown.stdout
    # The user confirms it (the CLI; the viewer calls the same decision): now it is a standing rule.
    pinned = subprocess.run([sys.executable, "-m", "kenning", "pin", str(oid)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert pinned.returncode == 0, pinned.stderr
    rules = context(story).split("## Standing rules and preferences", 1)[1].split("\n## ", 1)[0]
    line = next(ln for ln in rules.splitlines() if ln.startswith(f"#{oid} "))
    assert "proposed" not in line and "ruff format" in line


def _decimal_rule(story: Story) -> int:
    found = db_rows(story, "SELECT id FROM observations WHERE layer = 'rule' AND status = 'active' AND "
                        "title LIKE '%Decimal%' AND why LIKE '%\"by\": \"user\"%'")
    assert found, "the story's user rule about Decimal is missing"
    return int(found[0]["id"])


def test_the_agent_never_replaces_the_users_rule(story: Story) -> None:
    rule = _decimal_rule(story)  # "use Decimal, never float, for money", in the user's words
    results = call(story, [("save_memory", {"text": "Use float for money, not Decimal.", "type": "decision"})])
    mine = saved_id(text_of(results[0]))
    # Saving the contrary did not supersede it, and the agent cannot supersede it by hand either.
    assert db_rows(story, "SELECT status FROM observations WHERE id = ?", rule)[0]["status"] == "active"
    refused = call(story, [("supersede_memory", {"ids": [rule], "by": mine})])[0]
    assert refused.is_error and "only the user replaces it" in text_of(refused), text_of(refused)
    assert db_rows(story, "SELECT status FROM observations WHERE id = ?", rule)[0]["status"] == "active"
    rules = context(story).split("## Standing rules and preferences", 1)[1].split("\n## ", 1)[0]
    assert f"#{rule} " in rules and f"#{mine} " not in rules
