"""Codex CLI (npm ``@openai/codex``): hooks in ``$CODEX_HOME/config.toml``, trusted as Codex requires.

Hook half (runs in every Codex hook: stdlib only). Codex sends Claude Code's field names
(``session_id``, ``transcript_path``, ``cwd``, ``prompt``, ``tool_name`` = ``Bash`` or
``apply_patch``, ``tool_input``, ``tool_response`` as a string, ``tool_use_id``,
``last_assistant_message``) and reads ``hookSpecificOutput.additionalContext`` back from
SessionStart and UserPromptSubmit (as developer messages). It has no PostToolUseFailure: a failed
command is a PostToolUse whose response is just its output, so the exit code is read from the
session's rollout (``transcript_path``), where Codex records the command's completion before it
runs the hook.

Installer half. Codex runs a user hook only when ``[hooks.state."<config.toml>:<event>:<group>:<handler>"]``
holds ``trusted_hash`` = the hash of that hook's normalized identity (``sha256:`` + hex of the
canonical JSON of ``{event_name, matcher, hooks: [handler]}``, keys sorted, no spaces; the handler
with ``type``, ``command``, ``timeout`` and ``async``). Untrusted hooks are skipped silently, so
``install`` writes the trust entry of each hook it adds and ``checks`` recomputes them.
Verified against Codex CLI 0.171.0 (tests/e2e/test_codex_memory.py runs it without
``--dangerously-bypass-hook-trust``).
"""

from __future__ import annotations

import os

from kenning.integrations import additional_context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.integrations.files import Check, Report
    from kenning.paths import Paths

NAME = "codex"
ROLLOUT_TAIL_BYTES = 512 * 1024  # the command's completion is among the last lines written


class CodexHook:
    name = NAME
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")

    def translate(self, event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if event != "PostToolUse":
            return event, payload
        tool = payload.get("tool_name")
        response = payload.get("tool_response")
        code: int | None = None
        output = response if isinstance(response, str) else ""
        if tool == "apply_patch" and isinstance(response, str):
            code = _leading_exit_code(response)
        elif tool == "Bash":
            found = _rollout_exit(payload.get("transcript_path"), payload.get("tool_use_id"))
            if found is not None:
                code, full = found
                output = full or output
        if code:
            failed = {k: v for k, v in payload.items() if k != "tool_response"}
            failed["error"] = f"Exit code {code}\n{output}".rstrip("\n")
            return "PostToolUseFailure", failed
        return event, payload

    def agent_of(self, payload: dict[str, Any]) -> str:
        return NAME

    def respond(self, host_event: str, event: str, context: str) -> dict[str, Any] | None:
        if host_event not in ("SessionStart", "UserPromptSubmit"):
            return None  # Codex takes additionalContext only there (and PreToolUse, not used)
        return additional_context(host_event, context)


HOOK = CodexHook()


def _leading_exit_code(text: str) -> int | None:
    """``Exit code: 1`` at the start of an apply_patch response."""
    head = text[:40]
    if not head.startswith("Exit code: "):
        return None
    digits = head[len("Exit code: "):].split("\n", 1)[0].strip()
    return int(digits) if digits.isdigit() else None


def _rollout_exit(path: Any, call_id: Any) -> tuple[int, str] | None:
    """(exit code, output) of a command from the rollout's ``item_completed`` line for ``call_id``."""
    if not isinstance(path, str) or not path.endswith(".jsonl") or not isinstance(call_id, str) or not call_id:
        return None
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - ROLLOUT_TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    needle = b'"id":"' + call_id.encode("utf-8", "replace") + b'"'
    at = tail.rfind(needle)
    while at >= 0:
        start = tail.rfind(b"\n", 0, at) + 1
        end = tail.find(b"\n", at)
        line = tail[start:end if end >= 0 else len(tail)]
        if b'"CommandExecution"' in line and b'"exit_code"' in line:
            from kenning import fastjson

            try:
                rec = fastjson.loads(line.decode("utf-8", "replace"))
                item = rec["payload"]["item"]
                code = item.get("exit_code")
                out = item.get("aggregated_output")
            except (ValueError, KeyError, TypeError, AttributeError):
                return None
            if isinstance(code, int) and not isinstance(code, bool):
                return code, out if isinstance(out, str) else ""
            return None
        at = tail.rfind(needle, 0, start)
    return None


# ----------------------------------------------------------------------------------- installer

# event -> (matcher or None, timeout seconds). Codex has no Read tool (it reads with shell
# commands), so PreToolUse, where file history goes, is not installed.
EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 10),
    "UserPromptSubmit": (None, 10),
    "PostToolUse": (None, 10),
    "Stop": (None, 10),
}
_LABELS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use",
           "PostToolUse": "post_tool_use", "Stop": "stop", "SessionEnd": "session_end",
           "PermissionRequest": "permission_request", "PreCompact": "pre_compact", "PostCompact": "post_compact",
           "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop"}
