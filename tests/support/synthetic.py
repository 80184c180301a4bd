"""Deterministic synthetic Claude Code hook payloads, for benchmarks and tests.

`synthetic_sessions()` yields one list of hook stdin payloads per session, shaped like what
Claude Code 2.1.x sends (compare tests/fixtures/claude-code/ and section 3 of the protocol
reference): SessionStart, UserPromptSubmit, PostToolUse for Read/Edit/Write/Bash/Grep/Glob/TodoWrite,
PostToolUseFailure (an `error` string and no `tool_response`), Stop and SessionEnd. Sessions work on
one generated Python codebase under `cwd`; each keeps its own view of file contents so Read, Edit
(originalFile, structuredPatch) and Write (create/update) stay consistent. Same arguments, same output.

    for events in synthetic_sessions(10, 40, seed=1):
        for payload in events:
            handle(payload["hook_event_name"], payload)
"""

from __future__ import annotations

import difflib
import random
import re
import string
import uuid
from collections.abc import Iterator
from typing import Any

Payload = dict[str, Any]

PACKAGES = ["billing", "auth", "search", "ingest", "reports", "notify", "scheduler", "storage"]
MODULES = ["models", "service", "handlers", "client", "schema", "config", "cache", "tasks", "views"]
VERBS = ["parse", "load", "build", "validate", "refresh", "sync", "render", "resolve", "fetch"]
NOUNS = ["invoice", "token", "index", "batch", "report", "webhook", "account", "payload", "cursor"]
TYPES = {"str": '""', "int": "0", "dict[str, Any]": "{}", "list[str]": "[]", "bytes": 'b""', "bool": "False"}
BUGS = ["off-by-one", "race condition", "timezone bug", "missing None check", "stale cache", "encoding issue"]
TOOLS = [("uv", "pip"), ("pytest", "unittest"), ("ruff", "black"), ("httpx", "requests")]
FEATURES = ["retry with backoff", "pagination", "structured logging", "a dry-run flag", "input validation"]
CONDS = ["the list is empty", "the {noun} has expired", "two workers run at once", "the input has unicode"]
PROMPTS = [
    "Fix the {bug} in {func} ({path}); it breaks when {cond}.",
    "Add {feature} to {func} in {path}, with tests.",
    "Why does {func} return None when {cond}? Explain before changing anything.",
    "Refactor {func} in {path} to remove the duplicated {noun} handling.",
    "Write tests for {func}; coverage of the {pkg} package is poor.",
    "We use {tool}, not {other}. Switch {path} over and don't touch the public API.",
    "The {pkg} tests fail on CI, looks like a {bug}. Can you find out why?",
    "Rename {func} to {verb}_{noun}_v2 everywhere and update the callers.",
]
STOPS = [
    "Done. I changed `{func}` in {path} and added a regression test; `uv run pytest` passes ({n} tests).",
    "The cause was a {bug} in `{func}`: it misbehaved when {cond}. Fixed in {path}; tests and ruff pass.",
    "I read through {path} and changed nothing: `{func}` is only called from the {pkg} service.",
    "Refactor finished: {path} is shorter and behaviour is unchanged; all {n} tests pass.",
]
BASH_OK = [
    "git status --short",
    "git diff --stat",
    "git log --oneline -5",
    "ls src/{pkg}",
    "uv run ruff check src tests",
    "uv run mypy src",
    "uv run pytest -q tests/test_{pkg}_{mod}.py",
]
BASH_FAIL = [
    (
        "uv run pytest -q",
        "Exit code 1\n..F.                                                                     [100%]\n"
        "=================================== FAILURES ===================================\n"
        "_________________________________ test_{func} _________________________________\n\n"
        ">       assert result == {a}\nE       assert {b} == {a}\n\n"
        "tests/test_{pkg}_{mod}.py:{line}: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_{pkg}_{mod}.py::test_{func} - assert {b} == {a}\n1 failed, 3 passed in 0.{line}s",
    ),
    ("uv run python -m {pkg}.cli --help", "Exit code 1\n{cwd}/.venv/bin/python: No module named {pkg}.cli"),
    (
        "uv run mypy src",
        'Exit code 1\nsrc/{pkg}/{mod}.py:{line}: error: Incompatible return value type (got "str | None", '
        'expected "str")  [return-value]\nFound 1 error in 1 file (checked 23 source files)',
    ),
    (
        "uv run ruff check src",
        "Exit code 1\nF401 [*] `os` imported but unused\n --> src/{pkg}/{mod}.py:3:8\n\n"
        "Found 1 error.\n[*] 1 fixable with the `--fix` option.",
    ),
    (
        "uv run python -c 'import {pkg}.{mod}'",
        'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        '  File "{cwd}/src/{pkg}/{mod}.py", line 5, in <module>\n    import redis\n'
        "ModuleNotFoundError: No module named 'redis'",
    ),
]
TOOL_WEIGHTS = {"Read": 30, "Edit": 15, "Bash": 22, "Grep": 10, "Glob": 5, "Write": 6, "TodoWrite": 3}
ALNUM = string.ascii_letters + string.digits


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _patch(old: str, new: str) -> list[Payload]:
    """structuredPatch hunks as Claude Code reports them (jsdiff style, 3 lines of context)."""
    hunks: list[Payload] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if m:
            a, b, c, d = (int(g) if g is not None else 1 for g in m.groups())
            hunks.append({"oldStart": a, "oldLines": b, "newStart": c, "newLines": d, "lines": []})
        elif hunks:
            hunks[-1]["lines"].append(line)
    return hunks


