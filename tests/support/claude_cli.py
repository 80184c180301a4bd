"""Locate (or install once) the real Claude Code CLI and run it offline in print mode.

Used by end-to-end tests together with :mod:`tests.support.fake_anthropic`::

    claude = ensure_claude_cli()          # None -> skip the test
    with FakeAnthropic(script=[...]) as fake:
        res = run_claude("do it", cwd=project, home=home, base_url=fake.base_url)

The CLI is pinned (``CLAUDE_CODE_VERSION``) because hook payloads, request shapes and
side requests change between releases; override with ``CLAUDE_BIN=/path/to/claude``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

CLAUDE_CODE_VERSION = "2.1.332"
DEFAULT_MODEL = "claude-sonnet-4-5"

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache" / "claude-code"
_PKG_DIR = CACHE_DIR / "node_modules" / "@anthropic-ai"
# A real native binary is ~200 MB; the npm bin stub (when postinstall did not replace it)
# is a few KB.
_MIN_NATIVE_SIZE = 1_000_000


def scratch_env(tmp_path: Path, project_name: str, *, unset: Sequence[str] = (),
                **extra: str) -> tuple[Path, Path, Path, str, dict[str, str]]:
    """(home, project, data dir, port, env) of a scratch user: an empty HOME, a git project named
    ``project_name``, Kenning's data dir and a free port, and none of the caller's agent or Kenning
    settings (``CLAUDE_CONFIG_DIR``, ``KENNING_INTERNAL`` and ``unset``) leaking in."""
    from tests.conftest import free_port

    home, project, data = tmp_path / "home", tmp_path / project_name, tmp_path / "kenning-data"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    port = str(free_port())
    env = {**os.environ, "HOME": str(home), "KENNING_DATA_DIR": str(data), "KENNING_PORT": port, **extra}
    for var in ("CLAUDE_CONFIG_DIR", "KENNING_INTERNAL", *unset):
        env.pop(var, None)
    return home, project, data, port, env


def kenning_cli(env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``kenning <args>`` from this checkout's interpreter, in a scratch environment (HOME, data dir)."""
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=dict(env), capture_output=True, text=True,
                          timeout=120)


def ensure_claude_cli() -> str | None:
    """Path of a runnable ``claude`` binary, installing the pinned version if needed.

    Order: ``$CLAUDE_BIN`` (path or name on PATH), then the npm install cached under
    ``<repo>/.cache/claude-code``. Returns None when npm is missing or the install fails,
    so callers can skip instead of fail.
    """
    env_bin = os.environ.get("CLAUDE_BIN")
    if env_bin:
        return shutil.which(env_bin) or (env_bin if Path(env_bin).is_file() else None)

    found = _cached_binary()
    if found:
        return found
    npm = shutil.which("npm")
    if not npm:
        return None
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with _file_lock(CACHE_DIR.parent / "claude-code.lock"):
        # Another process may have finished the install while we waited for the lock.
        found = _cached_binary()
        if found:
            return found
        if not _npm_install(npm):
            return None
        return _cached_binary()


