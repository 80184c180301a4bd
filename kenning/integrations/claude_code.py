"""Installing Kenning's hooks into Claude Code's user settings, and removing exactly them.

``~/.claude/settings.json`` (or ``$CLAUDE_CONFIG_DIR/settings.json``) is the user's file:
we merge our handlers in, keep every other key and hook, back the file up first, write it
atomically, and recognise our own handlers by their command so install is idempotent and
uninstall removes nothing else. If the result of uninstall equals the file as it was before
the first install, that original text is restored byte for byte.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import stat
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.integrations import launch
from kenning.integrations.files import Original, write_bytes
from kenning.paths import Paths, data_dir, write_private
from kenning.settings import DEFAULT_SKIP_TOOLS

# Handlers are recognised by the entry they call (kenning/integrations/launch.py), in exec form
# (args) or as a shell string, and by the `-m kenning hook` form of earlier installs.
HOOK_ENTRY = launch.SITE_ENTRY
MARKERS = (" -m kenning hook claude-code ", launch.ENTRY)
# event -> (matcher or None, timeout seconds)
EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": ("startup|resume|clear|compact", 10),
    "UserPromptSubmit": (None, 10),
    "PreToolUse": ("Read", 5),  # file history next to a Read (kenning/context/file_history.py)
    "PostToolUse": ("*", 10),
    "PostToolUseFailure": ("*", 10),
    "Stop": (None, 10),
    "SessionEnd": (None, 5),
}


def claude_dir() -> str:
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")


def settings_path() -> str:
    return os.path.join(claude_dir(), "settings.json")


def tool_matcher(skip_tools: tuple[str, ...] = DEFAULT_SKIP_TOOLS) -> str:
    """A matcher that lets Claude Code skip spawning the hook for tools we never capture.

    Claude Code treats a matcher with characters beyond ``[A-Za-z0-9_\\- ,|]`` as a JavaScript
    regex; a negative lookahead excludes the skipped names (the hook re-checks anyway).
    """
    exact = [t for t in skip_tools if re.fullmatch(r"[A-Za-z0-9_]+", t)]
    prefixes = [t[:-1] for t in skip_tools if t.endswith("*") and re.fullmatch(r"[A-Za-z0-9_]+\*", t)]
    if not exact and not prefixes:
        return "*"
    parts = []
    if exact:
        parts.append("(?!(?:" + "|".join(exact) + ")$)")
    parts += [f"(?!{p})" for p in prefixes]
    return "^" + "".join(parts) + ".*"


def hook_argv(event: str, python: str | None = None) -> list[str]:
    """The hook process Claude Code starts for ``event`` (see kenning/integrations/launch.py)."""
    # A non-default data dir must reach every hook, whatever environment Claude Code has.
    return launch.hook_argv("claude-code", event, python,
                            data_dir() if os.environ.get("KENNING_DATA_DIR") else None)


def hook_handler(event: str, timeout: int, python: str | None = None) -> dict[str, Any]:
    """The handler entry: exec form (``command`` + ``args``, no shell: ~1-3 ms less per call), or
    a shell string when the interpreter's path holds whitespace (exec form refuses that)."""
    argv = hook_argv(event, python)
    if any(c.isspace() for c in argv[0]):
        return {"type": "command", "command": launch.shell_command(argv), "timeout": timeout}
    return {"type": "command", "command": argv[0], "args": argv[1:], "timeout": timeout}


def hook_command(event: str, python: str | None = None) -> str:
    """The hook for ``event`` as one shell command line."""
    return launch.shell_command(hook_argv(event, python))


def handler_argv(handler: Any) -> list[str]:
    """The argv a handler runs (exec form as is; a shell string split, variable assignments dropped)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return []
    args = handler.get("args")
    if isinstance(args, list):
        return [handler["command"], *(str(a) for a in args)]
    try:
        parts = shlex.split(handler["command"])
    except ValueError:
        return []
    while parts and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", parts[0]):
        parts.pop(0)
    return parts


def is_ours(handler: Any) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    args = handler.get("args")
    if isinstance(args, list):
        return "claude-code" in args and any(isinstance(a, str) and launch.ENTRY in a for a in args)
    return any(m in handler["command"] for m in MARKERS)


# Before its rename this project installed the same three command shapes under its former package
# name. They are recognised by that shape with any package name but ours, so `install` can remove
# them and `doctor` can report them without the old name written anywhere.
_LEGACY_HOOK = re.compile(r"(?:(?:-m |/bin/)([A-Za-z_]\w*) hook"
                          r"|from ([A-Za-z_]\w*)\.hook\.main import cli; cli\(\)['\"]?)"
                          r" claude-code [A-Za-z]+")


def legacy_package(handler: Any) -> str | None:
    """The former package name a hook handler of an earlier install of this project runs, or None."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    m = _LEGACY_HOOK.search(handler["command"])
    name = (m.group(1) or m.group(2)) if m else None
    return name if name and name != "kenning" else None


