"""Facts read straight from tool events: which files were read or changed, which commands ran.

Observers may claim things; these functions only report what the tool calls prove.
``files_modified`` of an observation must come from here, never from a model.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from kenning.history.claude_lines import denied, rejection
from kenning.records import Event

WRITE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit", "write_file", "edit_file", "apply_patch"}
READ_TOOLS = {"Read", "read_file", "NotebookRead"}
SEARCH_TOOLS = {"Grep", "Glob", "LS", "search_files", "list_directory"}
SHELL_TOOLS = {"Bash", "run_shell_command", "shell"}
_PATCH_HEADER = re.compile(r"^(?:\*\*\* (?:Update|Add|Delete) File: |\*\*\* Move to: |\+\+\+ b/)(.+)$", re.M)
_TRIVIAL_COMMANDS = re.compile(
    r"^\s*(?:ls|ll|pwd|cd|echo|cat|head|tail|clear|true|which|whoami|date|git\s+(?:status|branch|log|diff)"
    r"|git\s+--no-pager\s+(?:status|log|diff))\b")
# Searches whose exit status 1 with nothing printed is their answer: no line matched, no path is ignored, no
# such program or process. That is what the agent asked, not something that failed.
_SEARCHES = frozenset(("rg", "grep", "egrep", "fgrep", "ag", "ack", "which", "pgrep"))
_GIT_SEARCHES = frozenset(("grep", "check-ignore"))
# A command's leading ``cd x &&``: what follows is the command run (kenning.observer.checks reads it too)
CD_FIRST = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*")
_NOTHING_FOUND = re.compile(r"^Exit code 1\s*$")


@dataclass
class Command:
    """One shell command and how it ended."""

    command: str
    ok: bool
    output: str
    at: float
    event_id: int
    description: str = ""
    finished: bool = True  # False: still running when the session's record ends (its outcome is not known)
    outside: bool = False  # run outside the agent's sandbox, as the agent asked (Codex's escalation, Claude Code's)


def _input(ev: Event) -> dict[str, Any]:
    v = ev.payload.get("tool_input")
    return v if isinstance(v, dict) else {}


def _response(ev: Event) -> Any:
    return ev.payload.get("tool_response")


def file_path(ev: Event) -> str | None:
    inp = _input(ev)
    for key in ("file_path", "notebook_path", "filePath", "path"):
        v = inp.get(key)
        if isinstance(v, str) and v:
            return v
    resp = _response(ev)
    if isinstance(resp, dict):
        v = resp.get("filePath")
        if isinstance(v, str) and v:
            return v
        f = resp.get("file")
        if isinstance(f, dict) and isinstance(f.get("filePath"), str):
            return str(f["filePath"])
    return None


def failed(ev: Event) -> bool:
    return ev.kind == "PostToolUseFailure"


def modified_files(ev: Event) -> list[str]:
    """Files this event changed (only successful write tools count)."""
    if failed(ev) or ev.tool_name not in WRITE_TOOLS:
        return []
    if ev.tool_name == "apply_patch":
        inp = _input(ev)
        # (Codex: ``command`` or ``input``; Copilot CLI's hook: the patch as its ``arguments`` string)
        text = inp.get("patch") or inp.get("input") or inp.get("command") or inp.get("arguments") or ""
        if isinstance(text, list):
            text = "\n".join(str(x) for x in text)
        return list(dict.fromkeys(m.strip() for m in _PATCH_HEADER.findall(str(text))))
    p = file_path(ev)
    return [p] if p else []


def created(ev: Event) -> bool:
    """A Write that made a new file."""
    resp = _response(ev)
    if ev.tool_name == "Write" and isinstance(resp, dict):
        return resp.get("type") == "create"
    return False


def read_files(ev: Event) -> list[str]:
    if ev.tool_name in READ_TOOLS and not failed(ev):
        p = file_path(ev)
        return [p] if p else []
    return []


def searched(ev: Event) -> str | None:
    """A short description of a search (Grep/Glob), or None."""
    if ev.tool_name not in SEARCH_TOOLS:
        return None
    inp = _input(ev)
    pattern = inp.get("pattern") or inp.get("query") or inp.get("path")
    return f"{ev.tool_name} {pattern}" if isinstance(pattern, str) and pattern else ev.tool_name


def command(ev: Event) -> Command | None:
    if ev.tool_name not in SHELL_TOOLS:
        return None
    inp = _input(ev)
    cmd = inp.get("command")
    if isinstance(cmd, list):
        cmd = " ".join(str(c) for c in cmd)
    if not isinstance(cmd, str) or not cmd.strip():
        return None
    raw_desc = inp.get("description")
    desc = raw_desc if isinstance(raw_desc, str) else ""
    outside = inp.get("sandbox_permissions") == "require_escalated" or inp.get("dangerouslyDisableSandbox") is True
    if failed(ev):
        err = ev.payload.get("error")
        if isinstance(err, str) and (rejection(err) is not None or denied(err)):
            return None  # the user (or auto mode's classifier) said no to the call: nothing ran, nothing failed
        if isinstance(err, str) and _NOTHING_FOUND.match(err) and found_nothing(cmd):
            return Command(cmd.strip(), True, "", ev.occurred_at, ev.id, desc)
        return Command(cmd.strip(), False, err if isinstance(err, str) else "", ev.occurred_at, ev.id, desc,
                       outside=outside)
    resp = _response(ev)
    out = ""
    ok = True
    finished = True
    if isinstance(resp, dict):
        out = "\n".join(str(resp.get(k) or "") for k in ("stdout", "stderr")).strip()
        ok = not resp.get("interrupted")
        finished = not resp.get("unfinished")
    elif isinstance(resp, str):
        out = resp
    return Command(cmd.strip(), ok, out, ev.occurred_at, ev.id, desc, finished, outside)


def found_nothing(command: str) -> bool:
    """Whether a command is one search (``rg -n "a|b" src``, ``git check-ignore -v x``, after ``cd x &&``),
    whose exit status 1 means it found nothing: not piped or chained, where the status would be another's."""
    c = CD_FIRST.sub("", command.strip())
    try:
        lexer = shlex.shlex(c, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return False
    if words[-3:] == ["2", ">&", "1"]:  # "2>&1" at the end changes no status
        words = words[:-3]
    if not words or any(set(w) <= set("|&;<>()") for w in words):
        return False
    return words[0] in _SEARCHES or (words[0] == "git" and len(words) > 1 and words[1] in _GIT_SEARCHES)


def trivial(cmd: Command) -> bool:
    """Status checks and listings that teach nothing on their own."""
    return cmd.ok and bool(_TRIVIAL_COMMANDS.match(cmd.command))


def command_key(cmd: str) -> tuple[str, ...]:
    """What a command *is*, ignoring env assignments, ``cd x &&`` and flags: for matching retries."""
    text = cmd.strip().split("\n", 1)[0]
    if "&&" in text:
        parts = [p.strip() for p in text.split("&&")]
        parts = [p for p in parts if not p.startswith("cd ")]
        text = parts[-1] if parts else text
    words = [w for w in text.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
    words = [w for w in words if not w.startswith("-")]
    skip = {"uv", "run", "poetry", "npx", "pnpm", "yarn", "npm", "exec", "python", "python3", "-m", "bunx",
            "bun", "sudo", "time"}
    core = [w for w in words if w not in skip] or words
    return tuple(core[:2])


_RANKED = (
    (4, re.compile(r"^E\s+.*(?:Error|Exception|assert)")),  # pytest's own error lines are the most precise
    (3, re.compile(r"\b\w*(?:Error|Exception)\b:|\bassert(?:ion)?\b", re.I)),
    (2, re.compile(r"\bFAILED\b|\berror(?:\[\w+\])?:|\bfatal:|command not found|No such file|"
                   r"Permission denied|cannot|not found")),
    (1, re.compile(r"\b(?:failed|error)\b", re.I)),
)


_NPM_PREFIX = re.compile(r"^npm (?:error|ERR!)\s*")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal's colour and cursor codes, between a line's words


def error_headline(text: str) -> str:
    """The line of an error output that says what went wrong (most specific, last wins ties)."""
    lines = [ln.strip() for ln in _ANSI.sub("", text).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not re.match(r"^Exit code \d+$", ln)]
    best, best_rank = "", 0
    for ln in lines:
        if ln.startswith(("File ", "at ", "^", "~")):
            continue
        # npm prefixes every line with "npm error": rank what follows the prefix.
        probe = _NPM_PREFIX.sub("", ln)
        if probe.startswith("A complete log of this run can be found in"):
            continue
        for rank, pat in _RANKED:
            if pat.search(probe):
                if rank >= best_rank:
                    best, best_rank = ln, rank
                break
    if not best and lines:
        best = lines[0]
    best = re.sub(r"\s+", " ", best).strip("= ")
    m = re.match(r"^FAILED \S*?::(\S+) - (.+)$", best)
    if m:  # pytest's summary line: keep the test name and the error, drop the path
        best = f"{m.group(1)}: {m.group(2)}"
    best = re.sub(r"^(?:/\S+/)?python[\d.]*: ", "", best)
    best = re.sub(r"^E\s+", "", best)
    return best[:160]