def _installed_version() -> str | None:
    try:
        meta = json.loads((_PKG_DIR / "claude-code" / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return meta.get("version")


def _cached_binary() -> str | None:
    if _installed_version() != CLAUDE_CODE_VERSION:
        return None
    stub = CACHE_DIR / "node_modules" / ".bin" / "claude"
    if stub.exists() and stub.resolve().stat().st_size >= _MIN_NATIVE_SIZE:
        return str(stub)
    # npm can skip the postinstall that copies the native binary over the bin stub; the
    # platform package (e.g. claude-code-linux-x64) always ships the real binary.
    for native in sorted(_PKG_DIR.glob("claude-code-*/claude")):
        if native.is_file() and native.stat().st_size >= _MIN_NATIVE_SIZE:
            if not os.access(native, os.X_OK):
                native.chmod(native.stat().st_mode | 0o111)
            return str(native)
    return str(stub) if stub.exists() else None


def _npm_install(npm: str) -> bool:
    pkg_json = CACHE_DIR / "package.json"
    if not pkg_json.exists():
        # A private manifest keeps npm from walking up into the repo looking for one.
        pkg_json.write_text(json.dumps({"name": "kenning-claude-code-cache", "private": True}) + "\n")
    # A throw-away npm cache: the tarball (~180 MB) would otherwise stay in ~/.npm beside the install.
    npm_cache = tempfile.mkdtemp(prefix="kenning-npm-claude-code-")
    cmd = [
        npm,
        "install",
        "--no-fund",
        "--no-audit",
        "--no-save",
        "--cache",
        npm_cache,
        f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
    ]
    try:
        proc = subprocess.run(
            cmd, cwd=CACHE_DIR, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(npm_cache, ignore_errors=True)
    if proc.returncode != 0:
        (CACHE_DIR / "npm-install.log").write_text(proc.stdout + proc.stderr)
        return False
    return True


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def claude_env(
    home: str | os.PathLike[str], base_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A minimal environment for an offline CLI run.

    Nothing is inherited beyond PATH/LANG-like basics, so the developer's real
    ``~/.claude``, API keys, proxies and an enclosing Claude Code session (CLAUDECODE=1)
    cannot leak into the test.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "USER": os.environ.get("USER", "root"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        # Lets --dangerously-skip-permissions run as root (CI containers are root).
        "IS_SANDBOX": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    if extra_env:
        env.update(extra_env)
    return env


def run_claude(
    prompt: str,
    *,
    cwd: str | os.PathLike[str],
    home: str | os.PathLike[str],
    base_url: str,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 120,
    claude_bin: str | None = None,
) -> dict[str, Any]:
    """Run ``claude -p PROMPT --output-format json`` once and collect the outcome.

    Returns ``{"rc", "stdout", "stderr", "json", "seconds", "timed_out", "cmd"}``; ``json``
    is the parsed result object (``session_id``, ``result``, ``is_error``...) or None.
    On timeout the whole process group (CLI, hooks, Bash tool children) is killed and
    ``rc`` is None.
    """
    claude = claude_bin or ensure_claude_cli()
    if claude is None:
        raise RuntimeError("Claude Code CLI not available (no CLAUDE_BIN and npm install failed)")
    cmd = [
        claude,
        "-p",
        prompt,
        "--output-format",
        "json",
        "--dangerously-skip-permissions",
        "--model",
        DEFAULT_MODEL,
        *extra_args,
    ]
    res = run_cli(cmd, cwd, claude_env(home, base_url, extra_env), timeout)
    return {**res, "json": _parse_result(res["stdout"])}


def run_cli(cmd: Sequence[str], cwd: str | os.PathLike[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run an agent CLI once: ``{"rc", "stdout", "stderr", "seconds", "timed_out", "cmd"}``.

    The CLI gets its own session (process group), so a timeout kills it with its hook and tool
    children; ``rc`` is None then.
    """
    t0 = time.monotonic()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
    return {"rc": None if timed_out else proc.returncode, "stdout": stdout, "stderr": stderr,
            "seconds": round(time.monotonic() - t0, 2), "timed_out": timed_out, "cmd": list(cmd)}


def _parse_result(stdout: str) -> dict[str, Any] | None:
    # --output-format json prints one object; scan from the end in case anything else
    # (warnings) was printed before it.
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                return obj
    with contextlib.suppress(ValueError):
        obj = json.loads(stdout)
        if isinstance(obj, dict):
            return obj
    return None


def write_user_settings(home: str | os.PathLike[str], settings: Mapping[str, Any]) -> Path:
    """Write ``<home>/.claude/settings.json`` (user scope: hooks, env, plugins...)."""
    path = Path(home) / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def sdk_cli_dir(tmp: Path) -> str | None:
    """A directory to put first on PATH so that claude-agent-sdk finds a Claude Code CLI.

    The SDK runs the CLI its wheel bundles, else the ``claude`` on PATH. scripts/test.sh builds the
    SDK from its source distribution, without the bundled copy (385 MB): then the pinned CLI from
    npm stands in, the same version the wheel bundles. Returns None when the bundled one is there
    (nothing to do) and raises LookupError when neither can be had.
    """
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.origin and (Path(spec.origin).parent / "_bundled" / "claude").is_file():
        return None
    cli = ensure_claude_cli()
    if cli is None:
        raise LookupError("claude-agent-sdk has no bundled CLI and the pinned Claude Code CLI could not be installed")
    tmp.mkdir(parents=True, exist_ok=True)
    link = tmp / "claude"  # the tests find the CLI's processes by this name
    if not link.exists():
        link.symlink_to(os.path.realpath(cli))
    return str(tmp)


def flag_value(argv: Sequence[str], name: str) -> str:
    """The value a command line gives flag ``name``, as ``--name value`` or ``--name=value`` (claude-agent-sdk
    0.2.190 moved to the second form); KeyError when it is not given."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    raise KeyError(name)