def is_ours_or_legacy(handler: Any) -> bool:
    return is_ours(handler) or legacy_package(handler) is not None


@dataclass
class Report:
    path: str
    changed: bool = False
    backup: str | None = None
    events: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    legacy_removed: list[str] = field(default_factory=list)  # entries of a pre-rename install
    mcp: Report | None = None  # the MCP server registration in .claude.json


def _load(path: str) -> tuple[dict[str, Any], bytes | None]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}, None
    data = _parse(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data, raw


def _parse(raw: bytes) -> Any:
    """What the file's bytes mean: a blank file is an empty object."""
    return json.loads(raw.decode("utf-8")) if raw.strip() else {}


def _without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` without Kenning's handlers, nor those of a pre-rename install of this
    project, nor the groups that this leaves empty."""
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not is_ours_or_legacy(h)]
                if not handlers and len(handlers) != len(g["hooks"]):
                    continue  # the group only held our handler
                g = {**g, "hooks": handlers}
            kept_groups.append(g)
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return out


def _original(paths: Paths, path: str) -> Original:
    # The state file keeps the name the first installs gave it.
    return Original(paths, "claude-code", path, file=os.path.join(paths.root, "claude-code-install.json"))


def install(paths: Paths, *, python: str | None = None, skip_tools: tuple[str, ...] = DEFAULT_SKIP_TOOLS,
            mcp: bool = True) -> Report:
    path = settings_path()
    report = Report(path=path)
    current, raw = _load(path)  # invalid JSON raises: we never overwrite a file we cannot read
    base = _without_ours(current)
    legacy = [(event, legacy_package(h)) for event, h in _hook_handlers(current) if legacy_package(h)]
    report.legacy_removed = [f"hooks.{event} ({name})" for event, name in legacy]
    # First install: remember the original text so uninstall can restore it exactly.
    _original(paths, path).remember(raw, had_hooks_key="hooks" in current)
    new = json.loads(json.dumps(base))
    hooks = new.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: 'hooks' is not an object; fix it by hand first")
    for event, (matcher, timeout) in EVENTS.items():
        if matcher == "*":
            matcher = tool_matcher(skip_tools)
        group: dict[str, Any] = {"hooks": [hook_handler(event, timeout, python)]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ValueError(f"{path}: hooks.{event} is not a list; fix it by hand first")
        groups.append(group)
        report.events.append(event)
    if new != current:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if raw is not None:
            report.backup = backup(path, raw)
        _write(path, new)
        report.changed = True
    if mcp:
        report.mcp = install_mcp(paths, python=python, hook_packages=frozenset(n for _e, n in legacy if n))
    return report


def uninstall(paths: Paths) -> Report:
    path = settings_path()
    report = Report(path=path, mcp=uninstall_mcp(paths))
    try:
        current, raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        report.problems.append(f"cannot read {path}: {e}")
        return report
    if raw is None:
        return report
    new = _without_ours(current)
    original = _original(paths, path)
    if isinstance(new.get("hooks"), dict) and not new["hooks"] and not original.load().get("had_hooks_key", True):
        del new["hooks"]
    if new == current:
        return report
    if not original.ours_alone(not new):
        report.backup = backup(path, raw)
    old = original.original_bytes()
    try:
        same = old is not None and _parse(old) == new
    except (ValueError, UnicodeDecodeError):
        same = False
    original.write_back(old, same, not new, _dump(new))
    report.changed = True
    return report


BACKUPS_KEPT = 3
BACKUP_INFIX = ".kenning-backup-"


def backup(path: str, raw: bytes) -> str:
    """Keep ``raw`` (the file as it was before we change it) next to it; returns the backup's path.

    The backup has the original's mode, never wider than 0600: settings.json may hold tokens in
    ``env`` and .claude.json holds account data. Only the newest ``BACKUPS_KEPT`` are kept.
    """
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) & 0o600
    except OSError:
        mode = 0o600
    stamp = f"{path}{BACKUP_INFIX}{time.strftime('%Y%m%d-%H%M%S')}"
    # Several in one second: -2, -3… after the highest there, so names sort in the order made.
    taken = [name[len(stamp):] for name in glob.glob(glob.escape(stamp) + "*")]
    first = max([1, *(int(t[1:]) for t in taken if t[1:].isdigit())]) + (1 if taken else 0)
    for n in range(first, first + 1000):
        name = stamp + (f"-{n}" if n > 1 else "")
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        try:
            os.fchmod(fd, mode)  # O_CREAT's mode is filtered by the umask; a 0000 umask must not widen it
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        _prune_backups(path)
        return name
    raise OSError(f"cannot name a backup of {path}")


def _prune_backups(path: str) -> None:
    """Drop all but the newest ``BACKUPS_KEPT`` backups of ``path``; narrow older installs' wide ones."""
    found = []
    for name in glob.glob(glob.escape(path) + BACKUP_INFIX + "*"):
        try:
            st = os.stat(name)
        except OSError:
            continue
        found.append((st.st_mtime_ns, name, stat.S_IMODE(st.st_mode)))
    found.sort()
    for i, (_mtime, name, mode) in enumerate(found):
        try:
            if i < len(found) - BACKUPS_KEPT:
                os.unlink(name)
            elif mode & 0o177:
                os.chmod(name, mode & 0o600)
        except OSError:
            pass


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write(path: str, data: dict[str, Any]) -> None:
    write_bytes(path, _dump(data))


def installed_handlers() -> dict[str, list[str]]:
    """event -> our commands currently in the settings file (for doctor)."""
    try:
        current, _raw = _load(settings_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return {}
    out: dict[str, list[str]] = {}
    for event, h in _hook_handlers(current):
        if is_ours(h):
            out.setdefault(event, []).append(launch.shell_command(handler_argv(h)))
    return out


def plugin_enabled() -> str | None:
    """The id of Kenning's Claude Code plugin (``kenning@<marketplace>``) when settings.json enables it."""
    try:
        current, _raw = _load(settings_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return None
    enabled = current.get("enabledPlugins")
    for key, on in enabled.items() if isinstance(enabled, dict) else ():
        if isinstance(key, str) and key.startswith("kenning@") and on is True:
            return key
    return None


def _hook_handlers(current: dict[str, Any]) -> list[tuple[str, Any]]:
    hooks = current.get("hooks")
    out: list[tuple[str, Any]] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g in groups if isinstance(groups, list) else []:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                out.append((event, h))
    return out


def legacy_entries() -> list[str]:
    """What an install of this project made before its rename left behind, for doctor: hook
    handlers in settings.json and MCP servers in .claude.json (``install`` removes both)."""
    out: list[str] = []
    try:
        current, _raw = _load(settings_path())
    except (ValueError, UnicodeDecodeError, OSError):
        current = {}
    names: set[str] = set()
    for event, h in _hook_handlers(current):
        name = legacy_package(h)
        if name:
            names.add(name)
            out.append(f"{settings_path()}: hooks.{event} runs `{h['command']}`")
    try:
        claude_json, _raw = _load(claude_json_path())
    except (ValueError, UnicodeDecodeError, OSError):
        claude_json = {}
    servers = claude_json.get("mcpServers")
    for key in _legacy_mcp_keys(servers if isinstance(servers, dict) else {}, names):
        out.append(f"{claude_json_path()}: mcpServers.{key}")
    return out


def interpreter_of(command: str) -> str:
    """The interpreter path at the start of one of our hook commands."""
    try:
        parts = shlex.split(command)
    except ValueError:
        return ""
    parts = [p for p in parts if not re.match(r"^[A-Z_]+=", p)]
    return parts[0] if parts else ""


# ------------------------------------------------------------------- MCP server registration
#
# User-scope MCP servers live in the top-level "mcpServers" of ~/.claude.json (or
# $CLAUDE_CONFIG_DIR/.claude.json: checked with `claude mcp add -s user` on 2.1.332), a big
# file Claude Code itself rewrites often. We touch only mcpServers.kenning, and only when it is
# ours (its args end with -m kenning mcp); every other key is kept as read.

MCP_SERVER_NAME = "kenning"
MCP_MODULE_ARGS = ["-m", "kenning", "mcp"]


def claude_json_path() -> str:
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return os.path.join(os.path.expanduser(config_dir), ".claude.json")
    return os.path.join(os.path.expanduser("~"), ".claude.json")


def mcp_entry(python: str | None = None) -> dict[str, Any]:
    """The stdio server entry: absolute interpreter, isolated mode (-I, as the hooks)."""
    entry: dict[str, Any] = {"type": "stdio", "command": python or sys.executable,
                             "args": ["-I", *MCP_MODULE_ARGS], "env": {}}
    if os.environ.get("KENNING_DATA_DIR"):
        entry["env"] = {"KENNING_DATA_DIR": data_dir()}  # Claude Code's own env may not carry it
    return entry


def is_our_mcp(entry: Any) -> bool:
    args = entry.get("args") if isinstance(entry, dict) else None
    return isinstance(args, list) and args[-len(MCP_MODULE_ARGS):] == MCP_MODULE_ARGS


def _legacy_mcp_keys(servers: dict[str, Any], hook_packages: frozenset[str] | set[str]) -> list[str]:
    """Servers a pre-rename install of this project registered: ``{name: {args: [-I, -m, name, mcp]}}``
    whose package is one the legacy hooks ran or sits beside the entry's interpreter with our layout."""
    keys = []
    for key, entry in servers.items():
        if key == MCP_SERVER_NAME or not isinstance(entry, dict) or entry.get("args") != ["-I", "-m", key, "mcp"]:
            continue
        command = entry.get("command")
        venv = os.path.dirname(os.path.dirname(command)) if isinstance(command, str) else ""
        beside = bool(venv) and bool(glob.glob(os.path.join(glob.escape(venv), "lib", "python3*", "site-packages",
                                                            glob.escape(key), "hook", "main.py")))
        if key in hook_packages or beside:
            keys.append(key)
    return keys


def _mcp_state_file(paths: Paths) -> str:
    return os.path.join(paths.root, "claude-code-mcp.json")


def install_mcp(paths: Paths, *, python: str | None = None, hook_packages: frozenset[str] = frozenset()) -> Report:
    """Register Kenning's MCP server at user scope; idempotent, never overwrites a foreign entry.
    Servers of a pre-rename install (see ``_legacy_mcp_keys``) are removed."""
    path = claude_json_path()
    report = Report(path=path, events=[f"mcpServers.{MCP_SERVER_NAME}"])
    try:
        current, raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        report.problems.append(f"MCP server not registered: cannot read {path}: {e}")
        return report
    servers = current.get("mcpServers", {})
    if not isinstance(servers, dict):
        report.problems.append(f"MCP server not registered: {path}: 'mcpServers' is not an object")
        return report
    existing = servers.get(MCP_SERVER_NAME)
    if existing is not None and not is_our_mcp(existing):
        report.problems.append(f"MCP server not registered: {path} already has a different "
                               f"'{MCP_SERVER_NAME}' server; remove it first (claude mcp remove -s user "
                               f"{MCP_SERVER_NAME})")
        return report
    entry = mcp_entry(python)
    legacy = _legacy_mcp_keys(servers, hook_packages)
    if existing == entry and not legacy:
        return report
    if not os.path.exists(_mcp_state_file(paths)):
        # Remember what uninstall must restore: whether the key and the file existed at all.
        paths.ensure()
        # and the file's bytes, given back when nothing else changed in it (byte for byte).
        original = None if raw is None else raw.decode("utf-8", "surrogateescape")
        write_private(_mcp_state_file(paths), json.dumps({"had_file": raw is not None, "original": original,
                                                          "had_key": "mcpServers" in current}).encode())
    kept = {k: v for k, v in servers.items() if k not in legacy}
    new = {**current, "mcpServers": {**kept, MCP_SERVER_NAME: entry}}
    report.legacy_removed += [f"mcpServers.{k}" for k in legacy]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if raw is not None:
        report.backup = backup(path, raw)
    _write(path, new)
    report.changed = True
    return report


def uninstall_mcp(paths: Paths) -> Report:
    """Remove exactly our MCP server entry (and the key / file if install created them)."""
    path = claude_json_path()
    report = Report(path=path, events=[f"mcpServers.{MCP_SERVER_NAME}"])
    try:
        current, raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        report.problems.append(f"cannot read {path}: {e}")
        return report
    servers = current.get("mcpServers")
    state: dict[str, Any] = {}
    try:
        with open(_mcp_state_file(paths), encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        pass
    if raw is None or not isinstance(servers, dict) or not is_our_mcp(servers.get(MCP_SERVER_NAME)):
        _forget_mcp_state(paths)
        return report
    new = dict(current)
    rest = {k: v for k, v in servers.items() if k != MCP_SERVER_NAME}
    if rest or state.get("had_key", True):
        new["mcpServers"] = rest
    else:
        del new["mcpServers"]
    if not new and state.get("had_file") is False:
        os.unlink(path)  # install created the file and it holds nothing else: no backup needed
    else:
        report.backup = backup(path, raw)
        write_bytes(path, _mcp_original(state, new) or _dump(new))
    report.changed = True
    _forget_mcp_state(paths)
    return report


def _mcp_original(state: dict[str, Any], new: dict[str, Any]) -> bytes | None:
    """The file's bytes before install when what remains means the same (Claude Code has not changed it)."""
    text = state.get("original")
    if not isinstance(text, str):
        return None
    old = text.encode("utf-8", "surrogateescape")
    try:
        return old if _parse(old) == new else None
    except (ValueError, UnicodeDecodeError):
        return None


def _forget_mcp_state(paths: Paths) -> None:
    try:
        os.unlink(_mcp_state_file(paths))
    except OSError:
        pass


def installed_mcp() -> dict[str, Any] | None:
    """Our MCP server entry as Claude Code will read it, or None (for doctor)."""
    try:
        current, _raw = _load(claude_json_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return None
    servers = current.get("mcpServers")
    entry = servers.get(MCP_SERVER_NAME) if isinstance(servers, dict) else None
    return entry if is_our_mcp(entry) else None
