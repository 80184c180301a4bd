"""What every installer does to a user's config file: back it up, write it atomically, remember
the original bytes so uninstall can give them back, and build the hook command.

Installers only (never imported on the hook path).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from kenning.paths import Paths, data_dir, write_private, write_through

# The hook runs its entry function through -c rather than -m (runpy costs every hook ~6 ms).
HOOK_ENTRY = "from kenning.hook.main import cli; cli()"

Check = tuple[str, str, str]  # (level: ok|warn|FAIL, name, detail), as kenning.doctor prints them


@dataclass
class Report:
    """What install or uninstall did to one agent's files."""

    agent: str
    path: str
    changed: bool = False
    backup: str | None = None
    events: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # other files written (or removed) besides ``path``


def hook_command(agent: str, event: str, python: str | None = None) -> str:
    """The shell command an agent runs for ``event``: absolute interpreter, isolated mode, no ``site``
    (kenning/integrations/launch.py); a non-default data dir is set by the command itself."""
    from kenning.integrations import launch

    # A non-default data dir must reach every hook, whatever environment the agent passes on.
    return launch.shell_command(launch.hook_argv(agent, event, python,
                                                 data_dir() if os.environ.get("KENNING_DATA_DIR") else None))


def is_our_command(command: Any, agent: str) -> bool:
    """A hook command this project installed for ``agent`` (any of its entry forms, earlier ones too)."""
    if not isinstance(command, str):
        return False
    return any(f"{entry}' {agent} " in command for entry in (HOOK_ENTRY, "import cli;cli()")) \
        or f" -m kenning hook {agent} " in command


def interpreter_of(command: str) -> str:
    """The interpreter path at the start of one of our hook commands."""
    try:
        parts = shlex.split(command)
    except ValueError:
        return ""
    parts = [p for p in parts if "=" not in p.split("/")[0]]
    return parts[0] if parts else ""


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def write_bytes(path: str, data: bytes) -> None:
    """Atomic replace that keeps the file's mode (0600 for a new one) and, for a symlinked config,
    the link: the file it points to is replaced (kenning.paths.write_through)."""
    os.makedirs(os.path.dirname(os.path.realpath(path)) or ".", exist_ok=True)
    write_through(path, data)


def backup(path: str, raw: bytes) -> str:
    """A 0600 copy beside the file (config files can hold tokens)."""
    dest = f"{path}.kenning-backup-{time.strftime('%Y%m%d-%H%M%S')}"
    write_private(dest, raw)
    return dest


class Original:
    """The bytes a config file had before the first install (kept in the data dir).

    Uninstall restores them exactly when what remains after removing our entries means the same
    as they do; otherwise it writes what remains.
    """

    def __init__(self, paths: Paths, agent: str, path: str, file: str | None = None) -> None:
        self.paths = paths
        self.path = path
        safe = "".join(c if c.isalnum() else "-" for c in os.path.basename(path)).strip("-")
        # ``file``: a name earlier installs used, so their originals are still found.
        self.file = file or os.path.join(paths.root, f"{agent}-install-{safe}.json")

    def remember(self, raw: bytes | None, **facts: Any) -> None:
        """Keep ``raw`` (None: there was no file), and ``facts`` an uninstall needs (``load()`` has them)."""
        if os.path.exists(self.file):
            return  # reinstalling: the first original stays the one to restore
        self.paths.ensure()
        text = None if raw is None else raw.decode("utf-8", "surrogateescape")
        write_private(self.file, json.dumps({"path": self.path, "original": text, "had_file": raw is not None,
                                             **facts}, ensure_ascii=True).encode())

    def load(self) -> dict[str, Any]:
        try:
            with open(self.file, encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def original_bytes(self) -> bytes | None:
        text = self.load().get("original")
        return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else None

    def had_file(self) -> bool:
        return bool(self.load().get("had_file", True))

    def forget(self) -> None:
        try:
            os.unlink(self.file)
        except OSError:
            pass

    def ours_alone(self, empty: bool) -> bool:
        """Nothing remains (``empty``) of a file that did not exist before: every byte in it was ours,
        so it goes without a backup (a backup would be litter in the agent's folder)."""
        return empty and not self.had_file()

    def write_back(self, old: bytes | None, same: bool, empty: bool, rest: bytes) -> None:
        """Uninstall's last step, then forgotten: the original bytes ``old`` when what remains means
        the same (``same``); no file when nothing remains (``empty``) of one that did not exist before;
        otherwise what remains, ``rest`` (the agent rewrote the file since: its version minus ours)."""
        if same and old is not None:
            write_bytes(self.path, old)
        elif empty and not self.had_file():
            os.unlink(self.path)
        else:
            write_bytes(self.path, rest)
        self.forget()
