"""e2e tests drive the real Claude Code CLI against tests/support/fake_anthropic.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# `tests.support` must be importable under plain `pytest` too (only `python -m pytest`
# puts the repo root on sys.path by itself).
_REPO_ROOT = str(Path(__file__).resolve().parents[2])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: drives the real Claude Code CLI (needs npm)")