# Events whose matcher Codex drops before hashing.
_NO_MATCHER = ("UserPromptSubmit", "Stop", "SessionEnd")


def codex_home() -> str:
    """``$CODEX_HOME`` (Codex canonicalizes it) or ``~/.codex`` (taken as is)."""
    env = os.environ.get("CODEX_HOME")
    if env:
        return os.path.realpath(os.path.expanduser(env))
    return os.path.join(os.path.expanduser("~"), ".codex")


def config_path() -> str:
    return os.path.join(codex_home(), "config.toml")


def detected() -> bool:
    """Codex has been used here (its home exists)."""
    return os.path.isdir(codex_home())


def trust_hash(event: str, matcher: str | None, command: str, timeout: int, is_async: bool = False) -> str:
    """The ``trusted_hash`` Codex expects for one command hook (see the module docstring)."""
    import hashlib
    import json

    handler: dict[str, Any] = {"type": "command", "command": command, "timeout": max(1, int(timeout)),
                               "async": bool(is_async)}
    identity: dict[str, Any] = {"event_name": _LABELS[event], "hooks": [handler]}
    if matcher is not None and event not in _NO_MATCHER:
        identity["matcher"] = matcher
    raw = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def state_key(event: str, group: int, handler: int = 0, path: str | None = None) -> str:
    return f"{path or config_path()}:{_LABELS[event]}:{group}:{handler}"


def _load(path: str) -> tuple[Any, bytes | None]:
    import tomlkit

    from kenning.integrations.files import read_bytes

    raw = read_bytes(path)
    if raw is None or not raw.strip():
        return tomlkit.document(), raw
    return tomlkit.parse(raw.decode("utf-8")), raw  # a TOML error raises: never overwrite what we cannot read


def _groups(doc: Any, event: str) -> list[Any]:
    hooks = doc.get("hooks")
    groups = hooks.get(event) if hasattr(hooks, "get") else None
    return list(groups) if isinstance(groups, list) else []


def _ours(group: Any) -> bool:
    from kenning.integrations.files import is_our_command

    handlers = group.get("hooks") if hasattr(group, "get") else None
    return isinstance(handlers, list) and any(hasattr(h, "get") and is_our_command(h.get("command"), NAME)
                                              for h in handlers)


def _ours_in(doc: Any) -> list[tuple[str, int, Any]]:
    """(event, group index, group) of every group holding our handler."""
    hooks = doc.get("hooks")
    out = []
    for event in list(hooks) if hasattr(hooks, "keys") else []:
        if event == "state":
            continue
        for i, g in enumerate(_groups(doc, event)):
            if _ours(g):
                out.append((str(event), i, g))
    return out


def _strip_ours(doc: Any, path: str) -> list[str]:
    """Remove our groups and their trust entries from a tomlkit document; returns their events.

    Groups are rebuilt per event (tomlkit cannot delete single items of an array of tables that is
    split around other tables), so the user's own groups of those events keep their content, not
    necessarily their layout: the appended block is removed as text first whenever it is intact.
    """
    import tomlkit

    found = _ours_in(doc)
    if not found:
        return []
    hooks: Any = doc["hooks"]
    state: Any = hooks.get("state")
    keys = [state_key(e, i, 0, path) for e, i, _g in found if e in _LABELS]
    events = list(dict.fromkeys(e for e, _i, _g in found))
    kept_groups = {e: [g.unwrap() if hasattr(g, "unwrap") else g for g in _groups(doc, e) if not _ours(g)]
                   for e in events}
    kept_state = {k: (v.unwrap() if hasattr(v, "unwrap") else v) for k, v in (state.items() if state else [])
                  if k not in keys}
    for e in events:
        del hooks[e]
    if state is not None:
        del hooks["state"]
    for e in events:
        if kept_groups[e]:
            aot = tomlkit.aot()
            for g in kept_groups[e]:
                aot.append(g)
            hooks[e] = aot
    if kept_state:
        table = tomlkit.table(is_super_table=True)
        for k, v in kept_state.items():
            table[k] = v
        hooks["state"] = table
    if not list(hooks.keys()):
        del doc["hooks"]
    return events


