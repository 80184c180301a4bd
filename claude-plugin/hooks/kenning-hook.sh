#!/bin/sh
# Kenning's Claude Code plugin: hand one hook event ($1, on stdin) to the installed `kenning` command.
# Never fails or blocks the session: whatever happens it exits 0. Without kenning, SessionStart says
# so to the user (systemMessage) and nothing is captured.
event=$1
# `kenning install` put Kenning's own hooks in settings.json: those capture; the plugin stands aside
# (one capture per event).
settings=${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json
if [ -f "$settings" ] && grep -q 'from kenning.hook.main import cli' "$settings" 2>/dev/null; then
  cat >/dev/null
  exit 0
fi
k=$(command -v kenning 2>/dev/null)
if [ -z "$k" ] && [ -x "$HOME/.local/bin/kenning" ]; then
  k=$HOME/.local/bin/kenning  # where uv, pipx and scripts/install.sh put it, if PATH lacks it
fi
if [ -z "$k" ]; then
  cat >/dev/null
  if [ "$event" = SessionStart ]; then
    printf '%s\n' '{"systemMessage": "Kenning plugin: the kenning command is not installed (not on PATH, not in ~/.local/bin), so this session is not remembered. Install it (uv tool install, pipx install or scripts/install.sh: docs/install.md in the Kenning repository), then start a new session."}'
  fi
  exit 0
fi
# The interpreter of the console script (its first line), run as `kenning install`'s hooks run it:
# isolated (-I), straight to the hook's entry. Any other form of script runs as the command itself.
IFS= read -r first < "$k" 2>/dev/null
py=${first#\#!}
case "$first" in
  "#!/"*/python*)
    if [ -x "$py" ]; then
      "$py" -I -c 'from kenning.hook.main import cli; cli()' claude-code "$event"
      exit 0
    fi ;;
esac
"$k" hook claude-code "$event"
exit 0
