"""search_memory and memory_timeline answer a filter that names nothing (a misspelt project or type)
and a query with no words with a tool error that names it and the nearest known names, not with
an empty result the model would take as "no such memory" (issue 28). Driven by the SDK's stdio client."""

from __future__ import annotations

from typing import Any

from mcp_helpers import Story, run_client, text_of


def test_unknown_project_type_and_a_wordless_query_are_tool_errors(story: Story) -> None:
    async def calls(c: Any) -> dict[str, Any]:
        return {
            "project": await c.call_tool("search_memory", {"query": "decimal", "project": "invoice-apj"}),
            "type": await c.call_tool("search_memory", {"query": "decimal", "type": "bugfx"}),
            "star": await c.call_tool("search_memory", {"query": "*"}),
            "emoji": await c.call_tool("search_memory", {"query": "\U0001f680\U0001f680"}),
            "timeline": await c.call_tool("memory_timeline", {"query": "decimal", "project": "invoice-apj"}),
            "good": await c.call_tool("search_memory", {"query": "decimal", "project": "invoice-api"}),
        }

    out = run_client(calls, env=story.env(), cwd=story.project)
    for key in ("project", "timeline"):
        assert out[key].is_error, text_of(out[key])
        assert "no such project 'invoice-apj'" in text_of(out[key]) and "'invoice-api'" in text_of(out[key])
    assert out["type"].is_error and "unknown type 'bugfx' (did you mean 'bugfix'" in text_of(out["type"])
    for key in ("star", "emoji"):
        assert out[key].is_error and "has no words to search for" in text_of(out[key]), text_of(out[key])
    assert not out["good"].is_error and "no such" not in text_of(out["good"])
