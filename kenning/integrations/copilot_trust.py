"""Whether GitHub Copilot CLI trusts a folder, so that it runs that repository's hooks.

Copilot CLI loads ``.github/hooks/*.json`` only in a trusted folder (observed with 1.0.102: in an
untrusted one not one hook runs, with no warning; ``copilot -p`` cannot ask). The folders trusted
for good are the ``trustedFolders`` list (``trusted_folders`` in older builds, still honoured) of
``config.json`` in ``$COPILOT_HOME`` (default ``~/.copilot``); a listed folder covers everything
below it. That file starts with ``//`` comment lines. Trust given for one session only, and
``COPILOT_ALLOW_ALL=true`` in the agent's environment, are not visible here: this answers whether
*every* session in the folder will run the hooks.

Standard library only: the SessionStart hook asks it too.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def copilot_home() -> str:
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def config_path() -> str:
    return os.path.join(copilot_home(), "config.json")


def trusted_folders(path: str | None = None) -> list[str]:
    """The folders Copilot CLI trusts for every session (empty when its config is absent or unreadable)."""
    import json

    try:
        with open(path or config_path(), encoding="utf-8") as fh:
            text = fh.read(4 * 1024 * 1024)
    except (OSError, UnicodeDecodeError):
        return []
    # Whole-line // comments only: a JSON string never starts a line of this pretty-printed file.
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
    try:
        data: Any = json.loads(body or "null")
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    out: list[str] = []
    for key in ("trustedFolders", "trusted_folders"):
        value = data.get(key)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str) and v)
    return out


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def is_trusted(folder: str, config: str | None = None) -> bool:
    """True when ``folder`` is, or is below, a folder Copilot CLI trusts for every session."""
    target = os.path.realpath(os.path.abspath(folder))
    for listed in trusted_folders(config):
        expanded = os.path.expanduser(listed)
        if _within(os.path.abspath(folder), os.path.abspath(expanded)) or _within(target, os.path.realpath(expanded)):
            return True
    return False


def how_to_trust(folder: str) -> str:
    return (f"start `copilot` in {folder} once and answer its folder-trust question with the option that "
            f"remembers the folder, or add \"{folder}\" to \"trustedFolders\" in {config_path()}")


def untrusted_warning(folder: str) -> str:
    """One line for install and doctor."""
    return (f"GitHub Copilot CLI does not trust {folder} (it is not among its trusted folders), and it runs "
            f"a repository's hooks only in a trusted folder: its sessions there are not remembered. To trust "
            f"it, {how_to_trust(folder)}.")


def session_only_warning(folder: str) -> str:
    """One line for the first context of a session whose hooks ran on trust given for that session only."""
    return (f"GitHub Copilot CLI trusts {folder} for this session only, and it runs a repository's hooks "
            f"only in a trusted folder: later sessions there will not be remembered. To trust it for good, "
            f"{how_to_trust(folder)}.")
