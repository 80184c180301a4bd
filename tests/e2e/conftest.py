"""e2e tests drive the real Claude Code CLI against tests/support/fake_anthropic.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# `tests.support` must be importable under plain `pytest` too (only `python -m pytest`
# puts the repo root on sys.path by itself).
_REPO_ROOT = str(Path(__file__).resolve().parents[2])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from tests.conftest import Home  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: drives the real Claude Code CLI (needs npm)")


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned Claude Code CLI (installed into .cache/ once), or the test is skipped."""
    from tests.support.claude_cli import ensure_claude_cli

    path = ensure_claude_cli()
    if path is None:
        pytest.skip("Claude Code CLI unavailable (no CLAUDE_BIN, npm missing or install failed)")
    return path


@pytest.fixture(scope="session")
def kenning_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The python of a scratch venv with this checkout's wheel installed (built once per run)."""
    from tests.support import wheel

    yield wheel.install(tmp_path_factory.mktemp("wheel"))


# ------------------------------------------------------------------ the viewer's browser tests

@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from tests.support import browser as br

    with br.chromium() as b:
        yield b


@pytest.fixture
def installed(home: Home, kenning_wheel: Path) -> Home:
    """``home`` whose CLI, hooks and worker run from the installed wheel, not from this checkout."""
    home.python = str(kenning_wheel)
    return home


@pytest.fixture
def worker(installed: Home) -> Home:
    """A real worker (from the wheel) with the offline rules observer and no embedding model."""
    installed.env["KENNING_PROVIDER"] = "rules"
    installed.env["KENNING_EMBEDDING_BACKEND"] = "none"
    installed.start_worker()
    return installed


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A page at 1440x900 whose console errors and uncaught exceptions fail the test."""
    from tests.support import browser as br
    from tests.support.viewer import DESKTOP, TIMEOUT_MS

    context = chromium.new_context(viewport=DESKTOP, color_scheme="light")
    p = context.new_page()
    p.set_default_timeout(TIMEOUT_MS)
    errors = br.ConsoleErrors(p)
    p.errors = errors
    try:
        yield p
        errors.check()
    finally:
        context.close()
