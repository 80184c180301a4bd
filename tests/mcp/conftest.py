"""Fixtures of the MCP tests (helpers live in ``mcp_helpers``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from mcp_helpers import Story, replay_story


@pytest.fixture(scope="module")
def story() -> Iterator[Story]:
    """The demo story replayed through the real hooks and worker (stopped afterwards)."""
    s, base = replay_story()
    try:
        yield s
    finally:
        shutil.rmtree(base, ignore_errors=True)
