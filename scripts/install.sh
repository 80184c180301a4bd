#!/usr/bin/env bash
# Install Kenning for this user: a private venv, the `kenning` command linked into ~/.local/bin,
# `kenning install` (the hooks of the agents on this machine, the MCP server in Claude Code, the
# worker running). Re-running it upgrades in place.
#   bash scripts/install.sh --with anthropic,embeddings   also add optional parts (`kenning extras list`)
#   bash scripts/install.sh --agent codex --yes           passed on to `kenning install` (`kenning install --help`)
# Undo with: kenning uninstall (then delete the venv).
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${KENNING_VENV:-$HOME/.local/share/kenning/venv}"
BIN_DIR="$HOME/.local/bin"
PYTHON="${PYTHON:-python3}"
WITH=""
INSTALL_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --with) WITH="${2:?--with needs a list, e.g. --with anthropic,embeddings}"; shift 2 ;;
    --with=*) WITH="${1#--with=}"; shift ;;
    --agent) INSTALL_ARGS+=(--agent "${2:?--agent needs a name, e.g. --agent codex}"); shift 2 ;;
    --agent=*) INSTALL_ARGS+=("$1"); shift ;;
    -y|--yes) INSTALL_ARGS+=(--yes); shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "kenning needs Python >= 3.11"; exit 1; }
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# A regular (non-editable) install: hooks start fastest from a wheel.
"$VENV/bin/python" -m pip install -q --upgrade "$SRC"
if [ -n "$WITH" ]; then
  # Exactly what pyproject.toml declares for each extra, into this venv (kenning/commands/extras.py).
  "$VENV/bin/kenning" extras add -q "$WITH"
fi

# `kenning` on PATH, as pipx does it: a link in ~/.local/bin. A file there that is not a link to a
# Kenning installation belongs to something else and is left alone.
link="$BIN_DIR/kenning"
target="$VENV/bin/kenning"
is_kenning() {  # $1: a kenning command; true when its interpreter holds this project's package
  local py
  py="$(dirname "$(readlink -f "$1")")/python"
  [ -x "$py" ] && "$py" -I -c 'import kenning.integrations.claude_code' 2>/dev/null
}
mkdir -p "$BIN_DIR"
if [ -L "$link" ] && { [ "$(readlink "$link")" = "$target" ] || [ ! -e "$link" ] || is_kenning "$link"; }; then
  ln -sfn "$target" "$link"
  echo "Linked $link -> $target"
elif [ ! -e "$link" ] && [ ! -L "$link" ]; then
  ln -s "$target" "$link"
  echo "Linked $link -> $target"
else
  echo "warning: $link exists and is not Kenning's; left as it is. Run Kenning as $target" >&2
fi
case ":$PATH:" in
  *":$BIN_DIR:"*)
    found="$(command -v kenning || true)"
    if [ -n "$found" ] && [ "$(readlink -f "$found")" != "$(readlink -f "$target")" ]; then
      echo "warning: another kenning comes first on your PATH: $found" >&2
    fi ;;
  *)
    case "$(basename "${SHELL:-bash}")" in
      fish) line='fish_add_path ~/.local/bin'; rc="~/.config/fish/config.fish" ;;
      zsh) line='export PATH="$HOME/.local/bin:$PATH"'; rc="~/.zshrc" ;;
      *) line='export PATH="$HOME/.local/bin:$PATH"'; rc="~/.bashrc" ;;
    esac
    echo
    echo "$BIN_DIR is not on your PATH. Add this line to $rc, then open a new terminal:"
    echo "  $line"
    echo ;;
esac

# A worker already running holds the code it started with: stop it, `install` starts the new one.
"$VENV/bin/kenning" worker stop >/dev/null 2>&1 || true
"$VENV/bin/kenning" install ${INSTALL_ARGS[@]+"${INSTALL_ARGS[@]}"}
"$VENV/bin/kenning" doctor || true
echo
echo "Kenning is installed: $target"
echo "Try: kenning demo"
