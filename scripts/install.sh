#!/usr/bin/env bash
# Install Kenning for this user: a private venv, the hooks in Claude Code, the worker running.
# Re-running it upgrades in place. Undo with: kenning uninstall (then delete the venv).
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${KENNING_VENV:-$HOME/.local/share/kenning/venv}"
PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "kenning needs Python >= 3.11"; exit 1; }
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# A regular (non-editable) install: hooks start fastest from a wheel.
"$VENV/bin/python" -m pip install -q --upgrade "$SRC"
"$VENV/bin/kenning" install
"$VENV/bin/kenning" doctor || true
echo
echo "Kenning is installed: $VENV/bin/kenning"
echo "Next Claude Code session in any project is remembered. Try: $VENV/bin/kenning demo"
