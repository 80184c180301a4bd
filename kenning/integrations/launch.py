"""How an agent starts the hook process: the argv every installer registers.

The hook runs on every tool call, so its command is the cheapest start-up Python allows:

* the absolute interpreter of this install (a pyenv shim adds ~75 ms);
* ``-I``: isolated mode (a stray ``json.py`` in the user's project, PYTHONPATH or
  PYTHONSTARTUP can neither shadow nor slow our imports);
* ``-S``: no ``site`` (~3-6 ms: site-packages scanning, ``.pth`` files, setuptools'
  distutils shim). The hook imports the standard library only, so it needs one extra path:
  the directory that holds the ``kenning`` package, found at install time (site-packages for
  a wheel, the checkout for an editable install) and appended after the standard library;
* ``-c`` calling the entry function directly (``-m`` costs ``runpy`` and importlib.util, ~6 ms);
* ``posix`` (built in) rather than ``os`` for its own few calls: the hook's capture path never
  imports ``os`` (~1 ms with ``_collections_abc``; see kenning/paths.py).

If that directory no longer holds ``kenning`` (the package moved), the command falls back to
``site`` rather than failing: slower, never broken. An agent that supports it runs this argv
without a shell (Claude Code's exec form: ``command`` + ``args``); the others get it as one
shell-quoted string (:func:`shell_command`).
"""

from __future__ import annotations

import os
import shlex
import sys

# What every registered hook command calls: installers and doctor recognise our handlers by it.
ENTRY = "from kenning.hook.main import cli"
CALL = "cli()"
# The entry of installs made before -S (still recognised, and what a foreign interpreter gets).
SITE_ENTRY = f"{ENTRY}; {CALL}"
# The package is no longer where it was at install time: find it through site after all.
FALLBACK = ' or __import__("site").main()'
DATA_DIR_VAR = "KENNING_DATA_DIR"


def package_parent() -> str:
    """The directory on ``sys.path`` that holds this ``kenning`` package."""
    import kenning

    return os.path.dirname(os.path.dirname(os.path.abspath(kenning.__file__)))


def hook_code(package_dir: str | None, data_dir: str | None = None) -> str:
    """The ``-c`` program of the hook: path set-up (none for a site-enabled interpreter), then the
    entry. One line, so it fits any agent's config format (JSON, TOML, a shell string)."""
    if package_dir is None and not data_dir:
        return SITE_ENTRY
    parts = ["import posix,sys"]
    if data_dir:
        # In exec form there is no shell to set a variable: a non-default data dir is set here, in
        # posix.environ (what os.environ is made of, and what the hook reads) and in the process's
        # own environment (what a worker it starts inherits).
        parts += [f"d={_literal(data_dir)}.encode(sys.getfilesystemencoding(),\"surrogateescape\")",
                  f"posix.putenv(b\"{DATA_DIR_VAR}\",d)", f"posix.environ[b\"{DATA_DIR_VAR}\"]=d"]
    if package_dir is None:
        return ";".join([*parts, SITE_ENTRY])
    marker = os.path.join(package_dir, "kenning", "hook", "main.py")
    parts += [f"sys.path.append({_literal(package_dir)})", f"posix.access({_literal(marker)},0){FALLBACK}",
              f"{ENTRY};{CALL}"]
    return ";".join(parts)


def _literal(text: str) -> str:
    """A Python string literal in double quotes (JSON's escapes are Python's): inside a shell's single
    quotes it needs no escaping of its own."""
    import json

    return json.dumps(text)


def hook_argv(agent: str, event: str, python: str | None = None, data_dir: str | None = None) -> list[str]:
    """The hook process for ``agent``'s ``event``: ``[python, -I, -S, -c, code, agent, event]``.

    ``python`` other than this interpreter gets the site-enabled form: where this package sits
    is only known for the interpreter running the installer.
    """
    py = python or sys.executable
    ours = python is None or os.path.realpath(python) == os.path.realpath(sys.executable)
    flags = ["-I", "-S"] if ours else ["-I"]
    return [py, *flags, "-c", hook_code(package_parent() if ours else None, data_dir), agent, event]


def shell_command(argv: list[str]) -> str:
    """The same argv as one POSIX shell command line (agents that only take a string)."""
    return " ".join(shlex.quote(a) for a in argv)


def import_check(argv: list[str], *, fallback: bool = True) -> list[str] | None:
    """The argv that imports the hook's entry exactly as ``argv`` would, without running a hook
    (doctor's check of a registered command); None when ``argv`` is not one of ours.
    ``fallback=False`` drops the fall-back to ``site``: it then fails when the recorded package
    directory no longer holds ``kenning``."""
    try:
        i = argv.index("-c")
        code = argv[i + 1]
    except (ValueError, IndexError):
        return None
    if ENTRY not in code:
        return None
    head, _sep, _tail = code.rpartition(CALL)
    if not fallback:
        head = head.replace(FALLBACK, "")
    return [*argv[:i], "-c", head + "pass"]
