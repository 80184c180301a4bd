"""Kenning's MCP server (stdio): memory search tools for the agent.

``inputs`` validates what the model sends, ``render`` turns results into compact text,
``tools`` does the work over the data directory (no MCP import: testable directly), and
``server`` exposes them through the MCP SDK. Nothing here is imported by other commands:
the SDK costs ~0.5 s of imports and only ``kenning mcp`` pays it.
"""