def _block_state(paths: Paths) -> str:
    return os.path.join(paths.root, "codex-install-block.json")


def _remove_ours(paths: Paths, text: str, path: str) -> tuple[str, list[str]]:
    """``text`` without our hooks and trust entries; the events they were for."""
    import json

    import tomlkit

    events = [e for e, _i, _g in _ours_in(tomlkit.parse(text))] if text.strip() else []
    if not events:
        return text, []
    try:
        with open(_block_state(paths), encoding="utf-8") as fh:
            appended = json.load(fh).get("appended")
    except (OSError, ValueError, AttributeError):
        appended = None
    if isinstance(appended, str) and appended and appended in text:
        rest = text.replace(appended, "", 1)
        if not _ours_in(tomlkit.parse(rest)):
            return rest, list(dict.fromkeys(events))
    doc = tomlkit.parse(text)
    _strip_ours(doc, path)
    rest = _without_header(tomlkit.dumps(doc))
    if _ours_in(tomlkit.parse(rest)):
        raise ValueError(f"{path}: Kenning's hooks could not be removed automatically; remove them by hand")
    return rest, list(dict.fromkeys(events))


BLOCK_HEADER = "# Kenning: memory hooks for Codex, trusted for it (`kenning uninstall` removes this block)."


def _planned(doc: Any, path: str, python: str | None) -> list[tuple[str, str | None, str, int, str]]:
    """(event, matcher, command, timeout, trust key) of each hook to add to ``doc`` (ours removed)."""
    from kenning.integrations.files import hook_command

    out = []
    for event, (matcher, timeout) in EVENTS.items():
        index = len(_groups(doc, event))  # ours goes after the user's own groups
        out.append((event, matcher, hook_command(NAME, event, python), timeout, state_key(event, index, 0, path)))
    return out


def _block(planned: list[tuple[str, str | None, str, int, str]]) -> str:
    """Our hooks as a TOML block to append: readable, and removable as one piece."""
    import json

    lines = [BLOCK_HEADER]
    for event, matcher, command, timeout, _key in planned:
        lines.append(f"[[hooks.{event}]]")
        if matcher is not None:
            lines.append(f"matcher = {json.dumps(matcher)}")
        lines += [f"[[hooks.{event}.hooks]]", 'type = "command"', f"command = {json.dumps(command)}",
                  f"timeout = {timeout}"]
    for event, matcher, command, timeout, key in planned:
        lines += [f"[hooks.state.{json.dumps(key)}]",
                  f"trusted_hash = {json.dumps(trust_hash(event, matcher, command, timeout))}"]
    return "\n".join(lines) + "\n"


def _without_header(text: str) -> str:
    """The text without our block's comment line (tomlkit keeps comments when tables go)."""
    if BLOCK_HEADER not in text:
        return text
    text = text.replace("\n\n" + BLOCK_HEADER + "\n", "\n").replace(BLOCK_HEADER + "\n", "")
    return text


def _add_structured(doc: Any, planned: list[tuple[str, str | None, str, int, str]]) -> None:
    """Insert our hooks with tomlkit, for files where an appended block would not parse (inline arrays)."""
    import tomlkit

    if "hooks" not in doc:
        doc["hooks"] = tomlkit.table(is_super_table=True)
    hooks = doc["hooks"]
    for event, matcher, command, timeout, key in planned:
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        if event not in hooks:
            hooks[event] = tomlkit.aot()
        hooks[event].append(group)
        if "state" not in hooks:
            hooks["state"] = tomlkit.table(is_super_table=True)
        hooks["state"][key] = {"trusted_hash": trust_hash(event, matcher, command, timeout)}


def install(paths: Paths, *, python: str | None = None) -> Report:
    import json
    import tomllib

    import tomlkit

    from kenning.integrations.files import Original, Report, backup, write_bytes
    from kenning.paths import write_private

    path = config_path()
    report = Report(agent=NAME, path=path, events=list(EVENTS))
    doc, raw = _load(path)
    current = tomlkit.dumps(doc)
    base, _events = _remove_ours(paths, current, path)
    base = _without_header(base)
    planned = _planned(tomlkit.parse(base), path, python)
    sep = "" if not base.strip() else ("\n" if base.endswith("\n") else "\n\n")
    appended = sep + _block(planned)
    text = (base if base.strip() else "") + appended
    structured = tomlkit.parse(base)
    _add_structured(structured, planned)
    try:
        ok = tomllib.loads(text) == tomllib.loads(tomlkit.dumps(structured))
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:  # e.g. the user's hooks are inline arrays, which a [[hooks.X]] block cannot extend
        text, appended = tomlkit.dumps(structured), ""
    if tomllib.loads(text) == tomllib.loads(current or "\n"):
        return report  # installed already, exactly so
    Original(paths, NAME, path).remember(raw)
    paths.ensure()
    write_private(_block_state(paths), json.dumps({"appended": appended}).encode())
    if raw is not None:
        report.backup = backup(path, raw)
    write_bytes(path, text.encode("utf-8"))
    report.changed = True
    return report