class _Codebase:
    """A generated project: 5 packages x 4 modules of src/<pkg>/<mod>.py, up to 3 functions each."""

    def __init__(self, rng: random.Random) -> None:
        self.funcs: dict[str, list[str]] = {}
        for pkg in rng.sample(PACKAGES, 5):
            for mod in rng.sample(MODULES, 4):
                names = {f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" for _ in range(3)}
                self.funcs[f"src/{pkg}/{mod}.py"] = sorted(names)
        self.paths = sorted(self.funcs)

    def source(self, rng: random.Random, rel: str) -> str:
        pkg, mod = rel[4:-3].split("/")
        out = [f'"""{pkg.title()} {mod}."""\n', "from __future__ import annotations\n", "import logging"]
        out += ["from typing import Any\n", "log = logging.getLogger(__name__)"]
        for name in self.funcs[rel]:
            arg, ret = rng.choice(NOUNS), rng.choice(list(TYPES))
            helper = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" if rng.random() < 0.5 else "_coerce"
            out += [
                f"\n\ndef {name}({arg}: {rng.choice(list(TYPES))}, *, strict: bool = False) -> {ret}:",
                f'    """{name.replace("_", " ").capitalize()} for the {pkg} {mod}."""',
                f"    if not {arg}:",
                f'        log.debug("empty {arg} in {name}")',
                f"        return {TYPES[ret]}",
                f"    result = {helper}({arg})",
                "    return result",
            ]
        return "\n".join(out) + "\n"


class _Session:
    def __init__(self, rng: random.Random, code: _Codebase, cwd: str) -> None:
        self.rng, self.code, self.cwd = rng, code, cwd
        self.sid = _uuid(rng)
        self.interactive = rng.random() < 0.6  # TUI sessions carry `effort` and a SessionStart `model`
        self.mode = rng.choices(["default", "acceptEdits", "bypassPermissions", "plan"], [4, 3, 2, 1])[0]
        self.prompt_id: str | None = None  # absent until the first prompt
        self.files: dict[str, str] = {}  # this session's view of file contents
        self.todos: list[dict[str, str]] = []
        self.transcript = f"/home/dev/.claude/projects/{re.sub(r'[^A-Za-z0-9]', '-', cwd)}/{self.sid}.jsonl"

    def fill(self, template: str, rel: str | None = None) -> str:
        r = self.rng
        rel = rel or r.choice(self.code.paths)
        pkg, mod = rel[4:-3].split("/")
        tool, other = r.choice(TOOLS)
        return template.format(
            path=rel, pkg=pkg, mod=mod, func=r.choice(self.code.funcs[rel]), bug=r.choice(BUGS),
            cond=r.choice(CONDS).format(noun=r.choice(NOUNS)), feature=r.choice(FEATURES),
            noun=r.choice(NOUNS), verb=r.choice(VERBS), tool=tool, other=other, cwd=self.cwd,
            line=r.randint(12, 140), a=r.randint(0, 99), b=r.randint(100, 999), n=r.randint(8, 240),
        )  # fmt: skip

    def event(self, name: str, *, perm: bool = True, effort: bool = True, **fields: Any) -> Payload:
        p: Payload = {"session_id": self.sid, "transcript_path": self.transcript, "cwd": self.cwd}
        if self.prompt_id:
            p["prompt_id"] = self.prompt_id
        if perm:
            p["permission_mode"] = self.mode
        if effort and self.interactive:
            p["effort"] = {"level": "medium"}
        return {**p, "hook_event_name": name, **fields}

    def start(self) -> Payload:
        r = self.rng
        extra: Payload = {"source": r.choices(["startup", "resume", "clear"], [6, 2, 1])[0]}
        if self.interactive and extra["source"] == "startup":
            extra["model"] = "claude-opus-5-5"
        if extra["source"] == "resume":
            extra["seconds_since_last_response"] = r.randint(30, 90_000)
            extra["context_tokens"] = r.randint(2000, 90_000)
            extra["prompt_cache_likely_expired"] = True
            extra["estimated_cache_write_usd"] = round(r.random() / 3, 4)
        return self.event("SessionStart", perm=False, effort=False, **extra)

    def prompt(self) -> Payload:
        self.prompt_id = _uuid(self.rng)
        return self.event("UserPromptSubmit", effort=False, prompt=self.fill(self.rng.choice(PROMPTS)))

    def stop(self) -> Payload:
        msg = self.fill(self.rng.choice(STOPS))
        extra: Payload = {"background_tasks": [], "session_crons": []}
        return self.event("Stop", stop_hook_active=False, last_assistant_message=msg, **extra)

    def end(self) -> Payload:
        reason = self.rng.choices(["prompt_input_exit", "other", "clear", "logout"], [5, 3, 2, 1])[0]
        return self.event("SessionEnd", perm=False, effort=False, reason=reason)

    def text(self, rel: str) -> str:
        if rel not in self.files:
            self.files[rel] = self.code.source(self.rng, rel)
        return self.files[rel]

    def tool(self) -> Payload:
        r, cwd = self.rng, self.cwd
        rel = r.choice(self.code.paths)
        name = r.choices(list(TOOL_WEIGHTS), list(TOOL_WEIGHTS.values()))[0]
        ids: Payload = {"tool_name": name, "tool_use_id": "toolu_01" + "".join(r.choices(ALNUM, k=22))}
        failure: tuple[Payload, str] | None = None
        if name == "Bash" and r.random() < 0.3:
            command, error = r.choice(BASH_FAIL)
            bash_in = {"command": self.fill(command, rel), "description": "Run checks"}
            failure = bash_in, self.fill(error, rel)
        elif name == "Edit" and r.random() < 0.1:  # stale old_string
            old = f"    return {r.choice(NOUNS)}"
            edit_in = {"file_path": f"{cwd}/{rel}", "old_string": old, "new_string": old + ".strip()"}
            failure = edit_in, f"String to replace not found in file.\nString: {old}"
        if failure:
            ids |= {"tool_input": failure[0], "error": failure[1], "is_interrupt": False}
            return self.event("PostToolUseFailure", **ids, duration_ms=r.randint(10, 4000))
        inp, resp = getattr(self, "_" + name.lower())(rel)
        ms = r.randint(200, 3000) if name == "Bash" else r.randint(5, 90)
        return self.event("PostToolUse", **ids, tool_input=inp, tool_response=resp, duration_ms=ms)

    def _read(self, rel: str) -> tuple[Payload, Any]:
        text, path = self.text(rel), f"{self.cwd}/{rel}"
        n = text.count("\n") + 1
        file = {"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n}
        return {"file_path": path}, {"type": "text", "file": file}

    def _edit(self, rel: str) -> tuple[Payload, Any]:
        text, path = self.text(rel), f"{self.cwd}/{rel}"
        unique = [ln for ln in text.splitlines() if ln.startswith("    ") and text.count(ln) == 1]
        old = self.rng.choice(unique)
        new = re.sub(r"if not (\w+):", r"if \1 is None:", old).replace("log.debug", "log.warning")
        new = new.replace('."""', ' (cached)."""').replace("return result", "return _normalize(result)")
        new = new if new != old else old + "  # TODO: honour strict mode"
        self.files[rel] = text.replace(old, new, 1)
        resp: Payload = {"filePath": path, "oldString": old, "newString": new, "originalFile": text}
        resp |= {"structuredPatch": _patch(text, self.files[rel]), "userModified": False}
        resp["replaceAll"] = False
        return {"file_path": path, "old_string": old, "new_string": new}, resp

    def _write(self, rel: str) -> tuple[Payload, Any]:
        func = self.code.funcs[rel][0]
        target = f"tests/test_{rel[4:-3].replace('/', '_')}.py"
        original = self.files.get(target)
        content = f"from {rel[4:-3].replace('/', '.')} import {func}\n\n\ndef test_{func}_empty():\n"
        content += f"    assert not {func}('')\n" if original is None else f"    assert {func}('x')\n"
        self.files[target], path = content, f"{self.cwd}/{target}"
        kind = "create" if original is None else "update"
        resp: Payload = {"type": kind, "filePath": path, "content": content}
        resp |= {"structuredPatch": _patch(original, content) if original else [], "originalFile": original}
        return {"file_path": path, "content": content}, resp | {"userModified": False}

    def _bash(self, rel: str) -> tuple[Payload, Any]:
        r = self.rng
        command = self.fill(r.choice(BASH_OK), rel)
        if command.startswith("ls "):
            pkg_dir = rel.rsplit("/", 1)[0] + "/"
            out = "\n".join(p.removeprefix(pkg_dir) for p in self.code.paths if p.startswith(pkg_dir))
        elif command.startswith("git log"):
            out = "\n".join(f"{r.getrandbits(28):07x} {self.fill(r.choice(PROMPTS))[:50]}" for _ in range(5))
        elif "pytest" in command:
            n = r.randint(3, 30)
            out = f"{'.' * n:<73}[100%]\n{n} passed in 0.{r.randint(10, 99)}s"
        else:
            outputs = {"git status --short": f" M {rel}", "git diff --stat": f" {rel} | 4 ++--\n 1 file"}
            outputs |= {"uv run ruff check src tests": "All checks passed!"}
            out = outputs.get(command, "Success: no issues found in 23 source files")
        inp = {"command": command, "description": f"Run {command.removeprefix('uv run ').split()[0]}"}
        resp = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        return inp, resp | {"noOutputExpected": False}

    def _grep(self, rel: str) -> tuple[Payload, Any]:
        more = self.rng.sample(self.code.paths, self.rng.randint(0, 3))
        hits = [f"{self.cwd}/{h}" for h in sorted({rel, *more})]
        inp: Payload = {"pattern": self.rng.choice(self.code.funcs[rel]), "path": f"{self.cwd}/src"}
        inp["output_mode"] = "files_with_matches"
        return inp, {"mode": "files_with_matches", "filenames": hits, "numFiles": len(hits)}

    def _glob(self, rel: str) -> tuple[Payload, Any]:
        pkg_dir = rel.rsplit("/", 1)[0]
        hits = [f"{self.cwd}/{p}" for p in self.code.paths if p.startswith(pkg_dir + "/")]
        resp: Payload = {"filenames": hits, "durationMs": self.rng.randint(3, 40), "numFiles": len(hits)}
        resp["truncated"] = False
        return {"pattern": f"{pkg_dir}/**/*.py"}, resp

    def _todowrite(self, rel: str) -> tuple[Payload, Any]:  # bookkeeping a memory system should skip
        task = self.fill("Update {func} in {path}", rel)
        todos = [
            {"content": task, "status": s, "activeForm": "Updating code"} for s in ("completed", "pending")
        ]
        old, self.todos = self.todos, todos
        return {"todos": todos}, {"oldTodos": old, "newTodos": todos}


def synthetic_sessions(
    n_sessions: int, events_per_session: int, *, seed: int = 0, cwd: str = "/tmp/synth/project"
) -> Iterator[list[Payload]]:
    """Yield `n_sessions` lists of exactly `events_per_session` hook payloads (at least 2).

    Each list starts with SessionStart and ends with SessionEnd; between them come turns of
    UserPromptSubmit, tool events (roughly 1 in 11 a PostToolUseFailure) and Stop. Output is a
    pure function of the arguments; all sessions share one generated codebase under `cwd`.
    """
    if events_per_session < 2:
        raise ValueError("events_per_session must be at least 2 (SessionStart + SessionEnd)")
    rng = random.Random(seed)
    code = _Codebase(rng)
    for _ in range(n_sessions):
        s = _Session(rng, code, cwd)
        middle = events_per_session - 2  # slots between SessionStart and SessionEnd
        events = [s.start()] + ([s.prompt()] if middle >= 1 else [])
        for i in range(1, middle - 1):
            left = middle - 1 - i  # slots after this one, before the closing Stop
            last = events[-1]["hook_event_name"]
            if last == "Stop":
                events.append(s.prompt())
            elif last == "PostToolUse" and left >= 2 and rng.random() < 0.08:
                events.append(s.stop())  # end of turn; a new prompt follows
            else:
                events.append(s.tool())
        if middle >= 2:
            events.append(s.stop())
        events.append(s.end())
        yield events
