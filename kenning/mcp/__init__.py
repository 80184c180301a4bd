"""Kenning's MCP server (stdio): memory search tools for the agent.

``protocol`` speaks JSON-RPC over stdio (standard library only), ``schema`` lists the tools and
checks their arguments, ``inputs`` validates what the model sends, ``render`` turns results into
compact text, ``tools`` does the work over the data directory (testable directly), and
``server`` ties them together. Nothing here is imported by other commands.
"""