def uninstall(paths: Paths) -> Report:
    from kenning.integrations.files import Original, Report, backup

    path = config_path()
    report = Report(agent=NAME, path=path)
    original = Original(paths, NAME, path)
    try:
        _doc, raw = _load(path)
        rest, report.events = _remove_ours(paths, raw.decode("utf-8") if raw else "", path)
    except (ValueError, UnicodeDecodeError) as e:
        report.problems.append(f"cannot read {path}: {e}")
        return report
    if raw is None or not report.events:
        original.forget()
        return report
    old = original.original_bytes()
    if not original.ours_alone(not rest.strip()):
        report.backup = backup(path, raw)
    # Nothing else changed since install: the very bytes of before.
    original.write_back(old, old is not None and _same(old, rest), not rest.strip(), rest.encode("utf-8"))
    report.changed = True
    try:
        os.unlink(_block_state(paths))
    except OSError:
        pass
    return report


def _same(old: bytes, new_text: str) -> bool:
    import tomllib

    try:
        return tomllib.loads(old.decode("utf-8")) == tomllib.loads(new_text)
    except (ValueError, UnicodeDecodeError):
        return False


def installed() -> dict[str, list[str]]:
    """event -> our commands in config.toml (for doctor)."""
    try:
        doc, _raw = _load(config_path())
    except (ValueError, UnicodeDecodeError, OSError):
        return {}
    out: dict[str, list[str]] = {}
    for event, _i, g in _ours_in(doc):
        for h in g.get("hooks") or []:
            out.setdefault(event, []).append(str(h.get("command")))
    return out


def checks() -> list[Check]:
    """Doctor: our hooks are there, trusted (else Codex skips them without a word), and enabled."""
    path = config_path()
    try:
        doc, _raw = _load(path)
    except (ValueError, UnicodeDecodeError) as e:
        return [("FAIL", "Codex hooks", f"cannot read {path}: {e}")]
    found = _ours_in(doc)
    if not found:
        return [("warn", "Codex hooks", f"none in {path}: run `kenning install --agent codex`")]
    out: list[Check] = []
    missing = [e for e in EVENTS if e not in {f[0] for f in found}]
    if missing:
        out.append(("FAIL", "Codex hooks", f"missing for {', '.join(missing)}: run `kenning install --agent codex`"))
    hooks = doc.get("hooks")
    state: Any = hooks.get("state") if hooks is not None else None
    skipped = []
    disabled = []
    for event, index, group in found:
        matcher = group.get("matcher")
        for hi, h in enumerate(group.get("hooks") or []):
            entry: Any = state.get(state_key(event, index, hi, path)) if hasattr(state, "get") else None
            want = trust_hash(event, matcher if isinstance(matcher, str) else None, str(h.get("command")),
                              int(h.get("timeout") or 600), bool(h.get("async", False)))
            got = entry.get("trusted_hash") if hasattr(entry, "get") else None
            if got != want:
                skipped.append(f"{event} ({'no trust entry' if got is None else 'changed since it was trusted'})")
            if hasattr(entry, "get") and entry.get("enabled") is False:
                disabled.append(event)
    features = doc.get("features")
    off = [k for k in ("hooks", "codex_hooks") if hasattr(features, "get") and features.get(k) is False]
    if off:
        out.append(("FAIL", "Codex hooks", f"[features] {off[0]} = false in {path}: Codex runs no hook at all"))
    if skipped:
        out.append(("FAIL", "Codex hook trust", "Codex would skip these hooks silently, untrusted: "
                    + ", ".join(skipped) + "; run `kenning install --agent codex` (or trust them in Codex's /hooks)"))
    if disabled:
        out.append(("warn", "Codex hooks", f"disabled in {path}: {', '.join(disabled)}"))
    if not missing and not skipped and not off:
        out.append(("ok", "Codex hooks", f"{len(found)} events in {path}, trusted"))
    return out
