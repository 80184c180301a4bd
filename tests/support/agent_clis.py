"""Locate (or install once) the real Codex and Gemini CLIs from npm and run them offline.

Like :mod:`tests.support.claude_cli`: versions are pinned (hook payloads and request shapes change
between releases), installs go into ``<repo>/.cache/<name>`` under ``flock /work/heavy.lock``-style
locking (a lock file beside the cache), and a missing npm or a failed install returns None so the
test skips. Override with ``CODEX_BIN`` / ``GEMINI_BIN``.

Disk: npm runs with a throw-away cache (nothing is left in ~/.npm). Codex's npm package carries a
315 MB native binary plus two helpers (a code-mode host, 70 MB, and a voice host, 40 MB) that
``codex exec`` never starts here; they are deleted after the install, so the cache holds ~307 MB.
Gemini CLI is a ~100 MB JS bundle run by node.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support import fake_anthropic
from tests.support.claude_cli import _file_lock, ensure_claude_cli, run_claude, run_cli

CODEX_VERSION = "0.171.0"
GEMINI_VERSION = "0.61.0"
CODEX_MODEL = "gpt-5.5"  # in Codex's built-in model catalog, so apply_patch is offered as a tool
GEMINI_MODEL = "gemini-2.5-flash"
COPILOT_VERSION = "1.0.102"
OPENCODE_VERSION = "1.18.33"

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / ".cache"
_CODEX_UNUSED = ("codex-resources/voice", "bin/codex-code-mode-host")


def _installed(name: str, package: str, version: str) -> bool:
    try:
        meta = json.loads((CACHE / name / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return False
    return meta.get("version") == version


def _ensure(name: str, package: str, version: str, binary: str) -> str | None:
    stub = CACHE / name / "node_modules" / ".bin" / binary
    if _installed(name, package, version) and stub.exists():
        return str(stub)
    npm = shutil.which("npm")
    if not npm:
        return None
    (CACHE / name).mkdir(parents=True, exist_ok=True)
    with _file_lock(CACHE / f"{name}.lock"):
        if _installed(name, package, version) and stub.exists():
            return str(stub)
        pkg = CACHE / name / "package.json"
        if not pkg.exists():
            pkg.write_text(json.dumps({"name": f"kenning-{name}-cache", "private": True}) + "\n")
        # A throw-away npm cache: the tarballs (~130 MB for Codex) would otherwise stay in ~/.npm.
        npm_cache = tempfile.mkdtemp(prefix=f"kenning-npm-{name}-")
        try:
            proc = subprocess.run([npm, "install", "--no-fund", "--no-audit", "--no-save", "--cache", npm_cache,
                                   f"{package}@{version}"], cwd=CACHE / name, capture_output=True, text=True,
                                  timeout=900, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            shutil.rmtree(npm_cache, ignore_errors=True)
        if proc.returncode != 0:
            (CACHE / name / "npm-install.log").write_text(proc.stdout + proc.stderr)
            return None
    return str(stub) if stub.exists() else None


def ensure_codex() -> str | None:
    env_bin = os.environ.get("CODEX_BIN")
    if env_bin:
        return shutil.which(env_bin) or (env_bin if Path(env_bin).is_file() else None)
    found = _ensure("codex", "@openai/codex", CODEX_VERSION, "codex")
    if found:
        for vendor in (CACHE / "codex" / "node_modules" / "@openai").glob("codex-linux-*/vendor/*"):
            for rel in _CODEX_UNUSED:
                target = vendor / rel
                if target.is_dir():
                    shutil.rmtree(target, ignore_errors=True)
                elif target.exists():
                    target.unlink()
    return found


def ensure_gemini() -> str | None:
    env_bin = os.environ.get("GEMINI_BIN")
    if env_bin:
        return shutil.which(env_bin) or (env_bin if Path(env_bin).is_file() else None)
    return _ensure("gemini-cli", "@google/gemini-cli", GEMINI_VERSION, "gemini")


# Copilot CLI's npm package is a node single-executable that unpacks its JS (~235 MB) on first run
# into $COPILOT_PKG_CACHE_HOME (default ~/.cache/copilot): one shared unpacked copy, not one per HOME.
COPILOT_PKG_CACHE = CACHE / "copilot" / "pkg-cache"
# OpenCode npm-installs its plugin package into its config dir on first start (~22 s): done once
# here, and each scratch config dir gets a copy.
OPENCODE_CONFIG_TEMPLATE = CACHE / "opencode" / "config-template"


def ensure_copilot() -> str | None:
    """The pinned Copilot CLI (~420 MB in .cache/ with what it unpacks); ``KENNING_TEST_COPILOT=0``: None."""
    env_bin = os.environ.get("COPILOT_BIN")
    if env_bin:
        return shutil.which(env_bin) or (env_bin if Path(env_bin).is_file() else None)
    if os.environ.get("KENNING_TEST_COPILOT") == "0":
        return None
    return _ensure("copilot", "@github/copilot", COPILOT_VERSION, "copilot")


def ensure_opencode() -> str | None:
    """The pinned OpenCode CLI (~240 MB in .cache/ with its plugin package); ``KENNING_TEST_OPENCODE=0``: None."""
    env_bin = os.environ.get("OPENCODE_BIN")
    if env_bin:
        return shutil.which(env_bin) or (env_bin if Path(env_bin).is_file() else None)
    if os.environ.get("KENNING_TEST_OPENCODE") == "0":
        return None
    found = _ensure("opencode", "opencode-ai", OPENCODE_VERSION, "opencode")
    if found is None:
        return None
    # npm installs two 177 MB builds (one for CPUs without AVX2); OpenCode's postinstall hard-links the
    # one it picked as its bin: the other platform packages are never run.
    picked = CACHE / "opencode" / "node_modules" / "opencode-ai" / "bin" / "opencode.exe"
    for pkg in (CACHE / "opencode" / "node_modules").glob("opencode-*-*"):
        binary = pkg / "bin" / "opencode"
        if picked.exists() and binary.exists() and not binary.samefile(picked):
            shutil.rmtree(pkg, ignore_errors=True)
    done = OPENCODE_CONFIG_TEMPLATE / "node_modules" / "@opencode-ai" / "plugin" / "package.json"
    if done.exists():
        return found
    with _file_lock(CACHE / "opencode.lock"):
        if done.exists():
            return found
        shutil.rmtree(OPENCODE_CONFIG_TEMPLATE, ignore_errors=True)
        OPENCODE_CONFIG_TEMPLATE.mkdir(parents=True)
        (OPENCODE_CONFIG_TEMPLATE / "package.json").write_text(
            json.dumps({"dependencies": {"@opencode-ai/plugin": OPENCODE_VERSION}}, indent=2) + "\n")
        npm, npm_cache = shutil.which("npm"), tempfile.mkdtemp(prefix="kenning-npm-opencode-")
        try:
            proc = subprocess.run([npm or "npm", "install", "--no-fund", "--no-audit", "--cache", npm_cache],
                                  cwd=OPENCODE_CONFIG_TEMPLATE, capture_output=True, text=True, timeout=600,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            shutil.rmtree(npm_cache, ignore_errors=True)
        if proc.returncode != 0 or not done.exists():
            return None
    return found


def write_opencode_config(home: str | os.PathLike[str], base_url: str) -> Path:
    """``$XDG_CONFIG_HOME/opencode`` (``home/.config``) pointing OpenCode at the fake Chat Completions API,
    with the plugin package already in place."""
    cfg = Path(home) / ".config" / "opencode"
    cfg.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        if (OPENCODE_CONFIG_TEMPLATE / name).exists():
            shutil.copy2(OPENCODE_CONFIG_TEMPLATE / name, cfg / name)
    if (OPENCODE_CONFIG_TEMPLATE / "node_modules").is_dir():
        shutil.copytree(OPENCODE_CONFIG_TEMPLATE / "node_modules", cfg / "node_modules", symlinks=True)
    path = cfg / "opencode.json"
    path.write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                              "options": {"baseURL": base_url, "apiKey": "fake-key"},
                              "models": {"fake-model": {"name": "fake-model", "tool_call": True}}}},
        "permission": {"bash": "allow", "edit": "allow"}}, indent=2) + "\n")
    return path


def run_opencode(args: list[str], *, opencode_bin: str, cwd: str | os.PathLike[str], home: str | os.PathLike[str],
                 extra_env: Mapping[str, str] | None = None, timeout: float = 180) -> dict[str, Any]:
    """``opencode run -m fake/fake-model <args>`` once (``args``: the words of the message, as a shell passes them)."""
    h = Path(home)
    env = _base_env(home, {"XDG_CONFIG_HOME": str(h / ".config"), "XDG_DATA_HOME": str(h / ".local" / "share"),
                           "XDG_CACHE_HOME": str(h / ".cache"), "XDG_STATE_HOME": str(h / ".local" / "state"),
                           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                           **(extra_env or {})})
    return run_cli([opencode_bin, "run", "-m", "fake/fake-model", *args], cwd, env, timeout)


def trust_copilot_folder(home: str | os.PathLike[str], folder: str | os.PathLike[str]) -> Path:
    """What answering Copilot CLI's folder-trust question with "remember" writes: ``trustedFolders``
    in ``~/.copilot/config.json`` (behind its two comment lines)."""
    path = Path(home) / ".copilot" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// User settings belong in settings.json.\n// This file is managed automatically.\n"
                    + json.dumps({"trustedFolders": [str(folder)]}, indent=2) + "\n")
    return path


def run_copilot(prompt: str, *, copilot_bin: str, cwd: str | os.PathLike[str], home: str | os.PathLike[str],
                base_url: str, extra_env: Mapping[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    """``copilot -p`` once, offline on a BYOK provider (the fake Chat Completions API), tools allowed
    (``--allow-all-tools``, which does not trust the folder: ``COPILOT_ALLOW_ALL=true`` would)."""
    env = _base_env(home, {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": base_url,
                           "COPILOT_PROVIDER_API_KEY": "fake-key", "COPILOT_MODEL": "gpt-4.1",
                           "COPILOT_AUTO_UPDATE": "false", "COPILOT_PKG_CACHE_HOME": str(COPILOT_PKG_CACHE),
                           **(extra_env or {})})
    return run_cli([copilot_bin, "-p", prompt, "--allow-all-tools", "--no-color"], cwd, env, timeout)


def _base_env(home: str | os.PathLike[str], extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "USER": os.environ.get("USER", "root"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra or {})
    return env


def write_codex_config(home: str | os.PathLike[str], base_url: str) -> Path:
    """``$HOME/.codex/config.toml`` pointing Codex at the fake (before ``kenning install`` adds its hooks)."""
    path = Path(home) / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'model = "{CODEX_MODEL}"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "check_for_update_on_startup = false\n\n"
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "FAKE_API_KEY"\n\n'
        "[analytics]\nenabled = false\n")
    return path


def write_gemini_settings(home: str | os.PathLike[str]) -> Path:
    path = Path(home) / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False}},
                               indent=2) + "\n")
    return path


def run_codex(prompt: str, *, codex_bin: str, cwd: str | os.PathLike[str], home: str | os.PathLike[str],
              extra_env: Mapping[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    """``codex exec`` once, hooks trusted as a user's are (no --dangerously-bypass-hook-trust)."""
    env = _base_env(home, {"FAKE_API_KEY": "fake-key", **(extra_env or {})})
    return run_cli([codex_bin, "exec", "--skip-git-repo-check", "--json", prompt], cwd, env, timeout)


def run_gemini(prompt: str, *, gemini_bin: str, cwd: str | os.PathLike[str], home: str | os.PathLike[str],
               base_url: str, extra_env: Mapping[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    env = _base_env(home, {"GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": base_url,
                           "GEMINI_CLI_TRUST_WORKSPACE": "true", **(extra_env or {})})
    return run_cli([gemini_bin, "-p", prompt, "--yolo", "-m", GEMINI_MODEL, "--output-format", "json"], cwd, env,
                timeout)


# ---- the calc scenario both agents' e2e tests play (tests/e2e/test_codex_memory.py, test_gemini_memory.py)

Row = tuple[Any, ...]


def stored_bugfix(data: Path, platform: str) -> tuple[list[Row], Row]:
    """The observations (type, title, files_modified, platform) session 1 left, all from ``platform``,
    and the bugfix among them: named for the failing check, on calc.py, its failure captured."""
    conn = sqlite3.connect(data / "kenning.db")
    try:
        rows = conn.execute("SELECT o.type, o.title, o.files_modified, s.platform FROM observations o "
                            "JOIN sessions s ON s.id = o.session_id ORDER BY o.id").fetchall()
        events = conn.execute("SELECT kind, tool_name, status FROM events ORDER BY id").fetchall()
    finally:
        conn.close()
    assert {r[3] for r in rows} == {platform}, rows
    assert "bugfix" in {r[0] for r in rows}, "\n".join(map(str, [*rows, *events]))
    bugfix = next(r for r in rows if r[0] == "bugfix")
    assert "add is broken" in bugfix[1] or "AssertionError" in bugfix[1]
    assert json.loads(bugfix[2]) == ["calc.py"]
    assert ("PostToolUseFailure", "Bash", "done") in events
    return rows, bugfix


def stored_prompts(data: Path, n: int, timeout: float = 30.0) -> list[str]:
    """The prompts in the database once ``n`` are there (or ``timeout`` s have passed). The agent's
    exit does not wait for the worker: the last prompt's event may still be in the spool."""
    deadline = time.monotonic() + timeout
    while True:
        conn = sqlite3.connect(data / "kenning.db")
        try:
            prompts = [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts ORDER BY id")]
        finally:
            conn.close()
        if len(prompts) >= n or time.monotonic() > deadline:
            return prompts
        time.sleep(0.1)


def session_line(context: str, request: str) -> str:
    """The line of the session-start index that tells the session asked ``request`` ('' when none does):
    session 1's own work (creating calc.py, fixing its own slip) is routine, told by its session's line, or by
    the header of "Where we left off" when it is the latest work (its "Worked on" line says the request)."""
    lines = context.splitlines()
    for i, ln in enumerate(lines):
        if re.match(r"S\d+ ", ln) and request in ln:
            return ln
        if ln.startswith("## Where we left off (S") and i + 1 < len(lines) and lines[i + 1].startswith(
                "Worked on: ") and request in lines[i + 1]:
            return ln
    return ""


def claude_code_is_told(project: Path, home: Path, hook_env: Mapping[str, str], agent: str, request: str) -> str:
    """Session 3: Claude Code on the same project is told the other agent's session, marked as that agent's
    (``agent``: its display name). Returns the first user message, as JSON; skips without the CLI."""
    claude = ensure_claude_cli()
    if claude is None:
        pytest.skip("Claude Code CLI unavailable for the cross-agent session")
    with fake_anthropic.FakeAnthropic(script=[[fake_anthropic.text("Noted.")]]) as anthropic:
        third = run_claude("What did we do last time?", cwd=project, home=home, base_url=anthropic.base_url,
                           extra_env=hook_env, timeout=120, claude_bin=claude)
        assert third["rc"] == 0, third["stderr"] or third["stdout"]
        message = json.dumps(anthropic.requests_of("main")[0]["body"]["messages"][0])
    assert "Memory of calc-project" in message
    said = json.loads(message)["content"]
    text = said if isinstance(said, str) else "\n".join(str(b.get("text", "")) for b in said)
    fenced = text[text.index("<kenning-context>"):text.index("</kenning-context>")]
    line = session_line(fenced, request)
    assert line.endswith(f" \u00b7 in {agent}"), fenced
    return message
